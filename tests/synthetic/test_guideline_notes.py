"""The guideline note types (dictated discharge summaries, emergency visits): added only on
request, every PHI form of the i2b2 guideline they write is a span that covers exactly the PHI,
and the label word before it stays outside."""

from __future__ import annotations

import ipaddress
import re
from collections import defaultdict

import pytest

from deidlib.corpus.conventions import align_spans
from deidlib.corpus.patterns import pattern_spans
from deidlib.numwords import number_words
from deidlib.synthetic import generate
from deidlib.synthetic.generator import GUIDELINE_NOTE_TYPES, NOTE_TYPES
from deidlib.synthetic.phi_forms import (
    dash_grouped_id,
    device_serial,
    dictation_initials,
    ipv6_address,
    ordinal,
    staff_user,
)

EXTRA = {"dictated_discharge": 0.5, "emergency_visit": 0.5}
_LABEL_AT_START = re.compile(r"(?i)^(?:ssn|mrn|mr#|dob|d\.o\.b\.|tel|phone|ph|s/n|sn|serial|dd|dt|unit no|user|name)\b")


@pytest.fixture(scope="module")
def notes():
    docs = generate(patients=60, sites=5, seed=0, extra_note_types=EXTRA)
    return [d for d in docs if d.metadata["note_type"] in GUIDELINE_NOTE_TYPES]


def _key(d):
    return (d.id, d.text, tuple(d.spans), tuple(sorted(d.metadata.items())))


def test_without_extra_types_the_corpus_is_unchanged():
    base = generate(patients=20, sites=5, seed=4)
    assert [_key(d) for d in generate(patients=20, sites=5, seed=4, extra_note_types=None)] == [_key(d) for d in base]
    zero = {k: 0.0 for k in GUIDELINE_NOTE_TYPES}
    assert [_key(d) for d in generate(patients=20, sites=5, seed=4, extra_note_types=zero)] == [_key(d) for d in base]
    assert not {d.metadata["note_type"] for d in base} & set(GUIDELINE_NOTE_TYPES)
    assert not set(GUIDELINE_NOTE_TYPES) & set(NOTE_TYPES)


def test_extra_types_are_written_deterministically(notes):
    assert {d.metadata["note_type"] for d in notes} == set(GUIDELINE_NOTE_TYPES)
    again = [d for d in generate(patients=60, sites=5, seed=0, extra_note_types=EXTRA)
             if d.metadata["note_type"] in GUIDELINE_NOTE_TYPES]
    assert [_key(d) for d in again] == [_key(d) for d in notes]


@pytest.mark.parametrize("bad", [{"nursing_note": 1.0}, {"dictated_discharge": -1.0}, {"nope": 1.0}])
def test_extra_types_are_checked(bad):
    with pytest.raises(ValueError, match="extra_note_types"):
        generate(patients=2, sites=1, extra_note_types=bad)


def test_spans_exact_and_no_label_word_inside(notes):
    for d in notes:
        d.validate()
        for s in d.spans:
            assert d.text[s.start:s.end] == s.text and s.text == s.text.strip()
            assert not _LABEL_AT_START.match(s.text), (d.id, s.text)


def _with_context(notes, subtype):
    """(span text, 30 chars before, 12 chars after) of every span of ``subtype`` in normal case."""
    out = []
    for d in notes:
        if d.metadata["casing"] != "normal":
            continue
        for s in d.spans:
            if s.subtype == subtype:
                out.append((s.text, d.text[max(0, s.start - 30):s.start], d.text[s.end:s.end + 12]))
    return out


