"""ICU nursing notes: system-by-system, telegraphic, PHI-sparse.

The fifth note type, ``icu_nursing_note``. It is written the way ICU nurses write: a
header per system (``NEURO:``, ``CV-``, ``resp=``), telegraphic findings with vital-sign
ranges, drips and times, run-on lines, stray spaces before punctuation, misspellings,
in upper case, lower case or mixed case, mostly without any title or patient header.
PHI is rare and sits where it sits in real notes: a doctor's surname after "per dr",
a relative's first name in the social line, a month/day date before an event, a short
hospital name or a ward ("transfer to <building> 4"), now and then a phone or pager number.
Ages are written as in i2b2 (every age is AGE PHI); the transfer benchmark aligns that
with guidelines that tag only ages over 89 (:func:`deidlib.corpus.conventions.align_spans`).

Layouts (chosen per note): ``systems`` (headers per system, one or two lines each),
``soap`` (one run-on ``O: ...; A: ...; P: ...`` paragraph with semicolons) and ``event``
(a short timed entry). How much the site shows through rises with the style's heterogeneity
``h``: the casing mix is ``(1 - h) * ICU_CASING + h * site casing`` (:func:`icu_casing`), and with
probability ``h`` each the note takes the site's wording (``SITE_VOCAB``), the system-header separator of
the site's header decoration, the site's full-date format for event dates, its doctor-name forms
for cited providers and its patient-name forms; with probability ``h / 2`` a hospital keeps its full
name (with the site's suffix). Vocabulary: :mod:`deidlib.synthetic.icu_vocab` (where the words come
from is stated there).
"""

from __future__ import annotations

import datetime as _dt
import functools
import random
import re
from collections.abc import Callable

from ..icu_vocab import (
    ASSESSMENT,
    DRIPS,
    EVENTS,
    OPENINGS,
    PHI_PHRASES,
    PLAN,
    PLAN_PHI,
    PMH_ITEMS,
    PRN_MEDS,
    SYSTEM_HEADERS,
    SYSTEM_PHRASES,
    SYSTEMS,
    TITLES,
    UNIT_WORDS,
)
from ..identities import wide_names
from .context import NoteContext, _misspell

__all__ = []

#: casing of ICU nursing notes (whole note) when sites write alike (heterogeneity 0)
_ICU_CASING: dict[str, float] = {"upper": 0.3, "lower": 0.45, "normal": 0.25}

#: system-header separator of each site header decoration (a site's own habit, used with probability h)
_SITE_SEPS: dict[str, tuple[str, ...]] = {
    "caps_colon": (": ",), "title_colon": (": ", ":"), "abbr": ("- ", " "), "stars": (" -- ",), "lower_dash": ("= ",),
}


def icu_casing(site_casing: dict[str, float], h: float) -> dict[str, float]:
    """Casing weights of a site's ICU notes: ``(1 - h) * ICU_CASING + h * site_casing`` (both normalized)."""
    c = sum(_ICU_CASING.values())
    o = sum(site_casing.values()) or 1.0
    out = {k: (1 - h) * _ICU_CASING.get(k, 0.0) / c + h * site_casing.get(k, 0.0) / o
           for k in dict.fromkeys([*_ICU_CASING, *site_casing])}
    return {k: v for k, v in out.items() if v > 0}

_PIECE = re.compile(r"\{(\w+)\}")


def _rng_range(lo: int, hi: int, width: tuple[int, int]) -> Callable[[random.Random], str]:
    def f(r: random.Random) -> str:
        a = r.randint(lo, hi)
        return f"{a}-{a + r.randint(*width)}"
    return f


def _num(lo: int, hi: int) -> Callable[[random.Random], str]:
    return lambda r: str(r.randint(lo, hi))


def _dec(lo: float, hi: float, d: int = 1) -> Callable[[random.Random], str]:
    return lambda r: f"{r.uniform(lo, hi):.{d}f}"


def _pick(*opts: str) -> Callable[[random.Random], str]:
    return lambda r: opts[r.randrange(len(opts))]


def _time(r: random.Random) -> str:
    h = r.randint(0, 23)
    m = r.choice(("00", "00", "30", "15", "45"))
    roll = r.random()
    if roll < 0.55:
        return f"{h:02d}{m}"
    if roll < 0.75:
        return f"{h % 12 or 12}{'' if m == '00' else m}{r.choice(('am', 'pm', 'AM', 'PM', 'a', 'p'))}"
    if roll < 0.9:
        return f"{h:02d}:{m}"
    return r.choice(("noon", "MN", "midnight"))


