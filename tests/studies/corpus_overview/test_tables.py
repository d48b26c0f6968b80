"""The corpus overview's tables (deidlib.studies.corpus_overview.tables): the cross-site table holds
every level's cells with that level's heterogeneity, and the counts add up over sites."""

from __future__ import annotations

import pandas as pd
import pytest

from deidlib.studies import corpus_overview as co
from deidlib.synthetic import generate


def _matrix(diag: float, off: float) -> pd.DataFrame:
    return pd.DataFrame([{"seed": 0, "train": a, "test": b, "diagonal": a == b, "precision": 0.0, "recall": 0.0,
                          "f1": diag if a == b else off} for a in "xy" for b in "xy"])


def test_the_cross_site_table_holds_each_level_with_its_heterogeneity():
    res = co.CorpusOverviewResults(profile="smoke", seed=0, params={}, splits=None,
                                   heterogeneity={"flat": 0.0, "default": 0.7},
                                   cross_site={"flat": _matrix(0.9, 0.85), "default": _matrix(0.95, 0.6)})
    t = co.cross_site_table(res)
    assert list(t.columns) == ["heterogeneity", "train", "test", "diagonal", "f1_mean", "f1_std", "seeds"]
    assert len(t) == 8 and sorted(set(t.heterogeneity)) == [0.0, 0.7]
    off = t[(t.heterogeneity == 0.7) & ~t.diagonal]
    assert off.f1_mean.tolist() == pytest.approx([0.6, 0.6])


def test_the_corpus_table_totals_the_sites():
    docs = generate(patients=12, sites=2, seed=0)
    t = co.corpus_table(docs, by="site")
    assert list(t.index) == ["site0", "site1", "total"]
    assert t.loc["total", "documents"] == len(docs) == t.loc[["site0", "site1"], "documents"].sum()
    assert t.loc["total", "PHI mentions"] == sum(len(d.spans) for d in docs)
