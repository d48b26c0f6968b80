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
    ("intubated 3/12-3/15 for pna", "3/12-3/15", "DATE"),
    ("s/p CABG 9/98 at home", "9/98", "DATE"),
    ("MI in '98, stable", "98", "DATE"),
    ("seen 10/5 by cardiology", "10/5", "DATE"),
    ("s/p CABG 98, stable since", "98", "DATE"),
    ("PMH: MI x2 02; htn", "02", "DATE"),
    ("born 1975 in town", "1975", "DATE"),
    ("on dialysis since 2004.", "2004", "DATE"),
    ("--J. Smith RN", "J. Smith", "DOCTOR"),
    ("d/w K. Lee, PA-C at bedside", "K. Lee", "DOCTOR"),
])
def test_guideline_forms_are_found(text, found, typ):
    spans = pattern_spans(text)
    assert [(s.text, s.subtype) for s in spans] == [(found, typ)]
    assert all(text[s.start:s.end] == s.text for s in spans)


@pytest.mark.parametrize("text", [
    "give 1/2 tab po", "strength 5/5 bilaterally", "4/5 in the left arm", "a 58 yo man", "BP 120/80",
    "dose 0.5/1 mg", "IV #20g in left arm", "weaned 900-1100", "on day 3 of 5",
    "weaned to PSV 10/5 overnight", "CPAP/PSV 5/5/40%", "on peep/ps 12/5", "c/o pain 3/10", "2/6 SEM at apex",
])
def test_fractions_grades_young_ages_and_numbers_are_not_phi(text):
    assert pattern_spans(text) == []


@pytest.mark.parametrize("text", [
    "woke at 1930 and at 2015", "I/O 1980 ml", "LOS +1975", "intake 2000 cc in 2000 ml", "tube feeds 1975 kcal", "in 2010 mmHg",
    "s/p MI 60 bpm", "stent 18 mm", "cath 50% LAD", "surgery 10 am", "HR 98 at 0700",
])
def test_clock_times_amounts_and_event_measures_are_not_years(text):
    assert pattern_spans(text) == []


@pytest.mark.parametrize("text", [
    "J. Smith aware", "RN aware", "Dr. Smith MD aware", "j. smith rn", "Pt MD aware", "JS RN", "A. FIB-RN",
])
def test_a_signature_needs_an_initial_a_capitalised_surname_and_a_credential(text):
    assert [s for s in pattern_spans(text) if s.subtype == "DOCTOR"] == []


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


def test_model_dates_inside_measurements_are_dropped_and_real_dates_kept():
    """A model's DATE span on a number of ``PSV 10/5`` is dropped (the pair is a ventilator
    setting); the same pair after another word stays a date, and other types are untouched."""
    from deidlib.corpus.patterns import drop_measurements

    text = "on PSV 10/5, seen 10/5 by Smith; pain 3/10"
    spans = [Span.of(text, 7, 9, "DATE"), Span.of(text, 10, 11, "DATE"), Span.of(text, 18, 22, "DATE"),
             Span.of(text, 26, 31, "DOCTOR"), Span.of(text, 38, 42, "DATE")]
    kept = drop_measurements(text, spans)
    assert [(s.text, s.subtype) for s in kept] == [("10/5", "DATE"), ("Smith", "DOCTOR")]


def test_place_spans_that_only_name_a_kind_of_unit_are_dropped_and_hospitals_kept():
    """"MICU" or "cath lab" tagged as a hospital is not PHI (a kind of unit); a named hospital, or a
    unit word inside a hospital's name, stays."""
    from deidlib.corpus.patterns import drop_generic_places

    text = "from MICU to cath lab, then Sacred Heart MICU; dr Home"
    spans = [Span.of(text, 5, 9, "HOSPITAL"), Span.of(text, 13, 21, "HOSPITAL"),
             Span.of(text, 28, 45, "HOSPITAL"), Span.of(text, 50, 54, "DOCTOR")]
    kept = drop_generic_places(spans)
    assert [(s.text, s.subtype) for s in kept] == [("Sacred Heart MICU", "HOSPITAL"), ("Home", "DOCTOR")]
