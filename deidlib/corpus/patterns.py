"""Guideline patterns: PHI forms that the HIPAA Safe Harbor list and the i2b2 2014 annotation
guidelines (Stubbs & Uzuner 2015) define by their *shape*, as regular expressions (pure functions).

Why. A tagger trained on synthetic notes learns the forms its generator writes; real notes
write dates, phone numbers and identifiers in more ways than any generator. The forms below
are read from the guidelines' definitions and examples, not from a corpus: dates (numeric,
ISO, ranges, month/year, bare years where they cannot be a time or an amount, month names,
ordinal days), phone and fax numbers, e-mail, URL, IPv4/IPv6 addresses, social security
numbers, labelled identifiers, long digit runs, record numbers and device serials, ages over
89 with an age word, staff signatures, dictation lines and staff user names. Not covered:
other names, places and organisations (no shape: the model's work) and ages ≤ 89 (not PHI
under Safe Harbor). Every form, with its examples: docs/design/corpus.md.

Label words stay outside. The guideline tags a value, not its label: a span that starts with a
label word (``SSN``, ``MRN``, ``DOB``, ``Tel``, ``S/N``...) followed by a value with a digit is cut
to the value (:func:`trim_label_words`, applied to the merged spans of the hybrid model).

Ambiguous shapes. A month/day date without year (``3/12``) is written like a fraction or a
grade: the forms that are common clinical fractions (``1/2``, ``3/4``, ``1/8``...) and muscle
strength grades (``4/5``, ``5/5``) are not matched; other bare ``m/d`` pairs are (recall first),
except where the word just before it makes it a measurement (ventilator modes and settings such as
``PSV 10/5`` or ``CPAP/PSV 5/5/40``, pain and strength scores such as ``pain 3/10``) or the word just
after it a murmur grade (``2/6 SEM``): clinical writing of every kind puts numbers there, never
dates. How the list was checked against the nursing notes' train and dev splits (never the
test split), and what each check changed: docs/design/corpus.md.

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

__all__ = ["pattern_spans", "merge_spans", "drop_measurements", "drop_generic_places", "trim_label_words"]

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
#: number words of an age over 89 ("ninety-four", "one hundred and two"): PHI under Safe Harbor
_UNITS_W = r"(?:one|two|three|four|five|six|seven|eight|nine)"
_TEENS_W = r"(?:ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen)"
_AGE_WORDS = (r"(?:ninety(?:[\s-]" + _UNITS_W + r")?|one[\s-]hundred(?:(?:\s+and)?[\s-](?:" + _TEENS_W + "|"
              + _UNITS_W + r"))?)")
#: an age word after the number ("ninety-four-year-old", "ninety four yo")
_AGE_AFTER = r"(?=\s*(?:-\s*)?(?:yo\b|y/o\b|y\.o\.|yr|year|y\s*old))"
#: the nouns an ordinal counts rather than dates ("the 5th digit", "on the 3rd attempt")
_NOT_DAY_NOUN = (r"(?!\s+(?:of\s+(?:the|his|her|a|\d)|digit|finger|toe|rib|ics|intercostal|ventricle|nerve|cranial|lumbar"
                 r"|metatarsal|metacarpal|vertebra|percentile|grade|degree|time|times|try|attempt|dose|day|week|month"
                 r"|year|hour|floor|generation|cycle|line|round|unit|bag|liter|litre|pod|postop|session)\b)")
#: one IPv6 group and the full and compressed ("::") forms (RFC 4291 §2.2); a time has no "::"
#: and never 7 colons, so these never match a clock time
_H16 = r"[0-9a-f]{1,4}"
_IPV6 = (r"(?<![\w:.])(?:(?:" + _H16 + r":){7}" + _H16 + r"|(?:" + _H16 + r":){1,7}:(?:" + _H16 + r"(?::" + _H16
         + r"){0,6})?|::(?:" + _H16 + r"(?::" + _H16 + r"){0,6}))(?![\w:])")
#: label words written before an identifier, a date or a number: never part of its PHI span
_LABEL_WORDS = (r"(?:ssn|soc(?:ial)?\s+sec(?:urity)?(?:\s+(?:no|number|#))?|mrn|mr\s?#|med(?:ical)?\s+rec(?:ord)?"
               r"(?:\s+(?:no|number|#))?|unit\s+(?:no|number)|acct|account(?:\s+(?:no|number))?|dob|d\.o\.b\.?"
               r"|date\s+of\s+birth|tel|telephone|phone|ph|cell|fax|pager|beeper|e-?mail|s/n|sn|serial(?:\s+(?:no|number|#))?"
               r"|lic(?:ense)?(?:\s+(?:no|number|#))?|ip|id|user(?:name)?|job\s+(?:no|#)|dd|dt|td)\.?")
#: section keys of clinical notes written "KEY:text" ("CV:hr 80s"): never a dictator's initials
_SECTION_KEYS = (r"(?:CV|GI|GU|ID|HEENT|NEURO|RESP|PMH|HPI|ROS|ABD|EXT|SKIN|PLAN|MS|ENDO|HEME|LUNGS|PULM|RENAL|ACCESS"
                 r"|SOCIAL|DISPO|CODE|ALLERGIES|MEDS|LABS|ASSESSMENT|PT|RN|MD|CC|DX|RX|HR|BP|RR|SAT|TEMP|IV)")
#: a dictation line ends, or goes on with the dictated / transcribed date key
_DICTATION_END = r"(?=[ \t]*(?:$|(?-i:DD|DT|TD|D|T|Job|cc)\b))"
_HOLIDAYS = (r"christmas(?: eve)?|thanksgiving|new year'?s(?: eve| day)?|easter|memorial day|labor day"
             r"|independence day|halloween|valentine'?s day")

#: (i2b2 TYPE, compiled pattern) in the order they are tried; matches are case-insensitive
_GUIDELINE: tuple[tuple[str, re.Pattern[str]], ...] = tuple((t, re.compile(p, re.IGNORECASE)) for t, p in (
    ("EMAIL", r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"),
    ("URL", r"\b(?:https?://|www\.)[^\s<>\"]+[\w/]"),
    ("IPADDR", _NB + r"(?:\d{1,3}\.){3}\d{1,3}" + _NA),
    ("IPADDR", _IPV6),
    ("SSN", _NB + r"\d{3}-\d{2}-\d{4}" + _NA),
    ("SSN", r"\b(?:ssn|soc(?:ial)?\s+sec(?:urity)?(?:\s+(?:no\.?|number|#))?)\s*[:#]*\s*(?P<phi>\d{3}[\s-]?\d{2}[\s-]?\d{4})"
            + _NA),
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
    ("DATE", r"\b(?:on|since|until|till|by|from|after|before|through|thru|seen|admitted|discharged|returns?|due)"
             r"\s+the\s+(?P<phi>(?:[12]?1st|[12]?2nd|[12]?3rd|(?:[12]?[4-9]|1[0-3]|20|30)th|31st))\b" + _NOT_DAY_NOUN),
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
    ("AGE", r"\b" + _AGE_WORDS + r"\b" + _AGE_AFTER),
    ("AGE", r"\baged?[:\s]\s*(?P<phi>" + _AGE_WORDS + r")\b"),
    # staff signatures: an initial and a surname before a credential ("J. Smith RN", "--K. Lee, PA-C")
    ("DOCTOR", r"(?<![\w.])(?-i:[A-Z]\.\s?[A-Z][A-Za-z'-]+)(?=,?\s+" + _CREDENTIALS + r"\b)"),
    # signature blocks: a full name in capitals (or capitalised) before a physician's credential
    # after a comma that ends the line or the sentence ("JOHN A. SMITH, M.D.", "Mary Jones, MD";
    # not "HELD TODAY, MD AWARE")
    ("DOCTOR", r"(?m)(?-i:(?<![\w.])(?P<phi>[A-Z][A-Za-z'-]+(?:\s+[A-Z]\.?)?\s+[A-Z][A-Za-z'-]+)),\s*"
               r"(?=(?:M\.D\.|MD|D\.O\.|DO|Ph\.?D\.?|FACP|FACS|NP|PA-C)(?:,\s*(?:M\.D\.|Ph\.?D\.?|FACP|FACS))?"
               r"[ \t]*(?:$|\.(?:\s|$)|\[))"),
    # "LAST,FIRST" (with or without a space) after a name label ("Name: SMITH,JOHN")
    ("PATIENT", r"\b(?:name|patient(?:\s+name)?|pt\s+name)\s*[:#]\s*"
                r"(?P<phi>(?-i:[A-Z][A-Za-z'-]+,\s?[A-Z][A-Za-z'-]+(?:\s[A-Z]\b\.?)?))"),
    # dictation line: the dictator's initials and the transcriber's lower-case name ("JAS:smith"),
    # at the end of a line or before the dictation / transcription date key
    ("DOCTOR", r"(?m)(?-i:(?<![\w:/])(?!" + _SECTION_KEYS + r":)(?P<phi>[A-Z]{2,4}):[a-z]{2,12})" + _DICTATION_END),
    ("DOCTOR", r"(?m)(?-i:(?<![\w:/])(?!" + _SECTION_KEYS + r":)[A-Z]{2,4}:(?P<phi>[a-z]{2,12}))" + _DICTATION_END),
    # staff user names (letters and digits, lower-case) after a user word or in brackets
    ("USERNAME", r"\b(?:user(?:name)?|login|entered\s+by|transcribed\s+by|transcriptionist|signed\s+by|rn:|nurse:)\s*[:#]?\s*"
                 r"(?P<phi>(?-i:[a-z]{2,3}\d{1,4}))\b"),
    ("USERNAME", r"\[(?P<phi>(?-i:[a-z]{2,8}\d{0,4}))\]"),
    # device identifiers and serial numbers: after a serial word, or a capitalised code of dash
    # groups with letters and at least four digits ("PMX-55321-A", "7GH2-9981-KL")
    ("DEVICE", r"(?<![\w-])(?:s/n|sn:|serial(?:\s+(?:number|no\.?|num|#))?|device\s+(?:id|#|number|serial)|model\s+(?:#|no\.?))"
               r"[:#]?\s*(?P<phi>(?=[a-z0-9-]{5})[a-z0-9]*\d[a-z0-9-]*[a-z0-9])" + _NA + r"(?!%)"),
    ("DEVICE", r"(?-i:(?<![\w/.-])(?=[A-Z0-9-]*\d{4})(?=[A-Z0-9-]*[A-Z])[A-Z0-9]{1,6}(?:-[A-Z0-9]{1,6}){2,3})" + _NA),
    # identifiers
    ("MEDICALRECORD", r"\b(?:mrn|mr\s?#|medical record(?: number| no\.?)?)[:#]?\s*(?P<phi>[\w-]*\d[\w-]*)"),
    ("ACCOUNT", r"\b(?:acct|account)(?: number| no\.?)?[:#]?\s*#?\s*(?P<phi>\d[\w-]*)"),
    ("IDNUM", r"#\s?(?P<phi>\d{4,})" + _NA),
    ("IDNUM", _NB + r"\d{6,}" + _NA),
    # record numbers written in dash groups of unequal lengths ("123-45-67", "12-345-678"; "120-130-140"
    # is a range): after the date and phone forms above, so a date or a phone number keeps its type
    ("MEDICALRECORD", _NB + r"(?!(?:\d{2}-){2,3}\d{2}(?![\d-])|(?:\d{3}-){2,3}\d{3}(?![\d-])|(?:\d{4}-){2,3}\d{4}(?![\d-]))"
                      r"\d{2,4}(?:-\d{1,4}){2,3}" + _NA),
))

#: words after which a number pair (or a dash-grouped number) is a measurement, not a date or a
#: record number ("PSV 10/5", "CPAP 5/5/40", "pain 3/10", "rate 10-600-50"): ventilator modes and
#: settings, pain and strength scores, murmur grades
_MEASURE_BEFORE = frozenset((
    "ps", "psv", "cpap", "bipap", "peep", "simv", "imv", "ac", "cmv", "prvc", "aprv", "vent", "vented", "settings",
    "setting", "ventilation", "ventilator", "flowby", "pain", "strength", "grade", "murmur", "sem", "rate",
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
_PATTERN_SETS: dict[str, tuple[tuple[str, re.Pattern[str]], ...]] = {"guideline": _GUIDELINE}


def pattern_spans(text: str, patterns: str = "guideline") -> list[Span]:
    """The spans of ``text`` that the pattern set ``patterns`` matches (sorted, overlaps
    resolved: an earlier pattern's match wins; a later overlapping one is dropped)."""
    try:
        pats = _PATTERN_SETS[patterns]
    except KeyError:
        raise ValueError(f"unknown pattern set {patterns!r}; choose one of {', '.join(_PATTERN_SETS)}") from None
    taken: list[tuple[int, int]] = []
    out: list[Span] = []
    for typ, rx in pats:
        for m in rx.finditer(text):
            s, e = m.span("phi") if "phi" in rx.groupindex else m.span()
            while e > s and text[e - 1] in " ,":
                e -= 1
            if e <= s or any(s < b and a < e for a, b in taken):
                continue
            if typ in ("DATE", "MEDICALRECORD") and _is_measurement(text, s, e):
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
_GENERIC_PLACES = frozenset((
    "icu", "micu", "sicu", "ccu", "csru", "cvicu", "tsicu", "nsicu", "nicu", "picu", "ed", "er", "or", "pacu", "cath",
    "cath lab", "ep lab", "ir", "ct", "mri", "osh", "floor", "the floor", "rehab", "tele", "telemetry", "step down",
    "stepdown", "home", "nursing home", "dialysis", "hospice", "ward", "unit", "the unit", "hosp", "hospital",
    "ps", "psv", "cpap", "bipap", "vent",
))
_PLACE_TYPES = frozenset(("HOSPITAL", "ORGANIZATION", "LOCATION-OTHER", "DEPARTMENT"))


def drop_generic_places(spans: Sequence[Span]) -> list[Span]:
    """``spans`` without the place spans (hospital, organisation, other location) whose whole text
    is a kind of unit or facility (:data:`_GENERIC_PLACES`: "MICU", "cath lab", "OSH")."""
    return [s for s in spans
            if not (s.subtype in _PLACE_TYPES and " ".join(s.text.lower().replace(".", " ").split()) in _GENERIC_PLACES)]


_LABEL_PREFIX = re.compile(r"(?:" + _LABEL_WORDS + r")(?![a-z])[\s:#.=-]*", re.IGNORECASE)


def trim_label_words(text: str, spans: Sequence[Span]) -> list[Span]:
    """``spans`` with a leading label word cut off (``SSN 123-45-6789`` -> ``123-45-6789``, ``MRN#1234``
    -> ``1234``, ``DOB 05/22/1950`` -> ``05/22/1950``): the i2b2 2014 guidelines tag the value, not
    its label, and a replaced label tells nothing but garbles the note. A span is trimmed only where
    what follows the label holds a digit (so ``Tel Aviv`` stays whole); a span that is only a label
    word is dropped."""
    out = []
    for sp in spans:
        m = _LABEL_PREFIX.match(text, sp.start, sp.end)
        if m is None:
            out.append(sp)
            continue
        rest = text[m.end():sp.end]
        if not rest.strip(" :#.=-"):
            continue
        if m.end() > sp.start and any(c.isdigit() for c in rest):
            out.append(Span.of(text, m.end(), sp.end, sp.subtype))
        else:
            out.append(sp)
    return out
