"""Surface forms of PHI: dates, ages, names, phone numbers and identifiers.

Each function takes the value and a ``random.Random`` and returns the exact string
that goes into the note (its span is recorded by the caller). Formats vary the way
real notes do (i2b2 2014 guidelines list full and partial dates, years, weekdays and
holidays as DATE; ages in any form as AGE; initials and "Last, First" as NAME).
"""

from __future__ import annotations

import datetime as _dt
import random

from ..numwords import number_words

__all__ = []

_MONTHS = {
    "en": ["January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December"],
    "fr": ["janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre",
           "octobre", "novembre", "décembre"],
}
_MONTH_ABBR = {
    "en": ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"],
    "fr": ["janv.", "févr.", "mars", "avr.", "mai", "juin", "juil.", "août", "sept.", "oct.", "nov.", "déc."],
}
_WEEKDAYS = {
    "en": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"],
    "fr": ["lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"],
}


def _month_names(lang: str) -> list[str]:
    return _MONTHS["fr" if lang == "fr" else "en"]


#: full dates. Keys are what styles weight; "mdy" forms are written day-first for French.
DATE_FORMATS = ("mdy_slash", "mdy_short", "iso", "mon_d_y", "month_d_y", "d_month_y", "d_mon_y",
                "ymd_slash", "dot", "mdy_dash")
#: partial / relative dates (also DATE in i2b2)
_PARTIAL_DATE_FORMATS = ("month_y", "md", "yy_apos", "year", "weekday", "mon_d", "mon_y_short")


def format_date(d: _dt.date, fmt: str, lang: str = "en") -> str:
    """Render ``d`` in format ``fmt`` (one of :data:`DATE_FORMATS` or :data:`_PARTIAL_DATE_FORMATS`).

    For ``lang="fr"`` the numeric slash/dash/short forms are day-first (12/02/2020 is 12 Feb)
    and month/weekday names are French.
    """
    L = "fr" if lang == "fr" else "en"
    y, m, day = d.year, d.month, d.day
    dayfirst = L == "fr"
    if fmt == "mdy_slash":
        return f"{day:02d}/{m:02d}/{y}" if dayfirst else f"{m:02d}/{day:02d}/{y}"
    if fmt == "mdy_short":
        return f"{day}/{m}/{y % 100:02d}" if dayfirst else f"{m}/{day}/{y % 100:02d}"
    if fmt == "mdy_dash":
        return f"{day:02d}-{m:02d}-{y}" if dayfirst else f"{m}-{day}-{y}"
    if fmt == "iso":
        return f"{y}-{m:02d}-{day:02d}"
    if fmt == "ymd_slash":
        return f"{y}/{m:02d}/{day:02d}"
    if fmt == "dot":
        return f"{day:02d}.{m:02d}.{y}"
    if fmt == "mon_d_y":
        return f"{day} {_MONTH_ABBR[L][m - 1]} {y}" if dayfirst else f"{_MONTH_ABBR[L][m - 1]} {day}, {y}"
    if fmt == "month_d_y":
        return f"{day} {_MONTHS[L][m - 1]} {y}" if dayfirst else f"{_MONTHS[L][m - 1]} {day}, {y}"
    if fmt == "d_month_y":
        return f"{day} {_MONTHS[L][m - 1]} {y}"
    if fmt == "d_mon_y":
        return f"{day:02d}-{_MONTH_ABBR[L][m - 1].rstrip('.')}-{y}"
    if fmt == "month_y":
        return f"{_MONTHS[L][m - 1]} {y}"
    if fmt == "mon_y_short":
        return f"{_MONTH_ABBR[L][m - 1].rstrip('.')} {y % 100:02d}" if L == "fr" else f"{_MONTH_ABBR[L][m - 1]}-{y % 100:02d}"
    if fmt == "md":
        return f"{day}/{m}" if dayfirst else f"{m}/{day}"
    if fmt == "mon_d":
        return f"{day} {_MONTH_ABBR[L][m - 1]}" if dayfirst else f"{_MONTH_ABBR[L][m - 1]} {day}"
    if fmt == "yy_apos":
        return f"'{y % 100:02d}"
    if fmt == "year":
        return str(y)
    if fmt == "weekday":
        return _WEEKDAYS[L][d.weekday()]
    raise ValueError(f"unknown date format {fmt!r}; expected one of {DATE_FORMATS + _PARTIAL_DATE_FORMATS}")


def age_words(n: int) -> str:
    """English words for an age 0..119 ("seventy-eight", "one hundred two")."""
    if n < 0 or n >= 120:
        raise ValueError(f"age {n} out of range 0..119")
    return number_words(n)


