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


@pytest.mark.parametrize("text, found, typ", [
    ("SSN: 341 04 0433 on file", "341 04 0433", "SSN"),
    ("S/N 7GH2-9981-KL", "7GH2-9981-KL", "DEVICE"),
    ("pacemaker PMX-55321-A placed", "PMX-55321-A", "DEVICE"),
    ("pump serial number: AB123456 checked", "AB123456", "DEVICE"),
    ("she is ninety-four years old", "ninety-four", "AGE"),
    ("a ninety four yo man", "ninety four", "AGE"),
    ("aged one hundred and two", "one hundred and two", "AGE"),
    ("unwell since the 5th, worse", "5th", "DATE"),
    ("admitted on the 21st", "21st", "DATE"),
    ("from fe80::1ff:fe23:4567:890a today", "fe80::1ff:fe23:4567:890a", "IPADDR"),
    ("IP 2001:0db8:85a3:0000:0000:8a2e:0370:7334", "2001:0db8:85a3:0000:0000:8a2e:0370:7334", "IPADDR"),
    ("JOHN A. SMITH, M.D.\n", "JOHN A. SMITH", "DOCTOR"),
    ("Mary Jones, MD", "Mary Jones", "DOCTOR"),
    ("NAME: SMITH,JOHN\n", "SMITH,JOHN", "PATIENT"),
    ("Patient: Smith, John A\n", "Smith, John A", "PATIENT"),
    ("Triage RN: jm415\n", "jm415", "USERNAME"),
    ("Signed [ab12]", "ab12", "USERNAME"),
    ("UNIT NO: 94-89-275-6\n", "94-89-275-6", "MEDICALRECORD"),
    ("record 123-45-67 reviewed", "123-45-67", "MEDICALRECORD"),
])
def test_guideline_forms_of_dictated_and_emergency_notes_are_found(text, found, typ):
    spans = pattern_spans(text)
    assert [(s.text, s.subtype) for s in spans] == [(found, typ)]


def test_dictation_initials_and_lower_case_name_are_two_spans():
    text = "JAS:smith  DD: 03/09/19 14:22\nKL:jones\n"
    assert [(s.text, s.subtype) for s in pattern_spans(text)] == [
        ("JAS", "DOCTOR"), ("smith", "DOCTOR"), ("03/09/19", "DATE"), ("KL", "DOCTOR"), ("jones", "DOCTOR")]


def test_an_ipv6_address_is_one_span_not_a_year():
    text = "seen from 2001:db8::8a2e:370:7334 in 2019"
    assert [(s.text, s.subtype) for s in pattern_spans(text)] == [
        ("2001:db8::8a2e:370:7334", "IPADDR"), ("2019", "DATE")]


@pytest.mark.parametrize("text", [
    "NEURO:alert and oriented", "CV:hr 80s, nsr", "GI:abd soft", "RESP:ls clear\n", "ID:afebrile\n",
    "the 5th digit is swollen", "on the 3rd attempt", "the 4th ventricle", "for the 2nd time", "on the 2nd dose",
    "ninety percent of the time", "ninety-four beats", "at 12:30 and 14:45:10", "ratio 1:2:3",
    "VSS,AFEBRILE", "NEURO:ALERT,ORIENTED", "ICU RN", "MICU RN aware", "BP 120-130-140 range", "bp120 hr80",
    "by rr20", "PS-5-10", "D5-1/2NS at 75", "SIMV-500-12",
])
def test_look_alikes_of_the_new_forms_are_not_phi(text):
    assert pattern_spans(text) == []


@pytest.mark.parametrize("text, span, kept", [
    ("SSN 123-45-6789", (0, 15), "123-45-6789"),
    ("MRN#1234567 ok", (0, 11), "1234567"),
    ("DOB: 05/22/1950", (0, 15), "05/22/1950"),
    ("Tel (617) 555-1234", (0, 18), "(617) 555-1234"),
    ("S/N 7GH2-9981-KL", (0, 16), "7GH2-9981-KL"),
    ("Tel Aviv", (0, 8), "Tel Aviv"),
    ("Phoebe 22", (0, 9), "Phoebe 22"),
])
def test_label_words_are_cut_off_the_start_of_a_span(text, span, kept):
    from deidlib.corpus.patterns import trim_label_words

    out = trim_label_words(text, [Span.of(text, *span, "IDNUM")])
    assert [s.text for s in out] == [kept]
    assert all(text[s.start:s.end] == s.text for s in out)


def test_a_span_that_is_only_a_label_word_is_dropped():
    from deidlib.corpus.patterns import trim_label_words

    text = "MRN: 1234567"
    assert trim_label_words(text, [Span.of(text, 0, 3, "MEDICALRECORD")]) == []


@pytest.mark.parametrize("text", [
    "EXPLAIN TO PT RE: ILEUS, NPO", "imv w/rate 10-600-50%, am abg", "CATH LAB-SERIAL 90% LCX",
    "RETURNED FROM OR, NP TALKED WITH", "LOPRESSOR HELD TODAY, MD AWARE.", "PATIENT WITH APHASIA, MD CALLED NEURO",
])
def test_nursing_note_look_alikes_of_the_new_forms_are_not_phi(text):
    """Shapes of the nursing notes' train split that the first version of these patterns tagged."""
    assert pattern_spans(text) == []
