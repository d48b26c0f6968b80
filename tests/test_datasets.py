import pytest

from deidlib import datasets
from deidlib.corpus import Document, Span
from deidlib.corpus.splits import _write_split_dirs, split_by_patient
from deidlib.datasets import load_corpus, synthetic_documents


def ids(ds):
    return [d.id for d in ds]


def test_synthetic_corpus_is_seeded_memoized_and_split_by_patient():
    pytest.importorskip("deidlib.synthetic", reason="deidlib.synthetic not written yet")
    before = datasets._synthetic.cache_info()
    a = load_corpus("synthetic", profile="smoke", seed=0)
    b = load_corpus("synthetic", profile="smoke", seed=0)
    after = datasets._synthetic.cache_info()
    assert after.hits >= before.hits + 1 and after.misses <= before.misses + 1
    assert (ids(a.train), ids(a.dev), ids(a.test)) == (ids(b.train), ids(b.dev), ids(b.test))
    assert [d.text for d in a.all] == [d.text for d in b.all]
    pats = [{d.patient_id for d in p} for p in (a.train, a.dev, a.test)]
    assert not (pats[0] & pats[1] or pats[0] & pats[2] or pats[1] & pats[2])
    from deidlib.profiles import get_profile

    assert len({d.patient_id for d in a.all}) == get_profile("smoke").patients
    assert 3 <= len({d.site for d in a.all}) <= get_profile("smoke").sites
    assert a.test and a.dev and len(a.train) > len(a.test)
    # the cached corpus is protected from callers that modify what they get
    a.train[0].spans.clear()
    a.train[0].metadata["x"] = 1
    c = load_corpus("synthetic", profile="smoke", seed=0)
    assert c.train[0].spans == b.train[0].spans and "x" not in c.train[0].metadata


def test_synthetic_sizes_seed_and_document_split():
    pytest.importorskip("deidlib.synthetic", reason="deidlib.synthetic not written yet")
    small = synthetic_documents("smoke", seed=1, patients=6, sites=2)
    assert len({d.patient_id for d in small}) == 6 and len({d.site for d in small}) <= 2
    assert [d.text for d in small] != [d.text for d in synthetic_documents("smoke", seed=2, patients=6, sites=2)]
    s = load_corpus("synthetic", seed=1, patients=6, sites=2, split="document")
    assert sorted(ids(s.all)) == sorted(ids(small)) and len(s.test) == len(small) // 5


def test_unknown_or_missing_corpus_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.delenv("DEIDLIB_DATA_DIR", raising=False)
    with pytest.raises(ValueError, match="unknown corpus 'mimic'"):
        load_corpus("mimic")
    with pytest.raises(ValueError, match="unknown split 'site'"):
        load_corpus("synthetic", split="site")
    monkeypatch.setattr(datasets, "find_data_dir", lambda name, explicit=None: None)
    with pytest.raises(FileNotFoundError, match="needs data_dir"):
        load_corpus("i2b2")
    with pytest.raises(FileNotFoundError, match="PhysioNet deid 1.1 not found.*data/README.md"):
        load_corpus("physionet")
    monkeypatch.undo()
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_corpus("physionet", data_dir=tmp_path / "nowhere")


def toy_docs(n=10):
    out = []
    for p in range(n):
        for r in range(2):
            text = f"Pt seen 2020-01-0{r + 1}"
            out.append(Document(f"{p:03d}-{r:02d}", text, [Span.of(text, 8, 18, "DATE")], patient_id=f"{p:03d}"))
    return out


def test_i2b2_from_split_dirs_flat_folder_and_env(tmp_path, monkeypatch):
    D = toy_docs()
    s = split_by_patient(D, seed=0)
    _write_split_dirs(s, tmp_path / "i2b2_2014")
    got = load_corpus("i2b2", data_dir=tmp_path / "i2b2_2014")
    assert (got.train, got.dev, got.test) == (s.train, s.dev, s.test)
    monkeypatch.setenv("DEIDLIB_DATA_DIR", str(tmp_path))
    assert ids(load_corpus("i2b2").test) == ids(s.test)
    from deidlib.corpus.i2b2 import write_i2b2_dir

    write_i2b2_dir(D, tmp_path / "flat")
    flat = load_corpus("i2b2", data_dir=tmp_path / "flat", seed=3)
    assert ids(flat.test) == ids(split_by_patient(D, seed=3).test)
    doc = load_corpus("i2b2", data_dir=tmp_path / "flat", split="document")
    assert len(doc.test) == 4 and sorted(ids(doc.all)) == ids(D)
    with pytest.raises(ValueError, match="flat folder"):
        load_corpus("i2b2", data_dir=tmp_path / "i2b2_2014", split="document")


