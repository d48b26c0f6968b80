"""Random sources for surrogate generation: a seeded one for studies, a secure one for releases.

Every surrogate function draws from a :class:`SurrogateRNG`:

* :class:`SeededRNG` wraps a :class:`numpy.random.Generator` (``deidlib.rng.as_generator``):
  same seed, same surrogates. Scalar draws come from blocks of uniforms taken from the
  generator (fast, deterministic). The discrete Laplace is sampled by inverse transform of
  two geometric variables in floating point: fine for studies, **not** for releases.
* :class:`SecureRNG` draws everything from the operating system's CSPRNG (``os.urandom``,
  read in 4 KiB blocks by :class:`_BufferedSystemRandom`, a :class:`secrets.SystemRandom`
  with one system call per block instead of one per draw) and samples the discrete Laplace / two-sided geometric
  distribution **exactly** with integer arithmetic (Canonne, Kamath & Steinke, "The
  Discrete Gaussian for Differential Privacy", NeurIPS 2020, Algorithms 1-2). No floating
  point number is involved, so the output distribution is exactly the one the privacy
  proof assumes (Mironov, CCS 2012, showed how floating-point Laplace samplers leak the
  input through holes in their output distribution).

What the secure mode protects and what it does not (documented precisely because it is a
release setting):

* protected: the integer-valued mechanisms (dates in days/weeks/months/years, ages,
  durations; :func:`deidlib.surrogates.mechanisms.discrete_laplace`) have the exact
  two-sided geometric distribution with parameter ``exp(-epsilon)`` for a rational
  ``epsilon`` (a float ``epsilon`` is a dyadic rational and is used exactly when its
  denominator is at most 2**32, otherwise rounded *down* to such a rational, so the
  guarantee never gets weaker); randomness is unpredictable (no seed);
* not protected: (1) timing — the rejection samplers run a data-independent expected
  number of loops but the exact loop count, and hence the time, depends on the sampled
  value (and, through the output, on the input); do not expose sampling time to an
  attacker; (2) the categorical draws of the location mechanisms (exponential mechanism,
  snap-to-nearest after planar Laplace) use floating-point weights and
  ``SystemRandom.random()``: the randomness is a CSPRNG but the probabilities carry
  floating-point rounding (Ilvento, CCS 2020, discusses base-2 exact variants; not
  implemented); (3) the bounded-Laplace LDP baseline and the continuous Laplace are
  sampled in floating point in both modes (they are baselines); (4) anything the NER step
  missed, and the surface form (length, format) of the original, which surrogates keep by
  design.
"""

from __future__ import annotations

import functools
import math
import os
import secrets
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from ..rng import as_generator

__all__ = []

_BLOCK = 4096


def _rational_at_most(x: float, max_denominator: int = 2**32) -> Fraction:
    """``x`` as an exact :class:`~fractions.Fraction` if its denominator is small, else the
    closest fraction with denominator ``<= max_denominator`` that is ``<= x``."""
    if not (x > 0 and math.isfinite(x)):
        raise ValueError(f"epsilon must be a positive finite number, got {x!r}")
    f = Fraction(x)
    if f.denominator <= max_denominator:
        return f
    g = f.limit_denominator(max_denominator)
    if g > f:
        g = Fraction(math.floor(f * max_denominator), max_denominator)
    if g <= 0:
        raise ValueError(f"epsilon {x!r} is too small to be represented")
    return g


