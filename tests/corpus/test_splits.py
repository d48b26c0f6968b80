import pytest

from deidlib.corpus import CorpusError, Document, Span
from deidlib.corpus.i2b2 import write_i2b2_dir
from deidlib.corpus.splits import (
    THESIS_NURSING_FRACTIONS,
    CorpusSplits,
    _split_counts,
    _write_split_dirs,
    partition_by_patient,
    read_split_dirs,
    split_by_document,
    split_by_patient,
)


def docs(n_patients=40):
    """Patients with 1-4 records each (uneven, as in real corpora)."""
    out = []
    for p in range(n_patients):
        for r in range(1 + p % 4):
            text = f"note {p} {r} seen 2020"
            out.append(Document(f"{p:03d}-{r:02d}", text, [Span.of(text, len(text) - 4, len(text), "DATE")], patient_id=f"{p:03d}", site=f"s{p % 3}"))
    return out


def ids(ds):
    return [d.id for d in ds]


def patients(ds):
    return {d.patient_id for d in ds}


def test_split_counts_rounding_rule():
    assert _split_counts(2434, (0.8, 0.2)) == [1948, 486]
    assert _split_counts(2434, (0.8, 0.0, 0.2)) == [1948, 0, 486]
    assert _split_counts(2434, THESIS_NURSING_FRACTIONS) == [1948, 486]
    assert _split_counts(100, (0.7, 0.1, 0.2)) == [70, 10, 20]
    assert _split_counts(100, (0.71, 0.0, 0.29)) == [71, 0, 29]  # 100 * 0.29 = 28.999999999999996
    assert _split_counts(0, (0.7, 0.1, 0.2)) == [0, 0, 0]
    for bad in [(0.5, 0.6), (1.0,), (0.5, 0.25, 0.25, 0.0), (1.2, -0.2)]:
        with pytest.raises(ValueError, match="fractions"):
            _split_counts(10, bad)


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_split_by_patient_is_pure_complete_and_seeded(seed):
    D = docs()
    s = split_by_patient(D, seed=seed)
    parts = [s.train, s.dev, s.test]
    assert sorted(ids(s.all)) == sorted(ids(D)) and len(s.all) == len(D)
    pats = [patients(p) for p in parts]
    assert not (pats[0] & pats[1] or pats[0] & pats[2] or pats[1] & pats[2])
    for p in parts:  # every record of a patient is in the part of that patient
        assert {d.id for d in D if d.patient_id in patients(p)} == set(ids(p))
        assert ids(p) == sorted(ids(p))
    again = split_by_patient(D, seed=seed)
    assert (ids(again.train), ids(again.dev), ids(again.test)) == (ids(s.train), ids(s.dev), ids(s.test))
    targets = _split_counts(len(D), (0.7, 0.1, 0.2))
    assert abs(len(s.test) - targets[2]) <= 2 and abs(len(s.dev) - targets[1]) <= 2


def test_split_by_patient_depends_on_seed_and_handles_two_way_and_zero_dev():
    D = docs()
    assert ids(split_by_patient(D, seed=1).test) != ids(split_by_patient(D, seed=2).test)
    two = split_by_patient(D, (0.8, 0.2), seed=0)
    assert two.dev == [] and not (patients(two.train) & patients(two.test))
    zero = split_by_patient(D, (0.8, 0.0, 0.2), seed=0)
    assert zero.dev == [] and ids(zero.test) == ids(two.test)
    assert split_by_patient([], seed=0).all == []


def test_split_by_document_counts_match_thesis():
    D = [Document(f"{i:04d}", "x", patient_id=str(i % 163)) for i in range(2434)]
    for fr in [(0.8, 0.2), (0.8, 0.0, 0.2), THESIS_NURSING_FRACTIONS]:
        s = split_by_document(D, fr, seed=0)
        assert (len(s.train), len(s.dev), len(s.test)) == (1948, 0, 486)
        assert sorted(ids(s.all)) == ids(D)
    a, b = split_by_document(D, seed=3), split_by_document(D, seed=3)
    assert ids(a.test) == ids(b.test) and ids(a.test) != ids(split_by_document(D, seed=4).test)
    with pytest.raises(ValueError):
        split_by_document(D, (0.5, 0.6))
    with pytest.raises(CorpusError, match="unique"):
        split_by_document(D + D[:1])


