import pytest

from deidlib.corpus import CorpusError
from deidlib.corpus.physionet import PHYSIONET_TYPE_MAP, count_overlaps, read_physionet


def write_fixture(d, phrase_lines):
    (d / "id.text").write_text(
        "START_OF_RECORD=1||||1||||\nSeen by Dr Smith on 7/22.\n||||END_OF_RECORD\n"
        "START_OF_RECORD=1||||2||||\nCall 555-1234 at GH.\n||||END_OF_RECORD\n"
    )
    (d / "id-phi.phrase").write_text("".join(l + "\n" for l in phrase_lines))


def test_reader_on_fixture(tmp_path):
    write_fixture(tmp_path, ["1 1 11 16 HCPName Smith", "1 1 20 24 Date 7/22", "1 2 5 13 Phone 555-1234", "1 2 17 19 Location GH"])
    docs = read_physionet(tmp_path)
    assert [d.id for d in docs] == ["1-1", "1-2"]
    assert [(s.category, s.subtype, s.text) for s in docs[0].spans] == [("NAME", "DOCTOR", "Smith"), ("DATE", "DATE", "7/22")]
    assert docs[1].spans[1].subtype == "HOSPITAL" and docs[1].patient_id == "1"


@pytest.mark.parametrize(
    "line, message",
    [("1 1 11 16 HCPName Smyth", "does not match"), ("1 3 0 4 Date Seen", "no record"), ("1 1 0 4 Nurse Seen", "unknown PhysioNet"), ("1 1 0", "expected")],
)
def test_reader_errors_name_file_and_line(tmp_path, line, message):
    write_fixture(tmp_path, [line])
    with pytest.raises(CorpusError, match=message) as e:
        read_physionet(tmp_path)
    assert "id-phi.phrase:1" in str(e.value)


def test_type_map_covers_all_types():
    assert set(PHYSIONET_TYPE_MAP) == {
        "HCPName", "PTName", "PTNameInitial", "RelativeProxyName", "Date", "DateYear", "Location", "Phone", "Age", "Other",
    }


@pytest.mark.realdata
def test_physionet_counts(physionet_dir):
    docs = read_physionet(physionet_dir)
    assert len(docs) == 2434
    assert sum(len(d.spans) for d in docs) == 1779
    assert len({d.patient_id for d in docs}) == 163
    assert all(d.text[s.start : s.end] == s.text for d in docs for s in d.spans)
    assert count_overlaps(docs) == 1
