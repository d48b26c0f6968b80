"""Parse date, age and duration expressions (English and French) and write them back in
their original format.

The paper (Tchouka et al. 2023, section 4.1) makes the d-privacy metric *unit dependent*:
an expression written with a day ("12/02/2020", "February 26, 2020") is noised in days,
one written with a month and a year ("May 2014") in months, a year ("2000", "'14") in
years, a quantity in the unit it is written in ("40" years old, "3 weeks ago", "il y a
10 ans"). :func:`parse_date` / :func:`parse_quantity` return that unit, the integer value
in it and a *template* of the surface form; :func:`format_date` / :func:`format_quantity`
render another value with the same template, so that parsing a string and formatting the
same value gives the string back exactly (tested on every format of
:mod:`deidlib.synthetic.phi_forms` in both languages).

Supported date forms (any separator among ``/ - . space ,`` and case):
numeric ``m/d/y`` or ``d/m/y`` (``dayfirst``; an unambiguous field > 12 decides;
dotted ``d.m.y`` is always day first),
``y-m-d``, ``y/m/d``, 2- or 4-digit years, ``m/y`` and ``y-m``, ``m/d`` (year from the
reference date; 29 February: the last leap year up to it); written months in English and French, full or abbreviated, with or
without a dot or accents ("February 26, 2020", "26 février 2020", "1er mars 2020",
"26th of Feb", "26-Oct-2014", "Oct-14", "oct 14" in French = October 2014), an optional
leading weekday ("Monday, June 2, 2014"); a year alone ("2000", "'14"); a month alone
("March", year from the reference); a weekday alone ("Wednesday": the last such day on
or before the reference date, noised in days, written back as a weekday).

Choices: a two-digit year is put in the century that makes it at most 10 years after the
reference year; an English month followed by a two-digit number is a day unless the
separator is ``-`` or ``'`` ("Oct 14" = 14 October, "Oct-14" = October 2014); a French
month followed by a number is a year (French writes the day first); numbers are zero
padded in the output iff a day or month field of the original had a leading zero (or all
were two digits); ``1er`` is written for the first of the month in French, other days
without suffix; English ordinals get the right suffix.
"""

from __future__ import annotations

import calendar
import datetime as _dt
import functools
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from ..numwords import number_words

__all__ = ["parse_date", "parse_quantity"]

UNITS = ("day", "week", "month", "year")
#: average length of each unit in days (for errors reported in days)
UNIT_DAYS = {"day": 1.0, "week": 7.0, "month": 30.436875, "year": 365.2425}

_MONTHS = {
    ("en", "full"): ["January", "February", "March", "April", "May", "June", "July", "August", "September",
                     "October", "November", "December"],
    ("en", "abbr"): ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"],
    ("fr", "full"): ["janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre",
                     "octobre", "novembre", "décembre"],
    ("fr", "abbr"): ["janv", "févr", "mars", "avr", "mai", "juin", "juil", "août", "sept", "oct", "nov", "déc"],
}
_WEEKDAYS = {
    ("en", "full"): ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"],
    ("en", "abbr"): ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"],
    ("fr", "full"): ["lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"],
    ("fr", "abbr"): ["lun", "mar", "mer", "jeu", "ven", "sam", "dim"],
}


