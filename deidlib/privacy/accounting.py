"""Privacy accounting for DP-SGD (ahmed thesis §5.1.2, Algorithm 1; Table 5.3).

Everything here delegates to Opacus' accountants (``prv`` — the PRV accountant of
Gopi et al. 2021, our default because it is the tightest; ``rdp`` — the Rényi/moments
accountant of Mironov 2017 / Abadi et al. 2016 that the thesis' "Moments accountant"
refers to; ``gdp`` — the Gaussian-DP CLT accountant of Dong et al. 2019, which Opacus
flags as experimental and which can *under*-estimate ε). A DP-SGD run with Poisson
sampling rate ``q`` (= lot size / N), noise multiplier ``σ`` and ``T`` steps is
``(ε, δ)``-DP with ``ε = epsilon(σ, q, T, δ)``.

Table 5.3 of the thesis (batch size 16, 100 epochs, δ = 1e-5) gives ε for σ = 0.25/0.45/0.55
but not the number of training *sequences* N that sets ``q = 16/N`` and ``T = 100·N/16``:
its "# of Docs." column (790 / 3550 / 1948) counts documents, while the thesis samples
sequences of at most 128 tokens (§5.1.2 "Data Layer"). With documents as the unit,
q = 16/790 would give ε ≈ 705 / 95 / 49 (RDP) for σ = 0.25 / 0.45 / 0.55 — 5× the thesis'
9.15 at σ = 0.55 — so the unit must be sequences. :func:`solve_sequences` inverts the accountant: with the
number of epochs fixed, ``ε`` decreases monotonically in N (q = B/N falls, T = E/q grows;
roughly ε ∝ q·√T = √(B·E/N) for the moments bound — the thesis' own remark that "for a
larger dataset, the privacy budget was smaller"), so bisection on log N finds the N whose
ε equals the thesis value. Solving each (σ, ε) row separately and comparing the N's tells
which accountant is consistent with the table (see :func:`thesis_sequence_counts`); the
thesis does not state its accountant (TF-Privacy / Opacus both used RDP in 2020).

What the solver finds for the thesis' rows (which accountant fits, the N per data set, the
cross-check against our tokenizer on the PhysioNet nursing notes) is a measurement, kept
with the other measurements in CHANGELOG.md ("Measurements behind design choices") and
recomputed by notebook 04 (``thesis_sequence_counts``).

Bounds (so that no call runs unbounded; ``tests/privacy/test_accounting_bounds.py`` times them):

* σ must be finite and at most :data:`MAX_NOISE_MULTIPLIER` (10³). σ = ∞ would give ε = 0 but
  adds infinite noise (the model learns nothing), and Opacus' PRV accountant does not return
  for it; far below 10³ every accountant already reports its numerical floor (RDP ≈ 0.1, PRV
  ≈ 0.01 at δ = 1e-5), so a larger σ buys nothing measurable.
* A target ε must lie in (0, :data:`MAX_TARGET_EPSILON`] (100): e^100 ≈ 10⁴³ bounds no
  likelihood ratio anyone cares about, and calibrating towards σ → 0 leaves the accountants'
  stable range. :func:`noise_for_epsilon` searches σ in
  [:data:`MIN_CALIBRATED_NOISE`, :data:`MAX_NOISE_MULTIPLIER`] with at most
  :data:`MAX_CALIBRATION_STEPS` accountant calls and raises ``ValueError`` when even σ = 10³
  does not reach the target (below the accountant's floor, or spent by earlier phases).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass

__all__ = [
    "ACCOUNTANTS",
    "THESIS_TABLE_5_3",
    "epsilon",
    "noise_for_epsilon",
    "steps_for",
    "table_5_3",
    "solve_sequences",
    "thesis_sequence_counts",
    "EpsilonRow",
    "MAX_NOISE_MULTIPLIER",
    "MAX_TARGET_EPSILON",
    "MIN_CALIBRATED_NOISE",
    "MAX_CALIBRATION_STEPS",
]

#: the largest noise multiplier the accountants are asked about (see the module docstring)
MAX_NOISE_MULTIPLIER = 1e3
#: the largest target ε that :func:`noise_for_epsilon` calibrates σ for
MAX_TARGET_EPSILON = 100.0
#: the smallest σ :func:`noise_for_epsilon` returns: when even it spends less than the target,
#: it is the answer (the run spends less than asked); below it the accountants leave their
#: stable range (PRV returns ∞ or fails, RDP slows down by orders of magnitude)
MIN_CALIBRATED_NOISE = 0.05
#: the most accountant calls of one :func:`noise_for_epsilon` (bisection on log σ)
MAX_CALIBRATION_STEPS = 40

ACCOUNTANTS = ("prv", "rdp", "gdp")

#: Table 5.3 of the thesis: (dataset, documents, noise multiplier, ε, P, R, F1)
THESIS_TABLE_5_3: tuple[tuple[str, int, float, float, float, float, float], ...] = (
    ("i2b2 2014", 790, 0.25, 356.0, 98.683, 97.669, 98.173),
    ("i2b2 2014", 790, 0.45, 21.7, 98.009, 97.228, 97.617),
    ("i2b2 2014", 790, 0.55, 9.15, 97.918, 97.149, 97.532),
    ("MIMIC-III", 3550, 0.25, 316.0, 99.934, 99.079, 99.505),
    ("MIMIC-III", 3550, 0.55, 6.95, 99.955, 98.987, 99.469),
    ("Nursing Note", 1948, 0.25, 343.0, 90.692, 72.381, 80.508),
    ("Nursing Note", 1948, 0.55, 8.41, 87.215, 73.180, 79.583),
)


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

    Bisection on log σ inside [:data:`MIN_CALIBRATED_NOISE`, :data:`MAX_NOISE_MULTIPLIER`], at most
    :data:`MAX_CALIBRATION_STEPS` accountant calls; the σ returned always satisfies the target.
    ``ValueError`` when the target is outside (0, :data:`MAX_TARGET_EPSILON`] or cannot be reached
    with σ <= :data:`MAX_NOISE_MULTIPLIER` (below the accountant's floor, or the earlier phases
    alone spend it). When even :data:`MIN_CALIBRATED_NOISE` spends less than the target, that σ
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

    lo, hi = MIN_CALIBRATED_NOISE, MAX_NOISE_MULTIPLIER
    e_hi = eps(hi)
    if not e_hi <= target_epsilon:
        raise ValueError(
            f"ε = {target_epsilon:g} at δ = {delta:g} is unreachable: even σ = {hi:g} spends ε = {e_hi:.4g} "
            f"({accountant} accountant{'; the earlier phases alone spend nearly all of it' if history else ''})"
        )
    if eps(lo) <= target_epsilon:
        return lo
    for _ in range(MAX_CALIBRATION_STEPS - 2):
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


@dataclass(frozen=True)
class EpsilonRow:
    dataset: str
    n: int
    noise_multiplier: float
    accountant: str
    sample_rate: float
    steps: int
    delta: float
    epsilon: float

    def to_dict(self) -> dict:
        return asdict(self)


def table_5_3(
    sizes: dict[str, int],
    noises: tuple[float, ...] = (0.25, 0.45, 0.55),
    *,
    batch_size: int = 16,
    epochs: float = 100,
    delta: float = 1e-5,
    accountants: tuple[str, ...] = ACCOUNTANTS,
) -> list[EpsilonRow]:
    """Table 5.3 analog: ε for each data set (``sizes``: name -> number of training
    sequences, the sampling unit), noise multiplier and accountant. An accountant whose
    numerics fail for a cell (GDP at σ = 0.25, where ε is in the hundreds) gives ε = inf
    there rather than aborting the table."""
    rows = []
    for name, n in sizes.items():
        q, T = steps_for(n, batch_size, epochs)
        for s in noises:
            for a in accountants:
                try:
                    e = epsilon(s, q, T, delta, a)
                except (ValueError, ArithmeticError, RuntimeError):
                    e = math.inf  # the accountant's root finder fails for huge ε (GDP at σ = 0.25)
                rows.append(EpsilonRow(name, int(n), float(s), a, q, T, delta, e))
    return rows


def solve_sequences(
    target_epsilon: float,
    noise_multiplier: float,
    *,
    batch_size: int = 16,
    epochs: float = 100,
    delta: float = 1e-5,
    accountant: str = "rdp",
    n_min: int | None = None,
    n_max: int = 10_000_000,
    rel_tol: float = 0.002,
) -> int:
    """The number of training sequences N for which DP-SGD with ``batch_size`` (q = B/N),
    ``epochs`` (T = E/q steps) and σ = ``noise_multiplier`` reaches ``target_epsilon``.

    Reasoning (Table 5.3 gives ε but not N): at a fixed number of epochs ε falls as N grows
    (q·√T = √(B·E/N) for the moments bound; checked numerically by the tests), so we
    bisect on log N between ``n_min`` (default: the batch size, q = 1) and ``n_max`` until
    the bracket is within ``rel_tol``; the answer is the smallest N with ε(N) <= target.
    Raises ``ValueError`` when the target is outside [ε(n_max), ε(n_min)]. PRV evaluations
    are slow (seconds each), so ``accountant="prv"`` is much slower than RDP/GDP (CHANGELOG.md,
    "Measurements behind design choices").
    """
    lo = max(batch_size, n_min or batch_size)
    hi = n_max

    def eps(n: int) -> float:
        q, T = steps_for(n, batch_size, epochs)
        try:
            return epsilon(noise_multiplier, q, T, delta, accountant)
        except (ValueError, ArithmeticError, RuntimeError):
            # GDP/PRV root finders fail when ε is very large (small N): count it as +inf
            return math.inf

    e_lo, e_hi = eps(lo), eps(hi)
    if not (e_hi <= target_epsilon <= e_lo):
        raise ValueError(
            f"ε = {target_epsilon} is outside [{e_hi:.4g}, {e_lo:.4g}] reachable with N in [{lo}, {hi}] "
            f"(σ={noise_multiplier}, batch {batch_size}, {epochs} epochs, {accountant})"
        )
    while hi - lo > max(1, rel_tol * lo):
        mid = int(round(math.sqrt(lo * hi)))
        if mid in (lo, hi):
            mid = (lo + hi) // 2
        if eps(mid) > target_epsilon:
            lo = mid
        else:
            hi = mid
    return hi


def thesis_sequence_counts(
    accountants: tuple[str, ...] = ("rdp", "gdp"), *, rows=THESIS_TABLE_5_3, **kw
) -> list[dict]:
    """For every row of Table 5.3 and accountant: the N (training sequences) that reproduces
    the thesis' ε, plus the ratio N / documents (sequences per document). A consistent
    accountant gives about the same N for the σ = 0.25 and σ = 0.55 rows of one data set."""
    out = []
    for name, docs, s, e, *_ in rows:
        for a in accountants:
            try:
                n = solve_sequences(e, s, accountant=a, **kw)
            except ValueError as ex:
                n, note = None, str(ex)
            else:
                note = ""
            out.append(
                {
                    "dataset": name,
                    "documents": docs,
                    "noise_multiplier": s,
                    "thesis_epsilon": e,
                    "accountant": a,
                    "sequences": n,
                    "sequences_per_document": (n / docs) if n else None,
                    "note": note,
                }
            )
    return out