def test_physionet_from_an_explicit_folder(tmp_path):
    body = "Seen by Dr Smith.\n"
    recs = "".join(f"START_OF_RECORD={p}||||{n}||||\n{body}||||END_OF_RECORD\n" for p in range(1, 11) for n in (1, 2))
    (tmp_path / "id.text").write_text(recs)
    (tmp_path / "id-phi.phrase").write_text("".join(f"{p} {n} 11 16 HCPName Smith\n" for p in range(1, 11) for n in (1, 2)))
    s = load_corpus("physionet", data_dir=tmp_path)
    assert (len(s.train), len(s.dev), len(s.test)) == (13, 3, 4) and len({*ids(s.all)}) == 20
    p = load_corpus("physionet", data_dir=tmp_path, split="patient")
    assert not ({d.patient_id for d in p.train} & {d.patient_id for d in p.test})


@pytest.mark.realdata
def test_physionet_thesis_split(physionet_dir):
    s = load_corpus("physionet", data_dir=physionet_dir)
    assert (len(s.train), len(s.dev), len(s.test)) == (1559, 389, 486)
    assert len(s.train) + len(s.dev) == 1948 and len({*ids(s.all)}) == 2434
    assert ids(load_corpus("physionet", data_dir=physionet_dir).test) == ids(s.test)
    p = load_corpus("physionet", data_dir=physionet_dir, split="patient")
    pats = [{d.patient_id for d in x} for x in (p.train, p.dev, p.test)]
    assert not (pats[0] & pats[1] or pats[0] & pats[2] or pats[1] & pats[2]) and len(p.all) == 2434


def test_mixed_corpus_adds_physionet_as_one_more_site_split_by_patient(tmp_path):
    body = "Seen by Dr Smith.\n"
    recs = "".join(f"START_OF_RECORD={p}||||{n}||||\n{body}||||END_OF_RECORD\n" for p in range(1, 21) for n in (1, 2))
    (tmp_path / "id.text").write_text(recs)
    (tmp_path / "id-phi.phrase").write_text("".join(f"{p} {n} 11 16 HCPName Smith\n" for p in range(1, 21) for n in (1, 2)))
    m = load_corpus("mixed", data_dir=tmp_path, profile="smoke", seed=1)
    syn = load_corpus("synthetic", profile="smoke", seed=1)
    assert {d.site for d in m.all} == {d.site for d in syn.all} | {"physionet"}
    assert sum(d.site == "physionet" for d in m.all) == 40
    assert ids(m.test) == sorted(ids(syn.test) + [d.id for d in m.test if d.site == "physionet"])
    pats = [{d.patient_id for d in x} for x in (m.train, m.dev, m.test)]
    assert not (pats[0] & pats[1] or pats[0] & pats[2] or pats[1] & pats[2])
    assert all(d.site == "physionet" for d in m.all if d.metadata.get("source") == "physionet_deid_1.1")


@pytest.mark.realdata
def test_mixed_corpus_with_the_real_nursing_notes(physionet_dir):
    m = load_corpus("mixed", data_dir=physionet_dir, profile="smoke")
    real = [d for d in m.all if d.site == "physionet"]
    assert len(real) == 2434 and len({d.site for d in m.all}) > 2
    pats = [{d.patient_id for d in x if d.site == "physionet"} for x in (m.train, m.dev, m.test)]
    assert all(pats) and not (pats[0] & pats[1] or pats[0] & pats[2] or pats[1] & pats[2])


def test_reproduce_accepts_the_mixed_corpus():
    import argparse

    from deidlib.commands import reproduce

    p = argparse.ArgumentParser()
    reproduce.add_arguments(p)
    assert p.parse_args(["--corpus", "mixed"]).corpus == "mixed"
    with pytest.raises(SystemExit):
        p.parse_args(["--corpus", "mimic"])
