"""Linkage attacks on surrogate text beyond the known-one-date attack
(:func:`deidlib.studies.tchouka.privacy.known_date_attack`), read from the engine's
replacement records (:class:`deidlib.surrogates.config.Replacement`; the attacker sees only
the ``surrogate`` and the document, the ``original`` and ``patient_id`` are the ground truth).

* **Note linkage** (names and places across one patient's notes): the attacker links two
  released notes to the same person when they share a surrogate NAME or LOCATION value
  (case-folded). Scored over all pairs of notes by precision and recall against "same
  patient"; the base rate (share of same-patient pairs) is what a blind guess gets. With the
  engine's ``memo_scope="patient"`` a patient's name keeps one surrogate in all notes (the
  memo's consistency), so the notes link; with ``"document"`` each note draws afresh.
* **Equal-value disclosure** (the memo's flip side, Tchouka et al.'s consistency): within one
  memo scope, equal originals get equal surrogates, so "equal surrogates ⇒ equal originals".
  Over pairs of mentions of one category in one patient: precision and recall of that
  inference, and the base rate of equal originals.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

__all__ = ["note_linkage", "equal_value_disclosure"]

_LINK_CATEGORIES = ("NAME", "LOCATION")


def _norm(s: str) -> str:
    return " ".join(s.casefold().split())


def _prf(tp: int, fp: int, fn: int, pairs: int, positives: int) -> dict[str, float]:
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0, "pairs": pairs,
            "base_rate": positives / pairs if pairs else 0.0}


def note_linkage(records: Sequence, categories: Sequence[str] = _LINK_CATEGORIES, *, field: str = "surrogate"
                 ) -> dict[str, float]:
    """Pairs of notes linked by a shared ``field`` value (``"surrogate"``: the attack on the
    release; ``"original"``: the same attack on the un-de-identified notes, the ceiling)."""
    values: dict[str, set[str]] = {}
    patient: dict[str, str] = {}
    for r in records:
        patient[r.document_id] = r.patient_id
        if r.category in categories:
            values.setdefault(r.document_id, set()).add(_norm(getattr(r, field)))
    docs = sorted(patient)
    tp = fp = fn = pos = n = 0
    for a, b in combinations(docs, 2):
        same = patient[a] == patient[b]
        linked = bool(values.get(a, set()) & values.get(b, set()))
        n += 1
        pos += same
        tp += same and linked
        fp += linked and not same
        fn += same and not linked
    return _prf(tp, fp, fn, n, pos)


def equal_value_disclosure(records: Sequence, categories: Sequence[str] | None = None) -> dict[str, float]:
    """Pairs of mentions (same patient, same category): "equal surrogates ⇒ equal originals"."""
    by: dict[tuple[str, str], list] = {}
    for r in records:
        if categories is None or r.category in categories:
            by.setdefault((r.patient_id, r.category), []).append(r)
    tp = fp = fn = pos = n = 0
    for group in by.values():
        for x, y in combinations(group, 2):
            eq_o = _norm(x.original) == _norm(y.original)
            eq_s = _norm(x.surrogate) == _norm(y.surrogate)
            n += 1
            pos += eq_o
            tp += eq_o and eq_s
            fp += eq_s and not eq_o
            fn += eq_o and not eq_s
    return _prf(tp, fp, fn, n, pos)
