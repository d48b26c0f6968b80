"""Empirical lower bounds on ε from a distinguishing attack (Jagielski, Ullman & Oprea 2020,
"Auditing Differentially Private Machine Learning", §3 and Algorithm 2; Nasr et al. 2021
"Adversary Instantiation", §3).

If a mechanism M is (ε, δ)-DP then every test that tells M(D) from M(D') (neighbours) with
false-positive rate FPR and false-negative rate FNR satisfies (Kairouz et al. 2015, Thm 2.1)

    FPR + e^ε · FNR ≥ 1 − δ     and     FNR + e^ε · FPR ≥ 1 − δ,

so ε ≥ max(ln((1 − δ − FPR)/FNR), ln((1 − δ − FNR)/FPR)). The rates are estimated from
trials, so we replace them by their one-sided Clopper–Pearson upper bounds at level α/2 each:
the resulting ε_LB is a lower bound on the true ε with confidence ≥ 1 − α. A correct
accountant's ε must never be below it — an audit above the accountant's ε is a bug
(:func:`audit_dp_step` is the test of :mod:`deidlib.privacy.dpsgd`'s noise; :func:`raise_if_violated`
turns such a result into an error).

Threshold choice (documented): picking the best threshold on the same trials that estimate
the rates would void the confidence; :func:`_audit_epsilon` picks it on the first half of the
trials (the "calibration" half) and bounds the rates on the second half only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, is_dataclass

import numpy as np
import torch
from scipy.stats import beta

from ..privacy.accounting import epsilon as accountant_epsilon
from ..privacy.gradients import clip_and_noise

__all__ = ["audit_dp_step", "raise_if_violated"]


def _clopper_pearson_upper(k: int, n: int, alpha: float) -> float:
    """One-sided (1 − α) Clopper–Pearson upper bound of a binomial proportion (k of n)."""
    if n <= 0 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n > 0, got k={k}, n={n}")
    if k == n:
        return 1.0
    return float(beta.ppf(1 - alpha, k + 1, n - k))


def _epsilon_from_rates(fpr: float, fnr: float, delta: float) -> float:
    """The largest ε the rates (FPR, FNR) of one test rule prove at ``delta`` (0 if none)."""
    best = 0.0
    for a, b in ((fpr, fnr), (fnr, fpr)):
        num = 1.0 - delta - a
        if num <= 0:
            continue
        best = max(best, math.inf if b <= 0 else math.log(num / b))
    return best


def _rates(scores_in: np.ndarray, scores_out: np.ndarray, t: float) -> tuple[int, int]:
    """(false positives, false negatives) of the rule "member if score > t"."""
    return int((scores_out > t).sum()), int((scores_in <= t).sum())


def epsilon_lower_bound(scores_in: Sequence[float] | np.ndarray, scores_out: Sequence[float] | np.ndarray,
                        threshold: float, *, delta: float, alpha: float = 0.05) -> float:
    """ε_LB of the fixed rule "member if score > threshold" with confidence 1 − α."""
    a, b = np.asarray(scores_in, float), np.asarray(scores_out, float)
    fp, fn = _rates(a, b, threshold)
    fpr = _clopper_pearson_upper(fp, b.size, alpha / 2)
    fnr = _clopper_pearson_upper(fn, a.size, alpha / 2)
    return _epsilon_from_rates(fpr, fnr, delta)


def _audit_epsilon(scores_in: Sequence[float], scores_out: Sequence[float], *, delta: float,
                  alpha: float = 0.05) -> tuple[float, float]:
    """``(ε_LB, threshold)``: the threshold that maximises the *point* estimate of ε on the
    first half of each score list, then the Clopper–Pearson bound on the second half."""
    a, b = np.asarray(scores_in, float), np.asarray(scores_out, float)
    if a.size < 4 or b.size < 4:
        raise ValueError("an ε audit needs at least 4 trials per world")
    ha, hb = a.size // 2, b.size // 2
    ca, cb, ta, tb = a[:ha], b[:hb], a[ha:], b[hb:]
    ts = np.unique(np.r_[ca, cb])
    sa, sb = np.sort(ca), np.sort(cb)
    fp = cb.size - np.searchsorted(sb, ts, side="right")  # non-members above t
    fn = np.searchsorted(sa, ts, side="right")  # members at or below t
    # a smoothed point estimate (add-one), so that zero counts do not all tie at ∞
    fpr, fnr = (fp + 1) / (cb.size + 2), (fn + 1) / (ca.size + 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.maximum(np.log(np.clip(1 - delta - fpr, 1e-300, None) / fnr),
                       np.log(np.clip(1 - delta - fnr, 1e-300, None) / fpr))
    best_t = float(ts[int(np.argmax(e))])
    return epsilon_lower_bound(ta, tb, best_t, delta=delta, alpha=alpha), best_t


class AuditVerdict:
    """What every ε audit record says beside its numbers (``epsilon_lower_bound`` and
    ``accountant_epsilon`` fields of a dataclass): whether it proves a privacy bug."""

    epsilon_lower_bound: float
    accountant_epsilon: float

    @property
    def violated(self) -> bool:
        """True when the audit proves more leakage than the accountant allows (a bug)."""
        return self.epsilon_lower_bound > self.accountant_epsilon

    def to_dict(self) -> dict:
        if not is_dataclass(self):
            raise TypeError(f"{type(self).__name__} is not a dataclass")
        return {**asdict(self), "violated": self.violated}


@dataclass(frozen=True)
class EpsilonAudit(AuditVerdict):
    """One audit: the mechanism's claimed ε (accountant) and the empirical lower bound."""

    claimed_noise_multiplier: float
    actual_noise_multiplier: float
    delta: float
    accountant: str
    accountant_epsilon: float
    epsilon_lower_bound: float
    confidence: float
    trials: int


