"""Table 5.3 of the thesis (Ahmed 2020, §5.1.2: lot 16, 100 epochs, δ = 1e-5) replicated with
the library's accountants (:mod:`deidlib.privacy.accounting`), and inverted to the number of
training sequences the thesis must have had.

Table 5.3 gives ε for σ = 0.25/0.45/0.55 but not the number of training *sequences* N that sets
``q = 16/N`` and ``T = 100·N/16``: its "# of Docs." column (790 / 3550 / 1948) counts documents,
while the thesis samples sequences of at most 128 tokens (§5.1.2 "Data Layer"). With documents as
the unit, q = 16/790 would give ε ≈ 705 / 95 / 49 (RDP) for σ = 0.25 / 0.45 / 0.55 — 5× the
thesis' 9.15 at σ = 0.55 — so the unit must be sequences. :func:`solve_sequences` inverts the
accountant: with the number of epochs fixed, ε decreases monotonically in N (q = B/N falls,
T = E/q grows; roughly ε ∝ q·√T = √(B·E/N) for the moments bound — the thesis' own remark that
"for a larger dataset, the privacy budget was smaller"), so bisection on log N finds the N whose ε
equals the thesis value. Solving each (σ, ε) row separately and comparing the N's tells which
accountant is consistent with the table (:func:`thesis_sequence_counts`); the thesis does not
state its accountant (TF-Privacy and Opacus both used RDP in 2020). What the solver finds is a
measurement, recomputed by notebook 04 and kept in ``docs/studies/ahmed_dp.md``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from ...privacy.accounting import ACCOUNTANTS, epsilon, steps_for
from .claims import THESIS_TABLE_5_3

__all__ = []


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