@functools.lru_cache(maxsize=1 << 16)
def _fold(s: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", s.lower()) if not unicodedata.combining(c))


def _build_lookup(table, extra=()):
    out: dict[str, list[tuple[int, str, str]]] = {}
    items = [(n, i, lang, form) for (lang, form), names in table.items() for i, n in enumerate(names)]
    for n, i, lang, form in list(items) + list(extra):
        for key in (n.lower(), _fold(n)):
            if (i, lang, form) not in out.setdefault(key, []):
                out[key].append((i, lang, form))
    return out


_MONTH_LOOKUP = _build_lookup(_MONTHS, [("Sept", 8, "en", "abbr"), ("fév", 1, "fr", "abbr")])
_WEEKDAY_LOOKUP = _build_lookup(_WEEKDAYS, [("Tues", 1, "en", "abbr"), ("Thur", 3, "en", "abbr"),
                                            ("Thurs", 3, "en", "abbr")])


def _lookup(table, token: str, lang: str):
    """(index, language, form) of a month/weekday token, preferring ``lang`` when ambiguous."""
    cands = table.get(token.lower()) or table.get(_fold(token))
    if not cands:
        return None
    exact = [c for c in cands if c[1] == lang]
    pool = exact or cands
    # prefer a form whose canonical spelling matches the token
    for c in pool:
        canon = (_MONTHS if table is _MONTH_LOOKUP else _WEEKDAYS)[(c[1], c[2])][c[0]]
        if _fold(canon) == _fold(token):
            return c
    return pool[0]
_FILLERS = {"of", "the", "le", "de", "du", "on"}
_TOKEN = re.compile(r"\d+|[^\W\d_]+|.", re.UNICODE)


def _case_of(s: str) -> str:
    letters = [c for c in s if c.isalpha()]
    if letters and all(c.isupper() for c in letters) and len(letters) > 1:
        return "upper"
    if letters and letters[0].isupper():
        return "title"
    return "lower"


def _apply_case(s: str, case: str) -> str:
    if case == "upper":
        return s.upper()
    if case == "title":
        return s[:1].upper() + s[1:]
    return s.lower()


def _has_accent(s: str) -> bool:
    return _fold(s) != s.lower()


@dataclass(frozen=True)
class DateExpr:
    """A parsed date: ``value`` in ``unit`` (see :func:`date_value`), the date it stands for
    (missing fields filled from the reference) and the surface template."""

    text: str
    unit: str  # day | month | year
    date: _dt.date
    parts: tuple
    fields: frozenset  # subset of {"y", "m", "d", "w"}

    @property
    def value(self) -> int:
        return date_value(self.date, self.unit)


def date_value(d: _dt.date, unit: str) -> int:
    """The integer coordinate of ``d`` in ``unit``: ordinal day, month index ``12y + m - 1``, year."""
    if unit == "day":
        return d.toordinal()
    if unit == "week":
        return d.toordinal() // 7
    if unit == "month":
        return d.year * 12 + d.month - 1
    if unit == "year":
        return d.year
    raise ValueError(f"unknown unit {unit!r}; expected one of {UNITS}")


def value_to_date(value: int, unit: str, like: _dt.date | None = None) -> _dt.date:
    """Inverse of :func:`date_value`, clamped to years 1..9999 (the day of the month of
    ``like`` is kept when possible for month and year units)."""
    value = int(value)
    if unit == "day":
        value = min(max(value, 1), _dt.date.max.toordinal())
        return _dt.date.fromordinal(value)
    if unit == "week":
        return value_to_date(value * 7 + ((like.toordinal() % 7) if like else 0), "day")
    if unit == "month":
        value = min(max(value, 12), 9999 * 12 + 11)
        y, m = divmod(value, 12)
        m += 1
    elif unit == "year":
        y = min(max(value, 1), 9999)
        m = like.month if like else 1
    else:
        raise ValueError(f"unknown unit {unit!r}; expected one of {UNITS}")
    day = like.day if like else 1
    return _dt.date(y, m, min(day, calendar.monthrange(y, m)[1]))


def _century(yy: int, reference: _dt.date) -> int:
    y = (reference.year // 100) * 100 + yy
    while y > reference.year + 10:
        y -= 100
    while y + 100 <= reference.year + 10:
        y += 100
    return y


def _ordinal_en(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def _numeric_dm(p: int, q: int, dayfirst: bool) -> bool:
    """Whether the first of two numeric fields is the day (an unambiguous field > 12 decides)."""
    if p > 12 >= q:
        return True
    if q > 12 >= p:
        return False
    return dayfirst


def parse_date(text: str, *, dayfirst: bool = False, reference: _dt.date, lang: str = "en") -> DateExpr | None:
    """Parse a date expression; ``None`` when ``text`` is not a date this parser knows.

    ``reference`` fills missing fields (year of "Feb 26", date of "Wednesday") and fixes
    the century of two-digit years; it is never the wall clock. ``lang`` ("en"/"fr")
    resolves month and weekday names spelled the same in both languages.
    """
    if not isinstance(reference, _dt.date):
        raise TypeError(f"reference must be a datetime.date, got {type(reference).__name__}")
    toks = _TOKEN.findall(text)
    if not toks or len(toks) > 16:
        return None
    kinds: list[str] = []
    for i, t in enumerate(toks):
        if t.isdigit():
            kinds.append("num")
        elif t.isalpha():
            low = t.lower()
            if i > 0 and toks[i - 1].isdigit() and low in ("st", "nd", "rd", "th", "er"):
                kinds.append("ord")
            elif _lookup(_MONTH_LOOKUP, t, lang):
                kinds.append("month")
            elif _lookup(_WEEKDAY_LOOKUP, t, lang):
                kinds.append("weekday")
            elif low in _FILLERS:
                kinds.append("lit")
            else:
                return None
        elif t in " /-.,'’":
            kinds.append("lit")
        else:
            return None
    nums = [i for i, k in enumerate(kinds) if k == "num"]
    months = [i for i, k in enumerate(kinds) if k == "month"]
    wdays = [i for i, k in enumerate(kinds) if k == "weekday"]
    if len(months) > 1 or len(wdays) > 1 or len(nums) > 3:
        return None
    role: dict[int, str] = {}
    y = m = d = None

    def prev(i):
        return toks[i - 1] if i > 0 else ""

    if months:
        mi = months[0]
        idx, mlang, _ = _lookup(_MONTH_LOOKUP, toks[mi], lang)
        m = idx + 1
        role[mi] = "month"
        for i in nums:
            t, v = toks[i], int(toks[i])
            if len(t) == 4:
                if y is not None:
                    return None
                y, role[i] = v, "year"
                continue
            if len(t) > 2:
                return None
            last = not any(j > i for j in nums)
            if prev(i) in ("'", "’"):
                year_like = True
            elif i > mi:
                if mlang == "fr":
                    year_like = d is None and last and len(t) == 2
                else:
                    year_like = i == mi + 2 and prev(i) == "-" and last and d is None and len(nums) == 1
            else:
                year_like = False
            if not year_like and d is None and 1 <= v <= 31:
                d, role[i] = v, "day"
            elif year_like and y is None and len(t) == 2:
                y, role[i] = _century(v, reference), "year2"
            else:
                return None
    elif len(nums) == 3:
        if len(toks) != 5 or toks[1] != toks[3] or toks[1] not in "/-.":
            return None
        a, b, c = (toks[i] for i in nums)
        if toks[1] == ".":
            dayfirst = True  # dotted numeric dates are day-first in both languages
        if len(a) == 4 and len(b) <= 2 and len(c) <= 2:
            y, m, d = int(a), int(b), int(c)
            role.update({nums[0]: "year", nums[1]: "month", nums[2]: "day"})
        elif len(c) in (2, 4) and len(a) <= 2 and len(b) <= 2:
            df = _numeric_dm(int(a), int(b), dayfirst)
            d, m = (int(a), int(b)) if df else (int(b), int(a))
            role.update({nums[0]: "day" if df else "month", nums[1]: "month" if df else "day"})
            if len(c) == 4:
                y, role[nums[2]] = int(c), "year"
            else:
                y, role[nums[2]] = _century(int(c), reference), "year2"
        else:
            return None
    elif len(nums) == 2:
        if len(toks) != 3 or toks[1] not in "/-.":
            return None
        a, b = toks[0], toks[2]
        if len(a) == 4 and len(b) <= 2:
            y, m = int(a), int(b)
            role.update({0: "year", 2: "month"})
        elif len(b) == 4 and len(a) <= 2:
            m, y = int(a), int(b)
            role.update({0: "month", 2: "year"})
        elif len(a) <= 2 and len(b) <= 2 and toks[1] == "/":
            df = _numeric_dm(int(a), int(b), dayfirst)
            d, m = (int(a), int(b)) if df else (int(b), int(a))
            role.update({0: "day" if df else "month", 2: "month" if df else "day"})
        else:
            return None
    elif len(nums) == 1:
        t = toks[nums[0]]
        if len(t) == 4 and not wdays and len(toks) == 1 and 1000 <= int(t) <= 2999:
            y, role[0] = int(t), "year"
        elif len(t) == 2 and len(toks) == 2 and toks[0] in ("'", "’"):
            y, role[1] = _century(int(t), reference), "year2"
        else:
            return None
    elif not wdays:
        return None
    if any(k == "ord" and role.get(i - 1) != "day" for i, k in enumerate(kinds)):
        return None
    fields = {f for f, x in (("y", y), ("m", m), ("d", d)) if x is not None}
    if wdays:
        fields.add("w")
        role[wdays[0]] = "weekday"
    if fields == {"w"}:
        if len(toks) > 2:
            return None
        wd = _lookup(_WEEKDAY_LOOKUP, toks[wdays[0]], lang)[0]
        the_date, unit = reference - _dt.timedelta(days=(reference.weekday() - wd) % 7), "day"
    else:
        if d is not None and m is None:
            return None
        yr = y if y is not None else reference.year
        mo = m if m is not None else 1
        if y is None and mo == 2 and d == 29:  # "2/29" without a year: the last leap year up to the reference
            while yr > 1 and not calendar.isleap(yr):
                yr -= 1
        if not (1 <= mo <= 12 and 1 <= yr <= 9999):
            return None
        if d is not None and not 1 <= d <= calendar.monthrange(yr, mo)[1]:
            return None
        unit = "day" if d is not None else ("month" if m is not None else "year")
        if "w" in fields and unit != "day":
            return None
        the_date = _dt.date(yr, mo, d or 1)
    numeric = [toks[i] for i, r in role.items() if r in ("day", "month") and kinds[i] == "num"]
    pad = any(len(t) == 2 and t[0] == "0" for t in numeric) or (
        not months and bool(numeric) and all(len(t) == 2 for t in numeric))
    parts: list[tuple[Any, ...]] = []
    for i, t in enumerate(toks):
        r, k = role.get(i), kinds[i]
        if r == "day":
            parts.append(("day", pad))
        elif r == "month" and k == "num":
            parts.append(("month_num", pad))
        elif r == "month":
            idx, ml, form = _lookup(_MONTH_LOOKUP, t, lang)
            canon = _MONTHS[(ml, form)][idx]
            parts.append(("month_name", ml, form, _case_of(t), _has_accent(t) or not _has_accent(canon)))
        elif r == "weekday":
            idx, wl, form = _lookup(_WEEKDAY_LOOKUP, t, lang)
            parts.append(("weekday", wl, form, _case_of(t)))
        elif r == "year":
            parts.append(("year", 4))
        elif r == "year2":
            parts.append(("year", 2))
        elif k == "ord":
            parts.append(("ord", t.lower(), _case_of(t)))
        else:
            parts.append(("lit", t))
    return DateExpr(text=text, unit=unit, date=the_date, parts=tuple(parts), fields=frozenset(fields))


def format_date(expr: DateExpr, new: _dt.date) -> str:
    """Render ``new`` with the surface template of ``expr``."""
    out = []
    parts = expr.parts
    for p in parts:
        kind = p[0]
        if kind == "lit":
            out.append(p[1])
        elif kind == "day":
            out.append(f"{new.day:02d}" if p[1] else str(new.day))
        elif kind == "month_num":
            out.append(f"{new.month:02d}" if p[1] else str(new.month))
        elif kind == "month_name":
            _, lang, form, case, accents = p
            name = _MONTHS[(lang, form)][new.month - 1]
            if not accents:
                name = _fold(name)
            out.append(_apply_case(name, case))
        elif kind == "weekday":
            _, lang, form, case = p
            out.append(_apply_case(_WEEKDAYS[(lang, form)][new.weekday()], case))
        elif kind == "year":
            out.append(f"{new.year:04d}" if p[1] == 4 else f"{new.year % 100:02d}")
        elif kind == "ord":
            _, suf, case = p
            if suf == "er":
                if new.day == 1:
                    out.append(_apply_case("er", case))
            else:
                out.append(_apply_case(_ordinal_en(new.day), case))
    return "".join(out)


# ----------------------------------------------------------------------------- quantities (ages, durations)
_WORD_NUM = {number_words(n): n for n in range(200)}
_WORD_NUM.update({w.replace("-", " "): n for w, n in list(_WORD_NUM.items()) if "-" in w})
_WORD_NUM.update({"a": 1, "an": 1})
_FR_WORD_NUM = {w: i for i, w in enumerate(
    ["zéro", "un", "deux", "trois", "quatre", "cinq", "six", "sept", "huit", "neuf", "dix", "onze", "douze",
     "treize", "quatorze", "quinze", "seize"])}
_FR_WORD_NUM.update({"une": 1})

#: unit words -> (unit, singular, plural, language)
_UNIT_WORDS: dict[str, tuple[str, str, str]] = {}
for _u, _forms in {
    "day": [("day", "days"), ("jour", "jours"), ("d", "d")],
    "week": [("week", "weeks"), ("wk", "wks"), ("semaine", "semaines"), ("sem", "sem")],
    "month": [("month", "months"), ("mo", "mos"), ("mois", "mois")],
    "year": [("year", "years"), ("yr", "yrs"), ("y", "y"), ("an", "ans"), ("année", "années"), ("annee", "annees"),
             ("yo", "yo"), ("y/o", "y/o"), ("y.o.", "y.o."), ("a", "a")],
}.items():
    for _s, _p in _forms:
        _UNIT_WORDS.setdefault(_s, (_u, _s, _p))
        _UNIT_WORDS.setdefault(_p, (_u, _s, _p))

_QTY = re.compile(
    r"^(?P<pre>\s*(?:il y a\s+|about\s+|approx\.?\s+|environ\s+)?)"
    r"(?P<num>\d{1,3}|[A-Za-zÀ-ÿ]+(?:-[A-Za-zÀ-ÿ]+)?)"
    r"(?P<decade>'?s)?"
    r"(?P<sep>[\s-]*)"
    r"(?P<unit>y/o|y\.o\.|[A-Za-zÀ-ÿ]+)?"
    r"(?P<post>(?:[\s-]+(?:old|ago|later|plus tard|auparavant))?\.?\s*)$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class QuantityExpr:
    """An age or a duration: ``value`` in ``unit`` and the surface template."""

    text: str
    value: int
    unit: str
    pre: str
    num_style: str  # digits | words | frwords
    case: str
    decade: str  # "" or "s" / "'s"
    sep: str
    unit_word: str  # the unit word as written ("" when none)
    unit_forms: tuple[str, str] | None  # (singular, plural) of the unit word
    post: str


def parse_quantity(text: str, *, default_unit: str = "year") -> QuantityExpr | None:
    """Parse "40", "forty", "SIXTY", "40 ans", "3 weeks ago", "il y a 10 ans", "18 months",
    "60s"; ``None`` when ``text`` is not such a quantity."""
    m = _QTY.match(text)
    if not m:
        return None
    num = m.group("num")
    unit_word = m.group("unit") or ""
    if num.isdigit():
        value, style = int(num), "digits"
    else:
        key = num.lower()
        if key in _WORD_NUM and key not in ("a", "an"):
            value, style = _WORD_NUM[key], "words"
        elif key in _FR_WORD_NUM:
            value, style = _FR_WORD_NUM[key], "frwords"
        elif key in ("a", "an") and unit_word:
            value, style = 1, "words"
        else:
            return None
    unit = default_unit
    forms = None
    if unit_word:
        uw = unit_word.lower()
        if uw not in _UNIT_WORDS:
            return None
        unit, s, p = _UNIT_WORDS[uw]
        forms = (s, p)
    decade = m.group("decade") or ""
    if decade and (style != "digits" or value % 10 != 0 or unit_word):
        return None
    return QuantityExpr(text=text, value=value, unit=unit, pre=m.group("pre"), num_style=style,
                        case=_case_of(num) if style != "digits" else "lower", decade=decade,
                        sep=m.group("sep"), unit_word=unit_word, unit_forms=forms, post=m.group("post"))


_FR_WORDS_OUT = ["zéro", "un", "deux", "trois", "quatre", "cinq", "six", "sept", "huit", "neuf", "dix", "onze",
                 "douze", "treize", "quatorze", "quinze", "seize"]


def format_quantity(expr: QuantityExpr, value: int, *, text_override: str | None = None) -> str:
    """Render ``value`` with the template of ``expr`` (pluralising the unit word)."""
    value = int(value)
    if expr.decade:
        value = (value // 10) * 10
    if text_override is not None:
        num = text_override
    elif expr.num_style == "words" and 0 <= value < 200 and not (expr.text.strip().lower().startswith(("a ", "an "))
                                                                  and value == 1):
        num = _apply_case(number_words(value), expr.case) if expr.case != "title" else number_words(value).capitalize()
    elif expr.num_style == "words" and value == 1:
        num = expr.text.strip().split()[0]
    elif expr.num_style == "frwords" and 0 <= value < len(_FR_WORDS_OUT):
        num = _apply_case(_FR_WORDS_OUT[value], expr.case)
    else:
        num = str(value)
    unit_word = expr.unit_word
    if unit_word and expr.unit_forms:
        s, p = expr.unit_forms
        if s != p:
            word = s if value == 1 or (value == 0 and s in ("an",)) else p
            if expr.unit_word.lower() == s and value != 1 and s in ("an",) and value == 0:
                word = s
            unit_word = _apply_case(word, _case_of(expr.unit_word)) if _case_of(expr.unit_word) != "lower" else word
    return f"{expr.pre}{num}{expr.decade}{expr.sep}{unit_word}{expr.post}"
