"""Privacy accounting for DP-SGD (ahmed thesis §5.1.2, Algorithm 1).

Everything here delegates to Opacus' accountants (``prv`` — the PRV accountant of
Gopi et al. 2021, our default because it is the tightest; ``rdp`` — the Rényi/moments
accountant of Mironov 2017 / Abadi et al. 2016 that the thesis' "Moments accountant"
refers to; ``gdp`` — the Gaussian-DP CLT accountant of Dong et al. 2019, which Opacus
flags as experimental and which can *under*-estimate ε). A DP-SGD run with Poisson
sampling rate ``q`` (= lot size / N), noise multiplier ``σ`` and ``T`` steps is
``(ε, δ)``-DP with ``ε = epsilon(σ, q, T, δ)``.

Table 5.3 of the thesis and its inversion to the thesis' number of training sequences are
replications of one study and live with it (:mod:`deidlib.studies.ahmed_dp.accounting`).

Bounds (so that no call runs unbounded; ``tests/privacy/test_accounting_bounds.py`` times them):

* σ must be finite and at most :data:`MAX_NOISE_MULTIPLIER` (10³). σ = ∞ would give ε = 0 but
  adds infinite noise (the model learns nothing), and Opacus' PRV accountant does not return
  for it; far below 10³ every accountant already reports its numerical floor (RDP ≈ 0.1, PRV
  ≈ 0.01 at δ = 1e-5), so a larger σ buys nothing measurable.
* A target ε must lie in (0, :data:`MAX_TARGET_EPSILON`] (100): e^100 ≈ 10⁴³ bounds no
  likelihood ratio anyone cares about, and calibrating towards σ → 0 leaves the accountants'
  stable range. :func:`noise_for_epsilon` searches σ in
  [:data:`_MIN_CALIBRATED_NOISE`, :data:`MAX_NOISE_MULTIPLIER`] with at most
  :data:`_MAX_CALIBRATION_STEPS` accountant calls and raises ``ValueError`` when even σ = 10³
  does not reach the target (below the accountant's floor, or spent by earlier phases).
"""

from __future__ import annotations

import math
import warnings

__all__ = [
    "ACCOUNTANTS",
    "epsilon",
    "noise_for_epsilon",
    "steps_for",
    "MAX_NOISE_MULTIPLIER",
    "MAX_TARGET_EPSILON",
]

#: the largest noise multiplier the accountants are asked about (see the module docstring)
MAX_NOISE_MULTIPLIER = 1e3
#: the largest target ε that :func:`noise_for_epsilon` calibrates σ for
MAX_TARGET_EPSILON = 100.0
#: the smallest σ :func:`noise_for_epsilon` returns: when even it spends less than the target,
#: it is the answer (the run spends less than asked); below it the accountants leave their
#: stable range (PRV returns ∞ or fails, RDP slows down by orders of magnitude)
_MIN_CALIBRATED_NOISE = 0.05
#: the most accountant calls of one :func:`noise_for_epsilon` (bisection on log σ)
_MAX_CALIBRATION_STEPS = 40

ACCOUNTANTS = ("prv", "rdp", "gdp")

def _check(noise_multiplier: float, sample_rate: float, steps: int, delta: float, accountant: str) -> None:
    if accountant not in ACCOUNTANTS:
        raise ValueError(f"unknown accountant {accountant!r}; choose one of {', '.join(ACCOUNTANTS)}")
    if not noise_multiplier > 0:
        raise ValueError(f"noise_multiplier must be > 0 (got {noise_multiplier}); σ = 0 gives ε = ∞")
    if not noise_multiplier <= MAX_NOISE_MULTIPLIER:
        raise ValueError(
            f"noise_multiplier must be at most {MAX_NOISE_MULTIPLIER:g} (got {noise_multiplier}): "
            "beyond it the accountants only report their numerical floor and the noise drowns every gradient"
        )
    if not 0 < sample_rate <= 1:
        raise ValueError(f"sample_rate must be in (0, 1] (got {sample_rate})")
    if int(steps) != steps or steps < 1:
        raise ValueError(f"steps must be a positive integer (got {steps})")
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1) (got {delta})")


