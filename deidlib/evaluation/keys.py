"""Tag keys of the i2b2 2014 de-identification evaluation (pure functions).

The official script (evaluate.py of the 2014 track, Stubbs, Kotfila & Uzuner 2015)
compares per document the *set* of gold tags with the set of system tags, a tag being
identified by a key; duplicates therefore collapse.

* strict: ``(tag, TYPE, start, end)``;
* token: each tag's text is re-tokenized with ``[a-zA-Z0-9]+`` and every token becomes
  ``(tag, TYPE, start, end)`` with its own offsets;
* binary variants drop ``(tag, TYPE)`` and key by ``(start, end)`` only;
* relaxed: like strict, but a system tag matches a gold tag when the end offsets
  differ by at most 2 (see :func:`relaxed_counts`).

HIPAA filter (applied separately to gold and to system, each by its own tag/TYPE):
NAME/PATIENT; LOCATION/{CITY, STREET, ZIP, ORGANIZATION}; all DATE; all AGE;
CONTACT/{PHONE, FAX, EMAIL}; ID/{SSN, MEDICALRECORD, HEALTHPLAN, ACCOUNT, LICENSE,
VEHICLE, DEVICE, BIOID, IDNUM}. The original script writes the IDNUM pattern as
``"IDNUM "`` (trailing space), so IDNUM tags never pass its filter; ``idnum_bug=True``
(the default, to reproduce published numbers) keeps that behaviour, ``False`` corrects it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..corpus.document import Span
from ..corpus.phi import HIPAA_TYPES

__all__ = ["TOKEN_RE", "token_keys", "hipaa_filter"]

TOKEN_RE = re.compile(r"[a-zA-Z0-9]+")

Key = tuple


def _is_hipaa(span: Span, idnum_bug: bool = True) -> bool:
    if idnum_bug and span.subtype == "IDNUM":
        return False
    return (span.category, span.subtype) in HIPAA_TYPES


def hipaa_filter(spans: Iterable[Span], idnum_bug: bool = True) -> list[Span]:
    return [s for s in spans if _is_hipaa(s, idnum_bug)]


def strict_keys(spans: Iterable[Span], binary: bool = False) -> set[Key]:
    if binary:
        return {(s.start, s.end) for s in spans}
    return {(s.category, s.subtype, s.start, s.end) for s in spans}


def token_keys(spans: Iterable[Span], binary: bool = False) -> set[Key]:
    out: set[Key] = set()
    for s in spans:
        for m in TOKEN_RE.finditer(s.text):
            a, b = s.start + m.start(), s.start + m.end()
            out.add((a, b) if binary else (s.category, s.subtype, a, b))
    return out


def relaxed_counts(gold: Iterable[Span], system: Iterable[Span], binary: bool = False, tolerance: int = 2) -> tuple[int, int, int]:
    """(TP, FP, FN) with relaxed matching: same start (and tag/TYPE unless binary), ends
    differing by at most ``tolerance``; one-to-one, each gold tag matched to the unmatched
    system tag with the closest end (ties: the earlier end). Duplicates collapse first."""
    g = sorted(strict_keys(gold, binary))
    s = sorted(strict_keys(system, binary))
    by_head: dict[tuple, list[int]] = {}
    for k in s:
        by_head.setdefault(k[:-1], []).append(k[-1])
    tp = 0
    for k in g:
        ends = by_head.get(k[:-1])
        if not ends:
            continue
        best = min((e for e in ends if abs(e - k[-1]) <= tolerance), key=lambda e: (abs(e - k[-1]), e), default=None)
        if best is not None:
            ends.remove(best)
            tp += 1
    return tp, len(s) - tp, len(g) - tp