# each form: (subtype, span regex, regex the text before must end with, regex the text after must start with)
FORMS = {
    "last_comma_first": ("PATIENT", r"[A-Za-z'-]+, ?[A-Za-z'-]+", r"(?i)(?:name|patient)[ :#]+$", r"\s"),
    "caps_signature": ("DOCTOR", r"[A-Z'-]+(?: [A-Z]\.)? [A-Z'-]+", r"(?:\n|: )$", r", (?:M\.D\.|MD|D\.O\.|NP|PA-C)"),
    "user_name": ("USERNAME", r"[a-z]{2}\d{1,3}", r"(?:\[|User: |Signed by |Entered by: |Triage RN: )$", r""),
    "dictation_initials": ("DOCTOR", r"[A-Z]{2,3}", r"(?:\n|DICTATED BY: )$", r":[a-z]"),
    "dictation_lower_name": ("DOCTOR", r"[a-z'-]{2,}", r"[A-Z]{2,3}:$", r"\s"),
    "dash_record_number": ("MEDICALRECORD", r"\d{2,4}(?:-\d{1,4}){2,3}", r"(?:MRN|UNIT NO|MR#|Med Rec No)[ :#]+$", r"\n"),
    "iso_date": ("DATE", r"\d{4}-\d{2}-\d{2}", r"", r""),
    "two_digit_year": ("DATE", r"\d{1,2}/\d{1,2}/\d{2}", r"", r""),
    "date_time_stamp": ("DATE", r"[\d/-]+", r"(?:DD: |DT: |Arrived: |Arrival: |Triage time: )$", r" \d{2}:?\d{2}\b"),
    "day_only": ("DATE", r"\d{1,2}(?:st|nd|rd|th)", r" the $", r""),
    "device_serial": ("DEVICE", r"[A-Z0-9]+(?:-[A-Z0-9]+)*", r"(?:S/N |serial # |Serial number: |device ID |SN: |, )$", r"[.,;]"),
    "ipv6": ("IPADDR", r"[0-9a-f:]+", r"(?:IP |from |IP: )$", r"\n"),
    "spelled_age_over_89": ("AGE", r"(?:ninety|one hundred)[a-z -]*", r" $", r"(?: year old|-year-old| yo) "),
    "ssn_after_label": ("SSN", r"\d{3}-\d{2}-\d{4}", r"SSN[ :#]+$", r""),
    "dob_after_label": ("DATE", r"[\d/-]+", r"(?:DOB|D\.O\.B\.|DATE OF BIRTH)[ :#]+$", r""),
    "tel_after_label": ("PHONE", r"\(\d{3}\) \d{3}-\d{4}", r"(?:Tel|Phone|Ph)[ :#]+$", r""),
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_every_guideline_form_is_written_with_an_exact_span(notes, form):
    subtype, span_rx, before_rx, after_rx = FORMS[form]
    hits = [t for t, before, after in _with_context(notes, subtype)
            if re.fullmatch(span_rx, t) and re.search(before_rx, before) and re.match(after_rx, after)]
    assert len(hits) >= 5, f"form {form} written {len(hits)} times"
    for t in hits:
        if form == "ipv6":
            ipaddress.IPv6Address(t)
        if form == "spelled_age_over_89":
            assert t in {number_words(n) for n in range(90, 120)}


def test_spelled_ages_over_89_survive_the_safe_harbor_alignment(notes):
    aligned = align_spans(notes, "physionet")
    words = {number_words(n) for n in range(90, 120)}
    kept = [s.text for d in aligned for s in d.spans if s.subtype == "AGE" and s.text.lower() in words]
    assert len(kept) >= 5


def test_patterns_find_the_shape_defined_forms(notes):
    """The guideline patterns recover the gold spans of every form defined by its shape."""
    found, total = defaultdict(int), defaultdict(int)
    for d in notes:
        if d.metadata["casing"] != "normal":
            continue
        got = {(s.start, s.end) for s in pattern_spans(d.text)}
        for s in d.spans:
            if s.subtype in ("DEVICE", "IPADDR", "SSN", "MEDICALRECORD", "USERNAME") or (
                    s.subtype == "DATE" and re.fullmatch(r"\d{1,2}(?:st|nd|rd|th)", s.text)):
                key = s.subtype if s.subtype != "DATE" else "DAY"
                total[key] += 1
                found[key] += (s.start, s.end) in got
    assert set(total) == {"DEVICE", "IPADDR", "SSN", "MEDICALRECORD", "USERNAME", "DAY"}
    for k in total:
        assert found[k] / total[k] >= 0.9, (k, found[k], total[k])


def test_ordinal():
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 30, 31)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "30th", "31st"]


def test_ipv6_addresses_parse_and_vary():
    import random

    rng = random.Random(0)
    addrs = [ipv6_address(rng) for _ in range(200)]
    for a in addrs:
        ipaddress.IPv6Address(a)
    assert any("::" in a for a in addrs) and any("::" not in a for a in addrs)


def test_dash_grouped_ids_are_neither_dates_nor_ssns_nor_phones():
    import random

    rng = random.Random(1)
    for _ in range(300):
        x = dash_grouped_id(rng)
        assert re.fullmatch(r"\d{2,4}(?:-\d{1,4}){2,3}", x)
        assert not re.fullmatch(r"\d{3}-\d{2}-\d{4}|\d{3}-\d{3}-\d{4}|\d{1,2}-\d{1,2}-\d{2,4}", x)


def test_device_serials_user_names_and_initials():
    import random

    rng = random.Random(2)
    serials = [device_serial(rng) for _ in range(100)]
    assert all(re.fullmatch(r"[A-Z0-9-]+", s) and sum(c.isdigit() for c in s) >= 4 for s in serials)
    assert re.fullmatch(r"js\d{1,3}", staff_user("John", "Smith", rng))
    assert dictation_initials("John", "Anne", "Smith") == "JAS"
    assert dictation_initials("John", "", "Smith") == "JS"
