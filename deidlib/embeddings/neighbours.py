"""Cosine k-nearest neighbours over an embedding matrix (Friedrich et al., ACL 2019, section 4:
"their closest neighbors in an embedding space [...] as determined by cosine distance in a
pre-computed embedding matrix").

:class:`NeighbourIndex` L2-normalises the matrix once (a float32 torch tensor, [V, D]) and
answers queries in batches: ``sims = Q̂ · M̂ᵀ`` for a block of normalised query vectors, then
``torch.topk`` per row. A block of 64 queries against 400,000 GloVe words is a 64×400k
product (~100 MB of similarities), so N up to 1,000 costs one matrix product and one top-k per
block. Results are cached per (query word, k): asking for fewer neighbours of a word reuses a
larger cached answer.

Ties: ``torch.topk`` breaks exact ties in an unspecified but deterministic order on CPU; the
returned similarities are exact cosines. Zero vectors have cosine 0 with everything.

"Itself included" (section 4: "a random choice of a fixed number N of their closest neighbors
[...] (including the token itself)"): :meth:`NeighbourIndex.candidates` returns the token
first, then its N − 1 nearest *other* words (its own row is skipped), so N = 1 is the identity
and every candidate list has exactly N distinct entries whether or not the token is in the
vocabulary (a FastText n-gram vector of an out-of-vocabulary token has no row of its own).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from .public import PublicEmbeddings

__all__ = ["NeighbourIndex"]


def _normalise(x: torch.Tensor) -> torch.Tensor:
    return x / x.norm(dim=1, keepdim=True).clamp(min=1e-12)


def _cosine_topk(
    queries: np.ndarray | torch.Tensor, matrix_normed: torch.Tensor, k: int, batch_size: int = 64
) -> tuple[torch.Tensor, torch.Tensor]:
    """Top-``k`` cosine similarities of each query row against a row-normalised matrix.

    Returns (similarities [Q, k], indices [Q, k]), best first. Pure function."""
    q = torch.as_tensor(np.asarray(queries, dtype=np.float32) if not isinstance(queries, torch.Tensor) else queries)
    q = _normalise(q.to(torch.float32))
    V = matrix_normed.shape[0]
    if not 1 <= k <= V:
        raise ValueError(f"k must lie in [1, {V}], got {k}")
    sims, idx = [], []
    for a in range(0, q.shape[0], batch_size):
        s, i = torch.topk(q[a : a + batch_size] @ matrix_normed.T, k, dim=1)
        sims.append(s)
        idx.append(i)
    if not sims:
        return torch.empty(0, k), torch.empty(0, k, dtype=torch.long)
    return torch.cat(sims), torch.cat(idx)


class NeighbourIndex:
    """Nearest neighbours of words in a :class:`PublicEmbeddings` matrix, cached per word."""

    def __init__(self, embeddings: PublicEmbeddings, batch_size: int = 64) -> None:
        self.embeddings = embeddings
        self.batch_size = batch_size
        with torch.no_grad():
            m = torch.from_numpy(np.ascontiguousarray(embeddings.vectors, dtype=np.float32))
            self.matrix = _normalise(m)
        self._cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # key -> (row ids, sims), k+1 long

    def __len__(self) -> int:
        return self.matrix.shape[0]

    def has_vector(self, token: str) -> bool:
        return self.embeddings.row(token) is not None or self.embeddings.fallback is not None

    def warm(self, tokens: Sequence[str], k: int) -> None:
        """Compute (in batches) and cache the ``k`` nearest other words of every token that
        has a vector and is not cached with at least ``k`` neighbours yet."""
        keys, vecs = [], []
        seen = set()
        for t in tokens:
            key = self.embeddings.key(t)
            if key in seen:
                continue
            seen.add(key)
            c = self._cache.get(key)
            if c is not None and len(c[0]) >= min(k + 1, len(self)):
                continue
            v = self.embeddings.vector(t)
            if v is None:
                continue
            keys.append(key)
            vecs.append(v)
        if not keys:
            return
        kk = min(k + 1, len(self))  # one extra: the token's own row is dropped later
        with torch.no_grad():
            sims, idx = _cosine_topk(np.stack(vecs), self.matrix, kk, self.batch_size)
        for j, key in enumerate(keys):
            self._cache[key] = (idx[j].numpy(), sims[j].numpy())

    def nearest(self, token: str, k: int) -> tuple[list[str], np.ndarray]:
        """The ``k`` nearest *other* words of ``token`` (its own row excluded) and their cosine
        similarities, best first. Raises ``KeyError`` if the token has no vector."""
        key = self.embeddings.key(token)
        self.warm([token], k)
        c = self._cache.get(key)
        if c is None:
            raise KeyError(f"{token!r} has no vector in {self.embeddings.name}")
        own = self.embeddings.row(token)
        keep = c[0] != own if own is not None else np.ones(len(c[0]), dtype=bool)
        ids, sims = c[0][keep][:k], c[1][keep][:k]
        words = self.embeddings.words
        return [words[i] for i in ids], sims

    def candidates(self, token: str, n: int) -> list[str]:
        """The token itself followed by its ``n − 1`` nearest other words (section 4)."""
        if n < 1:
            raise ValueError(f"the number of neighbours N must be >= 1, got {n}")
        if n == 1:
            return [token]
        return [token, *self.nearest(token, n - 1)[0]]