def _bp(r: random.Random) -> str:
    s = r.randint(80, 170)
    d = r.randint(40, 90)
    if r.random() < 0.5:
        return f"BP {s}-{s + r.randint(5, 40)}/{d}-{d + r.randint(5, 25)}"
    return f"{r.choice(('BP', 'SBP', 'ABP', 'NBP', 'cuff'))} {s}/{d}"


def _abg5(r: random.Random) -> str:
    """A blood gas as a run of slashed numbers (pH/pCO2/pO2/HCO3/BE), in either order nurses use."""
    ph, co2, o2 = f"{r.uniform(7.2, 7.5):.2f}", str(r.randint(28, 65)), str(r.randint(55, 180))
    tail = [str(r.randint(18, 34)), str(r.randint(-6, 6))]
    parts = [ph, co2, o2] if r.random() < 0.6 else [o2, co2, ph]
    return "/".join(parts + tail[: r.randint(0, 2)])


def _bp_range(r: random.Random) -> str:
    s, d = r.randint(80, 170), r.randint(35, 80)
    return f"{s}-{s + r.randint(5, 50)}/{d}-{d + r.randint(3, 25)}"


def _drip(r: random.Random) -> str:
    name, dose = DRIPS[r.randrange(len(DRIPS))]
    return f"{name} {r.choice(('@', 'at', 'gtt @', 'gtt at', ''))} {dose}".replace("  ", " ")


def _vent(r: random.Random) -> str:
    mode = r.choice(("AC", "A/C", "SIMV", "CPAP/PS", "PSV", "IMV"))
    return f"{mode} {r.choice((12, 14, 16, 18))}/{r.choice((450, 500, 550, 600))}/{r.choice((5, 8, 10))}/{r.choice((40, 50, 60, 100))}%"


def _abg(r: random.Random) -> str:
    return f"{r.uniform(7.2, 7.5):.2f}/{r.randint(28, 65)}/{r.randint(55, 180)}"


def _o2(r: random.Random) -> str:
    return r.choice((f"{r.randint(1, 6)}L NC", f"{r.randint(1, 6)}LNP", "RA", "rm air", f"{r.choice((35, 40, 50, 70))}% FM",
                     f"{r.choice((40, 50, 100))}% NRB", "face tent", "cool neb"))


_DOSE: dict[str, Callable[[random.Random], str]] = {
    "dose_mcg": _dec(0.2, 2.5), "dose_dop": _num(2, 15), "dose_prop": _num(10, 60), "dose_fent": _num(25, 200),
    "dose_small": _num(1, 10), "dose_ntg": _num(10, 200), "dose_esm": _num(50, 200),
}

