from collections import Counter

import pytest

from deidlib.corpus import CorpusError
from deidlib.corpus.i2b2 import _parse_i2b2, to_i2b2_xml
from deidlib.corpus.phi import TYPE_TO_CATEGORY
from deidlib.corpus.physionet import _PHYSIONET_TYPE_MAP, _count_overlaps, read_physionet

TEXT = (
    "START_OF_RECORD=1||||1||||\nSeen by Dr Smith on 7/22.\n||||END_OF_RECORD\n"
    "START_OF_RECORD=1||||2||||\nCall 555-1234 at GH. Pt S. ok\n||||END_OF_RECORD\n"
    "START_OF_RECORD=2||||1||||\nQuorrel-Marigolds Hosp\n||||END_OF_RECORD\n"
)


def write_fixture(d, phrase_lines, text=TEXT):
    (d / "id.text").write_text(text)
    (d / "id-phi.phrase").write_text("".join(line + "\n" for line in phrase_lines))


GOOD = [
    "1 1 11 16 HCPName Smith",
    "1 1 20 24 Date 7/22",
    "1 2 5 13 Phone 555-1234",
    "1 2 17 19 Location GH",
    "1 2 24 27 PTNameInitial S. ",  # the phrase keeps its trailing space
    "2 1 0 17 Location Quorrel-Marigolds",
    "2 1 8 22 Location Marigolds Hosp",  # overlaps the previous one, as in the real corpus
]


def test_reader_on_fixture(tmp_path):
    write_fixture(tmp_path, GOOD)
    docs = read_physionet(tmp_path)
    assert [d.id for d in docs] == ["1-1", "1-2", "2-1"]
    assert [d.patient_id for d in docs] == ["1", "1", "2"] and {d.site for d in docs} == {"physionet"}
    assert docs[0].text == "Seen by Dr Smith on 7/22.\n"  # the body: after the header's newline
    assert [(s.category, s.subtype, s.text) for s in docs[0].spans] == [("NAME", "DOCTOR", "Smith"), ("DATE", "DATE", "7/22")]
    assert [(s.subtype, s.text) for s in docs[1].spans] == [("PHONE", "555-1234"), ("HOSPITAL", "GH"), ("PATIENT", "S. ")]
    assert docs[1].metadata["physionet_types"] == ["Phone", "Location", "PTNameInitial"]
    assert sum(len(d.spans) for d in docs) == len(GOOD) and _count_overlaps(docs) == 1


def test_overlaps_drop_gives_strictly_valid_documents(tmp_path):
    write_fixture(tmp_path, GOOD)
    docs = read_physionet(tmp_path, overlaps="drop")
    assert _count_overlaps(docs) == 0 and sum(len(d.spans) for d in docs) == len(GOOD) - 1
    assert [s.text for s in docs[2].spans] == ["Quorrel-Marigolds"]
    assert docs[2].metadata["physionet_types"] == ["Location"]
    for d in docs:  # every document round-trips through strict i2b2 XML
        assert _parse_i2b2(to_i2b2_xml(d), f"{d.id}.xml") == d.validate()
    with pytest.raises(ValueError, match="overlaps must be"):
        read_physionet(tmp_path, overlaps="merge")


@pytest.mark.parametrize(
    "line, message",
    [
        ("1 1 11 16 HCPName Smyth", "span 11-16 of the record at id.text:1 does not match the phrase"),
        ("1 3 0 4 Date Seen", "its pid and nid name no record of id.text"),
        ("1 1 0 4 Nurse Seen", "field 5 is not a PhysioNet PHI type"),
        ("1 1 0", "expected 'pid nid start end TYPE phrase'"),
        ("1 1 x 4 Date Seen", "not integers"),
        ("1 1 20 99 Date 7/22", "offsets 20-99 out of range of the record at id.text:1"),
    ],
)
def test_reader_errors_name_file_and_line(tmp_path, line, message):
    write_fixture(tmp_path, ["1 1 11 16 HCPName Smith", line])
    with pytest.raises(CorpusError, match=message) as e:
        read_physionet(tmp_path)
    assert "id-phi.phrase:2" in str(e.value)


def test_a_phrase_line_without_its_type_is_refused_without_quoting_it(tmp_path):
    """Without its TYPE field the phrase's first word (PHI) stands where the type should: the message
    names the file, line and field, never the word."""
    write_fixture(tmp_path, ["1 1 0 4 Seen Smythe"])
    with pytest.raises(CorpusError, match="field 5 is not a PhysioNet PHI type") as e:
        read_physionet(tmp_path)
    assert "Seen" not in str(e.value) and "Smythe" not in str(e.value)


@pytest.mark.parametrize(
    "text, message",
    [
        (TEXT.replace("||||END_OF_RECORD\nSTART_OF_RECORD=1||||2", "\nSTART_OF_RECORD=1||||2", 1), "id.text:1: malformed record"),
        (TEXT + TEXT.split("\n||||END_OF_RECORD\n")[0] + "\n||||END_OF_RECORD\n", "id.text:10: duplicate record \\(the same pid and nid as line 1\\)"),
        ("no records here", "no START_OF_RECORD"),
        ("junk\n" + TEXT, "id.text:1: text before the first"),
    ],
)
def test_bad_text_file(tmp_path, text, message):
    write_fixture(tmp_path, [], text=text)
    with pytest.raises(CorpusError, match=message):
        read_physionet(tmp_path)


def test_missing_and_non_utf8_files(tmp_path):
    with pytest.raises(CorpusError, match="id.text: missing"):
        read_physionet(tmp_path)
    write_fixture(tmp_path, [])
    (tmp_path / "id-phi.phrase").write_bytes(b"1 1 0 4 Date Se\xe9n\n")
    with pytest.raises(CorpusError, match="id-phi.phrase: not UTF-8"):
        read_physionet(tmp_path)


def test_type_map_covers_all_types_and_maps_into_the_taxonomy():
    assert set(_PHYSIONET_TYPE_MAP) == {
        "HCPName", "PTName", "PTNameInitial", "RelativeProxyName", "Date", "DateYear", "Location", "Phone", "Age", "Other",
    }
    assert set(_PHYSIONET_TYPE_MAP.values()) <= set(TYPE_TO_CATEGORY)


@pytest.mark.realdata
def test_physionet_counts(physionet_dir):
    docs = read_physionet(physionet_dir)
    assert len(docs) == 2434
    assert sum(len(d.spans) for d in docs) == 1779
    assert len({d.patient_id for d in docs}) == 163
    # every span equals its phrase line, read here independently of the reader
    expected = Counter()
    for line in (physionet_dir / "id-phi.phrase").read_text(encoding="utf-8").splitlines():
        if line.strip():
            pid, nid, s, e, typ, phrase = line.split(" ", 5)
            expected[(f"{pid}-{nid}", int(s), int(e), _PHYSIONET_TYPE_MAP[typ], phrase)] += 1
    got = Counter((d.id, s.start, s.end, s.subtype, d.text[s.start : s.end]) for d in docs for s in d.spans)
    assert got == expected
    assert _count_overlaps(docs) == 1
    dropped = read_physionet(physionet_dir, overlaps="drop")
    assert sum(len(d.spans) for d in dropped) == 1778 and _count_overlaps(dropped) == 0
