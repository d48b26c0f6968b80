"""What a DSSGD server learns about a site's words from one upload (Festag & Spreckelsen
2020, Figure 5; the leak Shokri & Shmatikov 2015 §5 bound with their DP upload; the word
leak of embedding gradients: Melis et al. 2019, "Exploiting Unintended Feature Leakage in
Collaborative Learning", §4.1).

With plain SGD a word embedding row changes only if its word occurred in the local epoch's
sentences, so the non-zero entries of the uploaded word-embedding update name the site's
words. The attack: a vocabulary word is "recovered" if any uploaded entry of its embedding
row is non-zero (:func:`recovered_rows`); scored by precision and recall against the words of
the sentences the site trained on (:func:`reconstruction_prf`). The padding and unknown rows
are never words and are ignored.

This needs trainable word embeddings in the exchanged parameter vector; the festag preset
freezes them (``freeze_embeddings=True``: the paper exchanges only LSTM and feed-forward
weights), in which case :func:`embedding_slice` returns ``None`` and nothing is recovered
from the embedding (other layers can still leak, which this attack does not try).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import torch
from torch import nn

__all__ = ["embedding_slice", "recovered_rows", "batch_rows", "reconstruction_prf"]


def embedding_slice(model: nn.Module) -> tuple[int, int, int] | None:
    """``(offset, rows, dim)`` of the word embedding ``tokens.word.weight`` in the flat vector of
    trainable parameters (:func:`deidlib.collaborative.dssgd.flatten_parameters` order), or
    ``None`` when it is frozen or absent."""
    off = 0
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        if name.endswith("tokens.word.weight"):
            return off, int(p.shape[0]), int(p.shape[1])
        off += p.numel()
    return None


def recovered_rows(indices: torch.Tensor, values: torch.Tensor, slice_: tuple[int, int, int] | None,
                   min_entries: int = 1) -> set[int]:
    """Rows (word ids ≥ 2) of the embedding with at least ``min_entries`` uploaded non-zero entries."""
    if slice_ is None or indices.numel() == 0:
        return set()
    off, rows, dim = slice_
    idx = indices.long()
    keep = (idx >= off) & (idx < off + rows * dim) & (values != 0)
    r = (idx[keep] - off) // dim
    ids, counts = torch.unique(r, return_counts=True)
    return {int(i) for i, c in zip(ids, counts) if c >= min_entries and int(i) >= 2}


def batch_rows(featurizer, sentences: Iterable) -> set[int]:
    """Word ids (≥ 2: not padding, not unknown) of the words in ``sentences``."""
    out = set()
    for s in sentences:
        for w in s.words:
            i = featurizer.word_index.get(featurizer.word_key(w), 1)
            if i >= 2:
                out.add(i)
    return out


def reconstruction_prf(recovered: Sequence[int] | set[int], true: Sequence[int] | set[int]) -> dict[str, float]:
    """Precision, recall and F1 of the recovered word ids (precision 1 / recall 0 if none)."""
    rec, tru = set(recovered), set(true)
    tp = len(rec & tru)
    p = tp / len(rec) if rec else 1.0
    r = tp / len(tru) if tru else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"precision": p, "recall": r, "f1": f, "recovered": len(rec), "true": len(tru)}
