"""Multi-window CNN document classifier (Alawad et al. 2020 highlight, "Adversarial Training
for Privacy-Preserving Deep Learning Model Distribution", Research Details bullet 2; Kim,
"Convolutional Neural Networks for Sentence Classification", EMNLP 2014, section 2).

The highlight states: three parallel 1-D convolutions over 3, 4 and 5 consecutive words,
their outputs concatenated, a temporal max-pool keeping the most salient n-gram of each
filter, and a softmax layer. It gives no sizes; the defaults follow Kim 2014 section 3.1
(100 filters per window, ReLU, dropout 0.5 before the softmax layer) with a 300-wide word
embedding (Kim's word2vec width). All are arguments.

Vocabulary. The highlight notes that a distributed model's vocabulary with its word vectors
is itself a leak. Token ids here come from :func:`hashed_ids`: a public, data-independent
feature-hashing function (Weinberger et al., ICML 2009) that every party computes
identically, so no word list derived from any registry's data exists to be shipped; which
*rows* of an embedding table are trained still reveals which buckets occurred, so the
shared–private trainer (``deidlib.collaborative.shared_private``) keeps embedding rows
private to each registry.

Padding: id 0 is padding. Positions of a window that would extend past a document's end are
masked to ``-inf`` before the max-pool; a document shorter than a window is zero-padded to
the window's width and its one (partial) window is kept, so every document yields features.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["hashed_ids", "pad_ids", "MultiWindowEncoder", "MultiWindowCNN"]

#: words for hashing: runs of letters/digits (lower-cased by :func:`hashed_ids`).
_WORD_RE = re.compile(r"[A-Za-z]+|\d+")


def _bucket(word: str, n_buckets: int) -> int:
    h = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
    return 1 + int.from_bytes(h, "little") % (n_buckets - 1)


def hashed_ids(text: str, n_buckets: int, max_len: int | None = None) -> list[int]:
    """Lower-cased words of ``text`` mapped to ``1..n_buckets-1`` by a keyed-free BLAKE2b hash.

    Public and data-independent: the same word gives the same id at every registry and no
    vocabulary is built from anyone's data. ``max_len`` truncates (keeping the start).
    """
    if n_buckets < 2:
        raise ValueError(f"n_buckets must be >= 2, got {n_buckets}")
    ids = [_bucket(w.lower(), n_buckets) for w in _WORD_RE.findall(text)]
    return ids[:max_len] if max_len is not None else ids


def pad_ids(seqs: Sequence[Sequence[int]], min_len: int = 1) -> torch.Tensor:
    """Right-pad id lists with 0 into a ``(batch, max(len, min_len))`` long tensor."""
    width = max([min_len, *(len(s) for s in seqs)])
    out = torch.zeros(len(seqs), width, dtype=torch.long)
    for i, s in enumerate(seqs):
        if len(s):
            out[i, : len(s)] = torch.as_tensor(list(s), dtype=torch.long)
    return out


class MultiWindowEncoder(nn.Module):
    """Parallel 1-D convolutions (one per window width) + ReLU + masked temporal max-pool.

    ``forward(x, lengths)`` takes embedded words ``(batch, time, dim)`` and the true lengths;
    returns ``(batch, len(windows) * filters)``.
    """

    def __init__(self, emb_dim: int, windows: Sequence[int] = (3, 4, 5), filters: int = 100) -> None:
        super().__init__()
        if not windows or min(windows) < 1 or filters < 1:
            raise ValueError(f"need window widths >= 1 and filters >= 1, got {tuple(windows)}, {filters}")
        self.windows = tuple(int(w) for w in windows)
        self.filters = int(filters)
        self.convs = nn.ModuleList(nn.Conv1d(emb_dim, filters, w) for w in self.windows)

    @property
    def out_dim(self) -> int:
        return len(self.windows) * self.filters

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        width = max(t, max(self.windows))
        if width > t:
            x = F.pad(x, (0, 0, 0, width - t))
        xc = x.transpose(1, 2)  # (b, dim, time)
        pooled = []
        for w, conv in zip(self.windows, self.convs):
            h = torch.relu(conv(xc))  # (b, filters, width - w + 1)
            valid = torch.clamp(lengths - w + 1, min=1)  # at least one (partial) window
            pos = torch.arange(h.shape[-1], device=h.device)
            mask = pos[None, :] < valid[:, None]
            h = h.masked_fill(~mask[:, None, :], float("-inf"))
            pooled.append(h.max(dim=-1).values)
        return torch.cat(pooled, dim=-1)


class MultiWindowCNN(nn.Module):
    """Embedding → :class:`MultiWindowEncoder` → dropout → linear (softmax in the loss).

    ``forward(ids)`` takes a 0-padded ``(batch, time)`` id tensor and returns logits
    ``(batch, n_classes)``; :meth:`features` returns the pooled features.
    """

    def __init__(self, n_buckets: int, n_classes: int, *, emb_dim: int = 300, windows: Sequence[int] = (3, 4, 5),
                 filters: int = 100, dropout: float = 0.5) -> None:
        super().__init__()
        if n_classes < 2:
            raise ValueError(f"n_classes must be >= 2, got {n_classes}")
        self.embedding = nn.Embedding(n_buckets, emb_dim, padding_idx=0)
        self.encoder = MultiWindowEncoder(emb_dim, windows, filters)
        self.dropout = nn.Dropout(dropout)
        self.head = nn.Linear(self.encoder.out_dim, n_classes)

    def features(self, ids: torch.Tensor) -> torch.Tensor:
        lengths = (ids != 0).sum(dim=1)
        return self.encoder(self.embedding(ids), lengths)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.dropout(self.features(ids)))
