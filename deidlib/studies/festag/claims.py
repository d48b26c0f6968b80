"""The paper's numbers for the festag study, in this one place, and its "paper vs ours" claims
(Festag & Spreckelsen 2020, Table 3 and Figure 6; binary token F1 on i2b2 2014, 200 epochs).

Absolute scores depend on the corpus and the scale of a run; the claims compare differences
between strategies, which a reproduction can test. Verdicts come from
:func:`deidlib.reporting.verdict`, never typed by hand.
"""

from __future__ import annotations

import math

import pandas as pd

from ...reporting import Claim, claims_table

__all__ = ["PAPER_TABLE3", "paper_table3", "paper_vs_ours"]

#: Table 3: test F1 after 200 epochs, min / mean / max over the workers (C, D); A and B are one
#: model each, the paper gives only their score
PAPER_TABLE3: dict[str, dict[str, float]] = {
    "A": {"mean": 0.962},
    "B": {"mean": 0.961},
    "C_0.1": {"min": 0.955, "mean": 0.955, "max": 0.956},
    "C_0.5": {"min": 0.694, "mean": 0.840, "max": 0.944},
    "D": {"min": 0.900, "mean": 0.905, "max": 0.911},
}


def paper_table3() -> pd.DataFrame:
    """:data:`PAPER_TABLE3` as a table (index experiment; min, mean, max; NaN where not given)."""
    return pd.DataFrame.from_dict(PAPER_TABLE3, orient="index", columns=["min", "mean", "max"]).rename_axis(
        "experiment")


def _paper_mean(experiment: str) -> float:
    """The paper's mean test F1 of ``experiment`` (Table 3)."""
    return PAPER_TABLE3[experiment]["mean"]


def _paper_spread(experiment: str) -> float:
    """The paper's max − min over the workers of ``experiment`` (Table 3), to its 3 decimals."""
    row = PAPER_TABLE3[experiment]
    return round(row["max"] - row["min"], 3)


def _gap_claim(text: str, a: str, b: str, ours: float, rule: str, tol: float) -> Claim:
    """``a − b`` of the mean F1 against the paper's (Table 3 values quoted in the claim)."""
    return Claim(f"{text}: {a} − {b} (Table 3: {_paper_mean(a):.3f} vs {_paper_mean(b):.3f})",
                 _paper_mean(a) - _paper_mean(b), ours, rule, tol)


def paper_vs_ours(table3: pd.DataFrame, stability: pd.DataFrame | None = None) -> pd.DataFrame:
    """The claims table of Table 3 and Figure 6: ``table3`` is :func:`~.tables.table3` (index
    experiment; min, mean, max), ``stability`` :func:`~.tables.stability` (index experiment;
    ``std_last``: a worker's F1 standard deviation over its last epochs). Without ``stability``
    the C_0.5 row compares the spread (max − min) over the workers instead."""
    t = table3

    def get(e, c="mean"):
        return float(t.loc[e, c]) if e in t.index else math.nan

    def rng(e):
        return get(e, "max") - get(e, "min")

    spread = (f"{_paper_spread('C_0.5'):.3f} vs {_paper_spread('C_0.1'):.3f}")
    paper_gap = _paper_spread("C_0.5") - _paper_spread("C_0.1")
    if stability is not None:
        def std(e):
            return float(stability.loc[e, "std_last"]) if e in stability.index else math.nan

        unstable = Claim("C_0.5 is less stable than C_0.1: std of a worker's F1 over its last epochs, C_0.5 − C_0.1 "
                         f"(Figure 6: C_0.5 fluctuates; Table 3 spread {spread})",
                         paper_gap, std("C_0.5") - std("C_0.1"), "same_sign", 0.005, paper_text="> 0",
                         sign_only=True)
    else:
        unstable = Claim(f"C_0.5's workers spread wider than C_0.1's: (max − min) C_0.5 − C_0.1 (Table 3: {spread})",
                         paper_gap, rng("C_0.5") - rng("C_0.1"), "same_sign", 0.01)
    return claims_table([
        _gap_claim("centralized (A) and round robin (B) end level", "A", "B", get("A") - get("B"), "close", 0.02),
        _gap_claim("DSSGD θ_d = 0.1 nearly matches centralized", "A", "C_0.1", get("A") - get("C_0.1"), "close", 0.02),
        _gap_claim("DSSGD θ_d = 0.1 beats local-only training", "C_0.1", "D", get("C_0.1") - get("D"), "same_sign",
                   0.01),
        _gap_claim("local-only training is clearly below centralized", "A", "D", get("A") - get("D"), "same_sign",
                   0.02),
        unstable,
    ])
