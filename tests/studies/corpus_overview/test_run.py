"""Running the corpus overview (deidlib.studies.corpus_overview.run): the synthetic corpus of the
profile and one cross-site matrix per heterogeneity level, with every train/test site pair."""

from __future__ import annotations

import pytest

from deidlib.datasets import load_corpus
from deidlib.studies import corpus_overview as co


def test_run_study_gives_the_profiles_corpus_and_one_matrix_per_level():
    params = co.params_for("smoke", seeds=[0])
    res = co.run_study(params, seed=0, levels={"flat": 0.0})
    assert [d.id for d in res.splits.test] == [d.id for d in load_corpus("synthetic", profile="smoke", seed=0).test]
    assert list(res.cross_site) == ["flat"] and res.heterogeneity == {"flat": 0.0}
    m = res.cross_site["flat"]
    sites = sorted(set(m.train))
    assert len(m) == len(sites) ** 2 and m.f1.between(0, 1).all()
    assert res["cross_site"] is res.cross_site  # the results read as the former mapping too


def test_run_study_takes_resolved_params_only():
    with pytest.raises(TypeError, match="resolved CorpusOverviewParams"):
        co.run_study({"seeds": (0,)})