class SurrogateRNG:
    """The interface every surrogate function draws from."""

    secure: bool = False

    def random(self) -> float:  # pragma: no cover - interface
        """A uniform float in [0, 1)."""
        raise NotImplementedError

    def randbelow(self, n: int) -> int:  # pragma: no cover - interface
        """A uniform integer in ``0 .. n-1``."""
        raise NotImplementedError

    def discrete_laplace(self, epsilon: float) -> int:  # pragma: no cover - interface
        """An integer ``k`` with ``P(k) ∝ exp(-epsilon |k|)`` (two-sided geometric)."""
        raise NotImplementedError

    def choice(self, seq: Sequence):
        if not len(seq):
            raise ValueError("cannot choose from an empty sequence")
        return seq[self.randbelow(len(seq))]

    def categorical(self, p: np.ndarray) -> int:
        """An index drawn with probabilities ``p`` (non-negative, summing to 1)."""
        c = np.cumsum(p)
        u = self.random() * c[-1]
        i = int(np.searchsorted(c, u, side="right"))
        return min(i, len(p) - 1)

    def laplace(self, scale: float) -> float:
        """A continuous Laplace(0, scale) draw (floating point in both modes)."""
        u = self.random() - 0.5
        while u == -0.5:
            u = self.random() - 0.5
        return -scale * math.copysign(1.0, u) * math.log1p(-2.0 * abs(u))

    def gamma2(self, scale: float) -> float:
        """A Gamma(shape=2, scale) draw: the radius of the planar Laplace distribution."""
        u1, u2 = 1.0 - self.random(), 1.0 - self.random()
        return -scale * (math.log(u1) + math.log(u2))


class SeededRNG(SurrogateRNG):
    """Seeded, reproducible draws from a :class:`numpy.random.Generator` (studies)."""

    secure = False

    def __init__(self, seed: int | np.random.Generator | None = 0):
        self.generator = as_generator(seed)
        self._block = 64  # grows to _BLOCK: cheap for short documents, fast for long runs
        self._buf = self.generator.random(self._block)
        self._i = 0

    def random(self) -> float:
        if self._i >= self._block:
            self._block = min(2 * self._block, _BLOCK)
            self._buf = self.generator.random(self._block)
            self._i = 0
        u = self._buf[self._i]
        self._i += 1
        return float(u)

    def randbelow(self, n: int) -> int:
        if n <= 0:
            raise ValueError(f"randbelow needs a positive bound, got {n}")
        return min(int(self.random() * n), n - 1)

    def discrete_laplace(self, epsilon: float) -> int:
        if not (epsilon > 0 and math.isfinite(epsilon)):
            raise ValueError(f"epsilon must be a positive finite number, got {epsilon!r}")
        # difference of two iid geometric(1 - q) failure counts, q = exp(-epsilon)
        lq = -epsilon
        g1 = math.floor(math.log(1.0 - self.random()) / lq)
        g2 = math.floor(math.log(1.0 - self.random()) / lq)
        return int(g1 - g2)


_FORK_GENERATION = [0]


