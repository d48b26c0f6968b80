"""Empirical checks of ε·d-privacy from samples (the notebook's guarantee check and the tests).

For two neighbouring secrets ``v1, v2`` a mechanism ``M`` is ε·d-private iff for every output
set ``S``: ``P(M(v1) ∈ S) <= exp(L) P(M(v2) ∈ S)`` with ``L = ε d(v1, v2)`` (paper
Definition 3). :func:`ratio_test` draws ``n`` outputs for each secret, bins them and, for
every bin, tests the null hypothesis "the bound holds" with an exact conditional binomial
test: given ``m = c1 + c2`` draws in the bin (equal sample sizes), ``c1 ~ Binomial(m, π)``
with ``π = p1 / (p1 + p2)``; the bound means ``π <= e^L / (1 + e^L)``. A bin rejects when the
one-sided p-value is below ``alpha / (2 * bins)`` (Bonferroni over bins and both
directions). The tolerance therefore follows from the sample size: with few draws only a
gross violation is detected, with many draws a small one. A support mismatch (outputs one
secret can produce and the other cannot) shows up as ``c2 = 0`` with large ``c1``.

The test is one-sided in the useful direction: it can show that a mechanism is *not*
ε·d-private (``passed=False``), and a correct mechanism passes with probability at least
``1 - alpha``; passing is evidence, not a proof.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.stats import binom

__all__ = ["RatioTest", "ratio_test", "empirical_log_ratios"]


@dataclass
class RatioTest:
    """Outcome of :func:`ratio_test`."""

    bound: float  #: the claimed log bound L = ε d(v1, v2)
    passed: bool
    min_p_value: float
    threshold: float  #: per-bin p-value threshold (alpha / (2 bins))
    bins: int
    n: int
    max_log_ratio: float  #: largest ``|log(c1/c2)|`` over bins where both counts are >= min_count
    worst_bin: object = None
    details: list[dict] = field(default_factory=list)


def _bin_counts(a, b, bins):
    a = np.asarray(a)
    b = np.asarray(b)
    if bins is None:
        keys, inv = np.unique(np.concatenate([a, b]), return_inverse=True)
        ca = np.bincount(inv[: len(a)], minlength=len(keys))
        cb = np.bincount(inv[len(a):], minlength=len(keys))
        return keys, ca, cb
    edges = np.asarray(bins, dtype=float)
    ca, _ = np.histogram(a, edges)
    cb, _ = np.histogram(b, edges)
    keys = np.stack([edges[:-1], edges[1:]], axis=1)
    return keys, ca, cb


def empirical_log_ratios(samples_1, samples_2, *, bins=None, min_count: int = 30):
    """Per-bin ``log(c1/c2)`` where both counts reach ``min_count``: ``(keys, log_ratios)``."""
    keys, c1, c2 = _bin_counts(samples_1, samples_2, bins)
    m = (c1 >= min_count) & (c2 >= min_count)
    return keys[m], np.log(c1[m] / c2[m])


def ratio_test(samples_1, samples_2, bound: float, *, bins=None, alpha: float = 1e-3,
               min_count: int = 30) -> RatioTest:
    """Test ``P(M(v1) ∈ S) <= e^bound P(M(v2) ∈ S)`` and the reverse on every bin ``S``.

    ``samples_1`` / ``samples_2``: outputs for ``v1`` and ``v2`` (same length); ``bins``:
    ``None`` (every distinct output is a bin) or histogram edges.
    """
    n1, n2 = len(samples_1), len(samples_2)
    if n1 != n2 or n1 == 0:
        raise ValueError(f"need two non-empty samples of equal size, got {n1} and {n2}")
    if not (bound >= 0 and np.isfinite(bound)):
        raise ValueError(f"bound must be finite and >= 0, got {bound!r}")
    keys, c1, c2 = _bin_counts(samples_1, samples_2, bins)
    used = (c1 + c2) > 0
    keys, c1, c2 = keys[used], c1[used], c2[used]
    nb = len(c1)
    pi0 = np.exp(bound) / (1.0 + np.exp(bound))
    m = c1 + c2
    p_12 = binom.sf(c1 - 1, m, pi0)  # P(X >= c1)
    p_21 = binom.sf(c2 - 1, m, pi0)
    pv = np.minimum(p_12, p_21)
    thr = alpha / (2 * max(nb, 1))
    i = int(np.argmin(pv))
    ok = (c1 >= min_count) & (c2 >= min_count)
    lr = np.abs(np.log(c1[ok] / c2[ok])) if ok.any() else np.array([0.0])
    worst = keys[i].tolist() if hasattr(keys[i], "tolist") else keys[i]
    details = [
        {"bin": (k.tolist() if hasattr(k, "tolist") else k), "c1": int(a), "c2": int(b), "p": float(p)}
        for k, a, b, p in zip(keys, c1, c2, pv) if p < thr
    ]
    return RatioTest(bound=float(bound), passed=bool(pv[i] >= thr), min_p_value=float(pv[i]), threshold=thr,
                     bins=nb, n=n1, max_log_ratio=float(lr.max()), worst_bin=worst, details=details[:20])
