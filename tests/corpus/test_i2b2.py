import warnings

import pytest

from deidlib.corpus import CorpusError, Document, Span
from deidlib.corpus.i2b2 import (
    UnknownTagError,
    _parse_i2b2,
    _write_i2b2_xml,
    read_i2b2_dir,
    read_i2b2_xml,
    to_i2b2_xml,
    write_i2b2_dir,
)
from deidlib.corpus.phi import UnknownPHITypeError

# Hand-written in the style of the real i2b2 2014 files: \r\n line ends, a NAME inside a
# token ("MWilliams"), a doubly escaped HTML entity in a text attribute, a LOCATION that
# starts on whitespace, and a text attribute with a literal newline.
REAL_STYLE = """<?xml version="1.0" encoding="UTF-8" ?>
<deIdi2b2>
<TEXT><![CDATA[Record date: 2067-05-03\r\n\r\nMWilliams saw Mr. "Ed" O'Neil & wife.  Seen at  Mass General.
Lives in Boston\r\nMA.
]]></TEXT>
<TAGS>
<DATE id="P0" start="13" end="23" text="2067-05-03" TYPE="DATE" comment="" />
<NAME id="P1" start="28" end="36" text="Williams" TYPE="DOCTOR" comment="" />
<NAME id="P2" start="45" end="56" text="&amp;quot;Ed&amp;quot; O'Neil" TYPE="PATIENT" comment="" />
<LOCATION id="P3" start="74" end="87" text=" Mass General" TYPE="HOSPITAL" comment="" />
<LOCATION id="P4" start="98" end="104" text="Boston" TYPE="CITY" comment="" />
<LOCATION id="P5" start="98" end="108" text="Boston
MA" TYPE="LOCATION-OTHER" comment="" />
</TAGS>
</deIdi2b2>
"""


def test_real_style_file_entities_whitespace_and_inner_token(tmp_path):
    f = tmp_path / "110-02.xml"
    f.write_bytes(REAL_STYLE.replace('<LOCATION id="P4" start="98" end="104" text="Boston" TYPE="CITY" comment="" />\n', "").encode())
    d = read_i2b2_xml(f)
    assert d.id == "110-02" and d.patient_id == "110" and d.site == "" and d.metadata == {}
    assert d.text.count("\r\n") == 3  # carriage returns kept: offsets stay exact
    assert [s.text for s in d.spans] == ["2067-05-03", "Williams", '"Ed" O\'Neil', " Mass General", "Boston\r\nMA"]
    assert d.text[27:36] == "MWilliams" and d.spans[1].start == 28
    assert [s.subtype for s in d.spans] == ["DATE", "DOCTOR", "PATIENT", "HOSPITAL", "LOCATION-OTHER"]
    for s in d.spans:
        assert d.text[s.start : s.end] == s.text


def test_overlapping_real_style_tags_are_an_error_naming_both_tags(tmp_path):
    f = tmp_path / "110-02.xml"
    f.write_text(REAL_STYLE, newline="")
    with pytest.raises(CorpusError, match=r"110-02.xml: tag <LOCATION id='P5' 98-108> overlaps tag <LOCATION id='P4' 98-104>"):
        read_i2b2_xml(f)
    assert len(read_i2b2_xml(f, allow_overlap=True).spans) == 6
    with pytest.warns(UserWarning, match="overlaps"):
        assert len(read_i2b2_xml(f, lenient=True).spans) == 5


def tricky_doc():
    text = 'A ]]> B\r\nDr. Brown\ttel 555-1234 <x> & \' " \n  Smith Jones\rMWilliams é 🙂 ]]]]> &amp;\n'

    def at(sub, subtype, lead=0):
        i = text.index(sub) - lead
        return Span.of(text, i, i + lead + len(sub), subtype)

    spans = [
        at("Brown", "DOCTOR"),
        at("555-1234", "PHONE"),
        at("& ' \" \n", "OTHER"),  # characters that need escaping in attributes
        at("Smith", "PATIENT", lead=1),  # starts on whitespace
        at("Jones", "PATIENT", lead=1),  # adjacent to the previous span
        at("Williams", "DOCTOR"),  # inside the token "MWilliams"
        at("]]]]> &amp;", "IDNUM"),
    ]
    return Document("007-01", text, spans, patient_id="007", site="site2", metadata={"note_type": "nursing note", "site": "x"})


