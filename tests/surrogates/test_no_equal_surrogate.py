"""No surrogate equals its original, in any mode, for any type: thousands of draws per type,
compared by this test's own rules (names case- and whitespace-insensitive, dates the same
calendar date in any format, everything else case- and whitespace-insensitive), not by the
engine's :func:`~deidlib.surrogates.release.same_surrogate`."""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter

import pytest

from deidlib.corpus.document import Document, Span
from deidlib.pipeline.run import release_checks
from deidlib.surrogates import SurrogateConfig, SurrogateEngine
from deidlib.surrogates.dates import parse_date, parse_quantity

REF = dt.date(2019, 11, 9)

#: (category, subtype, text) of one note with every kind of PHI the engine replaces
ITEMS = [
    ("NAME", "PATIENT", "John Smith"), ("NAME", "DOCTOR", "Dr"), ("NAME", "DOCTOR", "Lee"),
    ("NAME", "USERNAME", "jsmith2"), ("DATE", "DATE", "11/02/2019"), ("DATE", "DATE", "Nov 3, 2019"),
    ("DATE", "DATE", "2019-11-04"), ("DATE", "DATE", "11/02/2019 0700"), ("DATE", "DATE", "March 2019"),
    ("DATE", "DATE", "2018"), ("DATE", "DATE", "Wednesday"), ("DATE", "DATE", "3 days"),
    ("AGE", "AGE", "72"), ("AGE", "AGE", "94"), ("ID", "MEDICALRECORD", "123-45-678"),
    ("CONTACT", "PHONE", "(617) 555-0123"), ("CONTACT", "EMAIL", "john.smith@example.org"),
    ("CONTACT", "URL", "www.example.org"), ("CONTACT", "IPADDR", "10.0.0.12"),
    ("LOCATION", "CITY", "Boston"), ("LOCATION", "STATE", "MA"), ("LOCATION", "ZIP", "02114"),
    ("LOCATION", "STREET", "12 Main Street"), ("LOCATION", "HOSPITAL", "General Hospital"),
    ("LOCATION", "COUNTRY", "Canada"),
]


def note(i: int, pid: str | None = None) -> Document:
    parts, spans, pos = [], [], 0
    for cat, sub, t in ITEMS:
        pre = "Seen by " if sub == "DOCTOR" else " ; "
        parts.append(pre)
        pos += len(pre)
        spans.append(Span(pos, pos + len(t), cat, sub, t))
        parts.append(t)
        pos += len(t)
    return Document(f"n{i}", "".join(parts), spans, pid)


def _time_free(t: str) -> str:
    return re.sub(r"(?<=\d\d\d\d)\s+\d{4}$", "", t.strip())  # "11/02/2019 0700" -> the date


def gives_away(cat: str, original: str, new: str) -> bool:
    """This test's own judgement of "the surrogate is the original"."""
    if " ".join(original.lower().split()) == " ".join(new.lower().split()):
        return True
    if cat == "DATE":
        a = parse_date(_time_free(original), reference=REF)
        b = parse_date(_time_free(new), reference=REF)
        if a is not None and b is not None and a.unit == b.unit:
            if a.fields == {"w"}:
                return a.date.weekday() == b.date.weekday()
            return (a.date.year, a.date.month, a.date.day)[: {"year": 1, "month": 2, "day": 3}[a.unit]] == \
                (b.date.year, b.date.month, b.date.day)[: {"year": 1, "month": 2, "day": 3}[b.unit]]
    if cat == "AGE":
        a, b = parse_quantity(original.strip()), parse_quantity(new.strip())
        return a is not None and b is not None and (a.value, a.unit) == (b.value, b.unit)
    return False


MODES = [dict(date_method="dp", epsilon=1.0), dict(date_method="dp", epsilon=200.0),
         dict(date_method="ldp", epsilon=200.0), dict(date_method="shift", shift_min_days=30),
         dict(date_method="shift"), dict(date_method="dp", epsilon=200.0, location_method="uniform"),
         dict(date_method="dp", epsilon=200.0, location_method="paper"),
         dict(date_method="dp", epsilon=1.0, age_method="shift")]


@pytest.mark.parametrize("mode", MODES, ids=lambda m: "-".join(f"{k}={v}" for k, v in m.items()))
def test_no_surrogate_equals_its_original(mode):
    """At ε = 200 the d-private mechanisms keep dates, ages and cities unchanged on almost
    every draw, so without the engine's redraw this test would see hundreds of equalities."""
    engine = SurrogateEngine(SurrogateConfig(reference_date=REF, **mode), seed=1)
    n = 150
    per_type, equal = Counter(), Counter()
    for i in range(n):
        doc = note(i, pid=f"p{i}")
        res = engine.surrogate(doc)
        for s, r in zip(doc.spans, res.replacements):
            assert r.original == s.text
            per_type[s.subtype] += 1
            if gives_away(s.category, s.text, r.surrogate):
                equal[(s.subtype, s.text, r.surrogate, r.method)] += 1
    assert not equal, f"surrogates equal to their original: {dict(equal)}"
    assert set(per_type) == {sub for _, sub, _ in ITEMS} and min(per_type.values()) >= n


def test_thousands_of_draws_per_type_with_secure_randomness():
    """The release path (OS CSPRNG) at ε = 200 and with the date shift: 2,000 draws per type."""
    equal = []
    for mode in (dict(date_method="dp", epsilon=200.0), dict(date_method="shift", shift_min_days=30)):
        engine = SurrogateEngine(SurrogateConfig(reference_date=REF, **mode))
        docs = [note(i, pid=f"p{i % 400}") for i in range(1000)]
        out, recs = engine.surrogate_documents(docs)
        equal += [(r.subtype, r.original, r.surrogate) for r in recs if gives_away(r.category, r.original, r.surrogate)]
    assert not equal, equal[:10]


def test_a_draw_that_keeps_the_original_is_redrawn_not_masked():
    """At ε = 1 the mechanism keeps a date with visible probability; the redraw gives a real
    surrogate (masks only where every one of the bounded draws kept it)."""
    engine = SurrogateEngine(SurrogateConfig(reference_date=REF, epsilon=1.0), seed=3)
    methods = Counter(r.method for i in range(200) for r in engine.surrogate(note(i)).replacements
                      if r.category == "DATE")
    assert methods["mask_equal"] == 0 and methods["dp"] > 0


def test_release_checks_count_equal_surrogates():
    recs = [{"category": "NAME", "original": "John Smith", "surrogate": "JOHN  SMITH", "method": "random"},
            {"category": "DATE", "original": "03/04/2019", "surrogate": "March 4, 2019", "method": "dp"},
            {"category": "DATE", "original": "03/04/2019", "surrogate": "03/05/2019", "method": "dp"},
            {"category": "DATE", "original": "03/04/2019", "surrogate": "06/04/2019", "method": "shift"},
            {"category": "AGE", "original": "72", "surrogate": "70", "method": "dp"},
            {"category": "NAME", "original": "Lee", "surrogate": "Lee", "method": "none"}]
    c = release_checks(recs)
    assert c["replacements"] == 5 and c["equal_to_original"] == 2
    assert c["dates_to_the_day"] == 3 and c["dates_unchanged"] == 1 and c["dates_within_a_day"] == 2