#: non-PHI values of the ``{slot}`` placeholders
_VALUES: dict[str, Callable[[random.Random], str]] = {
    "n3": _num(1, 3), "n10": _num(5, 10), "n_q": _pick("1", "2", "4", "6"), "pupil": _pick("3mm", "2-3mm", "4->2", "pinpoint", "sluggish"),
    "sedation": _pick("propofol", "fentanyl/versed", "precedex", "ativan gtt"), "prn_med": lambda r: r.choice(PRN_MEDS),
    "gcs": _num(3, 15), "rass": _pick("0", "-1", "-2", "-3", "+1", "+2"), "ciwa": _num(2, 20),
    "rhythm": _pick("SR", "NSR", "ST", "SB", "AF", "afib", "A-paced", "V-paced", "SR-ST", "aflutter", "1st deg AVB"),
    "hr_range": _rng_range(55, 120, (4, 25)), "bp": _bp, "sbp_range": _rng_range(85, 150, (10, 40)),
    "map_": _num(55, 70), "map2": _num(70, 90), "sbp": _num(70, 95), "dbp": _num(30, 55),
    "bolus": _pick("NS bolus 500cc given", "250cc LR bolus", "bolused x2", "fluid challenge given"),
    "drip": _drip, "pressor": _pick("neo", "levophed", "dopamine", "vasopressin", "dobutamine"),
    "cvp": _num(2, 14), "cvp2": _num(12, 22), "pa": lambda r: f"{r.randint(25, 60)}/{r.randint(10, 30)}",
    "co": _dec(2.5, 7.0, 2), "ci": _dec(1.5, 3.5, 2), "edema": _pick("1+", "2+", "3+", "trace", "+pedal", "generalized"),
    "k": _dec(3.0, 5.5), "kcl": _pick("40meq KCL", "20meq KCL IV", "KCL 40 po"), "mg": _dec(1.3, 2.6),
    "mgso4": _pick("2gm MgSO4", "MgSO4 2g IV"), "ck": _num(80, 2400), "trop": _dec(0.01, 9.0, 2),
    "pacer": _pick("pacer, not in use", "temp pacer, sensing well", "box, capped"), "iabp": _pick("1:1", "2:1", "1:2", "d/c'd"),
    "hct": _dec(22, 38), "beta": _pick("lopressor", "metoprolol", "labetalol"), "bb_dose": _pick("5mg", "2.5mg", "10mg"),
    "o2": lambda r: f"{_o2(r)}, sats {r.randint(88, 100)}%", "o2_short": _o2, "sat_range": _rng_range(88, 97, (1, 4)),
    "sat": _num(86, 100), "ls": _pick("clear", "coarse", "CTA", "diminished bases", "crackles bilat", "rhonchi, clear with cough",
                                      "exp wheezes", "clear upper, diminished lower"),
    "rr_range": _rng_range(12, 26, (2, 10)), "vent": _vent, "abg": _abg,
    "secretions": _pick("small amt thick tan secretions", "mod amt thin white sputum", "blood tinged secretions", "lg amt yellow"),
    "cxr": _pick("shows improving infiltrate", "no change", "with LLL atelectasis", "with small effusions", "pending"),
    "time": _time, "time2": _time, "ett": _pick("7", "7.5", "8"), "ett_cm": _num(20, 25), "fio2": _pick("35", "40", "50", "70"),
    "peep": _pick("5", "5/5", "10/5"), "rsbi": _num(30, 140), "sbt": _pick("passed", "failed, back to AC", "tolerated 30 min"),
    "diet": _pick("clears", "full liquids", "cardiac diet", "pureed diet", "sips of water", "regular diet"),
    "procedure": _pick("CABG x3", "MVR", "cath", "PTCA/stent", "ex lap", "AVR", "EGD", "bronch", "craniotomy", "thoracotomy"),
    "tube_feed": _pick("promote", "jevity", "impact", "nepro", "replete"), "rate_cc": _num(10, 80),
    "tube": _pick("OGT", "NGT", "dobhoff", "PEG", "J tube"), "resid": _num(0, 150),
    "drainage": _pick("bilious", "coffee grounds", "scant", "green", "clear"),
    "stool": _pick("loose brown", "soft formed", "guaiac +", "melena", "liquid, FMS placed"),
    "antiemetic": _pick("zofran", "reglan", "compazine"), "swallow": _pick("pending", "passed", "failed"),
    "lft": _pick("elevated", "trending down", "wnl"), "amyl": _num(40, 900),
    "ostomy": _pick("pink, functioning", "with gas", "bag changed"),
    "urine": _pick("clear yellow", "amber", "cloudy", "pink tinged", "concentrated", "CYU"),
    "uo_range": _rng_range(15, 80, (10, 60)), "lasix": _pick("20mg", "40mg", "80mg", "100mg"), "bun": _num(8, 95),
    "cr": _dec(0.6, 5.5), "io_in": _num(400, 3500), "io_out": _num(300, 4000),
    "net": lambda r: f"{r.choice(('+', '-', 'neg '))}{r.randint(100, 2500)}", "cvvh": _pick("no problems", "filter changed", "removing 100cc/hr"),
    "hd": _pick("2L", "3kg", "1.5L"), "uo": _num(100, 900), "scan": _num(50, 800),
    "temp": _dec(97.0, 103.0), "wbc": _dec(3.0, 28.0), "abx": _pick("vanco", "zosyn", "levaquin", "flagyl", "cefepime", "ceftriaxone",
                                                                    "ampicillin", "unasyn", "meropenem", "bactrim"),
    "abx2": _pick("levo", "flagyl", "gent", "fluconazole", "cipro"), "organism": _pick("MRSA", "VRE", "c-diff", "ESBL"),
    "tylenol": _pick("650mg pr", "650 po", "1gm"), "bs": _num(70, 380), "bs2": _num(120, 420), "insulin": _num(1, 12),
    "prbc": _pick("1", "2", "3"), "plt": _num(20, 450), "inr": _dec(0.9, 4.5), "ptt": _dec(25, 110), "heparin": _num(600, 1800),
    "coumadin": _pick("2.5", "5", "7.5"), "vitk": _pick("5", "10"), "site": _pick("R groin", "L groin", "cath site", "line site", "CT site"),
    "incision": _pick("CDI", "open to air, no drainage", "with steri strips", "slight serous drainage"),
    "coccyx": _pick("reddened, duoderm on", "intact", "stage II, cleaned"), "stage": _pick("I", "II", "III"),
    "wound_care": _pick("allevyn applied", "dsg changed", "wet to dry"), "body": _pick("groin", "back", "chest", "upper arms"),
    "line": _pick("TLC", "PICC", "a-line", "R IJ", "L subclavian", "PA line", "PIV", "cordis", "introducer"),
    "side_site": _pick("R IJ", "L SC", "R fem", "L radial", "R brachial", "RIJ", "LSC", "R groin"),
    "pcwp": _num(8, 28), "suction": _pick("20", "-20"), "ct": _pick("draining small amt", "to water seal", "x2 to sx"),
    "pain": _num(0, 10), "analgesic": _pick("morphine", "dilaudid", "fentanyl", "percocet", "tylenol", "MSO4"),
    "relations": _pick("son", "daughter", "sister", "brother"), "feet": _num(20, 300), "jp": _num(5, 150), "relation": _pick("wife", "husband", "son", "daughter", "dtr", "sister", "brother", "mother", "niece",
                                               "friend", "family"),
    "relation2": _pick("son", "daughter", "grandson", "sister-in-law", "pastor"),
    "vessel": _pick("LAD", "RCA", "LCX", "OM1", "diag"), "ef": _num(15, 65),
    "event": lambda r: r.choice(EVENTS), "pmh": lambda r: r.choice(PMH_ITEMS), "pmh2": lambda r: r.choice(PMH_ITEMS),
    "pmh3": lambda r: r.choice(PMH_ITEMS), "complaint": _pick("I can't breathe", "my back hurts", "when can I eat", "I want to go home"), "abg5": _abg5, "bp_range": _bp_range, "murmur": _pick("1", "2", "3", "4"),
    "sbp2": _num(95, 160), "frac": _pick("1/2", "1/4", "1/3"), "mode": _pick("AC", "A/C", "SIMV", "IMV", "CMV"),
    "vent_num": _pick("10", "12", "14", "16", "18"), "vent_vt": _pick("400", "450", "500", "550", "600", "700"),
    "peep_n": _pick("5", "8", "10", "12"), "ps": _pick("5", "8", "10", "12", "15"), "wt": _dec(45, 130), **_DOSE,
}