def test_tricky_fixture_is_what_it_claims():
    d = tricky_doc().validate()
    assert "]]>" in d.text and "\r\n" in d.text and "\r" in d.text.replace("\r\n", "")
    assert d.spans[2].text == "& ' \" \n" and d.spans[3].text.startswith(" ")
    assert d.spans[3].end == d.spans[4].start
    assert d.text[d.spans[5].start - 1] == "M" and d.spans[6].text == "]]]]> &amp;"


def test_round_trip_is_identity_with_byte_identical_text(tmp_path):
    doc = tricky_doc()
    write_i2b2_dir([doc], tmp_path)
    back = read_i2b2_dir(tmp_path)[0]
    assert back.text.encode("utf-8") == doc.text.encode("utf-8")
    assert back == doc  # id, spans, patient id, site and metadata (a metadata key "site" included)
    assert to_i2b2_xml(back) == to_i2b2_xml(doc)


def test_plain_i2b2_output_without_meta(tmp_path):
    doc = tricky_doc()
    x = to_i2b2_xml(doc, include_meta=False)
    assert "<META>" not in x and "<META>" in to_i2b2_xml(doc)
    back = _parse_i2b2(x, "007-01.xml")
    assert back.spans == doc.spans and back.text == doc.text and back.patient_id == "007" and back.site == ""


def test_no_meta_written_for_plain_documents():
    text = "seen 2020"
    doc = Document("012-03", text, [Span.of(text, 5, 9, "DATE")], patient_id="012")
    x = to_i2b2_xml(doc)
    assert "<META>" not in x
    assert x.startswith('<?xml version="1.0" encoding="UTF-8" ?>\n<deIdi2b2>\n<TEXT><![CDATA[seen 2020]]></TEXT>')
    assert '<DATE id="P0" start="5" end="9" text="2020" TYPE="DATE" comment="" />' in x
    assert _parse_i2b2(x, "x/012-03.xml") == doc


def test_plain_text_element_and_split_cdata_are_read_like_an_xml_parser():
    x = "<deIdi2b2><TEXT>a &lt;b&gt; &amp; c<![CDATA[ <d> ]]> e</TEXT><TAGS><NAME id='P0' start='2' end='5' text='&lt;b&gt;' TYPE='PATIENT'/></TAGS></deIdi2b2>"
    d = _parse_i2b2(x, "001-01.xml")
    assert d.text == "a <b> & c <d>  e" and d.spans[0].text == "<b>"


def test_utf8_bom_and_single_file_writer(tmp_path):
    doc = Document("003-01", "Größe 🙂 Jürgen", [], patient_id="003")
    doc = doc.with_spans([Span.of(doc.text, 8, 14, "PATIENT")])
    p = _write_i2b2_xml(doc, tmp_path / "003-01.xml")
    assert read_i2b2_xml(p) == doc
    p.write_bytes(b"\xef\xbb\xbf" + p.read_bytes())
    assert read_i2b2_xml(p) == doc


def test_duplicate_tags_collapse_with_a_warning():
    x = "<deIdi2b2><TEXT><![CDATA[abc]]></TEXT><TAGS><DATE id='P0' start='0' end='3' text='abc' TYPE='DATE'/><DATE id='P1' start='0' end='3' text='abc' TYPE='DATE'/></TAGS></deIdi2b2>"
    with pytest.warns(UserWarning, match="duplicate tag <DATE id='P1'"):
        d = _parse_i2b2(x, "d-01.xml")
    assert len(d.spans) == 1


