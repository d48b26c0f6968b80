"""`deidlib surrogate` round trip over i2b2 XML, and the place table / Algorithm 1 helpers."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from deidlib.cli import main
from deidlib.corpus.i2b2 import read_i2b2_dir, write_i2b2_dir
from deidlib.surrogates.locations import (
    candidate_set,
    figure6_table,
    load_places,
    paper_candidates,
    uniform_mechanism,
)
from deidlib.surrogates.randomness import SeededRNG
from deidlib.synthetic import generate


@pytest.fixture(scope="module")
def corpus_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("in")
    write_i2b2_dir(generate(patients=3, sites=1, seed=5), d)
    return d


def test_cli_round_trip(corpus_dir, tmp_path, capsys):
    out, audit = tmp_path / "out", tmp_path / "audit.jsonl"
    rc = main(["surrogate", str(corpus_dir), str(out), "--epsilon", "2", "--seed", "7", "--audit", str(audit)])
    assert rc == 0
    src, new = read_i2b2_dir(corpus_dir), read_i2b2_dir(out)
    assert [d.id for d in src] == [d.id for d in new]
    rows = [json.loads(x) for x in audit.read_text().splitlines()]
    assert len(rows) == sum(len(d.spans) for d in src)
    for a, b in zip(src, new):
        b.validate()
        assert [(s.category, s.subtype) for s in a.spans] == [(s.category, s.subtype) for s in b.spans]
        assert "note_date" not in b.metadata
    by_doc = {}
    for r in rows:
        by_doc.setdefault(r["document_id"], []).append(r)
    for d in new:
        assert [s.text for s in d.spans] == [r["surrogate"] for r in by_doc.get(d.id, [])]  # no PHI, no rows
    # same seed, same output; the audit file is optional
    out2 = tmp_path / "out2"
    assert main(["surrogate", str(corpus_dir), str(out2), "--epsilon", "2", "--seed", "7"]) == 0
    assert [d.text for d in read_i2b2_dir(out2)] == [d.text for d in new]
    assert "entities/s" in capsys.readouterr().out


def test_cli_refuses_bad_arguments(corpus_dir, tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["surrogate", str(corpus_dir), str(out), "--audit", str(out / "a.jsonl")]) == 2
    assert "outside OUT_DIR" in capsys.readouterr().err
    assert main(["surrogate", str(corpus_dir), str(corpus_dir)]) == 2
    assert main(["surrogate", str(corpus_dir), str(out), "--epsilon", "-1"]) == 2
    assert main(["surrogate", str(corpus_dir), str(out), "--reference-date", "yesterday"]) == 2
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x.txt").write_text("x")
    assert main(["surrogate", str(corpus_dir), str(tmp_path / "full")]) == 2
    assert main(["surrogate", str(tmp_path / "missing"), str(tmp_path / "o3")]) == 1


def test_cli_french_secure_plain_xml(corpus_dir, tmp_path):
    out = tmp_path / "fr"
    assert main(["surrogate", str(corpus_dir), str(out), "--locale", "fr_FR", "--secure", "--no-meta",
                 "--date-method", "ldp", "--location-method", "geoind", "--memo-scope", "patient"]) == 0
    assert "<META>" not in next(out.glob("*.xml")).read_text()
    assert len(read_i2b2_dir(out)) == len(read_i2b2_dir(corpus_dir))


@pytest.fixture(scope="module")
def places():
    return load_places("FR")


def test_place_table(places):
    j = places.lookup("besancon")
    assert j is not None and places.names[j] == "Besançon"
    assert places.lookup("BESANÇON") == j and places.lookup("Nowhere-sur-Mer") is None
    assert places.vectors.min() >= 0 and places.vectors.max() <= 1
    d = places.distances(j)
    assert d[j] == 0 and d.max() <= 1 + 1e-12
    # triangle inequality (it is a metric)
    k, m = places.lookup("Dijon"), places.lookup("Lyon")
    dk = places.distances(k)
    assert dk[m] <= dk[j] + places.distances(j)[m] + 1e-12


def test_paper_candidates_and_figure6(places):
    j = places.lookup("Dijon")
    idx, d = paper_candidates(places, j, k=10, max_km=100)
    assert idx[0] == j and d[0] == 0 and len(idx) == 10 and np.all(np.diff(d) >= 0)
    assert np.all(places.km(j, idx) <= 100)
    df = figure6_table(places, "Dijon", 1.0)
    assert df["probability"].sum() == pytest.approx(1) and df["probability"].is_monotonic_decreasing
    assert np.allclose(df["score"], 1 - df["distance"])
    with pytest.raises(KeyError):
        figure6_table(places, "Atlantis", 1.0)


def test_join_health_features_from_csv(places, tmp_path):
    csv = tmp_path / "h.csv"
    pd.DataFrame({"name": ["DIJON", "Dijon", "Beaune"], "hospitals": [2, 1, 1]}).to_csv(csv, index=False)
    t = places.join(pd.read_csv(csv), columns=["hospitals"])
    assert t.feature_names == ["log10_population", "hospitals"]
    assert t.features[t.lookup("Dijon"), 1] == 3 and t.features[t.lookup("Lyon"), 1] == 0
    with pytest.raises(ValueError):
        candidate_set(places, anchor=(0.0, 0.0), radius_km=1)


def test_uniform_mechanism_is_uniform(places):
    cand = candidate_set(places, anchor=(47.32, 5.04), radius_km=60)
    r = SeededRNG(0)
    draws = np.array([uniform_mechanism(places, 0, r, cand) for _ in range(4000)])
    counts = np.array([(draws == c).sum() for c in cand])
    assert set(draws) <= set(cand) and counts.min() > 0
    assert counts.std() < 3 * np.sqrt(4000 / len(cand))
