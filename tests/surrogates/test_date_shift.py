"""The release-grade date default of ``deidlib deidentify`` (:mod:`deidlib.surrogates.release`):
one secret shift per patient, 30-365 days either way and never a multiple of 7, applied to
every date of the patient; derived from the key when one is given; HIPAA aggregation of ages
and birth dates over 89; times kept; what cannot be parsed masked with its type."""

from __future__ import annotations

import datetime as dt

import numpy as np

from deidlib.corpus.document import Document, Span
from deidlib.pipeline.run import AGE_OVER_89, BIRTH_OVER_89, DeidOptions
from deidlib.surrogates import SurrogateEngine
from deidlib.surrogates.dates import parse_date
from deidlib.surrogates.randomness import SecureRNG
from deidlib.surrogates.release import SHIFT_MAX_DAYS, SHIFT_MIN_DAYS, shift_days, split_time

REF = dt.date(2019, 11, 9)
KEY = b"k" * 32


def doc_of(text: str, items, *, doc_id="d1", patient="p1") -> Document:
    spans, pos = [], 0
    for cat, t in items:
        a = text.index(t, pos)
        spans.append(Span(a, a + len(t), cat, cat if cat in ("DATE", "AGE") else "PATIENT", t))
        pos = a + len(t)
    return Document(doc_id, text, spans, patient)


def release_engine(seed=None, key=None, release_date=REF) -> SurrogateEngine:
    """The engine ``deidentify`` uses by default (secure unless ``seed``)."""
    opts = DeidOptions(seed=seed, memo_scope="patient", shift_key=key, release_date=release_date)
    return SurrogateEngine(opts.surrogate_config(), seed=seed)


def shifts_of(docs, engine) -> list[int]:
    out, _ = engine.surrogate_documents(docs)
    ds = []
    for a, b in zip(docs, out):
        for s, t in zip(a.spans, b.spans):
            ds.append((parse_date(t.text, reference=REF).date - parse_date(s.text, reference=REF).date).days)
    return ds


def test_one_shift_per_patient_keeps_intervals():
    dates = ["01/02/2019", "01/09/2019", "03/15/2019", "11/01/2019"]
    d1 = doc_of("Adm " + " and ".join(dates[:2]), [("DATE", d) for d in dates[:2]], doc_id="a")
    d2 = doc_of("Seen " + " and ".join(dates[2:]), [("DATE", d) for d in dates[2:]], doc_id="b")
    other = doc_of("Seen 01/02/2019", [("DATE", "01/02/2019")], doc_id="c", patient="p2")
    for engine in (release_engine(), release_engine(seed=4), release_engine(key=KEY)):
        ds = shifts_of([d1, d2], engine)
        assert len(set(ds)) == 1, ds  # every date of the patient, across notes, moved by one shift
        assert SHIFT_MIN_DAYS <= abs(ds[0]) <= SHIFT_MAX_DAYS and ds[0] % 7
    # another patient gets another shift (1 in 576 to coincide: over 20 secure runs never always)
    assert any(shifts_of([d1], e)[0] != shifts_of([other], e)[0] for e in (release_engine() for _ in range(20)))


def test_shift_is_never_small_and_uniform_over_its_range():
    rng = SecureRNG()
    d = np.array([shift_days(f"p{i}", rng=rng) for i in range(20000)])
    assert (np.abs(d) >= 30).all() and (np.abs(d) <= 365).all() and (d % 7 != 0).all()
    # uniform over the 576 allowed shifts: both signs equally, magnitudes evenly spread
    n = len(d)
    assert abs((d > 0).mean() - 0.5) < 4 * np.sqrt(0.25 / n)
    low = ((np.abs(d) >= 30) & (np.abs(d) < 198)).mean()  # 144 of the 288 allowed magnitudes
    assert abs(low - 0.5) < 4 * np.sqrt(0.25 / n)
    keyed = np.array([shift_days(f"p{i}", key=KEY) for i in range(5000)])
    assert (np.abs(keyed) >= 30).all() and (np.abs(keyed) <= 365).all() and (keyed % 7 != 0).all()
    assert abs((keyed > 0).mean() - 0.5) < 4 * np.sqrt(0.25 / len(keyed))