def audit_dp_step(noise_multiplier: float, *, actual_noise_multiplier: float | None = None, trials: int = 2000,
                  max_grad_norm: float = 1.0, dim: int = 4, delta: float = 1e-5, alpha: float = 0.05,
                  accountant: str = "rdp", seed: int = 0) -> EpsilonAudit:
    """White-box audit of one DP-SGD step (:func:`deidlib.privacy.gradients.clip_and_noise`, the
    noise path of ``dp_step``) with a gradient canary (Nasr et al. 2021, §4 "gradient canary";
    the strongest adversary: it chooses the gradient of the differing unit and sees the noisy
    sum).

    World "out": a lot with no unit (the other units contribute zero gradients, the worst
    case for the accountant); world "in": the canary unit whose gradient is ``10·C·e₁``
    (clipped to ``C·e₁`` by the mechanism). The released sum's first coordinate is the test
    score. The accountant's ε is that of one step with sampling rate 1 at
    ``noise_multiplier`` (the *claimed* σ); ``actual_noise_multiplier`` lets a test run a
    deliberately broken mechanism that adds less noise than it claims."""
    if trials < 8:
        raise ValueError("an audit needs at least 8 trials")
    actual = noise_multiplier if actual_noise_multiplier is None else actual_noise_multiplier
    gen = torch.Generator().manual_seed(int(seed))
    canary = torch.zeros(1, dim, dtype=torch.float64)
    canary[0, 0] = 10.0 * max_grad_norm
    empty = torch.zeros(0, dim, dtype=torch.float64)
    s_in, s_out = [], []
    for _ in range(trials):
        (g,), _ = clip_and_noise([canary], max_grad_norm, actual, 1.0, gen)
        s_in.append(float(g[0]))
        (g,), _ = clip_and_noise([empty], max_grad_norm, actual, 1.0, gen)
        s_out.append(float(g[0]))
    lb, _ = _audit_epsilon(s_in, s_out, delta=delta, alpha=alpha)
    claimed = accountant_epsilon(noise_multiplier, 1.0, 1, delta, accountant)
    return EpsilonAudit(float(noise_multiplier), float(actual), delta, accountant, claimed, lb, 1 - alpha, trials)


def raise_if_violated(audits) -> None:
    """Raise ``RuntimeError("privacy bug: ...")`` if an audit of a correct mechanism proves a larger
    ε than its accountant: ``audits`` are dicts (or objects with ``to_dict``) with
    ``epsilon_lower_bound`` and ``accountant_epsilon``; rows with ``broken=True`` (a mechanism
    broken on purpose, which the audit is *meant* to catch) are skipped."""
    rows = [a.to_dict() if hasattr(a, "to_dict") else dict(a) for a in audits]
    bad = [r for r in rows if not r.get("broken", False) and r["epsilon_lower_bound"] > r["accountant_epsilon"]]
    if bad:
        raise RuntimeError(f"privacy bug: an audit exceeds the accountant's ε: {bad}")
