"""Notebook 00's design-target rows (deidlib.studies.corpus_overview.claims.design_claims) are
judged by the one verdict rule from the cross-site matrices, seed by seed."""

from __future__ import annotations

import pandas as pd

from deidlib.reporting import claims_table
from deidlib.studies.corpus_overview import MIN_DIAGONAL, TARGET_GAP, design_claims


def _matrix(diag: dict[int, float], off: dict[int, float], sites=("a", "b", "c")) -> pd.DataFrame:
    """A cross-site matrix with the same diagonal F1 on every site of a seed, and the same off-diagonal."""
    rows = [{"seed": s, "train": t, "test": u, "diagonal": t == u, "f1": diag[s] if t == u else off[s]}
            for s in diag for t in sites for u in sites]
    return pd.DataFrame(rows)


def test_a_heterogeneous_corpus_meets_its_targets_with_seed_intervals():
    base = _matrix({0: 0.95, 1: 0.94}, {0: 0.93, 1: 0.92})
    default = _matrix({0: 0.95, 1: 0.90}, {0: 0.70, 1: 0.72})
    t = claims_table(design_claims({"heterogeneity 0": base, "heterogeneity 0.7 (default)": default}), "target")
    assert t.verdict.tolist() == ["faithful", "faithful", "faithful"]
    assert t.target.tolist()[:2] == [f"{TARGET_GAP:.4g}", f"{MIN_DIAGONAL:.4g}"]
    assert t.interval[0] == "[0.18, 0.25]" and t.interval[1] == "[0.9, 0.95]"


def test_sites_that_do_not_differ_contradict_and_a_weak_site_fails_its_row():
    base = _matrix({0: 0.95, 1: 0.94}, {0: 0.80, 1: 0.82})
    default = _matrix({0: 0.75, 1: 0.74}, {0: 0.72, 1: 0.73})  # no gap, every site poorly learnt
    t = claims_table(design_claims({"h0": base, "default": default}), "target")
    assert t.verdict.tolist() == ["contradicts", "contradicts", "contradicts"]


def test_a_single_level_gives_no_baseline_row():
    t = claims_table(design_claims({"default": _matrix({0: 0.9}, {0: 0.6})}), "target")
    assert len(t) == 2 and t.verdict.tolist() == ["faithful", "faithful"]
