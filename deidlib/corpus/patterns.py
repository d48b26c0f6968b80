"""Guideline patterns: PHI forms that the HIPAA Safe Harbor list and the i2b2 2014 annotation
guidelines (Stubbs & Uzuner 2015) define by their *shape*, as regular expressions (pure functions).

Why. A tagger trained on synthetic notes learns the forms its generator writes; real notes
write dates, phone numbers and identifiers in more ways than any generator. The forms below
are read from the guidelines' definitions and examples, not from a corpus: dates (numeric with
``/``, ``-`` or ``.``, ISO, ranges such as ``3/12-3/15``, month/year such as ``9/98``, years
such as ``'98``; a bare year where it cannot be a clock time or an amount: 1960–1999 (its last
two digits are no minutes), any year after a time word (``in 2004``, ``since 1999``) and a
two-digit year after a past event of a medical history (``CABG 98``, ``MI x2 02``), never
before a unit (``1980 ml``); month names with or without day and year, ordinal days), phone
and fax numbers (with area code, optionally an extension; 7-digit numbers only after a word
such as "call", "pager" or "phone"), e-mail addresses, URLs, IP
addresses, social security numbers, labelled identifiers (``MRN``, ``MR#``, ``acct``, ``#``
followed by 4 digits or more), long digit runs (6 digits or more: record, account and device numbers),
ages over 89 written with an age word (``91 yo``, ``92-year-old``, ``age 95``) and staff
signatures written as an initial, a capitalised surname and a credential (``J. Smith RN``,
``K. Lee, PA-C``). Not covered: other names, places and organisations (no shape: the model's
work) and ages ≤ 89 (not PHI under Safe Harbor).

Ambiguous shapes. A month/day date without year (``3/12``) is written like a fraction or a
grade: the forms that are common clinical fractions (``1/2``, ``3/4``, ``1/8``...) and muscle
strength grades (``4/5``, ``5/5``) are not matched; other bare ``m/d`` pairs are (recall first),
except where the word just before it makes it a measurement (ventilator modes and settings such as
``PSV 10/5`` or ``CPAP/PSV 5/5/40``, pain and strength scores such as ``pain 3/10``) or the word just
after it a murmur grade (``2/6 SEM``): clinical writing of every kind puts numbers there, never
dates. How the list was checked: on the
PhysioNet nursing notes' train and dev splits (token counts of each pattern's hits inside and
outside gold spans), which led to the fraction/grade exceptions, to requiring a phone word
before 7-digit numbers (time ranges such as ``900-1100``) and to 4 digits after ``#`` (catheter
sizes such as ``#20g``), and, for the measurement words, month/year and ranges, to counts by word
shape of the hybrid model's errors on the train split (ventilator settings were the largest group
of false dates; ranges, month/year forms, bare years and signatures of missed PHI; the bare-year
and signature forms hit one train-split token outside a gold span); the test split was not used.

Not PHI, whoever tags it. Two rules drop a tagger's spans before the patterns' are added
(:func:`drop_measurements`: a DATE in a number pair written as a measurement, by the rule above;
:func:`drop_generic_places`: a hospital, organisation or other-location span whose whole text is
a kind of unit or facility, such as ``MICU``, ``cath lab`` or ``OSH`` for "outside hospital",
which the guidelines do not call PHI). Both were adopted after counts by word shape of the
hybrid model's false positives on the nursing notes' train split.

Use. :func:`pattern_spans` finds the spans in a text; :func:`merge_spans` adds them to a
model's spans (a pattern span that overlaps a model span widens it to their union and keeps
the model's type). The default model (:mod:`deidlib.pipeline.default_model`) is such a hybrid:
its saved task holds ``"patterns": "guideline"``, and :func:`deidlib.training.predict_documents`
applies them after decoding, so ``deidentify``, ``predict`` and every score of the model see the
same decisions. Guarded by ``tests/corpus/test_patterns.py``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from .document import Span

__all__ = ["PATTERN_SETS", "GENERIC_PLACES", "pattern_spans", "merge_spans", "drop_measurements", "drop_generic_places"]

_MONTHS = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
           r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_DAY = r"(?:0?[1-9]|[12]\d|3[01])"
_MON = r"(?:0?[1-9]|1[0-2])"
_YEAR = r"(?:\d{4}|'?\d{2})"
_ORD = r"(?:st|nd|rd|th)"
_NB = r"(?<![\w/.-])"   # not inside a longer number, word or date
_NA = r"(?![\w/-]|\.\d)"  # same, after
#: a number followed by a unit or an operator is an amount, not a year ("1980 ml", "1975 kcal")
_NOT_AMOUNT = (r"(?!\s*(?:ml|cc|mg|mcg|units?|u\b|kcal|cal|g\b|gm|l\b|/|%|x\b|-\d|mmhg|mm|cm|hrs?\b|h\b|min|"
               r"hours?|days?|d\b|fr\b|french|y\b|yrs?\b|bpm|am\b|pm\b|:))")
#: credentials written after a clinician's name
_CREDENTIALS = r"(?:rn|md|np|pa|pa-c|rrt|lcsw|msw|pharmd|bsn|crnp|lpn|fnp|cnm|crna)"
#: past events of a medical history that notes date by a bare year ("CABG 98", "MI '02", "dx'd 97")
_EVENTS = (r"(?:cabg|ptca|pci|nqwmi|nstemi|stemi|imi|ami|mi|stent(?:ed|s)?|cva|tia|avr|mvr|ppm|aicd|icd|cath|surgery"
           r"|dx|dx'd|diagnosed|repair|resection|replacement|transplant|lobectomy|mastectomy|colectomy)")
_HOLIDAYS = (r"christmas(?: eve)?|thanksgiving|new year'?s(?: eve| day)?|easter|memorial day|labor day"
             r"|independence day|halloween|valentine'?s day")

#: (i2b2 TYPE, compiled pattern) in the order they are tried; matches are case-insensitive
_GUIDELINE: tuple[tuple[str, re.Pattern[str]], ...] = tuple((t, re.compile(p, re.IGNORECASE)) for t, p in (
    ("EMAIL", r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"),
    ("URL", r"\b(?:https?://|www\.)[^\s<>\"]+[\w/]"),
    ("IPADDR", _NB + r"(?:\d{1,3}\.){3}\d{1,3}" + _NA),
    ("SSN", _NB + r"\d{3}-\d{2}-\d{4}" + _NA),
    ("PHONE", _NB + r"(?:\+?1[\s.-]?)?(?:\(\d{3}\)\s?|\d{3}[\s.-])\d{3}[\s.-]\d{4}(?:\s?(?:x|ext\.?)\s?\d{1,5})?" + _NA),
    ("PHONE", r"\b(?:call|phone|ph|tel|telephone|pager|beeper|page|cell|fax|contact|number|no\.?)[:#.]?\s*(?:at\s)?"
              r"(?P<phi>\d{3}-\d{4})" + _NA),
    # dates: numeric
    ("DATE", _NB + r"\d{4}-" + _MON + "-" + _DAY + _NA),
    ("DATE", _NB + _MON + r"/" + _DAY + r"(?:/" + _YEAR + r")?\s?-\s?" + _MON + r"/" + _DAY + r"(?:/" + _YEAR + r")?" + _NA),
    ("DATE", _NB + _MON + r"([/.-])" + _DAY + r"\1" + _YEAR + _NA),
    ("DATE", _NB + r"(?!(?:1/[2348]|[23]/[348]|[57]/8|[1-5]/5)" + _NA + ")" + _MON + r"/" + _DAY + _NA),
    ("DATE", _NB + _MON + r"/(?:19|20)\d{2}" + _NA),
    ("DATE", _NB + _MON + r"/(?:3[2-9]|[4-9]\d)" + _NA),  # month/2-digit year that cannot be a day
    ("DATE", r"(?<![\w'])'(?P<phi>\d{2})(?![\w'])"),  # '98
    # years: 1960-1999 cannot be a clock time (minutes < 60); any year after a time word or a past event
    ("DATE", r"(?<![\w/.#$:'+-])19[6-9]\d" + _NA + _NOT_AMOUNT),
    ("DATE", r"\b(?:in|since|year|yr|until|during|of|summer|winter|spring|fall|autumn)\s+(?P<phi>(?:19|20)\d{2})"
             + _NA + _NOT_AMOUNT),
    ("DATE", r"\b" + _EVENTS + r"[,:]?\s*(?:x\s?\d\s*)?(?:in\s+|on\s+)?(?P<phi>\d{2})(?![\w'%/:-]|\.\d)"
             + _NOT_AMOUNT),
    # dates: month names
    ("DATE", r"\b" + _MONTHS + r"\s+" + _DAY + _ORD + r"?(?:,?\s+(?:19|20)\d{2})?\b"),
    ("DATE", r"\b" + _DAY + _ORD + r"?(?:\s+of)?\s+" + _MONTHS + r"(?:,?\s+(?:19|20)\d{2})?\b"),
    ("DATE", r"\b" + _MONTHS + r",?\s+(?:19|20)\d{2}\b"),
    ("DATE", r"\b(?:" + _HOLIDAYS + r")\b"),
    # ages over 89 with an age word
    ("AGE", r"\b(?:9\d|1[01]\d)(?=\s*(?:-\s*)?(?:yo\b|y/o\b|y\.o\.|yr|year|y\s*old))"),
    ("AGE", r"\bage\s(?P<phi>9\d|1[01]\d)\b"),
    # staff signatures: an initial and a surname before a credential ("J. Smith RN", "--K. Lee, PA-C")
    ("DOCTOR", r"(?<![\w.])(?-i:[A-Z]\.\s?[A-Z][A-Za-z'-]+)(?=,?\s+" + _CREDENTIALS + r"\b)"),
    # identifiers
    ("MEDICALRECORD", r"\b(?:mrn|mr\s?#|medical record(?: number| no\.?)?)[:#]?\s*(?P<phi>[\w-]*\d[\w-]*)"),
    ("ACCOUNT", r"\b(?:acct|account)(?: number| no\.?)?[:#]?\s*#?\s*(?P<phi>\d[\w-]*)"),
    ("IDNUM", r"#\s?(?P<phi>\d{4,})" + _NA),
    ("IDNUM", _NB + r"\d{6,}" + _NA),
))

#: words after which a number pair is a measurement, not a date ("PSV 10/5", "CPAP 5/5/40",
#: "pain 3/10"): ventilator modes and settings, pain and strength scores, murmur grades
_MEASURE_BEFORE = frozenset((
    "ps", "psv", "cpap", "bipap", "peep", "simv", "imv", "ac", "cmv", "prvc", "aprv", "vent", "vented", "settings",
    "setting", "ventilation", "ventilator", "flowby", "pain", "strength", "grade", "murmur", "sem",
))
#: words before which a number pair is a grade ("2/6 SEM", "3/6 holosystolic murmur")
_MEASURE_AFTER = frozenset(("sem", "hsm", "murmur", "systolic", "diastolic", "holosystolic", "sm", "dm"))
_NUMERIC_DATE = re.compile(r"[\d/.\s-]+")
_WORD = re.compile(r"[a-z]+")


def _is_measurement(text: str, s: int, e: int) -> bool:
    """A numeric date-shaped span ``text[s:e]`` written as a measurement: the word just before it
    (on the same line; any of its ``/``- or ``-``-joined parts) or just after it is a measurement word."""
    if not _NUMERIC_DATE.fullmatch(text[s:e]):
        return False
    before = text[max(0, text.rfind("\n", 0, s) + 1, s - 30):s].lower().split()
    after = text[e:e + 30].lower().split()
    return bool((before and set(_WORD.findall(before[-1])) & _MEASURE_BEFORE)
                or (after and set(_WORD.findall(after[0])[:1]) & _MEASURE_AFTER))


#: named pattern sets (the saved task's ``"patterns"`` value)
PATTERN_SETS: dict[str, tuple[tuple[str, re.Pattern[str]], ...]] = {"guideline": _GUIDELINE}


def pattern_spans(text: str, patterns: str = "guideline") -> list[Span]:
    """The spans of ``text`` that the pattern set ``patterns`` matches (sorted, overlaps
    resolved: an earlier pattern's match wins; a later overlapping one is dropped)."""
    try:
        pats = PATTERN_SETS[patterns]
    except KeyError:
        raise ValueError(f"unknown pattern set {patterns!r}; choose one of {', '.join(PATTERN_SETS)}") from None
    taken: list[tuple[int, int]] = []
    out: list[Span] = []
    for typ, rx in pats:
        for m in rx.finditer(text):
            s, e = m.span("phi") if "phi" in rx.groupindex else m.span()
            while e > s and text[e - 1] in " ,":
                e -= 1
            if e <= s or any(s < b and a < e for a, b in taken):
                continue
            if typ == "DATE" and _is_measurement(text, s, e):
                continue
            taken.append((s, e))
            out.append(Span.of(text, s, e, typ))
    return sorted(out)


def merge_spans(text: str, model: Sequence[Span], extra: Iterable[Span]) -> list[Span]:
    """``model``'s spans plus ``extra``: an extra span that overlaps model spans widens the
    first of them to cover the union (the model's type is kept, overlapped model spans are
    joined); one that overlaps none is added. Sorted, non-overlapping."""
    spans = sorted(model)
    for x in sorted(extra):
        hit = [i for i, m in enumerate(spans) if x.start < m.end and m.start < x.end]
        if not hit:
            spans.append(x)
        else:
            first = spans[hit[0]]
            s = min(x.start, *(spans[i].start for i in hit))
            e = max(x.end, *(spans[i].end for i in hit))
            spans = [m for i, m in enumerate(spans) if i not in hit] + [Span.of(text, s, e, first.subtype)]
        spans.sort()
    return spans


def drop_measurements(text: str, spans: Sequence[Span]) -> list[Span]:
    """``spans`` without the DATE spans that lie in a number pair written as a measurement
    (the rule the date patterns follow: ``PSV 10/5``, ``pain 3/10``, ``2/6 SEM``), judged on the
    whole whitespace-delimited word around the span, so a model's ``10`` of ``PSV 10/5`` goes too."""
    out = []
    for sp in spans:
        if sp.subtype == "DATE":
            s = text.rfind(" ", 0, sp.start) + 1
            s = max(s, text.rfind("\n", 0, sp.start) + 1)
            m = re.compile(r"\S*").match(text, sp.end)
            e = m.end() if m else sp.end
            while e > s and text[e - 1] in ".,;:)%":
                e -= 1
            if _is_measurement(text, s, e):
                continue
        out.append(sp)
    return out


#: kinds of units, departments and facilities, and ventilator modes: never PHI on their own (the
#: Safe Harbor list and the i2b2 2014 guidelines name a hospital, not the kind of unit a patient
#: is in; "OSH" is "outside hospital"), however a tagger reads "transferred to <X>"
GENERIC_PLACES = frozenset((
    "icu", "micu", "sicu", "ccu", "csru", "cvicu", "tsicu", "nsicu", "nicu", "picu", "ed", "er", "or", "pacu", "cath",
    "cath lab", "ep lab", "ir", "ct", "mri", "osh", "floor", "the floor", "rehab", "tele", "telemetry", "step down",
    "stepdown", "home", "nursing home", "dialysis", "hospice", "ward", "unit", "the unit", "hosp", "hospital",
    "ps", "psv", "cpap", "bipap", "vent",
))
_PLACE_TYPES = frozenset(("HOSPITAL", "ORGANIZATION", "LOCATION-OTHER", "DEPARTMENT"))


def drop_generic_places(spans: Sequence[Span]) -> list[Span]:
    """``spans`` without the place spans (hospital, organisation, other location) whose whole text
    is a kind of unit or facility (:data:`GENERIC_PLACES`: "MICU", "cath lab", "OSH")."""
    return [s for s in spans
            if not (s.subtype in _PLACE_TYPES and " ".join(s.text.lower().replace(".", " ").split()) in GENERIC_PLACES)]
