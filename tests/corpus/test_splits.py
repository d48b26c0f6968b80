import pytest

from deidlib.corpus import Document
from deidlib.corpus.splits import (
    THESIS_NURSING_FRACTIONS,
    CorpusSplits,
    partition_by_patient,
    read_split_dirs,
    split_by_document,
    split_by_patient,
    write_split_dirs,
)


def docs(n_patients=40):
    out = []
    for p in range(n_patients):
        for r in range(1 + p % 4):
            out.append(Document(f"{p:03d}-{r:02d}", f"note {p} {r}", patient_id=f"{p:03d}"))
    return out


def ids(ds):
    return [d.id for d in ds]


def test_split_by_patient_is_pure_complete_and_seeded():
    D = docs()
    s = split_by_patient(D, seed=1)
    parts = [s.train, s.dev, s.test]
    assert sorted(ids(s.all)) == sorted(ids(D))
    pats = [{d.patient_id for d in p} for p in parts]
    assert not (pats[0] & pats[1] or pats[0] & pats[2] or pats[1] & pats[2])
    assert ids(split_by_patient(D, seed=1).train) == ids(s.train)
    assert ids(split_by_patient(D, seed=2).train) != ids(s.train)
    assert abs(len(s.train) / len(D) - 0.7) < 0.1


def test_split_by_document_counts_match_thesis():
    D = [Document(f"{i}", "x", patient_id=str(i % 163)) for i in range(2434)]
    s = split_by_document(D, THESIS_NURSING_FRACTIONS, seed=0)
    assert (len(s.train), len(s.dev), len(s.test)) == (1948, 0, 486)
    with pytest.raises(ValueError):
        split_by_document(D, (0.5, 0.6))


def test_partition_by_patient_balanced_and_disjoint():
    D = docs()
    sites = partition_by_patient(D, 5, seed=0)
    assert sum(map(len, sites)) == len(D)
    pats = [{d.patient_id for d in s} for s in sites]
    assert all(not (pats[i] & pats[j]) for i in range(5) for j in range(i + 1, 5))
    assert max(map(len, sites)) - min(map(len, sites)) <= 4
    with pytest.raises(ValueError):
        partition_by_patient(D[:2], 5)


def test_split_dirs_round_trip(tmp_path):
    D = docs(10)
    s = split_by_patient(D, seed=0)
    write_split_dirs(s, tmp_path)
    back = read_split_dirs(tmp_path)
    assert isinstance(back, CorpusSplits)
    assert (ids(back.train), ids(back.dev), ids(back.test)) == (ids(s.train), ids(s.dev), ids(s.test))
