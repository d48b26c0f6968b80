"""festag runs: run_study end to end at the smoke profile, its typed results, and the stopping
rule over every run unit's own dev scores."""

from __future__ import annotations

import numpy as np
import pytest

from deidlib.studies import festag
from deidlib.studies.festag.data import dev_key
from deidlib.studies.festag.params import EXPERIMENTS
from deidlib.studies.festag.run import stop_rule


def _deps_missing() -> str | None:
    try:
        from deidlib.corpus.splits import partition_by_patient  # noqa: F401
        from deidlib.datasets import load_corpus  # noqa: F401
        from deidlib.models import build_tagger  # noqa: F401
    except ImportError as e:  # the foundation / tagger are written in parallel
        return str(e)
    return None


@pytest.mark.skipif(_deps_missing() is not None, reason=f"dependencies not available: {_deps_missing()}")
def test_run_study_smoke_end_to_end():
    r = festag.run_study(festag.params_for("smoke", epochs=1), seeds=[0], experiments=["A", "C_0.1", "D"],
                         progress=False)
    assert set(r) == set(festag.FestagResults.__annotations__) and r["params"]["profile"] == "smoke"
    assert isinstance(r, festag.FestagResults) and r.runs is r["runs"] and r.params["profile"] == "smoke"
    t = festag.table3(r)
    assert set(t.index) == {"A", "C_0.1", "D"}
    assert np.isfinite(t["mean"]).all() and (t["max"] <= 1).all()
    assert t.loc["D", "n"] == len(r["data"][0]["site_names"]) > 1


def test_stop_rule_reads_dev_scores_of_every_unit_never_test():
    from types import SimpleNamespace

    stop = stop_rule(1)

    def hist(*recs):
        return SimpleNamespace(records=list(recs))

    # A/B: the pooled dev falls while test rises -> stop; dev rises while test falls -> go on
    assert stop(hist({"epoch": 1, "site": "global", "f1": 0.1, "dev_f1": 0.5},
                     {"epoch": 2, "site": "global", "f1": 0.9, "dev_f1": 0.4}))
    assert not stop(hist({"epoch": 1, "site": "global", "f1": 0.9, "dev_f1": 0.4},
                         {"epoch": 2, "site": "global", "f1": 0.1, "dev_f1": 0.5}))
    # C/D: each worker on its own site's dev; the run goes on until every worker has fired
    w = [{"epoch": 1, "site": "s1", "f1": 0.5, "dev_f1@s1": 0.5, "dev_f1@s2": 0.1},
         {"epoch": 1, "site": "s2", "f1": 0.5, "dev_f1@s1": 0.1, "dev_f1@s2": 0.5},
         {"epoch": 2, "site": "s1", "f1": 0.9, "dev_f1@s1": 0.4, "dev_f1@s2": 0.9},
         {"epoch": 2, "site": "s2", "f1": 0.1, "dev_f1@s1": 0.1, "dev_f1@s2": 0.6}]
    assert not stop(hist(*w))  # s1 fired, s2 still improves on its own dev
    w[3]["dev_f1@s2"] = 0.3
    assert stop(hist(*w))
    assert not stop_rule(None)(hist(*w))


@pytest.mark.skipif(_deps_missing() is not None, reason=f"dependencies not available: {_deps_missing()}")
def test_every_strategy_records_dev_scores_and_a_dev_selected_epoch():
    r = festag.run_study(festag.params_for("smoke", epochs=3, patience=1), seeds=[0], progress=False)
    d = r["data"][0]
    assert d["site_split"] == "documents" and all(n > 0 for n in d["dev_sentences"])
    sel = festag.selection(r)
    assert set(sel.experiment) == set(EXPERIMENTS)
    assert sel.selected_epoch.notna().all() and (sel.selected_epoch <= sel.stop_epoch).all()
    for run in r["runs"]:
        for rec in run["records"]:
            assert dev_key(rec["site"]) in rec  # the stopping rule's input for every unit
            assert set(d["site_names"]) <= {k.split("@")[1] for k in rec if k.startswith("dev_f1@")}
    # the same rule stopped every run: no unit trained past patience epochs after its dev best
    assert ((sel.stop_epoch - sel.selected_epoch) <= 1).all()
