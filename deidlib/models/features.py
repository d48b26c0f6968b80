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
from itertools import chain
from typing import Any

import numpy as np
import torch

from ..embeddings.chars import casing_id, char_ids
from ..embeddings.vectors import normalize_token
from .presets import encoder_of
from .protocol import Batch

__all__ = ["Featurizer", "build_featurizer", "UNK"]

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
        lowercase_chars: bool = False,
    ) -> None:
        """``lowercase_chars``: the character encoder reads ``token.lower()`` (the casing
        feature, when a tagger uses it, still sees the case). A tagger trained on notes whose
        upper-case words are mostly abbreviations otherwise learns that an unknown upper-case
        word is not a name, and misses the names of upper-case notes (on the nursing
        notes, binary-token F1 0.585 -> 0.65 for a synthetic-trained GRU-CRF)."""
        if list(words[:2]) != ["<pad>", "<unk>"]:
            raise ValueError("the word list must start with '<pad>', '<unk>'")
        self.words = list(words)
        self.labels = list(labels)
        self.lowercase = lowercase
        self.normalize_digits = normalize_digits
        self.max_word_len = max_word_len
        self.lowercase_chars = bool(lowercase_chars)
        self.word_index = {w: i for i, w in enumerate(self.words)}
        self.label_index = {t: i for i, t in enumerate(self.labels)}
        self._cache: dict[str, tuple[int, int, tuple[int, ...]]] = {}

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
        lowercase_chars: bool = False,
    ) -> Featurizer:
        """Build the word vocabulary from *training* tokens (``min_count``, most frequent
        first, ties alphabetical so the order is deterministic).

        ``min_count=2`` (the default of :func:`build_featurizer` and of
        :func:`deidlib.training.prepare_tagger`): words seen once in training map to ``<unk>``, so the UNK
        embedding is trained on rare words (character features still see their form), as
        Lample et al. (2016) do with singletons. With ``min_count=1`` UNK is never seen in
        training and every unseen test word gets an untrained vector: on the PhysioNet
        nursing notes that made dev precision fall from 0.83 to 0.44 within three epochs
        (GRU-CRF, binary labels), against 0.95-0.98 with singletons mapped to UNK.
        """
        c: Counter = Counter()
        for toks in token_lists:
            c.update(normalize_token(t, lowercase, normalize_digits) for t in toks)
        for w in extra_words:
            c[normalize_token(w, lowercase, normalize_digits)] += min_count
        vocab = sorted((w for w, n in c.items() if n >= min_count), key=lambda w: (-c[w], w))
        if max_size is not None:
            vocab = vocab[: max(0, max_size - 2)]
        return cls(["<pad>", "<unk>", *vocab], labels, lowercase=lowercase, normalize_digits=normalize_digits,
                   max_word_len=max_word_len, lowercase_chars=lowercase_chars)

    @classmethod
    def from_words(
        cls,
        words: Iterable[str],
        labels: Sequence[str],
        *,
        lowercase: bool = True,
        normalize_digits: bool = True,
        max_word_len: int = 40,
        lowercase_chars: bool = False,
    ) -> Featurizer:
        """A featurizer over a *given* word list (already normalised keys, e.g. a public word
        list or a DP vocabulary, :func:`deidlib.privacy.vocabulary.dp_vocabulary`): no
        training token enters it. Order is kept; repeats and the reserved ``<pad>``/``<unk>``
        are dropped."""
        vocab = dict.fromkeys(w for w in words if w not in ("<pad>", "<unk>"))
        return cls(["<pad>", "<unk>", *vocab], labels, lowercase=lowercase, normalize_digits=normalize_digits,
                   max_word_len=max_word_len, lowercase_chars=lowercase_chars)

    @property
    def num_words(self) -> int:
        return len(self.words)

    @property
    def num_labels(self) -> int:
        return len(self.labels)

    def word_key(self, token: str) -> str:
        return normalize_token(token, self.lowercase, self.normalize_digits)

    def _info(self, token: str) -> tuple[int, int, tuple[int, ...]]:
        """(word id, casing id, char ids) of a token, memoised: corpora repeat tokens."""
        info = self._cache.get(token)
        if info is None:
            info = (self.word_index.get(self.word_key(token), UNK), casing_id(token),
                    tuple(char_ids(token.lower() if self.lowercase_chars else token, self.max_word_len) or [0]))
            if len(self._cache) < 1_000_000:
                self._cache[token] = info
        return info

    def encode(self, tokens: Sequence[Sequence[str]], tags: Sequence[Sequence[str]] | None = None) -> Batch:
        B = len(tokens)
        if B == 0:
            raise ValueError("cannot encode an empty batch")
        lengths = [len(s) for s in tokens]
        if 0 in lengths:
            raise ValueError(f"sentence {lengths.index(0)} of the batch is empty")
        T = max(lengths)
        mask = torch.arange(T).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
        pos = mask.view(-1).nonzero().squeeze(1)  # flat [B * T] positions of the tokens, row by row
        flat = [t for s in tokens for t in s]
        unique: dict[str, int] = {}
        t2u_flat = [unique.setdefault(t, len(unique)) for t in flat]
        infos = [self._info(t) for t in unique]  # per distinct token
        uw = torch.tensor([i[0] for i in infos], dtype=torch.long)
        uc = torch.tensor([i[1] for i in infos], dtype=torch.long)
        t2u_t = torch.tensor(t2u_flat, dtype=torch.long)
        word_ids = torch.zeros(B * T, dtype=torch.long).index_copy_(0, pos, uw[t2u_t]).view(B, T)
        casing_ids = torch.zeros(B * T, dtype=torch.long).index_copy_(0, pos, uc[t2u_t]).view(B, T)
        t2u = torch.zeros(B * T, dtype=torch.long).index_copy_(0, pos, t2u_t).view(B, T)
        # characters padded with 0 in one scatter (not one copy per distinct token)
        clen = np.fromiter((len(i[2]) for i in infos), dtype=np.int64, count=len(infos))
        total = int(clen.sum())
        cflat = np.fromiter(chain.from_iterable(i[2] for i in infos), dtype=np.int64, count=total)
        starts = np.repeat(np.cumsum(clen) - clen, clen)
        char_np = np.zeros((len(infos), int(clen.max())), dtype=np.int64)
        char_np[np.repeat(np.arange(len(infos)), clen), np.arange(total) - starts] = cflat
        char = torch.from_numpy(char_np)
        char_lengths = torch.from_numpy(clen)
        labels = None
        if tags is not None:
            if len(tags) != B:
                raise ValueError(f"{B} sentences but {len(tags)} tag sequences")
            li = self.label_index
            flat_tags: list[str] = []
            for b, ts in enumerate(tags):
                if len(ts) != lengths[b]:
                    raise ValueError(f"sentence {b}: {lengths[b]} tokens but {len(ts)} tags")
                flat_tags.extend(ts)
            try:
                ids = [li[t] for t in flat_tags]
            except KeyError as e:
                raise ValueError(f"tag {e.args[0]!r} is not in this featurizer's label set") from None
            labels = torch.full((B * T,), -100, dtype=torch.long).index_copy_(
                0, pos, torch.tensor(ids, dtype=torch.long)).view(B, T)
        return Batch(word_ids, mask, labels, casing_ids, char, char_lengths, t2u)

    def config(self) -> dict[str, Any]:
        return {
            "words": self.words,
            "labels": self.labels,
            "lowercase": self.lowercase,
            "normalize_digits": self.normalize_digits,
            "max_word_len": self.max_word_len,
            **({"lowercase_chars": True} if self.lowercase_chars else {}),  # only when used: old configs unchanged
        }

    @classmethod
    def from_config(cls, cfg: dict[str, Any]) -> Featurizer:
        """Rebuild from :meth:`config`; a config with ``encoder`` (an encoder tagger's) gives
        an :class:`EncoderFeaturizer`."""
        kw = dict(lowercase=cfg["lowercase"], normalize_digits=cfg["normalize_digits"],
                  max_word_len=cfg.get("max_word_len", 40), lowercase_chars=cfg.get("lowercase_chars", False))
        if "encoder" in cfg:
            return EncoderFeaturizer(cfg["words"], cfg["labels"], encoder=cfg["encoder"], **kw)
        return cls(cfg["words"], cfg["labels"], **kw)


