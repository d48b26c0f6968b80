import warnings

import pytest

from deidlib.corpus import CorpusError, Document, Span
from deidlib.corpus.i2b2 import parse_i2b2, read_i2b2_dir, read_i2b2_xml, to_i2b2_xml, write_i2b2_dir

REAL_STYLE = """<?xml version="1.0" encoding="UTF-8" ?>
<deIdi2b2>
<TEXT><![CDATA[Record date: 2067-05-03\r\n\r\nMWilliams saw Mr. "Ed" O'Neil & wife.  Seen at  Mass General.
]]></TEXT>
<TAGS>
<DATE id="P0" start="13" end="23" text="2067-05-03" TYPE="DATE" comment="" />
<NAME id="P1" start="28" end="36" text="Williams" TYPE="DOCTOR" comment="" />
<NAME id="P2" start="45" end="56" text="&amp;quot;Ed&amp;quot; O'Neil" TYPE="PATIENT" comment="" />
<LOCATION id="P3" start="74" end="87" text=" Mass General" TYPE="HOSPITAL" comment="" />
</TAGS>
</deIdi2b2>
"""


def test_real_style_file_entities_whitespace_and_inner_token(tmp_path):
    f = tmp_path / "110-02.xml"
    f.write_bytes(REAL_STYLE.encode())
    d = read_i2b2_xml(f)
    assert d.id == "110-02" and d.patient_id == "110"
    assert "\r\n" in d.text  # carriage returns kept: offsets stay exact
    assert [s.text for s in d.spans] == ["2067-05-03", "Williams", '"Ed" O\'Neil', " Mass General"]
    assert d.text[28:36] == "Williams" and d.text[27] == "M"


def test_round_trip_is_identity_with_byte_identical_text(tmp_path):
    text = "A ]]> B\r\nDr. Brown\ttel 555-1234 <x> & ' \" \n  Smith Jones\n"
    spans = [
        Span.of(text, 13, 18, "DOCTOR"),
        Span.of(text, 23, 31, "PHONE"),
        Span.of(text, 44, 49, "PATIENT"),
        Span.of(text, 50, 55, "PATIENT"),  # adjacent spans
    ]
    doc = Document("007-01", text, spans, patient_id="007", site="site2", metadata={"note_type": "nursing note"})
    write_i2b2_dir([doc], tmp_path)
    back = read_i2b2_dir(tmp_path)[0]
    assert back.text.encode() == text.encode()
    assert back.spans == doc.spans
    assert (back.site, back.patient_id, back.metadata["note_type"]) == ("site2", "007", "nursing note")
    assert to_i2b2_xml(back) == to_i2b2_xml(doc)


def test_span_text_with_newline_survives_attribute_normalisation(tmp_path):
    text = "Lives at 1 Main St\nBoston"
    doc = Document("001-01", text, [Span.of(text, 9, 25, "STREET")])
    back = parse_i2b2(to_i2b2_xml(doc), "001-01.xml")
    assert back.spans == doc.spans


@pytest.mark.parametrize(
    "xml, message",
    [
        ("<deIdi2b2><TEXT><![CDATA[x]]></TEXT><TAGS><DATE id='P0' start='0' end='1'", "malformed XML"),
        ("<deIdi2b2><TEXT><![CDATA[abc]]></TEXT><TAGS><DATE id='P0' start='0' end='9' text='abc' TYPE='DATE'/></TAGS></deIdi2b2>", "out of range"),
        ("<deIdi2b2><TEXT><![CDATA[abc]]></TEXT><TAGS><DATE id='P0' start='0' end='2' text='xy' TYPE='DATE'/></TAGS></deIdi2b2>", "does not match"),
        ("<deIdi2b2><TEXT><![CDATA[abc]]></TEXT><TAGS><NAME id='P7' start='0' end='2' text='ab' TYPE='NURSE'/></TAGS></deIdi2b2>", "unknown TYPE 'NURSE'"),
        ("<deIdi2b2><TEXT><![CDATA[abc]]></TEXT><TAGS><PHI id='P0' start='0' end='2' text='ab' TYPE='DATE'/></TAGS></deIdi2b2>", "unknown PHI category"),
        ("<deIdi2b2><TEXT><![CDATA[abcd]]></TEXT><TAGS><DATE id='P0' start='0' end='3' text='abc' TYPE='DATE'/><AGE id='P1' start='2' end='4' text='cd' TYPE='AGE'/></TAGS></deIdi2b2>", "overlaps"),
        ("<deIdi2b2><TEXT><![CDATA[  ]]></TEXT><TAGS></TAGS></deIdi2b2>", "empty document"),
    ],
)
def test_bad_input_names_the_file(tmp_path, xml, message):
    f = tmp_path / "bad-01.xml"
    f.write_text(xml)
    with pytest.raises(CorpusError, match=message) as e:
        read_i2b2_xml(f)
    assert "bad-01.xml" in str(e.value)


def test_non_utf8_file(tmp_path):
    f = tmp_path / "latin-01.xml"
    f.write_bytes("<deIdi2b2><TEXT><![CDATA[caf\xe9]]></TEXT><TAGS/></deIdi2b2>".encode("latin-1"))
    with pytest.raises(CorpusError, match="latin-01.xml: not UTF-8"):
        read_i2b2_xml(f)


def test_lenient_mode_skips_bad_tags_and_files_with_warnings(tmp_path):
    (tmp_path / "a-01.xml").write_text(
        "<deIdi2b2><TEXT><![CDATA[abc def]]></TEXT><TAGS><DATE id='P0' start='0' end='3' text='abc' TYPE='DATE'/>"
        "<NAME id='P1' start='4' end='7' text='def' TYPE='NURSE'/></TAGS></deIdi2b2>"
    )
    (tmp_path / "b-01.xml").write_text("<deIdi2b2><TEXT>")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        docs = read_i2b2_dir(tmp_path, lenient=True)
    assert [d.id for d in docs] == ["a-01"] and len(docs[0].spans) == 1
    assert any("NURSE" in str(x.message) for x in w) and any("b-01.xml" in str(x.message) for x in w)


def test_writer_leaves_nothing_half_written(tmp_path):
    good = Document("001-01", "ok", [])
    bad = Document("002-01", "x\x00y", [])
    with pytest.raises(CorpusError, match="cannot be stored in XML"):
        write_i2b2_dir([good, bad], tmp_path / "out")
    assert not (tmp_path / "out").exists()