BAD = [
    ("<deIdi2b2><TEXT><![CDATA[x]]></TEXT><TAGS><DATE id='P0' start='0' end='1'", "malformed XML at line 1"),
    ("", "malformed XML"),
    ("<other><TEXT>abc</TEXT></other>", "root element is <other>"),
    ("<deIdi2b2><TAGS/></deIdi2b2>", "no <TEXT> element"),
    ("<deIdi2b2><TEXT>a<b/>c</TEXT><TAGS/></deIdi2b2>", "unexpected markup inside <TEXT>"),
    ("<deIdi2b2><TEXT><![CDATA[abc]]></TEXT><TAGS><DATE id='P0' start='0' end='9' text='abc' TYPE='DATE'/></TAGS></deIdi2b2>", r"<DATE id='P0' start='0' end='9'>: offsets 0-9 out of range \(text length 3\)"),
    ("<deIdi2b2><TEXT><![CDATA[abc]]></TEXT><TAGS><DATE id='P0' start='2' end='2' text='' TYPE='DATE'/></TAGS></deIdi2b2>", "out of range"),
    ("<deIdi2b2><TEXT><![CDATA[abc]]></TEXT><TAGS><DATE id='P0' start='a' end='2' text='ab' TYPE='DATE'/></TAGS></deIdi2b2>", "not integers"),
    ("<deIdi2b2><TEXT><![CDATA[abc]]></TEXT><TAGS><DATE id='P3' start='0' end='2' text='xy' TYPE='DATE'/></TAGS></deIdi2b2>", r"id='P3' start='0' end='2'>: text attribute does not match the note's text at 0-2"),
    ("<deIdi2b2><TEXT><![CDATA[abc]]></TEXT><TAGS><NAME id='P7' start='0' end='2' text='ab' TYPE='NURSE'/></TAGS></deIdi2b2>", "id='P7'.*unknown TYPE for NAME"),
    ("<deIdi2b2><TEXT><![CDATA[abc]]></TEXT><TAGS><NAME id='P7' start='0' end='2' text='ab'/></TAGS></deIdi2b2>", "no TYPE attribute"),
    ("<deIdi2b2><TEXT><![CDATA[abc]]></TEXT><TAGS><PHI id='P0' start='0' end='2' text='ab' TYPE='DATE'/></TAGS></deIdi2b2>", "unknown PHI category 'PHI'"),
    ("<deIdi2b2><TEXT><![CDATA[abcd]]></TEXT><TAGS><DATE id='P0' start='0' end='3' text='abc' TYPE='DATE'/><AGE id='P1' start='2' end='4' text='cd' TYPE='AGE'/></TAGS></deIdi2b2>", "tag <AGE id='P1' 2-4> overlaps tag <DATE id='P0' 0-3>"),
    ("<deIdi2b2><TEXT><![CDATA[  \n ]]></TEXT><TAGS></TAGS></deIdi2b2>", "empty document"),
    ("<deIdi2b2><TEXT></TEXT><TAGS></TAGS></deIdi2b2>", "empty document"),
    ("<deIdi2b2><TEXT>x</TEXT><TAGS/><META>{not json</META></deIdi2b2>", "<META> is not valid JSON"),
    ('<!DOCTYPE d [<!ENTITY a "aaaa">]><deIdi2b2><TEXT>&a;</TEXT><TAGS/></deIdi2b2>', "forbidden XML construct"),
]


@pytest.mark.parametrize("xml, message", BAD)
def test_bad_input_names_the_file(tmp_path, xml, message):
    f = tmp_path / "bad-01.xml"
    f.write_text(xml)
    with pytest.raises(CorpusError, match=message) as e:
        read_i2b2_xml(f)
    assert str(e.value).startswith(str(f))


def test_unknown_type_is_also_an_unknown_phi_type_error():
    x = "<deIdi2b2><TEXT><![CDATA[abc]]></TEXT><TAGS><NAME id='P7' start='0' end='2' text='ab' TYPE='NURSE'/></TAGS></deIdi2b2>"
    with pytest.raises(UnknownPHITypeError):
        _parse_i2b2(x, "t-01.xml")
    with pytest.raises(UnknownTagError):
        _parse_i2b2(x, "t-01.xml")


