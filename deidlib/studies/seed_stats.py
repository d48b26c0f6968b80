"""Statistics over training seeds: t intervals of a mean and paired comparisons of two
configurations trained on the same seeds.

Same seed = same data split, initialisation stream and batch order, so two configurations'
scores on one seed form a pair; the paired difference removes the seed-to-seed variation they
share. The test is the paired t-test (a one-sample t-test on the per-seed differences); its
95 % t interval of the mean difference decides the verdict:

* ``found``: the interval lies wholly on the claimed side of zero;
* ``reversed``: it lies wholly on the other side (significantly opposite);
* ``not distinguishable from zero``: it contains zero;
* ``not measured``: fewer than two pairs.

No multiple-comparison correction is applied (each claim is tested once, at level 0.05).
Guarded by ``tests/studies/test_seed_stats.py``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats

__all__ = ["t_interval", "paired_effect", "effect_verdict"]

#: the verdicts :func:`effect_verdict` can return
_EFFECT_VERDICTS = ("found", "not distinguishable from zero", "reversed", "not measured")


def _finite(values: Sequence[float]) -> np.ndarray:
    x = np.asarray(values, dtype=float)
    return x[np.isfinite(x)]


def t_interval(values: Sequence[float], level: float = 0.95) -> tuple[float, float, float]:
    """``(mean, lo, hi)``: the two-sided Student t interval of the mean of ``values`` (NaNs
    dropped), ``mean ± t_{n-1} · sd / √n``. One value gives ``(x, nan, nan)``, none all NaN."""
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    x = _finite(values)
    if len(x) == 0:
        return math.nan, math.nan, math.nan
    m = float(x.mean())
    if len(x) < 2:
        return m, math.nan, math.nan
    half = float(stats.t.ppf(0.5 + level / 2, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))
    return m, m - half, m + half


def paired_effect(a: Sequence[float], b: Sequence[float], level: float = 0.95) -> dict[str, float]:
    """Paired t-test of ``a − b`` (element i of each = the same seed; pairs with a NaN dropped):
    ``n`` pairs, ``mean`` difference, its t interval ``lo``–``hi`` and the two-sided ``p``."""
    a_, b_ = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a_.shape != b_.shape:
        raise ValueError(f"paired samples need equal lengths, got {len(a_)} and {len(b_)}")
    d = a_ - b_
    d = np.round(d[np.isfinite(d)], 9)  # float noise of equal scores is no difference
    m, lo, hi = t_interval(d, level)
    p = math.nan
    if len(d) >= 2:
        if float(d.std(ddof=1)) == 0.0:
            p = 1.0 if m == 0 else 0.0
        else:
            p = float(stats.ttest_1samp(d, 0.0).pvalue)
    return {"n": int(len(d)), "mean": m, "lo": lo, "hi": hi, "p": p}


def effect_verdict(lo: float, hi: float, sign: float = 1.0) -> str:
    """The verdict on a claimed effect of sign ``sign`` (> 0: a − b positive, < 0: negative)
    from the interval ``[lo, hi]`` of the paired difference (see the module docstring)."""
    if sign == 0:
        raise ValueError("sign must be positive or negative")
    if lo is None or hi is None or math.isnan(lo) or math.isnan(hi):
        return "not measured"
    s = 1.0 if sign > 0 else -1.0
    lo_s, hi_s = sorted((s * lo, s * hi))
    if lo_s > 0:
        return "found"
    if hi_s < 0:
        return "reversed"
    return "not distinguishable from zero"
