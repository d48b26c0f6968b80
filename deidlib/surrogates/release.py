"""What a released surrogate must satisfy, and the release-grade date shift.

**No surrogate equals its original.** :func:`same_surrogate` is the one test of "this surrogate
gives the original away": equal after case, accents, whitespace and punctuation are ignored
(``"John  Smith"`` = ``"JOHN SMITH"``, ``"555-1234"`` = ``"555 1234"``), and for a DATE the
same calendar date in any format (``"03/04/2019"`` = ``"March 4, 2019"``), for an AGE the
same number of the same unit. :class:`deidlib.surrogates.SurrogateEngine` redraws a surrogate
that fails it (at most :data:`MAX_DRAWS` draws, the memo rolled back between them) and then
falls back to the typed mask of :func:`typed_mask` (``[DATE]``), which cannot equal an
original that is not itself a mask. Guarded by ``tests/surrogates/test_no_equal_surrogate.py``
(thousands of draws per type, in every date and location mode).

What this costs the d-private mechanisms: docs/design/surrogates.md.

**The release-grade date shift** (Stubbs, Kotfila & Uzuner 2015 shift every date of a patient
by one secret offset; here with a wider exclusion): one offset per patient (per note without
patient ids) drawn uniformly from ±[:data:`SHIFT_MIN_DAYS`, :data:`SHIFT_MAX_DAYS`] days,
never a multiple of 7.

* Why 30-365 days: a shift of a few days keeps a date recognisable (the admission the
  reader may know of is still "that week"), so small offsets are excluded; a shift within a
  year keeps seasons roughly and the intervals between a patient's dates exactly, which
  studies of the released text need.
* Why never a multiple of 7: a weekday written alone ("seen Wednesday") moves with the
  patient's dates, so it never stays the same.
* :func:`shift_days` draws it from the OS CSPRNG, or, with a key (``deidlib deidentify
  --pseudonym-key-file``), derives it as HMAC-SHA256(key, scope): re-runs and later batches
  of the same patient get the same shift, so nobody can average releases towards the truth.

How each form moves with the shift ``d`` (:meth:`deidlib.surrogates.makers.TypeSurrogates._shifted_date`): a full date
by ``d`` days (its weekday, if written, follows); a month without a day ("March 2019",
"March") as its 15th day does, so it always changes month when ``|d| >= 30`` (a bare month is
moved one further month in the direction of ``d`` when ``d`` is close to a whole year and the
month would stay); a year alone ("2019", "'19") by one year in the direction of ``d`` (so it
never stays, and years keep their order); a weekday alone as a full date does (never the same
weekday, since ``d`` is not a multiple of 7). A time written with a date (``11/02/2019 0700``)
is kept as written (:func:`split_time`): it is a valid time of day, and shifting whole days
keeps it valid.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import hmac
import re
import unicodedata

from .dates import parse_date, parse_quantity

__all__ = ["MAX_DRAWS", "SHIFT_MIN_DAYS", "SHIFT_MAX_DAYS", "same_surrogate", "date_gap_days"]

#: draws of one surrogate before the typed mask is used instead (a draw that equals its original is refused)
MAX_DRAWS = 20
#: the release-grade date shift: its absolute value in days lies in [SHIFT_MIN_DAYS, SHIFT_MAX_DAYS], never a multiple of 7
SHIFT_MIN_DAYS = 30
SHIFT_MAX_DAYS = 365


def typed_mask(category: str) -> str:
    """The mask of a span that could not be replaced by a surrogate: its category in brackets."""
    return f"[{category}]"


def _allowed_shifts(min_days: int = SHIFT_MIN_DAYS, max_days: int = SHIFT_MAX_DAYS) -> list[int]:
    """Every shift the date shift may draw: ±[min_days, max_days], multiples of 7 left out."""
    mags = [m for m in range(max(1, min_days), max_days + 1) if m % 7]
    if not mags:
        raise ValueError(f"no shift of {min_days}..{max_days} days that is not a multiple of 7")
    return [-m for m in reversed(mags)] + mags


def shift_days(scope: str, *, key: bytes | None = None, rng=None, min_days: int = SHIFT_MIN_DAYS,
               max_days: int = SHIFT_MAX_DAYS) -> int:
    """One patient's (scope's) date shift, uniform over :func:`_allowed_shifts`: derived from
    ``key`` (HMAC-SHA256 of the scope; the same for every run with that key) when one is
    given, else drawn from ``rng`` (a :class:`~deidlib.surrogates.randomness.SurrogateRNG`)."""
    choices = _allowed_shifts(min_days, max_days)
    if key is not None:
        h = hmac.new(key, b"deidlib date shift\0" + scope.encode("utf-8"), hashlib.sha256).digest()
        return choices[int.from_bytes(h, "big") % len(choices)]  # 2**256 mod n: bias below 2**-246
    if rng is None:
        raise ValueError("shift_days needs a key or a generator")
    return choices[rng.randbelow(len(choices))]


_TIME = (r"(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?(?:\s*[AaPp]\.?[Mm]\.?)?"  # 7:00, 07:00:30, 7:00 pm
         r"|(?:[01]\d|2[0-3])[0-5]\d(?:\s*(?:h|hrs?|hours))?"  # 0700, 0700 hrs
         r"|(?:0?[1-9]|1[0-2])\s*[AaPp]\.?[Mm]\.?")  # 7 pm
_TIME_AFTER = re.compile(rf"^(?P<date>.*?\S)(?P<sep>\s*(?:,|\bat\b|@|T)?\s*)(?P<time>{_TIME})$")
_TIME_BEFORE = re.compile(rf"^(?P<time>{_TIME})(?P<sep>\s*(?:,|\bon\b)?\s*)(?P<date>\S.*)$")


def split_time(text: str) -> tuple[str, str, str] | None:
    """``(before, date, after)`` of a date written with a valid time of day before or after
    it (``"11/02/2019 0700"`` -> ``("", "11/02/2019", " 0700")``), else ``None``."""
    m = _TIME_AFTER.match(text)
    if m and m.group("sep"):
        return "", m.group("date"), m.group("sep") + m.group("time")
    m = _TIME_BEFORE.match(text)
    if m and m.group("sep"):
        return m.group("time") + m.group("sep"), m.group("date"), ""
    return None


def _norm(s: str) -> str:
    s = unicodedata.normalize("NFKD", s)
    return "".join(c for c in s.casefold() if c.isalnum() and not unicodedata.combining(c))


def _date_of(text: str, *, dayfirst: bool, lang: str, reference: _dt.date):
    t = text.strip()
    e = parse_date(t, dayfirst=dayfirst, reference=reference, lang=lang)
    if e is None:
        parts = split_time(t)
        if parts is not None:
            e = parse_date(parts[1], dayfirst=dayfirst, reference=reference, lang=lang)
    return e


def same_surrogate(category: str, original: str, surrogate: str, *, dayfirst: bool = False, lang: str = "en",
                   reference: _dt.date = _dt.date(2000, 1, 1)) -> bool:
    """Whether ``surrogate`` gives ``original`` away (see the module docstring): the same
    letters and digits ignoring case, accents, spaces and punctuation, or for a DATE the same
    date at the coarser of the two resolutions (same day; same month; same year), for an AGE
    the same number of the same unit."""
    a, b = _norm(original), _norm(surrogate)
    if a and a == b:
        return True
    if category == "DATE":
        ea = _date_of(original, dayfirst=dayfirst, lang=lang, reference=reference)
        eb = _date_of(surrogate, dayfirst=dayfirst, lang=lang, reference=reference)
        if ea is not None and eb is not None:
            if "w" in ea.fields and ea.fields == eb.fields == {"w"}:
                return ea.date.weekday() == eb.date.weekday()
            order = ("day", "month", "year")
            unit = max(ea.unit, eb.unit, key=order.index)
            same = {"day": lambda x, y: x == y, "month": lambda x, y: (x.year, x.month) == (y.year, y.month),
                    "year": lambda x, y: x.year == y.year}[unit]
            return same(ea.date, eb.date)
    if category == "AGE":
        qa, qb = parse_quantity(original.strip()), parse_quantity(surrogate.strip())
        if qa is not None and qb is not None:
            return (qa.value, qa.unit) == (qb.value, qb.unit)
    return False


def date_gap_days(original: str, surrogate: str, *, dayfirst: bool = False, lang: str = "en",
                  reference: _dt.date = _dt.date(2000, 1, 1)) -> int | None:
    """``|surrogate - original|`` in days when both are dates written to the day, else ``None``
    (how far the d-private mechanism moved a date; the run reports the share within a day)."""
    ea = _date_of(original, dayfirst=dayfirst, lang=lang, reference=reference)
    eb = _date_of(surrogate, dayfirst=dayfirst, lang=lang, reference=reference)
    if ea is None or eb is None or ea.unit != "day" or eb.unit != "day" or "d" not in ea.fields:
        return None
    return abs((eb.date - ea.date).days)