def test_with_a_key_runs_agree_without_one_they_differ():
    docs = [doc_of("Seen 03/15/2019", [("DATE", "03/15/2019")], doc_id=f"n{i}", patient=f"p{i}") for i in range(12)]
    a, b = shifts_of(docs, release_engine(key=KEY)), shifts_of(docs, release_engine(key=KEY))
    assert a == b  # re-runs and later batches: the same shift per patient
    assert shifts_of(docs, release_engine(key=b"another key of 32 bytes........")) != a
    c, d = shifts_of(docs, release_engine()), shifts_of(docs, release_engine())
    assert c != d  # secure randomness: 12 patients all drawing the same shift twice has odds 576**-12
    # the shift derives from the key and the patient, not from the seed
    assert shifts_of(docs, release_engine(seed=1, key=KEY)) == a == shifts_of(docs, release_engine(seed=2, key=KEY))


def test_birth_dates_and_ages_over_89_are_aggregated_without_another_date():
    for seed in range(30):
        e = release_engine(seed=seed, release_date=dt.date(2026, 11, 28))
        doc = doc_of("DOB 07/14/1931. Aged 94, ninety-four, 90S, 91 years old.",
                     [("DATE", "07/14/1931"), ("AGE", "94"), ("AGE", "ninety-four"), ("AGE", "90S"),
                      ("AGE", "91 years old")])
        out = e.surrogate(doc).document
        assert [s.text for s in out.spans] == [BIRTH_OVER_89] + [AGE_OVER_89] * 4
        # a birth date of a patient under 89 is shifted like any date, never aggregated
        young = e.surrogate(doc_of("DOB 07/14/1961.", [("DATE", "07/14/1961")])).document.spans[0].text
        delta = (parse_date(young, reference=REF).date - dt.date(1961, 7, 14)).days
        assert SHIFT_MIN_DAYS <= abs(delta) <= SHIFT_MAX_DAYS
        # a shift that would take a birth date past 89 aggregates it too
        edge = e.surrogate(doc_of("DOB 12/01/1936.", [("DATE", "12/01/1936")])).document.spans[0].text
        assert edge == BIRTH_OVER_89 or parse_date(edge, reference=REF).date > dt.date(1936, 11, 28)


def test_a_date_with_a_time_keeps_a_valid_time():
    assert split_time("11/02/2019 0700") == ("", "11/02/2019", " 0700")
    assert split_time("11/02/2019 at 7:30 pm")[2] == " at 7:30 pm"
    assert split_time("11/02/2019 2570") is None  # not a time of day
    for seed in range(50):
        e = release_engine(seed=seed)
        for text, time in (("11/02/2019 0700", " 0700"), ("2019-11-02 14:35", " 14:35"), ("0700 11/02/2019", "0700 ")):
            new = e.surrogate(doc_of(f"Seen {text}.", [("DATE", text)])).document.spans[0].text
            assert time in new and new != text
            d = parse_date(new.replace(time, ""), reference=REF)
            assert d is not None and d.unit == "day" and d.date != dt.date(2019, 11, 2)


def test_unparsable_dates_are_masked_with_their_type_never_digit_by_digit():
    for text in ("11/02/2019 9999", "62/16/7085", "Q3-19x", "the 5th?"):
        for seed in range(10):
            new = release_engine(seed=seed).surrogate(doc_of(f"On {text} ok", [("DATE", text)])).document.spans[0].text
            assert new == "[DATE]", (text, new)
    new = release_engine(seed=0).surrogate(doc_of("Age 7y3x", [("AGE", "7y3x")])).document.spans[0].text
    assert new == "[AGE]"


def test_month_year_and_weekday_mentions_move_with_the_patients_shift():
    text = "Seen 03/15/2019; March 2019; in March; 2019; on Wednesday"
    doc = doc_of(text, [("DATE", t) for t in ("03/15/2019", "March 2019", "March", "2019", "Wednesday")])
    for seed in range(60):
        e = release_engine(seed=seed)
        out = [s.text for s in e.surrogate(doc).document.spans]
        d = (parse_date(out[0], reference=REF).date - dt.date(2019, 3, 15)).days
        mid = dt.date(2019, 3, 15) + dt.timedelta(days=d)
        assert out[1] == f"{mid:%B} {mid.year}"  # a month with its year: as its 15th moves
        assert out[2] != "March"  # a bare month always changes
        assert out[3] == str(2019 + (1 if d > 0 else -1))  # a year alone: one year towards the shift
        wd = parse_date("Wednesday", reference=REF).date + dt.timedelta(days=d)
        assert out[4] == f"{wd:%A}" != "Wednesday"
