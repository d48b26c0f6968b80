"""The corpus overview's targets. No paper states them: they are what the synthetic corpus's
default ``heterogeneity`` (:mod:`deidlib.synthetic.styles`) is chosen for, read against the
cross-site matrix (:func:`~.tables.cross_site_summary`) in notebook ``00_corpus_overview``.

:func:`design_claims` turns them into claims rows judged by the one verdict rule
(:func:`deidlib.reporting.verdict`), each with its min–max over the matrix's seeds.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from ...reporting import Claim

__all__ = ["TARGET_GAP", "MIN_DIAGONAL", "design_claims"]

#: what the default heterogeneity is chosen for: mean diagonal F1 at least this much above the
#: mean off-diagonal F1
TARGET_GAP = 0.15
#: every site must still be learnt alone at the default level: lowest diagonal F1 at least this
MIN_DIAGONAL = 0.85
#: how far short of a target a row may fall and still read ``partial``
TOLERANCE = 0.05


def _per_seed(matrix: pd.DataFrame) -> pd.DataFrame:
    """One row per seed of a cross-site matrix: its mean diagonal and off-diagonal F1, their gap
    and its lowest diagonal F1."""
    rows = []
    for seed, m in matrix.groupby("seed"):
        diag, off = m[m["diagonal"]]["f1"], m[~m["diagonal"]]["f1"]
        d = float(diag.mean())
        o = float(off.mean()) if len(off) else float("nan")
        rows.append({"seed": seed, "gap": d - o, "min_diagonal": float(diag.min())})
    return pd.DataFrame(rows).set_index("seed")


def _span(values: pd.Series) -> tuple[float, float] | None:
    values = values.dropna()
    return (float(values.min()), float(values.max())) if len(values) else None


def design_claims(cross_site: Mapping[str, pd.DataFrame]) -> list[Claim]:
    """The rows of notebook 00's claims table from the cross-site matrices of
    :func:`~.run.run_study` (level label -> matrix; the last label is the generator's default and,
    when there are two or more, the first is the one-style baseline):

    * the default level's gap (mean diagonal − mean off-diagonal F1) reaches :data:`TARGET_GAP`;
    * its lowest diagonal F1 reaches :data:`MIN_DIAGONAL` (every site learnt alone);
    * the gap at the default exceeds the gap of the baseline (the sites differ *because of*
      ``heterogeneity``, not because a site is harder), paired by seed.
    """
    labels = list(cross_site)
    if not labels:
        raise ValueError("design_claims needs at least one cross-site matrix")
    default = _per_seed(cross_site[labels[-1]])
    claims = [
        Claim(f"{labels[-1]}: mean diagonal − mean off-diagonal F1 (sites write differently)", TARGET_GAP,
              float(default["gap"].mean()), "at_least", TOLERANCE, _span(default["gap"])),
        Claim(f"{labels[-1]}: lowest diagonal F1 (every site learnt alone)", MIN_DIAGONAL,
              float(default["min_diagonal"].mean()), "at_least", TOLERANCE, _span(default["min_diagonal"])),
    ]
    if len(labels) >= 2:
        base = _per_seed(cross_site[labels[0]])
        rise = (default["gap"] - base["gap"]).dropna()  # paired by seed
        claims.append(Claim(f"gap at {labels[-1]} − gap at {labels[0]} (heterogeneity makes the sites differ)",
                            1.0, float(rise.mean()) if len(rise) else None, "same_sign", 0.02, _span(rise),
                            paper_text="> 0", sign_only=True))
    return claims
