"""The corpus overview's cross-site matrix (deidlib.studies.corpus_overview.sites and its summary
in .tables): one tagger per training site, scored on every site's test split."""

from __future__ import annotations

import pandas as pd
import pytest

from deidlib.corpus.splits import split_by_patient
from deidlib.studies import corpus_overview as cs
from deidlib.studies.corpus_overview.sites import cross_site_matrix
from deidlib.synthetic import generate


def test_cross_site_matrix_has_every_train_test_pair_per_seed():
    sp = {s: split_by_patient(generate(patients=24, sites=2, seed=s), (0.6, 0.1, 0.3), seed=s) for s in (0, 1)}
    tagger = cs.params_for("smoke").tagger
    m = cross_site_matrix(sp, tagger=tagger)
    assert len(m) == 2 * 2 * 2
    assert set(zip(m["train"], m["test"])) == {(a, b) for a in ("site0", "site1") for b in ("site0", "site1")}
    assert (m["diagonal"] == (m["train"] == m["test"])).all()
    assert m["f1"].between(0, 1).all() and set(m["seed"]) == {0, 1}
    summ = cs.cross_site_summary(m)
    assert len(summ["cells"]) == 4 and (summ["cells"]["seeds"] == 2).all()
    assert summ["diagonal"] == pytest.approx(m[m["diagonal"]]["f1"].mean())


def test_cross_site_summary_means_and_gap():
    rows = [{"seed": s, "train": a, "test": b, "diagonal": a == b, "precision": 0, "recall": 0,
             "f1": (0.9 + 0.02 * s) if a == b else 0.5} for s in (0, 1) for a in "xy" for b in "xy"]
    summ = cs.cross_site_summary(pd.DataFrame(rows))
    assert summ["diagonal"] == pytest.approx(0.91) and summ["off_diagonal"] == pytest.approx(0.5)
    assert summ["gap"] == pytest.approx(0.41) and summ["min_diagonal"] == pytest.approx(0.91)
    cell = summ["cells"].set_index(["train", "test"]).loc[("x", "x")]
    assert cell["f1_std"] == pytest.approx(0.01414, abs=1e-4)


def test_unknown_profile_and_empty_input_are_refused():
    with pytest.raises(ValueError, match="unknown profile"):
        cs.params_for("huge")
    with pytest.raises(ValueError, match="at least one seed"):
        cross_site_matrix({})
