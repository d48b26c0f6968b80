"""Date/age parsing and format round trips (English and French), names, identifiers, contacts."""

from __future__ import annotations

import datetime as dt
import random
import re
import zlib

import pytest

from deidlib.surrogates.dates import (
    date_value,
    format_date,
    format_quantity,
    parse_date,
    parse_quantity,
    value_to_date,
)
from deidlib.surrogates.formats import (
    pool_replace,
    shape_replace,
    surrogate_email,
    surrogate_ip,
    surrogate_url,
)
from deidlib.surrogates.memo import Memo
from deidlib.surrogates.names import surrogate_name, surrogate_username
from deidlib.surrogates.pools import get_pools
from deidlib.surrogates.randomness import SeededRNG
from deidlib.synthetic.phi_forms import _PARTIAL_DATE_FORMATS, DATE_FORMATS
from deidlib.synthetic.phi_forms import format_date as synth_format

REF = dt.date(2015, 6, 1)


@pytest.mark.parametrize("lang", ["en", "fr"])
@pytest.mark.parametrize("fmt", DATE_FORMATS + _PARTIAL_DATE_FORMATS)
def test_round_trip_every_synthetic_format(lang, fmt):
    rng = random.Random(zlib.crc32(f"{lang}|{fmt}".encode()))  # not hash(): str hashes vary per process
    for _ in range(60):
        d = dt.date(1930, 1, 1) + dt.timedelta(days=rng.randrange(33000))
        s = synth_format(d, fmt, lang)
        for variant in (s, s.upper()):
            e = parse_date(variant, dayfirst=lang == "fr", reference=REF, lang=lang)
            assert e is not None, variant
            assert format_date(e, e.date) == variant
            if fmt in DATE_FORMATS and fmt != "mdy_short":
                assert e.date == d and e.unit == "day"
            new = e.date + dt.timedelta(days=40)
            again = parse_date(format_date(e, new), dayfirst=lang == "fr", reference=REF, lang=lang)
            assert again is not None and again.unit == e.unit


@pytest.mark.parametrize("text,dayfirst,lang,date,unit", [
    ("12/02/2020", True, "fr", dt.date(2020, 2, 12), "day"),
    ("29/2", True, "fr", dt.date(2012, 2, 29), "day"),  # no year, reference 2015: the last leap year
    ("12/02/2020", False, "en", dt.date(2020, 12, 2), "day"),
    ("25/12/2020", False, "en", dt.date(2020, 12, 25), "day"),  # > 12 decides
    ("February 26, 2020", True, "fr", dt.date(2020, 2, 26), "day"),
    ("1er mars 2020", True, "fr", dt.date(2020, 3, 1), "day"),
    ("26 fevrier 2020", True, "fr", dt.date(2020, 2, 26), "day"),
    ("Monday, June 2, 2014", False, "en", dt.date(2014, 6, 2), "day"),
    ("the 3rd of May 2011", False, "en", dt.date(2011, 5, 3), "day"),
    ("May 2014", False, "en", dt.date(2014, 5, 1), "month"),
    ("mai 2014", True, "fr", dt.date(2014, 5, 1), "month"),
    ("05/2014", False, "en", dt.date(2014, 5, 1), "month"),
    ("Oct-14", False, "en", dt.date(2014, 10, 1), "month"),
    ("Oct 14", False, "en", dt.date(2015, 10, 14), "day"),
    ("2000", False, "en", dt.date(2000, 1, 1), "year"),
    ("'87", False, "en", dt.date(1987, 1, 1), "year"),
    ("'19", False, "en", dt.date(2019, 1, 1), "year"),
    ("Wednesday", False, "en", dt.date(2015, 5, 27), "day"),  # last Wednesday on/before 2015-06-01
    ("09.05.1964", False, "en", dt.date(1964, 5, 9), "day"),
])
def test_parse_values_and_units(text, dayfirst, lang, date, unit):
    e = parse_date(text, dayfirst=dayfirst, reference=REF, lang=lang)
    assert e is not None and e.date == date and e.unit == unit
    assert format_date(e, e.date) == text