def _icu_value(name: str, rng: random.Random) -> str:
    """The text of the non-PHI placeholder ``{name}`` (``KeyError`` for an unknown name)."""
    return _VALUES[name](rng)


# --------------------------------------------------------------------------- PHI slots
def _md(ctx: NoteContext) -> None:
    """A date before an event: month/day as nurses write it, or (probability h) the site's own date format."""
    d = ctx.date - _dt.timedelta(days=ctx.rng.randint(0, 12))
    if ctx.rng.random() < ctx.style.heterogeneity:
        ctx.dphi(d, ctx.date_fmt)
        return
    ctx.builder.add_phi(f"{d.month}/{d.day}" if ctx.rng.random() < 0.9 else f"{d.month}/{d.day}/{d.year % 100:02d}", "DATE")


def _yy(ctx: NoteContext) -> None:
    y = ctx.date.year - ctx.rng.randint(1, 20)
    ctx.builder.add_phi(f"{y % 100:02d}" if ctx.rng.random() < 0.7 else str(y), "DATE")


#: chance that a system's line holds a PHI phrase (x3 for the social line, x2 in event notes);
#: with the openings, sign-offs and pagers this gives about 9 % of sentences with PHI
#: (the nursing notes: 4.3 %; the rest of the corpus: 44 %)
PHI_RATE = 0.04

#: share of care-provider and ward names drawn from the wide name pool (:func:`wide_names`)
WIDE_NAME_SHARE = 0.6


