"""Length-bucketed batches (seeded): sentences of similar length share a batch, so little
padding is computed; the batches are fixed once and only their order is reshuffled
each epoch (a bucket iterator), which lets the trainer encode every batch only once."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..rng import as_generator, derive_seed

__all__ = []


def bucket_batches(
    lengths: Sequence[int], batch_size: int, seed: int = 0, bucketed: bool = True
) -> list[list[int]]:
    """Groups of sentence indices of at most ``batch_size``.

    ``bucketed=True`` sorts by length (ties broken at random, seeded) before cutting;
    ``False`` cuts a seeded random permutation (plain mini-batches; ``batch_size=1`` is
    the festag paper's fully stochastic setting either way).
    """
    if batch_size < 1:
        raise ValueError("batch_size must be >= 1")
    rng = as_generator(seed)
    n = len(lengths)
    if bucketed:
        order = np.lexsort((rng.random(n), np.asarray(lengths)))
    else:
        order = rng.permutation(n)
    return [order[i : i + batch_size].tolist() for i in range(0, n, batch_size)]


def epoch_order(n_batches: int, seed: int, epoch: int) -> list[int]:
    """The order of the batches in ``epoch`` (independent of how training got there)."""
    return as_generator(derive_seed(seed, "epoch", epoch)).permutation(n_batches).tolist()
