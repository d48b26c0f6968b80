"""Annotation guidelines: which spans count as PHI under whose rules (pure functions).

The synthetic corpus is annotated the i2b2 2014 way (Stubbs & Uzuner 2015): *every* age,
departments, professions and room numbers are PHI. The PhysioNet deid nursing notes
(Neamatullah et al. 2008) follow HIPAA's Safe Harbor list as their annotators applied it:
names (patients, relatives, care providers), dates, locations (hospitals, wards, cities),
phone numbers, ages **over 89** and "other" identifiers; an age of 58, "cardiology" or
"room 12" is not PHI there (4 Age mentions in 2,434 notes, all over 89).

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

__all__ = ["GUIDELINES", "keeps_span", "align_spans", "age_value"]

#: guideline -> (TYPEs dropped outright, whether ages <= 89 are dropped)
GUIDELINES: dict[str, tuple[frozenset[str], bool]] = {
    "i2b2": (frozenset(), False),
    "physionet": (frozenset({"DEPARTMENT", "PROFESSION", "ROOM"}), True),
}

_DIGITS = re.compile(r"\d+")
_WORD_AGES = {number_words(n): n for n in range(0, 120)}


def age_value(text: str) -> int | None:
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


def keeps_span(span: Span, guideline: str) -> bool:
    """Whether ``span`` is PHI under ``guideline`` (see :data:`GUIDELINES`)."""
    try:
        dropped, young_ages = GUIDELINES[guideline]
    except KeyError:
        raise ValueError(f"unknown guideline {guideline!r}; choose one of {', '.join(GUIDELINES)}") from None
    if span.subtype in dropped:
        return False
    if young_ages and span.subtype == "AGE":
        v = age_value(span.text)
        return v is not None and v > 89
    return True


def align_spans(docs: Iterable[Document], guideline: str) -> list[Document]:
    """Copies of ``docs`` keeping only the spans that are PHI under ``guideline``."""
    out = []
    for d in docs:
        spans = [s for s in d.spans if keeps_span(s, guideline)]
        out.append(Document(d.id, d.text, spans, d.patient_id, d.site, dict(d.metadata)))
    return out