def _surname(ctx: NoteContext) -> str:
    """A care provider's surname: the wide pool (:data:`WIDE_NAME_SHARE`), else the patient's doctors."""
    if ctx.lang == "en" and ctx.rng.random() < WIDE_NAME_SHARE:
        return ctx.choice(wide_names("last"))
    d = ctx.choice(ctx.used_doctors) if ctx.rng.random() < 0.6 else ctx.choice(ctx.pools.doctors)
    return d.last


def _first(ctx: NoteContext) -> str:
    if ctx.lang == "en" and ctx.rng.random() < WIDE_NAME_SHARE:
        return ctx.choice(wide_names("first"))
    return ctx.choice(ctx.pools.doctors).first


def _drl(ctx: NoteContext) -> None:
    ctx.builder.add_phi(_surname(ctx), "DOCTOR")


def _drt(ctx: NoteContext) -> None:
    """A doctor as nurses write one: ``dr``/``Dr.``/``DR`` + surname (the title is not PHI)."""
    ctx.builder.add_text(ctx.choice(("dr ", "Dr. ", "Dr ", "DR ", "DR. ", "Dr.", "dr. ")))
    _drl(ctx)


def _ini(ctx: NoteContext) -> None:
    """A care provider as nurses sign and cite one: an initial and a surname ("M. Zarnowsky"), all PHI;
    with probability h in the site's own doctor-name forms."""
    if ctx.rng.random() < ctx.style.heterogeneity:
        ctx.doctor()
        return
    first, last = _first(ctx), _surname(ctx)
    ctx.builder.add_phi(f"{first[0]}. {last}" if ctx.rng.random() < 0.8 else f"{first[0]}.{last}", "DOCTOR")


def _npf(ctx: NoteContext) -> None:
    if ctx.rng.random() < 0.75:
        ctx.builder.add_phi(_first(ctx), "DOCTOR")
    else:
        ctx.builder.add_phi(f"{_first(ctx)} {_surname(ctx)}", "DOCTOR")


def _relf(ctx: NoteContext) -> None:
    ctx.builder.add_phi(ctx.patient.relative_first, "PATIENT")


def _ptl(ctx: NoteContext) -> None:
    """The patient's surname, or (probability h) the patient's name in the site's own name forms."""
    p = ctx.patient
    if ctx.rng.random() < ctx.style.heterogeneity:
        ctx.name(p.first, p.last, p.middle, ctx.style.patient_name_forms, "PATIENT", p.sex, ctx.style.title_rate)
        return
    ctx.builder.add_phi(p.last, "PATIENT")


def _ptf(ctx: NoteContext) -> None:
    ctx.builder.add_phi(ctx.patient.first, "PATIENT")


def _rell(ctx: NoteContext) -> None:
    ctx.builder.add_phi(ctx.patient.relative_last, "PATIENT")


def _short_hospital(name: str, rng: random.Random) -> str:
    words = [w for w in name.replace(".", "").split() if w[:1].isalpha()]
    core = [w for w in words if w.lower() not in ("hospital", "medical", "center", "community", "general", "memorial",
                                                  "university", "st", "regional", "the")]
    roll = rng.random()
    if roll < 0.35 and core:
        return core[0]
    if roll < 0.6:
        return "".join(w[0] for w in words[:3]).upper()
    if roll < 0.8 and core:
        return f"{core[0]} {rng.choice(('Hosp', 'hosp', 'Hospital', 'Medical', 'General', 'Memorial'))}"
    return name


def _hosps(ctx: NoteContext) -> None:
    name = ctx.pools.home_hospital if ctx.rng.random() < 0.3 else ctx.choice(ctx.pools.hospitals[1:])
    # the site's own habit (probability h / 2): the full name, with the site's hospital-name suffix
    ctx.builder.add_phi(name if ctx.rng.random() < ctx.style.heterogeneity / 2 else _short_hospital(name, ctx.rng), "HOSPITAL")


def _ward(ctx: NoteContext) -> None:
    """A ward named after a building: "<surname> 4" (the surname is the PHI; the number follows)."""
    name = ctx.choice(wide_names("last")) if ctx.rng.random() < 0.5 else ctx.choice(ctx.pools.last[:12])
    ctx.builder.add_phi(name, "HOSPITAL")
    ctx.builder.add_text(f" {ctx.rng.randint(1, 12)}{ctx.choice(UNIT_WORDS)}")


