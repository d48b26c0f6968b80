import pytest

from deidlib.corpus.locate import MEDICAL_ABSTRACTS, find_data_dir
from deidlib.utility.abstracts import AbstractsError, label_names, load_abstracts


def test_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(AbstractsError, match="not found"):
        load_abstracts(tmp_path / "nope")
    with pytest.raises(AbstractsError, match="no train split"):
        load_abstracts(tmp_path, split="train")


def test_reads_the_csv_layout_of_the_readme(tmp_path):
    (tmp_path / "medical_tc_test.csv").write_text('condition_label,medical_abstract\n3,"Sleep, apnea."\n1,Tumour\n')
    (tmp_path / "medical_tc_labels.csv").write_text("condition_label,condition_name\n1,neoplasms\n3,nervous\n")
    assert load_abstracts(tmp_path) == (["Sleep, apnea.", "Tumour"], [3, 1])
    assert label_names(tmp_path) == {1: "neoplasms", 3: "nervous"}
    (tmp_path / "medical_tc_test.csv").write_text("label,text\n1,x\n")
    with pytest.raises(AbstractsError, match="missing column"):
        load_abstracts(tmp_path)


@pytest.mark.realdata
def test_real_medical_abstracts_have_five_classes():
    d = find_data_dir(MEDICAL_ABSTRACTS)
    if d is None:
        pytest.skip(f"{MEDICAL_ABSTRACTS} not found (set DEIDLIB_DATA_DIR or place it in ../shared/data)")
    texts, labels = load_abstracts(d)
    assert len(texts) == len(labels) == 2888  # test split size in its README
    assert sorted(set(labels)) == [1, 2, 3, 4, 5] and len(label_names(d)) == 5
