"""Randomness for DP-SGD drawn from the operating system's CSPRNG (``os.urandom``).

Opacus' ``secure_mode`` needs torchcsprng, which is not installable here; seeded
``torch.Generator`` objects (Mersenne Twister / Philox) are reproducible but predictable, so
a published model trained with them gives an attacker who learns the seed the noise itself.
:class:`SecureRandom` replaces both random sources of :func:`deidlib.privacy.dpsgd.train_dp`
(``secure=True``):

* Gaussian noise by the Box–Muller transform of pairs of uniforms, each uniform built from 53
  random bits of ``os.urandom`` as ``(k + 0.5)·2⁻⁵³`` (never 0 or 1, so ``log`` is finite),
  computed in float64 and cast to the gradient's dtype;
* Poisson lots: unit ``i`` joins the lot when its uniform is below the sample rate ``q``
  (the sampling that the accountants' subsampled-Gaussian analysis assumes).

What this does not address: floating-point artefacts of sampling a continuous Gaussian with
finite-precision arithmetic (Mironov 2012 for the Laplace mechanism; Jin et al. 2022 for
Gaussian samplers) and timing side channels. Runs with ``secure=True`` are not reproducible.
"""

from __future__ import annotations

import math
import os

import numpy as np
import torch

__all__ = ["SecureRandom"]

_TWO_POW_53 = float(2**53)


class SecureRandom:
    """Uniforms, Gaussians and Poisson lots from ``os.urandom`` (no seed, no state)."""

    def uniform(self, n: int) -> np.ndarray:
        """``n`` float64 uniforms in the open interval (0, 1)."""
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n}")
        k = np.frombuffer(os.urandom(8 * n), dtype=np.uint64) >> np.uint64(11)  # 53 random bits
        return (k.astype(np.float64) + 0.5) / _TWO_POW_53

    def standard_normal(self, n: int) -> np.ndarray:
        """``n`` float64 N(0, 1) draws (Box–Muller, both outputs of each pair used)."""
        m = (n + 1) // 2
        u1, u2 = self.uniform(m), self.uniform(m)
        r = np.sqrt(-2.0 * np.log(u1))
        z = np.concatenate([r * np.cos(2 * math.pi * u2), r * np.sin(2 * math.pi * u2)])
        return z[:n]

    def normal(self, std: float, shape, *, dtype: torch.dtype = torch.float32, device=None) -> torch.Tensor:
        """A tensor of N(0, std²) draws."""
        shape = tuple(shape)
        n = int(np.prod(shape)) if shape else 1
        z = torch.from_numpy(self.standard_normal(n) * float(std)).reshape(shape)
        return z.to(dtype=dtype, device=device)

    def poisson_lot(self, n: int, q: float) -> list[int]:
        """Indices of the units in a Poisson-sampled lot: each of ``n`` joins with probability ``q``."""
        if not 0 <= q <= 1:
            raise ValueError(f"sample rate must lie in [0, 1], got {q}")
        return np.flatnonzero(self.uniform(n) < q).tolist()

    def lots(self, n: int, q: float, steps: int):
        """``steps`` Poisson lots (the interface of Opacus' ``UniformWithReplacementSampler``)."""
        for _ in range(steps):
            yield self.poisson_lot(n, q)