@pytest.mark.parametrize("xml, message", [b for b in BAD if "</TAGS></deIdi2b2>" in b[0] and "id='P" in b[0]])
def test_lenient_mode_skips_bad_tags_with_a_warning(xml, message):
    with pytest.warns(UserWarning, match="skipped: t-01.xml"):
        d = _parse_i2b2(xml, "t-01.xml", lenient=True)
    assert all(d.text[s.start : s.end] == s.text for s in d.spans)
    assert len(d.spans) == xml.count("id='P") - 1


def test_lenient_empty_document_is_kept_with_a_warning():
    with pytest.warns(UserWarning, match="e-01.xml: empty document"):
        d = _parse_i2b2("<deIdi2b2><TEXT></TEXT><TAGS/></deIdi2b2>", "e-01.xml", lenient=True)
    assert d.text == "" and d.spans == []


def test_non_utf8_file(tmp_path):
    f = tmp_path / "latin-01.xml"
    f.write_bytes("<deIdi2b2><TEXT><![CDATA[caf\xe9]]></TEXT><TAGS/></deIdi2b2>".encode("latin-1"))
    with pytest.raises(CorpusError, match=r"latin-01.xml: not UTF-8 \(invalid byte 0xe9 at byte offset 28\)"):
        read_i2b2_xml(f)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert read_i2b2_dir(tmp_path, lenient=True) == []
    assert any("latin-01.xml: not UTF-8" in str(x.message) for x in w)


def test_lenient_dir_read_skips_bad_tags_and_files_with_warnings(tmp_path):
    (tmp_path / "a-01.xml").write_text(
        "<deIdi2b2><TEXT><![CDATA[abc def]]></TEXT><TAGS><DATE id='P0' start='0' end='3' text='abc' TYPE='DATE'/>"
        "<NAME id='P1' start='4' end='7' text='def' TYPE='NURSE'/></TAGS></deIdi2b2>"
    )
    (tmp_path / "b-01.xml").write_text("<deIdi2b2><TEXT>")
    (tmp_path / "notes.txt").write_text("ignored")
    with pytest.raises(CorpusError, match="a-01.xml"):
        read_i2b2_dir(tmp_path)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        docs = read_i2b2_dir(tmp_path, lenient=True)
    assert [d.id for d in docs] == ["a-01"] and len(docs[0].spans) == 1
    msgs = [str(x.message) for x in w]
    assert any("a-01.xml" in m and "unknown TYPE for" in m and "NURSE" not in m for m in msgs) and any("b-01.xml" in m for m in msgs)


def test_dir_read_sorts_by_id_and_rejects_missing_dir(tmp_path):
    docs = [Document(i, f"note {i}", [], patient_id=i.split("-")[0]) for i in ("010-02", "002-01", "010-01")]
    write_i2b2_dir(docs, tmp_path)
    assert [d.id for d in read_i2b2_dir(tmp_path)] == ["002-01", "010-01", "010-02"]
    with pytest.raises(CorpusError, match="not a directory"):
        read_i2b2_dir(tmp_path / "nope")


def test_writer_leaves_nothing_half_written(tmp_path):
    good = Document("001-01", "ok", [])
    with pytest.raises(CorpusError, match="cannot be stored in XML"):
        write_i2b2_dir([good, Document("002-01", "x\x00y", [])], tmp_path / "out")
    with pytest.raises(CorpusError, match="two documents have the id"):
        write_i2b2_dir([good, good], tmp_path / "out")
    with pytest.raises(CorpusError, match="cannot be used as a file name"):
        write_i2b2_dir([good, Document("../x", "y", [])], tmp_path / "out")
    with pytest.raises(CorpusError, match="not JSON-serialisable"):
        write_i2b2_dir([good, Document("003-01", "y", [], metadata={"f": object()})], tmp_path / "out")
    assert not (tmp_path / "out").exists()
    # an existing file is replaced atomically: a failing write keeps the old content
    p = _write_i2b2_xml(good, tmp_path / "001-01.xml")
    before = p.read_bytes()
    with pytest.raises(CorpusError):
        _write_i2b2_xml(Document("001-01", "x\x01", []), p)
    assert p.read_bytes() == before and [q.name for q in tmp_path.iterdir() if q.is_file()] == ["001-01.xml"]