@pytest.mark.parametrize("text", ["hello", "13/13/2020", "31/02/2020", "2020-02-30", "12345", "Dr Smith", "", "3.5 mg"])
def test_not_dates(text):
    assert parse_date(text, reference=REF) is None


def test_written_forms_follow_the_new_value():
    e = parse_date("1er mars 2020", dayfirst=True, reference=REF, lang="fr")
    assert format_date(e, dt.date(2020, 4, 2)) == "2 avril 2020"
    assert format_date(e, dt.date(2020, 2, 1)) == "1er février 2020"
    e = parse_date("June 1st, 2014", reference=REF)
    assert format_date(e, dt.date(2014, 6, 22)) == "June 22nd, 2014"
    e = parse_date("MONDAY, 02-JUN-2014", reference=REF)
    assert format_date(e, dt.date(2014, 6, 4)) == "WEDNESDAY, 04-JUN-2014"
    e = parse_date("5/7/09", reference=REF)
    assert format_date(e, dt.date(2011, 12, 25)) == "12/25/11"


def test_unit_values_and_clamping():
    d = dt.date(2020, 2, 29)
    for unit in ("day", "month", "year"):
        assert value_to_date(date_value(d, unit), unit, like=d).year == 2020
    assert value_to_date(date_value(d, "year") + 1, "year", like=d) == dt.date(2021, 2, 28)
    assert value_to_date(10**9, "day") == dt.date.max
    assert value_to_date(-5, "year").year == 1


@pytest.mark.parametrize("text,value,unit,out37,out1", [
    ("40", 40, "year", "37", "1"),
    ("forty", 40, "year", "thirty-seven", "one"),
    ("SIXTY", 60, "year", "THIRTY-SEVEN", "ONE"),
    ("40 ans", 40, "year", "37 ans", "1 an"),
    ("3 weeks ago", 3, "week", "37 weeks ago", "1 week ago"),
    ("il y a 10 ans", 10, "year", "il y a 37 ans", "il y a 1 an"),
    ("18 months", 18, "month", "37 months", "1 month"),
    ("6 mois", 6, "month", "37 mois", "1 mois"),
    ("2 yrs", 2, "year", "37 yrs", "1 yr"),
    ("60s", 60, "year", "30s", "0s"),
])
def test_quantities(text, value, unit, out37, out1):
    q = parse_quantity(text)
    assert q is not None and (q.value, q.unit) == (value, unit)
    assert format_quantity(q, value) == text
    assert format_quantity(q, 37) == out37 and format_quantity(q, 1) == out1


@pytest.mark.parametrize("text", ["mild", "3.5", "x-ray", "twenty bananas"])
def test_not_quantities(text):
    assert parse_quantity(text) is None


@pytest.fixture(scope="module")
def en():
    return get_pools("en_US", 0)


@pytest.fixture(scope="module")
def fr():
    return get_pools("fr_FR", 0)


def test_name_surface_forms(en):
    r, m = SeededRNG(0), Memo()
    full = surrogate_name("Diane J. Weeks", en, r, m)
    first, mi, last = full.split(" ")
    assert re.fullmatch(r"[A-Z]\.", mi) and first != "Diane" and last != "Weeks"
    assert surrogate_name("Weeks, Diane", en, r, m) == f"{last}, {first}"
    assert surrogate_name("WEEKS", en, r, m) == last.upper()
    assert surrogate_name("Mrs. Weeks", en, r, m) == f"Mrs. {last}"
    assert surrogate_name("Weeks's", en, r, m) == f"{last}'s"
    assert surrogate_name("D. Weeks", en, r, m) == f"{first[0]}. {last}"
    assert surrogate_name("weeks", en, r, m) == last.lower()
    assert surrogate_name("Diane", en, r, m) == first
    dr = surrogate_name("Dr. Kimberly Williams, MD", en, r, m)
    assert dr.startswith("Dr. ") and dr.endswith(", MD")
    ini = surrogate_name("DJW", en, r, m)
    assert len(ini) == 3 and ini.isupper() and ini != "DJW"
    hy = surrogate_name("Jean-Pierre Dupont", en, r, m)
    assert hy.count("-") == 1 and " " in hy


