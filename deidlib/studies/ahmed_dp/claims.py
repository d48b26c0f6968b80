"""The thesis' numbers the study compares with (Ahmed 2020, chapter 5), in this one place, and
the claims built from them (:func:`paper_vs_ours`: Tables 5.1, 5.2 and 5.3's DP cost as verdicts
computed by :func:`deidlib.reporting.verdict`, never typed by hand). The thesis' points of the
recipe figure (:data:`THESIS_POINTS`) and the DP-cost claims read :data:`THESIS_TABLE_5_3`."""

from __future__ import annotations

import math

import pandas as pd

from ...reporting import Claim, claims_table, flat_table

__all__ = ["paper_vs_ours"]

NAN = math.nan
_flat = flat_table

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

#: Table 4.2 of the thesis: the non-private self-attention tagger's F1 on i2b2 2014 (%)
_THESIS_SAT_I2B2_F1 = 98.22


def _table_5_3_f1(dataset: str, noise_multiplier: float) -> float:
    """F1 (%) of Table 5.3's row for ``dataset`` at ``noise_multiplier``."""
    return next(r[6] for r in THESIS_TABLE_5_3 if r[0] == dataset and r[2] == noise_multiplier)


#: the thesis' DP-SGD results on the PhysioNet nursing notes (Table 5.3: ε, σ and F1 as the
#: fraction §5.2 quotes, three decimals), sentence unit, δ 1e-5: the stars of the recipe figure
THESIS_POINTS = tuple({"epsilon": r[3], "f1": round(r[6] / 100, 3), "noise_multiplier": r[2]}
                      for r in THESIS_TABLE_5_3 if r[0] == "Nursing Note")


def _ensemble_gaps(df: pd.DataFrame, ensemble: str, members: str, col: str) -> list[float]:
    """Per target: ``col`` of the ensemble row containing ``ensemble`` minus the best member's (pp)."""
    gaps: list[float] = []
    if df.empty:
        return gaps
    for _, d in df.groupby("target"):
        ens = d[d.model.str.contains(ensemble, regex=False)]
        mem = d[d.model.str.startswith(members)] if members else d[~d.model.str.startswith("ensemble")]
        if len(ens) and len(mem):
            gaps.append(100 * (float(ens[col].iloc[0]) - float(mem[col].max())))
    return gaps


def _mean_claim(text, paper, gaps, rule, tol, paper_text=None) -> Claim:
    return Claim(text, paper, sum(gaps) / len(gaps) if gaps else NAN, rule, tol,
                 (min(gaps), max(gaps)) if len(gaps) > 1 else None, paper_text)


def _dp_cost_claims(costs: pd.DataFrame | None) -> list[Claim]:
    """Table 5.3's "DP costs about one point" from :func:`deidlib.studies.ahmed_dp.dp_costs` (pp;
    interval: min–max over the DP seeds)."""
    c = _flat(costs)

    def row(name):
        r = c[c["cost"] == name] if "cost" in c else c.iloc[:0]
        if not len(r):
            return NAN, None
        r = r.iloc[0]
        return float(r["mean"]), ((float(r["min"]), float(r["max"])) if int(r["n"]) > 1 else None)

    total, total_iv = row("non-private SAT − DP SAT")
    alone, alone_iv = row("recipe without DP − DP SAT")
    return [
        Claim("DP costs the self-attention tagger about one point of F1: non-private SAT − DP SAT at ε ≈ 8 "
              "(i2b2: 98.2 in Table 4.2 vs 97.5 at ε 9.15 in Table 5.3)",
              _THESIS_SAT_I2B2_F1 - round(_table_5_3_f1("i2b2 2014", 0.55), 2), total, "close", 1.0, total_iv),
        Claim("DP-SGD alone costs about one point: the DP model's F1 without noise − with DP at ε ≈ 8 "
              "(nursing notes, Table 5.3: 80.5 at ε 343 vs 79.6 at ε 8.41)",
              _table_5_3_f1("Nursing Note", 0.25) - _table_5_3_f1("Nursing Note", 0.55), alone, "close", 1.0,
              alone_iv),
    ]


def paper_vs_ours(scenario_a: pd.DataFrame | None, scenario_b: pd.DataFrame | None,
                  dp_costs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Ahmed, section 5.3: scenario A (Table 5.1); differences in percentage points, mean over target
    sites (interval: min–max over targets); with ``dp_costs`` (:func:`deidlib.studies.ahmed_dp.dp_costs`)
    also Table 5.3's DP cost of the self-attention tagger (``not measured`` without).

    The ensembles' recall claims (Table 5.1a: above the best member; section 5.2, scenario B: above
    the site's own model) are not rows: the minimality rule flags a token any member flags, so its
    recall is at least every member's by construction. ``scenario_b`` is accepted and unused."""
    a = _flat(scenario_a)
    return claims_table([
        _mean_claim("minimality ensemble precision below its best member, scenario A (Table 5.1c text: −0.162)",
                    -0.162, _ensemble_gaps(a, "minimality", "", "precision"), "same_sign", 0.1),
        *_dp_cost_claims(dp_costs),
    ])
