"""Privacy mechanisms for surrogates: pure functions (Tchouka, Couchot & Laiymani 2023).

* :func:`ddp_laplace` — paper section 4.1, Definition 2 with the ε·d-privacy of Definition 3
  (Alvim et al. 2018; Fernandes 2021): ``v + Lap(1/ε)`` with ``d(v1, v2) = |v1 - v2|`` in the
  unit the expression is written in. Dates and ages are integers in that unit, so the
  noise here is the **discrete** Laplace (two-sided geometric, ``P(k) ∝ exp(-ε|k|)``): for
  integer inputs ``P(v1 + K = y) / P(v2 + K = y) = exp(-ε(|y-v1| - |y-v2|)) <= exp(ε|v1-v2|)``,
  the same guarantee as the paper's continuous Laplace followed by rounding, and it can be
  sampled exactly (:class:`~deidlib.surrogates.randomness.SecureRNG`). The paper writes the
  noise as ``Lap(Δ/ε)`` in Definition 2 and says the d-privacy version uses parameter
  ``ε^{-1}`` (the converted PDF garbles the formula; reconstructed from the prose).
* :func:`_bounded_laplace` / :func:`ldp_time_category` — the baseline of Tchouka et al. 2022
  recalled in section 4.1: ε-LDP with a Laplace mechanism bounded to one of three time
  categories (less than 2 months, less than 2 years, more than 2 years, up to 100 years) in
  days. Bounded (truncated-and-renormalised) Laplace as in Holohan et al. 2018; the scale
  is calibrated **exactly on the integer domain** so that the truncation does not break
  ε-LDP (a plain ``Δ/ε`` scale would, because the normaliser depends on the input).
  Choices where the papers are vague: categories ``[0, 60]``, ``[61, 730]``, ``[731, 36500]``
  days (2 months taken as 60 days, 2 years as 730, 100 years as 36,500 — the paper's
  "100×365 days"); a value is put in the category of ``|v|`` and the sign is kept (dates
  after the reference date); values beyond 36,500 days are clamped into the last category.
* :func:`exponential_probabilities` — section 4.2, equation (4), Algorithm 1: the local
  exponential mechanism over candidate places with score ``U = 1 - d``. ``exp(ε U)`` is
  proportional to ``exp(-ε d)``; ``factor`` scales the exponent (``factor=0.5`` is the
  textbook ε/2 that makes the mechanism ε·d-private over a *fixed* candidate set, see
  :mod:`deidlib.surrogates.locations`).
* :func:`planar_laplace_offset` — geo-indistinguishability (Andrés et al. 2013): a 2-D
  Laplace in the plane, angle uniform and radius ``Gamma(2, 1/ε)`` (the exact radial
  law of the planar Laplace; Andrés et al. invert its CDF with the Lambert W function,
  which samples the same distribution), ε per kilometre.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .randomness import SurrogateRNG

__all__ = [
    "EARTH_KM",
    "discrete_laplace_pmf",
    "ddp_laplace_array",
    "calibrate_bounded_scale",
    "ldp_time_category_array",
    "exponential_probabilities",
    "EARTH_KM",
]


def _check_eps(epsilon: float) -> float:
    if not (isinstance(epsilon, (int, float, np.floating)) and epsilon > 0 and math.isfinite(epsilon)):
        raise ValueError(f"epsilon must be a positive finite number, got {epsilon!r}")
    return float(epsilon)


# ----------------------------------------------------------------------------- d-privacy Laplace
def discrete_laplace_pmf(k, epsilon: float) -> np.ndarray:
    """``P(K = k) = (1 - q) / (1 + q) * q^|k|`` with ``q = exp(-epsilon)``."""
    eps = _check_eps(epsilon)
    q = math.exp(-eps)
    return (1 - q) / (1 + q) * np.exp(-eps * np.abs(np.asarray(k, dtype=float)))


def _discrete_laplace_array(epsilon: float, size, generator: np.random.Generator) -> np.ndarray:
    """Vectorised two-sided geometric noise (studies; floating point, seeded)."""
    eps = _check_eps(epsilon)
    p = -math.expm1(-eps)  # 1 - exp(-eps)
    return generator.geometric(p, size).astype(np.int64) - generator.geometric(p, size).astype(np.int64)


def ddp_laplace(value: int, epsilon: float, rng: SurrogateRNG) -> int:
    """ε·d-private integer release ``value + K``, ``K`` discrete Laplace (paper Definition 3)."""
    _check_eps(epsilon)
    return int(value) + rng.discrete_laplace(epsilon)


def ddp_laplace_array(values, epsilon: float, generator: np.random.Generator) -> np.ndarray:
    """:func:`ddp_laplace` over an array of integers (independent noise per element)."""
    v = np.asarray(values, dtype=np.int64)
    return v + _discrete_laplace_array(epsilon, v.shape, generator)


def _continuous_laplace(value: float, epsilon: float, rng: SurrogateRNG) -> float:
    """``value + Lap(1/ε)`` (paper Definition 2 with Δ = 1), floating point."""
    return float(value) + rng.laplace(1.0 / _check_eps(epsilon))


# ----------------------------------------------------------------------------- bounded LDP baseline
#: Tchouka et al. 2022 time categories in days: < 2 months, < 2 years, >= 2 years (to 100 years).
_TIME_CATEGORIES_DAYS: tuple[tuple[int, int], ...] = ((0, 60), (61, 730), (731, 36500))


def _time_category(days: int) -> tuple[int, int]:
    """The category ``(lower, upper)`` of ``|days|`` (clamped into the last one)."""
    a = abs(int(days))
    for lo, hi in _TIME_CATEGORIES_DAYS:
        if a <= hi:
            return lo, hi
    return _TIME_CATEGORIES_DAYS[-1]


def _log_normalisers(n: int, scale: float) -> np.ndarray:
    """``log Z(v)`` for ``v = 0..n-1`` on the domain ``0..n-1``: ``Z(v) = Σ_y exp(-|y-v|/b)``."""
    r = math.exp(-1.0 / scale)
    v = np.arange(n, dtype=float)
    # geometric sums: Σ_{j=0}^{v} r^j + Σ_{j=1}^{n-1-v} r^j
    if r >= 1.0 - 1e-15:
        return np.log(np.full(n, float(n)))
    left = -np.expm1((v + 1) * math.log(r)) / (1 - r)
    right = r * -np.expm1((n - 1 - v) * math.log(r)) / (1 - r)
    return np.log(left + right)


def _bounded_laplace_epsilon(lower: int, upper: int, scale: float) -> float:
    """The exact ε of the discrete bounded Laplace on ``lower..upper`` with ``scale``:
    ``max_{v1,v2,y} log P(y|v1)/P(y|v2) = max_{v1,v2} |v1-v2|/b + log Z(v2) - log Z(v1)``."""
    n = int(upper) - int(lower) + 1
    if n < 1:
        raise ValueError(f"empty domain {lower}..{upper}")
    if n == 1:
        return 0.0
    lz = _log_normalisers(n, scale)
    v = np.arange(n, dtype=float)
    # v2 >= v1: (v2/b + lz[v2]) - (v1/b + lz[v1]); suffix max of a = v/b + lz
    a = v / scale + lz
    suf = np.maximum.accumulate(a[::-1])[::-1]
    best_up = np.max(suf - a)
    # v2 <= v1: (-v2/b + lz[v2]) + v1/b - lz[v1]; prefix max of c = -v/b + lz
    c = -v / scale + lz
    pre = np.maximum.accumulate(c)
    best_down = np.max(pre - c)
    return float(max(best_up, best_down))


@lru_cache(maxsize=256)
def calibrate_bounded_scale(lower: int, upper: int, epsilon: float) -> float:
    """The smallest scale ``b`` (bisection, 1e-6 relative) for which the discrete bounded
    Laplace on ``lower..upper`` is ε-LDP (Holohan et al. 2018's calibration, done exactly
    on the integer domain)."""
    eps = _check_eps(epsilon)
    n = upper - lower
    lo, hi = 1e-9, max(1.0, n / eps)
    while _bounded_laplace_epsilon(lower, upper, hi) > eps:
        hi *= 2
    lo = hi / 2
    while _bounded_laplace_epsilon(lower, upper, lo) <= eps and lo > 1e-9:
        lo /= 2
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if _bounded_laplace_epsilon(lower, upper, mid) > eps:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-6 * hi:
            break
    return hi


def _bounded_laplace_pmf(value: int, lower: int, upper: int, scale: float) -> np.ndarray:
    """Output distribution on ``lower..upper`` (index ``y - lower``) for input ``value``."""
    y = np.arange(lower, upper + 1, dtype=float)
    w = np.exp(-np.abs(y - value) / scale)
    return w / w.sum()


def _bounded_laplace(value: int, lower: int, upper: int, epsilon: float, rng: SurrogateRNG) -> int:
    """ε-LDP release of ``value`` in ``lower..upper`` (rejection sampling of the discrete
    Laplace with the calibrated scale until the draw falls in the domain)."""
    if not lower <= value <= upper:
        raise ValueError(f"value {value} outside the domain {lower}..{upper}")
    b = calibrate_bounded_scale(int(lower), int(upper), float(epsilon))
    while True:
        y = value + rng.discrete_laplace(1.0 / b)
        if lower <= y <= upper:
            return int(y)


def _bounded_laplace_array(values, lower: int, upper: int, epsilon: float, generator: np.random.Generator) -> np.ndarray:
    """Vectorised :func:`_bounded_laplace` (rejection on the whole array)."""
    v = np.asarray(values, dtype=np.int64)
    if v.size and (v.min() < lower or v.max() > upper):
        raise ValueError(f"values outside the domain {lower}..{upper}")
    b = calibrate_bounded_scale(int(lower), int(upper), float(epsilon))
    out = v + _discrete_laplace_array(1.0 / b, v.shape, generator)
    bad = (out < lower) | (out > upper)
    while bad.any():
        out[bad] = v[bad] + _discrete_laplace_array(1.0 / b, int(bad.sum()), generator)
        bad = (out < lower) | (out > upper)
    return out


def ldp_time_category(days: int, epsilon: float, rng: SurrogateRNG) -> int:
    """Tchouka et al. 2022 baseline: bounded-Laplace ε-LDP inside the time category of ``|days|``."""
    lo, hi = _time_category(days)
    a = min(abs(int(days)), hi)
    sign = -1 if days < 0 else 1
    return sign * _bounded_laplace(a, lo, hi, epsilon, rng)


def ldp_time_category_array(days, epsilon: float, generator: np.random.Generator) -> np.ndarray:
    """Vectorised :func:`ldp_time_category`."""
    d = np.asarray(days, dtype=np.int64)
    a = np.abs(d)
    sign = np.where(d < 0, -1, 1)
    out = np.empty_like(d)
    for i, (lo, hi) in enumerate(_TIME_CATEGORIES_DAYS):
        prev_hi = _TIME_CATEGORIES_DAYS[i - 1][1] if i else -1
        m = (a > prev_hi) & ((a <= hi) | (i == len(_TIME_CATEGORIES_DAYS) - 1))
        if m.any():
            out[m] = _bounded_laplace_array(np.minimum(a[m], hi), lo, hi, epsilon, generator)
    return sign * out


# ----------------------------------------------------------------------------- exponential mechanism
def exponential_probabilities(distances, epsilon: float, *, factor: float = 1.0) -> np.ndarray:
    """``P_i ∝ exp(factor * ε * U_i)`` with ``U_i = 1 - d_i`` (paper eq. 4; ``factor=1``
    is the paper's constant, ``0.5`` the textbook ε/2). Infinite distances get probability 0."""
    eps = _check_eps(epsilon)
    d = np.asarray(distances, dtype=float)
    if d.ndim != 1 or d.size == 0:
        raise ValueError("distances must be a non-empty 1-D array")
    finite = np.isfinite(d)
    if not finite.any():
        raise ValueError("no candidate with a finite distance")
    z = np.where(finite, -factor * eps * d, -np.inf)
    z -= z[finite].max()
    w = np.exp(z)
    return w / w.sum()


# ----------------------------------------------------------------------------- geo-indistinguishability
#: mean Earth radius in km (IUGG), for the planar Laplace offsets and haversine distances
EARTH_KM = 6371.0088


def planar_laplace_offset(epsilon_per_km: float, rng: SurrogateRNG) -> tuple[float, float]:
    """A planar Laplace offset ``(east_km, north_km)`` with density ∝ ``exp(-ε r)``."""
    eps = _check_eps(epsilon_per_km)
    theta = 2 * math.pi * rng.random()
    r = rng.gamma2(1.0 / eps)
    return r * math.cos(theta), r * math.sin(theta)


def offset_latlon(lat: float, lon: float, east_km: float, north_km: float) -> tuple[float, float]:
    """Move a point by a local east/north offset (equirectangular; exact enough for < 1000 km)."""
    nlat = lat + math.degrees(north_km / EARTH_KM)
    coslat = max(math.cos(math.radians(lat)), 1e-6)
    nlon = lon + math.degrees(east_km / (EARTH_KM * coslat))
    nlat = max(-90.0, min(90.0, nlat))
    nlon = (nlon + 180.0) % 360.0 - 180.0
    return nlat, nlon


def haversine_km(lat1, lon1, lat2, lon2) -> np.ndarray:
    """Great-circle distance in km (vectorised)."""
    p1, p2 = np.radians(lat1), np.radians(lat2)
    dphi = p2 - p1
    dl = np.radians(np.asarray(lon2) - np.asarray(lon1))
    a = np.sin(dphi / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin(dl / 2) ** 2
    return 2 * EARTH_KM * np.arcsin(np.sqrt(np.clip(a, 0.0, 1.0)))