def test_names_keep_sex_and_locale(fr):
    r, m = SeededRNG(1), Memo()
    for _ in range(20):
        new = surrogate_name("Marie", fr, r, Memo())
        assert new in fr.first_female
    new = surrogate_name("M. Durand", fr, r, m)
    assert new.startswith("M. ") and new[3:] in fr.last


def test_username(en):
    r, m = SeededRNG(2), Memo()
    a = surrogate_username("JOHN.DAVIS", en, r, m)
    assert a.isupper() and "." in a
    b = surrogate_username("tklein73", en, r, m)
    assert b[-2:].isdigit() and b != "tklein73"
    assert surrogate_username("tklein73", en, r, m) == b


@pytest.mark.parametrize("text,kind", [("629-85-89", "id"), ("MR7770112", "id"), ("ZLY503471827", "id"),
                                       ("(873)502-2592", "phone"), ("+33 (0)6 12 34 56 78", "phone"),
                                       ("1-754-626-7292", "phone"), ("45128", "zip"), ("7N-19", "id"),
                                       ("DEA AB1234567", "id")])
def test_shape_replace_preserves_format(text, kind):
    r, m = SeededRNG(3), Memo()
    out = shape_replace(text, r, m, kind=kind)
    assert out != text and len(out) == len(text)
    for a, b in zip(text, out):
        assert a.isdigit() == b.isdigit() and a.isalpha() == b.isalpha()
        if not a.isalnum():
            assert a == b
    assert shape_replace(text, r, m, kind=kind) == out  # memoised
    if text.startswith("MR"):
        assert out.startswith("MR")
    if text.startswith("+33 (0)"):
        assert out.startswith("+33 (0)")


def test_shape_memo_ignores_separators():
    r, m = SeededRNG(4), Memo()
    a = shape_replace("629-85-89", r, m)
    b = shape_replace("6298589", r, m)
    assert a.replace("-", "") == b


def test_email_url_ip(en):
    r, m = SeededRNG(5), Memo()
    e = surrogate_email("jerry.spencer@outlook.com", en, r, m)
    assert re.fullmatch(r"[a-z]+\.[a-z]+@outlook\.com", e) and e != "jerry.spencer@outlook.com"
    e2 = surrogate_email("ghernandez6@fisher.org", en, r, m)
    assert not e2.endswith("fisher.org") and re.search(r"\d@", e2)
    assert surrogate_email("DAVID.HOLMES@GMAIL.COM", en, r, m).isupper()
    u = surrogate_url("https://portal.fields.com/patient/62131", en, r, m)
    assert u.startswith("https://") and "fields" not in u and re.search(r"/[a-z]+/\d{5}$", u)
    ip = surrogate_ip("192.168.28.80", r, m)
    assert ip.startswith("192.168.") and ip != "192.168.28.80"
    ip2 = surrogate_ip("154.169.176.246", r, m)
    assert all(0 <= int(x) <= 255 for x in ip2.split(".")) and ip2 != "154.169.176.246"


def test_pool_replacements(en, fr):
    r, m = SeededRNG(6), Memo()
    h = pool_replace("SALEM GENERAL HOSPITAL", "HOSPITAL", en, r, m)
    assert h.isupper() and h.endswith("GENERAL HOSPITAL") and "SALEM" not in h
    m.set("location_name", "dijon", "Besançon")
    assert pool_replace("Centre Hospitalier de Dijon", "HOSPITAL", fr, r, m) == "Centre Hospitalier de Besançon"
    assert pool_replace("Ohio", "STATE", en, r, m) in en.states
    assert pool_replace("TX", "STATE", en, r, m) in en.state_abbrs
    assert pool_replace("toxicologist", "PROFESSION", en, r, m) in [j.lower() for j in en.jobs]
    with pytest.raises(ValueError):
        pool_replace("x", "PATIENT", en, r, m)