def test_partition_by_patient_balanced_disjoint_complete_and_seeded():
    D = docs(41)
    for k in (1, 2, 5):
        sites = partition_by_patient(D, k, seed=0)
        assert len(sites) == k and sorted(i for s in sites for i in ids(s)) == sorted(ids(D))
        pats = [patients(s) for s in sites]
        assert all(not (pats[i] & pats[j]) for i in range(k) for j in range(i + 1, k))
        for s in sites:
            assert {d.id for d in D if d.patient_id in patients(s)} == set(ids(s))
        assert max(map(len, sites)) - min(map(len, sites)) <= 4  # at most the largest patient's records
    assert [ids(s) for s in partition_by_patient(D, 5, seed=3)] == [ids(s) for s in partition_by_patient(D, 5, seed=3)]
    assert [ids(s) for s in partition_by_patient(D, 5, seed=3)] != [ids(s) for s in partition_by_patient(D, 5, seed=4)]
    with pytest.raises(ValueError, match="cannot partition 1 patients into 5"):
        partition_by_patient(D[:1], 5)
    with pytest.raises(ValueError):
        partition_by_patient(D, 0)


def test_corpus_splits_summary_and_counts():
    s = split_by_patient(docs(), seed=0, name="toy")
    c = s.counts()
    assert c["train"]["documents"] == len(s.train) and c["test"]["phi"] == len(s.test)
    assert c["dev"]["patients"] == len(patients(s.dev))
    text = s.summary()
    assert text.splitlines()[0] == "corpus toy" and f"test : {len(s.test)} docs" in text
    assert repr(s) == f"CorpusSplits('toy', train={len(s.train)}, dev={len(s.dev)}, test={len(s.test)})"


def test_split_dirs_round_trip(tmp_path):
    D = docs(10)
    s = split_by_patient(D, seed=0)
    _write_split_dirs(s, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dev", "test", "train"]
    back = read_split_dirs(tmp_path)
    assert isinstance(back, CorpusSplits) and back.name == tmp_path.name
    assert (back.train, back.dev, back.test) == (s.train, s.dev, s.test)


def test_official_release_folder_names_and_flat_folder(tmp_path):
    D = docs(12)
    write_i2b2_dir(D[:5], tmp_path / "rel" / "training-PHI-Gold-Set1")
    write_i2b2_dir(D[5:9], tmp_path / "rel" / "training-PHI-Gold-Set2")
    write_i2b2_dir(D[9:], tmp_path / "rel" / "testing-PHI-Gold-fixed")
    r = read_split_dirs(tmp_path / "rel")
    assert ids(r.train) == ids(D[:9]) and r.dev == [] and ids(r.test) == ids(D[9:])
    write_i2b2_dir(D, tmp_path / "flat")
    flat = read_split_dirs(tmp_path / "flat", seed=0)
    assert (ids(flat.train), ids(flat.test)) == tuple(ids(x) for x in (split_by_patient(D, seed=0).train, split_by_patient(D, seed=0).test))


def test_split_dirs_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_split_dirs(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="no train/"):
        read_split_dirs(tmp_path / "empty")
    D = docs(3)
    write_i2b2_dir(D, tmp_path / "dup" / "train")
    write_i2b2_dir(D[:1], tmp_path / "dup" / "test")
    with pytest.raises(CorpusError, match="appears in both train and test"):
        read_split_dirs(tmp_path / "dup")
    bad = CorpusSplits(D[:1], [], [Document("009-01", "x\x00", [])])
    with pytest.raises(CorpusError):
        _write_split_dirs(bad, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_subsample_is_the_seeded_sorted_choice_and_keeps_order():
    import numpy as np

    from deidlib.corpus.splits import subsample

    items = [f"s{i}" for i in range(50)]
    got = subsample(items, 7, seed=3)
    idx = np.sort(np.random.default_rng(3).choice(50, 7, replace=False))
    assert got == [items[i] for i in idx]  # the studies' former _cap, position for position
    assert got == sorted(got, key=items.index) and len(set(got)) == 7
    assert subsample(items, 7, seed=3) == got and subsample(items, 7, seed=4) != got
    for n in (None, 50, 99):
        out = subsample(items, n, seed=0)
        assert out == items and out is not items
    with pytest.raises(ValueError, match="cannot keep -1"):
        subsample(items, -1, seed=0)
