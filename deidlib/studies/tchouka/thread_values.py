"""tchouka (a): the thread example as a table of values (the paper's Figure 5 analog).

One row per replaced PHI mention: the original and surrogate surfaces, the *values* they
stand for (ISO date, age in years, the name or city as written), the shift
``surrogate value - original value`` in the unit the mechanism noised (days, months or
years for dates; years for ages; none where a year is written with two digits, whose
century the text does not say; a date written without its year takes the note's reference
year, as the engine reads it) and the ε the replacement consumed (0 for memo hits and
for names, which use no budget). Two threads: the paper's one-note example (French
locale) and one synthetic patient's notes surrogated with ``memo_scope="patient"`` (one ε
and one memo over the patient's notes, so a repeated date or age gets the same
surrogate in every note). Synthetic data only; the surrogate draws are seeded (study RNG).
"""

from __future__ import annotations

import datetime as _dt
import re
from collections import Counter
from collections.abc import Iterable, Sequence

import pandas as pd

from ...corpus.document import Document
from ...surrogates import SurrogateConfig, SurrogateEngine
from ...surrogates.dates import parse_date, parse_quantity
from ...synthetic import generate
from .thread import THREAD_REFERENCE, thread_document

__all__: list[str] = []

#: the PHI kinds the table reports (the paper's Figure 5 shows dates and the age; names and
#: cities show the random/memoised replacements)
_KINDS = ("DATE", "AGE", "NAME", "CITY")

_THREAD_COLUMNS = ("thread", "note", "note_date", "type", "original", "surrogate", "original_value",
                  "surrogate_value", "shift", "unit", "method", "epsilon", "memo_hit")


def _kind(category: str, subtype: str) -> str | None:
    if subtype in ("DATE", "AGE", "CITY"):
        return subtype
    return "NAME" if category == "NAME" else None


def _value_rows(records: Iterable, docs: Sequence[Document], engine: SurrogateEngine, thread: str) -> list[dict]:
    """Rows of the thread table for the replacements ``records`` of ``docs`` (parsed with the
    engine's language, day-first rule and each note's reference date, as the engine parsed them)."""
    cfg = engine.config
    by_id = {d.id: d for d in docs}
    rows = []
    for r in records:
        kind = _kind(r.category, r.subtype)
        if kind is None:
            continue
        doc = by_id[r.document_id]
        ref = engine.reference_for(doc)
        ov: str | float | None = None
        sv: str | float | None = None
        shift: float | None = None
        unit = r.unit or ""
        if kind == "DATE":
            a = parse_date(r.original.strip(), dayfirst=cfg.is_dayfirst, reference=ref, lang=cfg.lang)
            b = parse_date(r.surrogate.strip(), dayfirst=cfg.is_dayfirst, reference=ref, lang=cfg.lang)
            if a is not None and b is not None and a.unit == b.unit:
                ov, sv, shift, unit = a.date.isoformat(), b.date.isoformat(), b.value - a.value, a.unit
                if a.unit == "day" and "y" not in b.fields:
                    # a surrogate written without its year ("01/13" for "12/27"): the reference year
                    # can be a year off across New Year; take the year that puts it nearest the original
                    original = a.date
                    near = min(_with_years(b.date, (-1, 0, 1)), key=lambda d: abs((d - original).days))
                    sv, shift = near.isoformat(), (near - original).days
                if any("y" in e.fields and not re.search(r"\d{4}", e.text) for e in (a, b)):
                    sv, shift = None, None  # a two-digit year does not say its century
        elif kind == "AGE":
            qa, qb = parse_quantity(r.original.strip(), default_unit="year"), parse_quantity(r.surrogate.strip(), default_unit="year")
            if qa is not None and qb is not None and qa.unit == qb.unit:
                ov, sv, shift, unit = qa.value, qb.value, qb.value - qa.value, qa.unit
        else:
            ov, sv = r.original.strip(), r.surrogate.strip()
        rows.append({
            "thread": thread, "note": r.document_id, "note_date": ref.isoformat(), "type": kind,
            "original": r.original, "surrogate": r.surrogate, "original_value": ov, "surrogate_value": sv,
            "shift": shift, "unit": unit, "method": r.method, "epsilon": r.epsilon, "memo_hit": r.memo_hit,
        })
    return rows


def _with_years(d: _dt.date, offsets) -> list[_dt.date]:
    out = []
    for k in offsets:
        try:
            out.append(d.replace(year=d.year + k))
        except ValueError:  # 29 February in a year without one
            pass
    return out


def patient_thread(patients: int = 6, *, seed: int = 0, epsilon: float = 1.0, locale: str = "en_US") -> dict:
    """One synthetic patient's notes surrogated together (``memo_scope="patient"``): the
    patient with the most DATE and AGE mentions of a small synthetic corpus. Returns
    ``{"documents", "surrogates", "records", "engine", "patient"}``."""
    docs = generate(patients=patients, sites=2, seed=seed, locale=locale)
    n = Counter(d.patient_id for d in docs for s in d.spans if s.subtype in ("DATE", "AGE"))
    if not n:
        raise ValueError("the synthetic corpus has no dated patient; raise `patients`")
    pid = min(n, key=lambda p: (-n[p], p))
    mine = [d for d in docs if d.patient_id == pid]
    engine = SurrogateEngine(SurrogateConfig(epsilon=epsilon, locale=locale, memo_scope="patient"), seed=seed)
    out, records = engine.surrogate_documents(mine)
    return {"documents": mine, "surrogates": out, "records": records, "engine": engine, "patient": pid}


def thread_table(example: dict, patient: dict, *, places=None, seed: int = 0) -> pd.DataFrame:
    """The thread table: the paper's example (``thread_example``'s result) then the synthetic
    patient's thread (``patient_thread``'s result), one row per DATE, AGE, NAME or CITY mention."""
    cfg = SurrogateConfig(epsilon=1.0, locale="fr_FR", reference_date=THREAD_REFERENCE)
    ex_engine = SurrogateEngine(cfg, seed=seed, places=places)  # only parses (language, day first, reference)
    ex_records = example["records"]
    rows = _value_rows(ex_records, [thread_document()], ex_engine, "paper example (fr_FR)")
    rows += _value_rows(patient["records"], patient["documents"], patient["engine"],
                       f"synthetic patient {patient['patient']} (en_US)")
    return pd.DataFrame(rows, columns=list(_THREAD_COLUMNS))