#: age surface forms: (span pattern, suffix). Only the number (or number words) is the AGE
#: span, as in i2b2 2014 ("78" in "78 y/o"); "78yo" puts the span inside a token.
_AGE_FORMS_EN = (("{a}", ""), ("{a}", ""), ("{a}", " y/o"), ("{a}", "yo"), ("{a}", " yo"),
                 ("{a}", "-year-old"), ("{a}", " years old"), ("{a}", "{sex}"), ("words", "-year-old"),
                 ("words", ""), ("{a}", " y.o."), ("{a}", " year old"))
_AGE_FORMS_FR = (("{a}", ""), ("{a}", " ans"), ("{a}", " ans"), ("{a}", "a"), ("{a}", " ans"))
#: forms that read as an adjective before a noun ("a 78 y/o man")
_AGE_ATTR_EN = (("{a}", "-year-old"), ("{a}", "-year-old"), ("{a}", " y/o"), ("{a}", "yo"), ("{a}", " yo"),
                ("{a}", " year old"), ("words", "-year-old"), ("{a}", " y.o."), ("{a}", "-yo"))
_AGE_ATTR_FR = (("{a}", " ans"), ("{a}", " ans"), ("{a}", "a"))
#: bare forms ("Age: 78")
_AGE_BARE_EN = (("{a}", ""), ("{a}", ""), ("{a}", ""), ("{a}", " years"), ("{a}", "{sex}"), ("words", ""),
                ("{a}", " yrs"))
_AGE_BARE_FR = (("{a}", ""), ("{a}", " ans"))


def format_age(age: int, rng: random.Random, lang: str = "en", sex: str = "F",
               kind: str = "any") -> tuple[str, str]:
    """An age as ``(span_text, suffix)``: ("78", " y/o"), ("78", "yo"), ("seventy-eight", "-year-old"), ...

    The caller records ``span_text`` as the AGE span and appends ``suffix`` as plain text.
    Decades ("in his 60s") are produced by the note templates.
    """
    fr = lang == "fr"
    forms: tuple[tuple[str, str], ...]
    if kind == "attr":
        forms = _AGE_ATTR_FR if fr else _AGE_ATTR_EN
    elif kind == "bare":
        forms = _AGE_BARE_FR if fr else _AGE_BARE_EN
    else:
        forms = _AGE_FORMS_FR if fr else _AGE_FORMS_EN
    span, suffix = forms[rng.randrange(len(forms))]
    text = age_words(age) if (span == "words" and not fr) else str(age)
    return text, suffix.format(sex=sex)


_NAME_FORMS = ("first_last", "last_comma_first", "title_last", "first", "last", "initials",
              "first_initial_last", "first_mi_last", "last_upper", "title_first_last")


def format_name(first: str, last: str, form: str, *, title: str = "", middle: str = "") -> str:
    """A person name in one surface form; the whole string is the NAME span."""
    if form == "first_last":
        return f"{first} {last}"
    if form == "last_comma_first":
        return f"{last}, {first}"
    if form == "title_last":
        return f"{title} {last}" if title else last
    if form == "title_first_last":
        return f"{title} {first} {last}" if title else f"{first} {last}"
    if form == "first":
        return first
    if form == "last":
        return last
    if form == "initials":
        return f"{first[0]}{(middle[:1] or '')}{last[0]}".upper()
    if form == "first_initial_last":
        return f"{first[0]}. {last}"
    if form == "first_mi_last":
        return f"{first} {middle[:1] or 'J'}. {last}"
    if form == "last_upper":
        return last.upper()
    raise ValueError(f"unknown name form {form!r}; expected one of {_NAME_FORMS}")


_PHONE_FORMATS = {
    "en": ("({a}) {b}-{c}", "{a}-{b}-{c}", "{a}.{b}.{c}", "{a}{b}{c}", "+1 {a} {b} {c}", "{b}-{c}",
           "1-{a}-{b}-{c}", "({a}){b}-{c}"),
    "fr": ("0{p} {q} {r} {s} {t}", "0{p}.{q}.{r}.{s}.{t}", "+33 {p} {q} {r} {s} {t}", "0{p}{q}{r}{s}{t}",
           "+33 (0){p} {q} {r} {s} {t}"),
}


def format_phone(rng: random.Random, lang: str = "en", fmt: str | None = None) -> str:
    """A phone or fax number in a locale-specific format (digits are random)."""
    if lang == "fr":
        f = fmt or rng.choice(_PHONE_FORMATS["fr"])
        return f.format(p=rng.randint(1, 9), q=f"{rng.randint(0, 99):02d}", r=f"{rng.randint(0, 99):02d}",
                        s=f"{rng.randint(0, 99):02d}", t=f"{rng.randint(0, 99):02d}")
    f = fmt or rng.choice(_PHONE_FORMATS["en"])
    return f.format(a=rng.randint(201, 989), b=f"{rng.randint(200, 999)}", c=f"{rng.randint(0, 9999):04d}")


