"""Randomness is passed in: helpers that turn a seed into explicit generators.

Nothing in deidlib reads numpy's or torch's global RNG state; functions take a
``seed`` (int), a :class:`numpy.random.Generator` or a :class:`random.Random`.
"""

from __future__ import annotations

import hashlib
import random

import numpy as np

__all__ = ["as_generator", "derive_seed"]


def as_generator(seed: int | np.random.Generator | None) -> np.random.Generator:
    """A numpy Generator from a seed, or the generator itself. ``None`` gives OS entropy."""
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(seed)


def _as_random(seed: int | random.Random | None) -> random.Random:
    """A stdlib :class:`random.Random` from a seed, or the instance itself."""
    if isinstance(seed, random.Random):
        return seed
    return random.Random(seed)


def derive_seed(seed: int, *keys: object) -> int:
    """A stable child seed for ``keys`` (e.g. a site name and an epoch), independent of hash salting."""
    h = hashlib.sha256(repr((seed,) + keys).encode()).digest()
    return int.from_bytes(h[:8], "little") & 0x7FFF_FFFF_FFFF_FFFF