def _city(ctx: NoteContext) -> None:
    ctx.builder.add_phi(ctx.patient.city if ctx.rng.random() < 0.7 else ctx.choice(ctx.pools.cities), "CITY")


def _phone(ctx: NoteContext) -> None:
    ctx.builder.add_phi(ctx.patient.phone, "PHONE")


def _pager(ctx: NoteContext) -> None:
    """A five-digit hospital pager number (en); other locales write a provider's phone number."""
    if ctx.lang == "en":
        ctx.builder.add_phi(str(ctx.rng.randint(10000, 99999)), "PHONE")
    else:
        ctx.builder.add_phi(ctx.choice(ctx.used_doctors).phone, "PHONE")


def _age(ctx: NoteContext) -> None:
    ctx.builder.add_phi(str(ctx.age), "AGE")


def _sex(ctx: NoteContext) -> None:
    m = ctx.patient.sex == "M"
    ctx.builder.add_text(ctx.choice(("M", "male", "man", "m")) if m else ctx.choice(("F", "female", "woman", "f")))


_PHI_SLOTS: dict[str, Callable[[NoteContext], None]] = {
    "MD": _md, "YY": _yy, "DRL": _drl, "DRT": _drt, "INI": _ini, "NPF": _npf, "RELF": _relf, "RELL": _rell,
    "PTL": _ptl, "PTF": _ptf, "HOSPS": _hosps,
    "WARD": _ward, "CITY": _city, "PHONE": _phone, "PAGER": _pager, "AGE": _age, "sex": _sex,
}


@functools.cache
def _parts(template: str) -> tuple[str, ...]:
    """``template`` split into literal text (even indices) and placeholder names (odd), once per template."""
    return tuple(_PIECE.split(template.replace("dr {DRL}", "{DRT}")))


def _write(ctx: NoteContext, template: str, misspell: float) -> None:
    """Write ``template``: PHI slots through :data:`_PHI_SLOTS`, values through :data:`_VALUES`,
    literal words misspelled at rate ``misspell`` (per template)."""
    parts = _parts(template)
    b = ctx.builder
    bad = ctx.rng.random() < misspell
    for i, part in enumerate(parts):
        if i % 2:
            fn = _PHI_SLOTS.get(part)
            if fn is not None:
                fn(ctx)
            else:
                b.add_text(_VALUES[part](ctx.rng))
        elif part:
            if bad:
                words = part.split(" ")
                long = [j for j, w in enumerate(words) if len(w) >= 5 and w.isalpha()]
                if long:
                    j = ctx.choice(long)
                    words[j] = _misspell(words[j], ctx.rng)
                    part = " ".join(words)
                    bad = False
            b.add_text(part)


def _items(ctx: NoteContext, system: str, k: int, phi_rate: float) -> list[str]:
    phr = SYSTEM_PHRASES[system]
    out = ctx.rng.sample(phr, min(k, len(phr)))
    if ctx.rng.random() < phi_rate:
        phi = PHI_PHRASES[system]
        out[ctx.rng.randrange(len(out))] = phi[ctx.rng.randrange(len(phi))]
    return out


def _joiner(ctx: NoteContext) -> str:
    return ctx.choice((". ", ". ", ", ", ". ", " . ", "; ", ", ", ".  "))


def _systems_layout(ctx: NoteContext, phi_rate: float, misspell: float) -> None:
    rng, b = ctx.rng, ctx.builder
    if rng.random() < ctx.style.heterogeneity:
        sep = ctx.choice(_SITE_SEPS.get(ctx.header_style, (": ",)))
    else:
        sep = ctx.choice((": ", ": ", ":", "- ", "= ", " -- ", " "))
    blank = ctx.choice(("\n", "\n \n", "\n\n", " \n \n"))
    chosen = [s for s in SYSTEMS if rng.random() < (0.85 if s in ("neuro", "cv", "resp") else 0.45)]
    if not chosen:
        chosen = ["cv"]
    for s in chosen:
        b.add_text(ctx.choice(SYSTEM_HEADERS[s]) + sep)
        items = _items(ctx, s, rng.randint(1, 6), phi_rate * (3.0 if s == "social" else 1.0))
        j = _joiner(ctx)
        for i, it in enumerate(items):
            if i:
                b.add_text(j if rng.random() < 0.85 else "\n ")
            _write(ctx, it, misspell)
        b.add_text(ctx.choice((". ", ".", "", " ")) + blank)
    _assessment_plan(ctx, misspell, blank, phi_rate)