def _after_fork_in_child() -> None:  # a forked child must never reuse its parent's buffered bytes
    _FORK_GENERATION[0] += 1


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class _BufferedSystemRandom(secrets.SystemRandom):
    """:class:`secrets.SystemRandom` reading ``os.urandom`` in blocks of ``block`` bytes.

    Same distributions as ``SystemRandom`` (``random()`` takes 53 bits, ``getrandbits``
    the top ``k`` bits of ``ceil(k/8)`` bytes, ``randrange`` rejection-samples on
    ``getrandbits``), but one system call per block instead of one per draw (the
    secure mode's main cost). The unread part of a block lives in process memory, as in
    any user-space CSPRNG buffer; it is discarded in a forked child (``os.register_at_fork``)
    so that parent and child never share bytes."""

    def __init__(self, block: int = 4096):
        super().__init__()
        self._nblock = int(block)
        self._buf = b""
        self._pos = 0
        self._gen = _FORK_GENERATION[0]

    def _take(self, n: int) -> bytes:
        if self._gen != _FORK_GENERATION[0]:
            self._buf, self._pos, self._gen = b"", 0, _FORK_GENERATION[0]
        if self._pos + n > len(self._buf):
            self._buf = os.urandom(max(self._nblock, n))
            self._pos = 0
        b = self._buf[self._pos:self._pos + n]
        self._pos += n
        return b

    def random(self) -> float:
        return (int.from_bytes(self._take(7), "big") >> 3) * 2.0**-53

    def getrandbits(self, k: int) -> int:
        if k < 0:
            raise ValueError("number of bits must be non-negative")
        if k == 0:
            return 0
        n = (k + 7) // 8
        return int.from_bytes(self._take(n), "big") >> (n * 8 - k)

    def randbytes(self, n: int) -> bytes:
        return self._take(n)

    def _randbelow(self, n: int) -> int:
        """Uniform in ``0..n-1`` (``randrange``'s rejection sampling on ``n.bit_length()``
        random bits, with the buffer read inline: the secure mode's most frequent draw)."""
        if n <= 0:
            return 0
        k = n.bit_length()
        nb = (k + 7) // 8
        shift = nb * 8 - k
        while True:
            if self._gen != _FORK_GENERATION[0]:  # forked child: drop the parent's bytes
                self._buf, self._pos, self._gen = b"", 0, _FORK_GENERATION[0]
            if self._pos + nb > len(self._buf):
                self._buf, self._pos = os.urandom(max(self._nblock, nb)), 0
            r = int.from_bytes(self._buf[self._pos : self._pos + nb], "big") >> shift
            self._pos += nb
            if r < n:
                return r


class SecureRNG(SurrogateRNG):
    """CSPRNG draws (:class:`_BufferedSystemRandom` over ``os.urandom``) and an exact
    discrete Laplace sampler."""

    secure = True

    def __init__(self):
        self._sr = _BufferedSystemRandom()

    def random(self) -> float:
        return self._sr.random()

    def randbelow(self, n: int) -> int:
        if n <= 0:
            raise ValueError(f"randbelow needs a positive bound, got {n}")
        return self._sr._randbelow(n)

    # --- exact samplers (Canonne, Kamath & Steinke 2020) -------------------------------
    # Rationals are kept as integer pairs (numerator, denominator): the same exact
    # arithmetic as fractions.Fraction without its object overhead.
    def _bernoulli_exp(self, num: int, den: int) -> bool:
        """Bernoulli(exp(-num/den)) exactly, ``num/den >= 0`` (CKS20 Algorithm 1)."""
        rb = self._sr._randbelow
        while num > den:
            if not self._bernoulli_exp(1, 1):
                return False
            num -= den
        k = 1
        while rb(den * k) < num:  # Bernoulli(gamma / k)
            k += 1
        return k % 2 == 1

    def _geometric_exp(self, num: int, den: int) -> int:
        """Number of successes before the first failure of Bernoulli(exp(-num/den))."""
        n = 0
        while self._bernoulli_exp(num, den):
            n += 1
        return n

    def discrete_laplace(self, epsilon: float) -> int:
        """Exact two-sided geometric with ``P(k) ∝ exp(-epsilon |k|)`` (CKS20 Algorithm 2,
        scale ``t/s = 1/epsilon`` with ``epsilon = s/t`` rational, see :func:`_rational_at_most`)."""
        eps = _rational_cached(float(epsilon))
        s, t = eps.numerator, eps.denominator
        rb = self._sr._randbelow
        while True:
            u = rb(t)
            if not self._bernoulli_exp(u, t):
                continue
            v = self._geometric_exp(1, 1)
            x = u + t * v
            y = x // s
            b = rb(2)
            if b == 1 and y == 0:
                continue
            return -y if b else y


@functools.lru_cache(maxsize=1024)
def _rational_cached(x: float) -> Fraction:
    return _rational_at_most(x)


def make_rng(seed: int | np.random.Generator | None = 0, *, secure: bool = False) -> SurrogateRNG:
    """:class:`SecureRNG` when ``secure`` (the seed is then ignored), else :class:`SeededRNG`."""
    return SecureRNG() if secure else SeededRNG(seed)