def epsilon(
    noise_multiplier: float,
    sample_rate: float,
    steps: int,
    delta: float = 1e-5,
    accountant: str = "prv",
    *,
    history: list[tuple[float, float, int]] | None = None,
) -> float:
    """ε of ``steps`` Poisson-subsampled Gaussian steps (σ = ``noise_multiplier``, q =
    ``sample_rate``) at ``delta`` with an Opacus accountant. ``history`` adds earlier phases
    [(σ, q, steps), ...] (e.g. pre-training then fine-tuning on the *same* data)."""
    _check(noise_multiplier, sample_rate, steps, delta, accountant)
    from opacus.accountants import create_accountant

    with warnings.catch_warnings():
        # GDP is flagged experimental by Opacus (documented above); PRV overflows for huge ε
        warnings.filterwarnings("ignore", message="GDP accounting is experimental")
        warnings.filterwarnings("ignore", message=".*[Oo]ptimal order.*")
        warnings.filterwarnings("ignore", category=RuntimeWarning)
        acc = create_accountant(accountant)
        acc.history = [*(history or []), (float(noise_multiplier), float(sample_rate), int(steps))]
        if accountant != "prv":
            return float(acc.get_epsilon(delta))
        # PRV's FFT grid spans [0, ~ε] at a spacing set by eps_error, so memory grows with
        # ε / eps_error: with Opacus' absolute eps_error = 0.01, 122k steps at σ = 0.25 (ε ≈ 338,
        # the nursing notes' Table 5.3 row) needed > 20 GB and notebook 04 was OOM-killed. We
        # ask for a relative accuracy instead: eps_error = max(0.01, 1e-3 · ε_RDP) (RDP bounds
        # the PRV value from above), i.e. PRV's reported ε is within 0.1 % of ε_RDP's size.
        rdp = create_accountant("rdp")
        rdp.history = acc.history
        eps_error = max(0.01, 1e-3 * float(rdp.get_epsilon(delta)))
        return float(acc.get_epsilon(delta, eps_error=eps_error))


def noise_for_epsilon(
    target_epsilon: float,
    sample_rate: float,
    steps: int,
    delta: float = 1e-5,
    accountant: str = "prv",
    epsilon_tolerance: float = 0.01,
    *,
    history: list[tuple[float, float, int]] | None = None,
) -> float:
    """The smallest σ (within ``epsilon_tolerance`` of the target, or within 0.01 % of σ) with
    ``epsilon(σ, q, steps, δ) <= target_epsilon``; ``history``: earlier phases on the same data
    [(σ, q, steps)], composed with the new one.

    Bisection on log σ inside [:data:`_MIN_CALIBRATED_NOISE`, :data:`MAX_NOISE_MULTIPLIER`], at most
    :data:`_MAX_CALIBRATION_STEPS` accountant calls; the σ returned always satisfies the target.
    ``ValueError`` when the target is outside (0, :data:`MAX_TARGET_EPSILON`] or cannot be reached
    with σ <= :data:`MAX_NOISE_MULTIPLIER` (below the accountant's floor, or the earlier phases
    alone spend it). When even :data:`_MIN_CALIBRATED_NOISE` spends less than the target, that σ
    is returned."""
    _check(1.0, sample_rate, steps, delta, accountant)
    if not 0 < target_epsilon <= MAX_TARGET_EPSILON:
        raise ValueError(
            f"target ε must lie in (0, {MAX_TARGET_EPSILON:g}] (got {target_epsilon:g}): above it DP-SGD "
            "promises nothing (e^ε bounds the likelihood ratio) and σ leaves the accountants' stable range"
        )

    def eps(s: float) -> float:
        try:
            e = epsilon(s, sample_rate, steps, delta, accountant, history=history)
        except (ValueError, ArithmeticError, RuntimeError):
            return math.inf  # the accountants' root finders fail where ε is huge (small σ)
        return e if math.isfinite(e) else math.inf

    lo, hi = _MIN_CALIBRATED_NOISE, MAX_NOISE_MULTIPLIER
    e_hi = eps(hi)
    if not e_hi <= target_epsilon:
        raise ValueError(
            f"ε = {target_epsilon:g} at δ = {delta:g} is unreachable: even σ = {hi:g} spends ε = {e_hi:.4g} "
            f"({accountant} accountant{'; the earlier phases alone spend nearly all of it' if history else ''})"
        )
    if eps(lo) <= target_epsilon:
        return lo
    for _ in range(_MAX_CALIBRATION_STEPS - 2):
        if target_epsilon - e_hi <= epsilon_tolerance or hi / lo <= 1 + 1e-4:
            break
        mid = math.sqrt(lo * hi)
        e = eps(mid)
        if e <= target_epsilon:
            hi, e_hi = mid, e
        else:
            lo = mid
    return hi


def steps_for(n: int, batch_size: int, epochs: float) -> tuple[float, int]:
    """(q, T) of ``epochs`` passes over ``n`` examples with expected lot size ``batch_size``:
    q = batch_size / n, T = round(epochs / q) (Opacus' DPDataLoader: n/batch_size steps per epoch)."""
    if n < 1 or batch_size < 1 or epochs <= 0:
        raise ValueError(f"need n >= 1, batch_size >= 1, epochs > 0 (got {n}, {batch_size}, {epochs})")
    if batch_size > n:
        raise ValueError(f"batch_size {batch_size} exceeds the number of examples {n}")
    q = batch_size / n
    return q, max(1, round(epochs / q))