#: identifier shapes: '#' digit, 'A' capital letter, anything else literal
_ID_SHAPES: dict[str, tuple[str, ...]] = {
    "MEDICALRECORD": ("#######", "########", "###-##-##", "MR#######", "##-###-###", "A#######"),
    "SSN": ("###-##-####", "#########", "### ## ####"),
    "HEALTHPLAN": ("AAA#########", "#########-##", "HP-########", "A##########", "MCR########A"),
    "ACCOUNT": ("##########", "ACCT-#######", "#####-#####", "A########"),
    "LICENSE": ("A#######", "MD-######", "#########", "AA-#####", "DEA AA#######"),
    "VEHICLE": ("AAA-####", "###-AAA", "AAA ####", "#AAA###"),
    "DEVICE": ("SN-AAA######", "AAA######A", "##########", "SN ######"),
    "BIOID": ("BIO-######", "FP-#####-AA", "AA########"),
    "IDNUM": ("AA##-#####", "A##-######", "#######", "ORD-########", "AA-##-######", "##AA####"),
}
_LETTERS = "ABCDEFGHJKLMNPRSTUVWXYZ"


def random_id(kind: str, rng: random.Random, shape: str | None = None) -> str:
    """A random identifier of ``kind`` (a key of :data:`_ID_SHAPES`) in one of its shapes."""
    if shape is None:
        try:
            shape = rng.choice(_ID_SHAPES[kind])
        except KeyError:
            raise ValueError(f"unknown id kind {kind!r}; expected one of {list(_ID_SHAPES)}") from None
    out = []
    for ch in shape:
        if ch == "#":
            out.append(chr(48 + rng.randrange(10)))
        elif ch == "A":
            out.append(_LETTERS[rng.randrange(len(_LETTERS))])
        else:
            out.append(ch)
    return "".join(out)


def _weighted(table: dict[str, float], rng: random.Random) -> str:
    keys = list(table)
    return rng.choices(keys, weights=[table[k] for k in keys], k=1)[0]


def site_phone(style, rng: random.Random, lang: str = "en") -> str:
    """A phone number in one of ``style.phone_formats`` (English; other locales: the shared list)."""
    if lang != "fr" and getattr(style, "phone_formats", None):
        return format_phone(rng, lang, _weighted(style.phone_formats, rng))
    return format_phone(rng, lang)


def site_id(style, kind: str, rng: random.Random) -> str:
    """An identifier of ``kind`` in one of the site's shapes (``style.id_shapes``), else a shared shape."""
    table = (getattr(style, "id_shapes", None) or {}).get(kind)
    return random_id(kind, rng, _weighted(table, rng) if table else None)


# --- forms of dictated and emergency notes (i2b2 2014 guideline, Stubbs & Uzuner 2015 §§ 2-3) ---

def ordinal(n: int) -> str:
    """``n`` with its English ordinal suffix: 1st, 2nd, 3rd, 4th, 11th, 21st (a day-only date: "the 5th")."""
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def ipv6_address(rng: random.Random) -> str:
    """A random IPv6 address (RFC 4291 §2.2), full or with one run of zero groups written ``::``."""
    groups = [f"{rng.randrange(1, 0x10000):x}" for _ in range(8)]
    if rng.random() < 0.5:
        groups[0] = rng.choice(("fe80", "2001", "2600", "fd00"))
        return ":".join(groups)
    i = rng.randint(1, 5)
    j = rng.randint(i + 1, 7)
    return ":".join(groups[:i]) + "::" + ":".join(groups[j:])


def dash_grouped_id(rng: random.Random) -> str:
    """A record number written in dash groups ("123-45-67", "12-345-678", "0012-3456-78"), not shaped
    like a date or a US phone or social security number."""
    shape = rng.choice(("###-##-##", "##-###-###", "####-####-##", "##-##-###-#", "###-###-##"))
    return random_id("MEDICALRECORD", rng, shape)


def device_serial(rng: random.Random) -> str:
    """A device identifier or serial number: capitals and digits in dash groups ("PMX-55321-A",
    "7GH2-9981-KL") or a serial code ("SN4471902")."""
    shape = rng.choice(("AAA-#####-A", "#AA#-####-AA", "AA-####-###", "AAA#-####-#A", "SN#######", "AA######"))
    return random_id("DEVICE", rng, shape)


def staff_user(first: str, last: str, rng: random.Random) -> str:
    """A staff user name of two letters and digits ("js45"), as sign-in and transcription systems
    write them."""
    return f"{first[:1]}{last[:1]}".lower() + str(rng.randint(1, 999))


def dictation_initials(first: str, middle: str, last: str) -> str:
    """A dictator's initials as a dictation line writes them ("JAS" of John A. Smith)."""
    return f"{first[:1]}{middle[:1]}{last[:1]}".upper()