def _assessment_plan(ctx: NoteContext, misspell: float, blank: str, phi_rate: float) -> None:
    rng, b = ctx.rng, ctx.builder
    if rng.random() < 0.65:
        b.add_text(ctx.choice(("A: ", "A:", "ASSESSMENT: ", "A/ ", "Assess: ")))
        for i in range(rng.randint(1, 2)):
            if i:
                b.add_text(", ")
            _write(ctx, ctx.choice(ASSESSMENT), misspell)
        b.add_text(ctx.choice((". ", ".", " ")) + blank)
    if rng.random() < 0.75:
        b.add_text(ctx.choice(("P: ", "P:", "PLAN: ", "Plan: ", "plan- ")))
        for i in range(rng.randint(1, 4)):
            if i:
                b.add_text(ctx.choice((", ", ". ", "; ")))
            _write(ctx, ctx.choice(PLAN_PHI if rng.random() < phi_rate else PLAN), misspell)
        b.add_text(ctx.choice((".", ". ", "")) + "\n")


def _soap_layout(ctx: NoteContext, phi_rate: float, misspell: float) -> None:
    rng, b = ctx.rng, ctx.builder
    b.add_text(ctx.choice(("O: ", "D: ", "S/O: ", "")))
    systems = rng.sample(SYSTEMS, rng.randint(3, 7))
    for i, s in enumerate(systems):
        if i:
            b.add_text(ctx.choice(("; ", "; ", ". ", ", ")))
        if rng.random() < 0.4:
            b.add_text(ctx.choice(SYSTEM_HEADERS[s]) + ctx.choice((" ", "- ", ": ")))
        items = _items(ctx, s, rng.randint(1, 3), phi_rate)
        for j, it in enumerate(items):
            if j:
                b.add_text(ctx.choice(("; ", ", ")))
            _write(ctx, it, misspell)
    b.add_text(". ")
    _assessment_plan(ctx, misspell, " ", phi_rate)


def _event_layout(ctx: NoteContext, phi_rate: float, misspell: float) -> None:
    rng, b = ctx.rng, ctx.builder
    b.add_text(ctx.choice(("Addendum: ", "ADDENDUM ", "", "Note: ", "")))
    if rng.random() < 0.5:
        b.add_text(_time(rng) + ctx.choice((": ", " ", "- ")))
    for i in range(rng.randint(1, 4)):
        if i:
            b.add_text(_joiner(ctx))
        s = ctx.choice(SYSTEMS)
        _write(ctx, _items(ctx, s, 1, phi_rate * 2)[0], misspell)
    b.add_text(".\n")


def render_icu_nursing(ctx: NoteContext) -> None:
    """Write one ICU nursing note into ``ctx.builder`` (see the module docstring)."""
    rng, b = ctx.rng, ctx.builder
    phi_rate = PHI_RATE * ctx.style.extra.get("icu_phi", 1.0)
    misspell = min(0.5, 0.06 + ctx.style.misspell_rate * 3)
    if rng.random() < 0.25:
        b.add_text(ctx.choice(TITLES) + ctx.choice((":", "", " -")))
        if rng.random() < 0.3:
            b.add_text(" ")
            _md(ctx)
        b.add_text(ctx.choice(("\n", " \n", "\n\n")))
    if rng.random() < 0.3:
        _write(ctx, ctx.choice(OPENINGS), misspell)
        b.add_text(ctx.choice((" \n", "\n", " ", "\n \n")))
    roll = rng.random()
    if roll < 0.72:
        _systems_layout(ctx, phi_rate, misspell)
    elif roll < 0.87:
        _soap_layout(ctx, phi_rate, misspell)
    else:
        _event_layout(ctx, phi_rate, misspell)
    if rng.random() < 0.03:
        b.add_text(ctx.choice(("pager ", "PG ", "beeper # ", "call ")))
        _pager(ctx)
        b.add_text("\n")
    if rng.random() < 0.06:
        _ini(ctx)
        b.add_text(ctx.choice((" RN", ", RN", " RRT", " R.N.", "")) + "\n")
