"""The featurizer: vocabularies and the tensors of a :class:`~deidlib.models.protocol.Batch`.

Words are looked up by their normalised key (lowercase, digits→0 by default; OOV→UNK);
characters use the festag ASCII ids of :mod:`deidlib.embeddings.chars`; the characters
of each *distinct* token of a batch are encoded once (``char_ids`` over U unique tokens
and ``token_to_unique``), so the character encoder runs once per distinct token, not per
occurrence. Tokens longer than ``max_word_len`` characters (URLs, e-mails) are cut for
the character encoder only (a choice: festag feeds whole tokens; 40 characters keep the
char LSTM short without losing the shape of any clinical token we saw).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import torch

from ..embeddings.chars import casing_id, char_ids
from ..embeddings.vectors import normalize_token
from .protocol import Batch

__all__ = ["Featurizer", "PAD", "UNK"]

PAD, UNK = 0, 1


class Featurizer:
    """Vocabularies of one tagger; ``encode`` builds padded batches."""

    def __init__(
        self,
        words: Sequence[str],
        labels: Sequence[str],
        *,
        lowercase: bool = True,
        normalize_digits: bool = True,
        max_word_len: int = 40,
    ) -> None:
        if list(words[:2]) != ["<pad>", "<unk>"]:
            raise ValueError("the word list must start with '<pad>', '<unk>'")
        self.words = list(words)
        self.labels = list(labels)
        self.lowercase = lowercase
        self.normalize_digits = normalize_digits
        self.max_word_len = max_word_len
        self.word_index = {w: i for i, w in enumerate(self.words)}
        self.label_index = {t: i for i, t in enumerate(self.labels)}

    @classmethod
    def build(
        cls,
        token_lists: Iterable[Sequence[str]],
        labels: Sequence[str],
        *,
        min_count: int = 1,
        max_size: int | None = None,
        lowercase: bool = True,
        normalize_digits: bool = True,
        extra_words: Iterable[str] = (),
        max_word_len: int = 40,
    ) -> Featurizer:
        """Build the word vocabulary from *training* tokens (``min_count``, most frequent
        first, ties alphabetical so the order is deterministic)."""
        c: Counter = Counter()
        for toks in token_lists:
            c.update(normalize_token(t, lowercase, normalize_digits) for t in toks)
        for w in extra_words:
            c[normalize_token(w, lowercase, normalize_digits)] += min_count
        vocab = sorted((w for w, n in c.items() if n >= min_count), key=lambda w: (-c[w], w))
        if max_size is not None:
            vocab = vocab[: max(0, max_size - 2)]
        return cls(["<pad>", "<unk>", *vocab], labels, lowercase=lowercase, normalize_digits=normalize_digits,
                   max_word_len=max_word_len)

    @property
    def num_words(self) -> int:
        return len(self.words)

    @property
    def num_labels(self) -> int:
        return len(self.labels)

    def word_key(self, token: str) -> str:
        return normalize_token(token, self.lowercase, self.normalize_digits)

    def encode(self, tokens: Sequence[Sequence[str]], tags: Sequence[Sequence[str]] | None = None) -> Batch:
        B = len(tokens)
        if B == 0:
            raise ValueError("cannot encode an empty batch")
        T = max(1, max(len(s) for s in tokens))
        word_ids = torch.zeros(B, T, dtype=torch.long)
        casing_ids = torch.zeros(B, T, dtype=torch.long)
        mask = torch.zeros(B, T, dtype=torch.bool)
        t2u = torch.zeros(B, T, dtype=torch.long)
        unique: dict[str, int] = {}
        wi, key = self.word_index, self.word_key
        for b, sent in enumerate(tokens):
            n = len(sent)
            if n == 0:
                raise ValueError(f"sentence {b} of the batch is empty")
            word_ids[b, :n] = torch.tensor([wi.get(key(t), UNK) for t in sent])
            casing_ids[b, :n] = torch.tensor([casing_id(t) for t in sent])
            t2u[b, :n] = torch.tensor([unique.setdefault(t, len(unique)) for t in sent])
            mask[b, :n] = True
        U = len(unique)
        ids = [char_ids(t, self.max_word_len) or [0] for t in unique]
        C = max(len(x) for x in ids)
        char = torch.zeros(U, C, dtype=torch.long)
        lengths = torch.empty(U, dtype=torch.long)
        for u, x in enumerate(ids):
            char[u, : len(x)] = torch.tensor(x)
            lengths[u] = len(x)
        labels = None
        if tags is not None:
            labels = torch.full((B, T), -100, dtype=torch.long)
            li = self.label_index
            for b, ts in enumerate(tags):
                if len(ts) != len(tokens[b]):
                    raise ValueError(f"sentence {b}: {len(tokens[b])} tokens but {len(ts)} tags")
                try:
                    labels[b, : len(ts)] = torch.tensor([li[t] for t in ts])
                except KeyError as e:
                    raise ValueError(f"tag {e.args[0]!r} is not in this featurizer's label set") from None
        return Batch(word_ids, mask, labels, casing_ids, char, lengths, t2u)

    def config(self) -> dict[str, Any]:
        return {
            "words": self.words,
            "labels": self.labels,
            "lowercase": self.lowercase,
            "normalize_digits": self.normalize_digits,
            "max_word_len": self.max_word_len,
        }

    @classmethod
    def from_config(cls, cfg: dict[str, Any]) -> Featurizer:
        return cls(cfg["words"], cfg["labels"], lowercase=cfg["lowercase"], normalize_digits=cfg["normalize_digits"],
                   max_word_len=cfg.get("max_word_len", 40))
