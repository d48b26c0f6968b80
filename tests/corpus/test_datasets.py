import pytest

from deidlib.corpus.datasets import load_corpus


def test_synthetic_corpus_is_seeded_and_split_by_patient():
    a = load_corpus("synthetic", profile="smoke", seed=0)
    b = load_corpus("synthetic", profile="smoke", seed=0)
    assert [d.id for d in a.train] == [d.id for d in b.train] and a.test[0].text == b.test[0].text
    assert not ({d.patient_id for d in a.train} & {d.patient_id for d in a.test})
    assert {d.site for d in a.all} <= {f"site{i}" for i in range(5)} and len({d.site for d in a.all}) >= 3


def test_unknown_or_missing_corpus_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="unknown corpus"):
        load_corpus("mimic")
    with pytest.raises(FileNotFoundError, match="data_dir"):
        load_corpus("i2b2")
    with pytest.raises(FileNotFoundError):
        load_corpus("physionet", data_dir=tmp_path / "nowhere")


@pytest.mark.realdata
def test_physionet_thesis_split(physionet_dir):
    s = load_corpus("physionet", data_dir=physionet_dir)
    assert len(s.train) + len(s.dev) == 1948 and len(s.test) == 486