class EncoderFeaturizer(Featurizer):
    """The featurizer of :class:`~deidlib.models.encoder_tagger.EncoderTagger`: the usual
    tensors plus the sentences' sub-word pieces in the encoder's own (public) vocabulary,
    ``batch.extra`` = ``sub_ids``, ``sub_mask``, ``sub_word``
    (:func:`deidlib.embeddings.encoders.align_subwords`). ``encoder``: a named encoder or a
    local model folder (:func:`deidlib.embeddings.encoders.encoder_dir`)."""

    def __init__(self, words: Sequence[str], labels: Sequence[str], *, encoder: str = "minilm", **kw: Any) -> None:
        super().__init__(words, labels, **kw)
        self.encoder = encoder

    def encode(self, tokens: Sequence[Sequence[str]], tags: Sequence[Sequence[str]] | None = None) -> Batch:
        from ..embeddings.encoders import align_subwords, load_subword_tokenizer

        batch = super().encode(tokens, tags)
        sub_ids, sub_mask, sub_word = align_subwords(load_subword_tokenizer(self.encoder), tokens)
        batch.extra = {"sub_ids": sub_ids, "sub_mask": sub_mask, "sub_word": sub_word}
        return batch

    def config(self) -> dict[str, Any]:
        return {**super().config(), "encoder": self.encoder}


def build_featurizer(
    kind: str,
    token_lists: Iterable[Sequence[str]],
    *,
    labels: Sequence[str],
    max_vocab: int | None = None,
    vocabulary: Iterable[str] | None = None,
    **kw: Any,
) -> Featurizer:
    """The featurizer for a tagger ``kind`` from *training* token lists (``max_vocab`` →
    ``max_size``; other keywords as :meth:`Featurizer.build`, except that ``min_count``
    defaults to 2), or over exactly ``vocabulary`` when it is given
    (:meth:`Featurizer.from_words`: no training token enters it; ``token_lists``,
    ``max_vocab`` and ``min_count`` are then unused). The word-based kinds share one
    featurizer class (char ids, casing and words are always encoded; a tagger uses what it
    needs); an encoder kind (``minilm``, or ``encoder=`` given) gets an
    :class:`EncoderFeaturizer` with no word vocabulary (``token_lists`` and ``vocabulary``
    unused)."""
    encoder = encoder_of(kind, kw)
    kw.pop("encoder", None)
    if encoder is not None:  # an encoder tagger reads sub-word pieces of a public vocabulary, no training words
        kw.pop("min_count", None)
        return EncoderFeaturizer(["<pad>", "<unk>"], labels, encoder=encoder, **kw)
    if vocabulary is not None:
        kw.pop("min_count", None)
        return Featurizer.from_words(vocabulary, labels, **kw)
    kw.setdefault("min_count", 2)  # train the UNK vector on singletons (see Featurizer.build)
    return Featurizer.build(token_lists, labels, max_size=max_vocab, **kw)
