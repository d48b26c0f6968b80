"""Guideline patterns: the PHI forms of the Safe Harbor list / i2b2 2014 guidelines are found,
common clinical look-alikes are not, and pattern spans merge into a model's spans."""

from __future__ import annotations

import pytest

from deidlib.corpus.document import Span
from deidlib.corpus.patterns import merge_spans, pattern_spans


@pytest.mark.parametrize("text, found, typ", [
    ("seen on 3/12/2010 in clinic", "3/12/2010", "DATE"),
    ("seen on 3/12 in clinic", "3/12", "DATE"),
    ("admitted 2010-03-04.", "2010-03-04", "DATE"),
    ("surgery on March 3rd, 2011 went well", "March 3rd, 2011", "DATE"),
    ("back on 5 jan for review", "5 jan", "DATE"),
    ("call (617) 555-1234 x1234 today", "(617) 555-1234 x1234", "PHONE"),
    ("pager 555-1234", "555-1234", "PHONE"),
    ("SSN 123-45-6789", "123-45-6789", "SSN"),
    ("mail a.b@example.org now", "a.b@example.org", "EMAIL"),
    ("MRN: 1234567", "1234567", "MEDICALRECORD"),
    ("pt is a 91 yo man", "91", "AGE"),
    ("a 102-year-old woman", "102", "AGE"),
])
def test_guideline_forms_are_found(text, found, typ):
    spans = pattern_spans(text)
    assert [(s.text, s.subtype) for s in spans] == [(found, typ)]
    assert all(text[s.start:s.end] == s.text for s in spans)


@pytest.mark.parametrize("text", [
    "give 1/2 tab po", "strength 5/5 bilaterally", "4/5 in the left arm", "a 58 yo man", "BP 120/80",
    "dose 0.5/1 mg", "IV #20g in left arm", "weaned 900-1100", "on day 3 of 5",
])
def test_fractions_grades_young_ages_and_numbers_are_not_phi(text):
    assert pattern_spans(text) == []


def test_unknown_pattern_set_is_a_one_line_error():
    with pytest.raises(ValueError, match="unknown pattern set"):
        pattern_spans("x", "nope")


def test_merge_widens_the_model_span_keeps_its_type_and_adds_the_rest():
    text = "Dr Smith on March 3 2011 and 4/5/2012"
    model = [Span.of(text, 3, 8, "DOCTOR"), Span.of(text, 12, 19, "DATE")]  # "Smith", "March 3"
    extra = pattern_spans(text)
    merged = merge_spans(text, model, extra)
    assert [(s.text, s.subtype) for s in merged] == [("Smith", "DOCTOR"), ("March 3 2011", "DATE"),
                                                      ("4/5/2012", "DATE")]
    spans = [Span.of(text, 0, 2, "DOCTOR"), Span.of(text, 3, 8, "DOCTOR")]
    joined = merge_spans(text, spans, [Span.of(text, 1, 5, "PATIENT")])
    assert [(s.start, s.end, s.subtype) for s in joined] == [(0, 8, "DOCTOR")]
