"""Annotation guidelines: which spans count as PHI under whose rules (pure functions).

The synthetic corpus is annotated the i2b2 2014 way (Stubbs & Uzuner 2015): *every* age,
departments, professions and room numbers are PHI. The PhysioNet deid nursing notes
(Neamatullah et al. 2008) follow HIPAA's Safe Harbor list as their annotators applied it:
names (patients, relatives, care providers), dates, locations (hospitals, wards, cities),
phone numbers, ages **over 89** and "other" identifiers; an age of 58, "cardiology" or
"room 12" is not PHI there (4 Age mentions in 2,434 notes, all over 89). Two finer rules,
counted on the nursing notes' training and dev splits (counts only): a weekday is not a
date there (0 of 59 weekday names are inside a span), and a hospital span holds the name
without the generic word after it ("Brindlecombe" in "Brindlecombe Hospital": "hospital"/"hosp"
follows a hospital span 24 times and sits inside one twice), so under ``physionet`` a
DATE span that is only a weekday is dropped and trailing generic facility words
(:data:`_FACILITY_WORDS`) are cut from HOSPITAL spans.

A model trained to one guideline and scored against the other is charged for the
difference in rules, not for what it learned: a synthetic-trained model tags "58" in
"58 yo F", and the nursing-notes gold calls it a false positive. :func:`align_spans` maps a
corpus onto a guideline before training, which is what a user adopting the target's rules
would do. Which rule drops which span is stated in :data:`GUIDELINES`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..numwords import number_words
from .document import Document, Span

__all__ = ["GUIDELINES", "align_spans"]

#: guideline -> (TYPEs dropped outright, whether ages <= 89 are dropped)
GUIDELINES: dict[str, tuple[frozenset[str], bool]] = {
    "i2b2": (frozenset(), False),
    "physionet": (frozenset({"DEPARTMENT", "PROFESSION", "ROOM"}), True),
}

#: generic words cut from the end of a HOSPITAL span under ``physionet`` (lower case, no dot)
_FACILITY_WORDS = frozenset({"hospital", "hosp", "medical", "center", "centre", "clinic", "health", "healthcare",
                            "infirmary", "ctr", "med"})
#: weekday names (en, fr, de, nl; lower case): a DATE span of only these is not PHI under ``physionet``
_WEEKDAYS = frozenset({"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
                      "mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat", "sun",
                      "lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche",
                      "montag", "dienstag", "mittwoch", "donnerstag", "freitag", "samstag", "sonntag",
                      "maandag", "dinsdag", "woensdag", "donderdag", "vrijdag", "zaterdag", "zondag"})
_FINE_RULES = frozenset({"physionet"})
_WORD = re.compile(r"[^\s,]+")
_DIGITS = re.compile(r"\d+")
_WORD_AGES = {number_words(n): n for n in range(0, 120)}


def _age_value(text: str) -> int | None:
    """The age an AGE span states (``"58"``, ``"58-year-old"``, ``"ninety-one"``), or ``None``
    (``"50s"`` and other decades count as their decade, ``50``)."""
    m = _DIGITS.search(text)
    if m:
        return int(m.group())
    low = text.lower().replace(" ", "-")
    for words in sorted(_WORD_AGES, key=len, reverse=True):
        if words.replace(" ", "-") in low:
            return _WORD_AGES[words]
    return None


def _keeps_span(span: Span, guideline: str) -> bool:
    """Whether ``span`` is PHI under ``guideline`` (see :data:`GUIDELINES`)."""
    try:
        dropped, young_ages = GUIDELINES[guideline]
    except KeyError:
        raise ValueError(f"unknown guideline {guideline!r}; choose one of {', '.join(GUIDELINES)}") from None
    if span.subtype in dropped:
        return False
    if young_ages and span.subtype == "AGE":
        v = _age_value(span.text)
        return v is not None and v > 89
    return True


def trim_span(span: Span, guideline: str) -> Span | None:
    """``span`` as ``guideline`` annotates it: ``None`` if it is not PHI there (:func:`_keeps_span`,
    and under ``physionet`` a DATE of weekday names only), else the span with trailing
    generic facility words cut from a HOSPITAL name under ``physionet`` (a name of generic
    words only is kept whole)."""
    if not _keeps_span(span, guideline):
        return None
    if guideline not in _FINE_RULES:
        return span
    words = [(m.start(), m.end(), m.group().lower().strip(".")) for m in _WORD.finditer(span.text)]
    if span.subtype == "DATE" and words and all(w in _WEEKDAYS for _, _, w in words):
        return None
    if span.subtype == "HOSPITAL":
        k = len(words)
        while k > 1 and words[k - 1][2] in _FACILITY_WORDS:
            k -= 1
        if 0 < k < len(words):
            end = words[k - 1][1]
            return Span(span.start, span.start + end, span.category, span.subtype, span.text[:end])
    return span


def align_spans(docs: Iterable[Document], guideline: str) -> list[Document]:
    """Copies of ``docs`` with each span as ``guideline`` annotates it (:func:`trim_span`)."""
    out = []
    for d in docs:
        spans = [t for t in (trim_span(s, guideline) for s in d.spans) if t is not None]
        out.append(Document(d.id, d.text, spans, d.patient_id, d.site, dict(d.metadata)))
    return out
