import pytest

from deidlib.corpus.conventions import GUIDELINES, _age_value, _keeps_span, align_spans
from deidlib.corpus.document import Document, Span


def _span(text, subtype, cat):
    return Span(0, len(text), cat, subtype, text)


@pytest.mark.parametrize("text, value", [("58", 58), ("58-year-old", 58), ("ninety-one", 91), ("seventy-eight", 78),
                                         ("50s", 50), ("eighty", 80), ("old", None)])
def test_age_value_reads_digits_and_words(text, value):
    assert _age_value(text) == value


def test_physionet_guideline_keeps_only_ages_over_89_and_drops_departments_professions_rooms():
    keep = lambda t, st, c: _keeps_span(_span(t, st, c), "physionet")  # noqa: E731
    assert not keep("89", "AGE", "AGE") and keep("90", "AGE", "AGE") and keep("ninety-two", "AGE", "AGE")
    assert not keep("58", "AGE", "AGE") and not keep("50s", "AGE", "AGE")
    assert not keep("Cardiology", "DEPARTMENT", "LOCATION")
    assert not keep("teacher", "PROFESSION", "PROFESSION")
    assert not keep("412", "ROOM", "LOCATION")
    for t, st, c in [("Smith", "PATIENT", "NAME"), ("Jones", "DOCTOR", "NAME"), ("7/22", "DATE", "DATE"),
                     ("GH", "HOSPITAL", "LOCATION"), ("Boston", "CITY", "LOCATION"), ("555-1234", "PHONE", "CONTACT")]:
        assert keep(t, st, c)


def test_i2b2_guideline_keeps_everything_and_unknown_guideline_is_an_error():
    for st, c, t in [("AGE", "AGE", "58"), ("DEPARTMENT", "LOCATION", "Cardiology"), ("ROOM", "LOCATION", "4")]:
        assert _keeps_span(_span(t, st, c), "i2b2")
    with pytest.raises(ValueError, match="unknown guideline"):
        _keeps_span(_span("58", "AGE", "AGE"), "hipaa")
    assert set(GUIDELINES) == {"i2b2", "physionet"}


def test_align_spans_copies_and_never_changes_the_input():
    text = "58 yo seen by Dr Jones"
    spans = [Span(0, 2, "AGE", "AGE", "58"), Span(17, 22, "NAME", "DOCTOR", "Jones")]
    doc = Document("d1", text, list(spans), "p1", "s", {"k": 1})
    out = align_spans([doc], "physionet")
    assert [s.subtype for s in out[0].spans] == ["DOCTOR"]
    assert len(doc.spans) == 2 and out[0] is not doc and out[0].text == text and out[0].metadata == {"k": 1}


def test_physionet_drops_weekday_dates_and_cuts_generic_facility_words_from_hospitals():
    from deidlib.corpus.conventions import trim_span

    text = "seen Monday at Brindlecombe Memorial Hospital, then St. Mary's Medical Center and Hospital on 7/22"
    def sp(t, st, cat):
        a = text.index(t)
        return Span(a, a + len(t), cat, st, t)
    wd, calv, mary, bare, date = (sp("Monday", "DATE", "DATE"), sp("Brindlecombe Memorial Hospital", "HOSPITAL", "LOCATION"),
                                  sp("St. Mary's Medical Center", "HOSPITAL", "LOCATION"),
                                  sp("Hospital on", "HOSPITAL", "LOCATION"), sp("7/22", "DATE", "DATE"))
    assert trim_span(wd, "physionet") is None and trim_span(wd, "i2b2") == wd
    c = trim_span(calv, "physionet")
    assert (c.text, c.start, c.end) == ("Brindlecombe Memorial", calv.start, calv.start + len("Brindlecombe Memorial"))
    assert text[c.start:c.end] == c.text and c.subtype == "HOSPITAL" and c.category == "LOCATION"
    assert trim_span(mary, "physionet").text == "St. Mary's"
    assert trim_span(bare, "physionet") == bare  # not a trailing generic word: unchanged
    assert trim_span(date, "physionet") == date and trim_span(calv, "i2b2") == calv
    only = Span(0, 8, "LOCATION", "HOSPITAL", "Hospital")
    assert trim_span(only, "physionet") == only  # a name of generic words only stays whole
    doc = Document("d", text, [wd, calv, mary, date], "p", "s", {})
    out = align_spans([doc], "physionet")[0]
    assert [s.text for s in out.spans] == ["Brindlecombe Memorial", "St. Mary's", "7/22"]
