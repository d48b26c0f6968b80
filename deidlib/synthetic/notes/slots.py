"""Template slots: one function per ``{SLOT}`` name (:data:`SLOTS`) and template rendering.

PHI slots (upper case) write one PHI span each (``ADDR`` writes four); content slots
(lower case) write plain text. A name that is not in :data:`SLOTS` is a pronoun
(``{He}``, ``{his}``) taken from the patient's sex.
"""

from __future__ import annotations

import datetime as _dt
import random

from ..phi_forms import format_age, site_id, site_phone
from ..vocab import COMMON_MEDS, EPONYM_DISEASES, LABS, NURSING_OBS, PRIMARY_SITES
from .context import NoteContext
from .templates import DISPO, HOLIDAYS_EN, HOLIDAYS_FR

__all__ = []


#: (template list id, site style) -> the templates that site uses
_SITE_TEMPLATES: dict = {}


def render_template(ctx: NoteContext, template) -> None:
    """Write one compiled template: text pieces as they are, ``{SLOT}`` pieces through
    :data:`SLOTS`, pronoun slots (``{He}``, ``{his}``) from the patient's sex."""
    pieces = template[1] if ctx.abbr else template[0]
    builder = ctx.builder
    for is_slot, s in pieces:
        if is_slot:
            fn = SLOTS.get(s)
            if fn is None:
                builder.add_text(ctx.pronouns[s])
            else:
                fn(ctx)
        else:
            builder.add_text(s)


def site_templates(ctx: NoteContext, templates: list) -> list:
    """The share ``1 - h/2`` of ``templates`` this site uses (fixed per site style and heterogeneity
    ``h``): at ``h = 0`` every site uses every phrasing, at ``h = 1`` each its own half."""
    h = ctx.style.heterogeneity
    key = (id(templates), ctx.style.name, h)
    subset = _SITE_TEMPLATES.get(key)
    if subset is None:
        site_rng = random.Random(f"{ctx.style.name}/{len(templates)}/{templates[0][0]!r}")
        share = 1.0 - h / 2
        subset = site_rng.sample(templates, max(1, round(len(templates) * share))) if len(templates) > 3 else list(templates)
        _SITE_TEMPLATES[key] = subset
    return subset


def render_many(ctx: NoteContext, templates, k: int, sep: str = " ") -> None:
    """``k`` distinct templates of the site's subset, separated by ``sep``."""
    templates = site_templates(ctx, templates)
    for i, template in enumerate(ctx.rng.sample(templates, min(k, len(templates)))):
        if i:
            ctx.builder.add_text(sep)
        render_template(ctx, template)


def _pt(ctx: NoteContext) -> None:
    patient = ctx.patient
    ctx.name(patient.first, patient.last, patient.middle, ctx.style.patient_name_forms, "PATIENT", patient.sex, ctx.style.title_rate)


def _ptfull(ctx: NoteContext) -> None:
    patient = ctx.patient
    ctx.name(patient.first, patient.last, patient.middle, {"last_comma_first": 3, "first_last": 2, "first_mi_last": 1}, "PATIENT")


def _ptlast(ctx: NoteContext) -> None:
    ctx.builder.add_phi(ctx.patient.last, "PATIENT")


def _rel(ctx: NoteContext) -> None:
    patient = ctx.patient
    if ctx.rng.random() < 0.6:
        ctx.builder.add_phi(patient.relative_first, "PATIENT")
    else:
        ctx.builder.add_phi(f"{patient.relative_first} {patient.relative_last}", "PATIENT")


def _agea(ctx: NoteContext) -> None:
    s, suf = format_age(ctx.age, ctx.rng, ctx.lang, ctx.patient.sex, kind="attr")
    ctx.builder.add_phi(s, "AGE")
    ctx.builder.add_text(suf)


def _a_agea(ctx: NoteContext) -> None:
    """Article + attributive age: "a 78-year-old", "an 81 y/o", "an eighty-year-old"."""
    s, suf = format_age(ctx.age, ctx.rng, ctx.lang, ctx.patient.sex, kind="attr")
    an = s.startswith("8") or s in ("11", "18") or s.lower().startswith(("eight", "eleven"))
    ctx.builder.add_text("an " if an and ctx.lang == "en" else "a ")
    ctx.builder.add_phi(s, "AGE")
    ctx.builder.add_text(suf)


def _agedec(ctx: NoteContext) -> None:
    """A decade ("50s", "fifties"), earlier than the current age: AGE in i2b2."""
    dec = max(2, min(9, (ctx.age - ctx.rng.randint(0, 25)) // 10))
    ctx.builder.add_phi(ctx.choice((f"{dec}0s", f"{dec}0s", f"{dec}0's", _TENS_WORDS[dec] + "ies")), "AGE")


_TENS_WORDS = ["", "", "twent", "thirt", "fort", "fift", "sixt", "sevent", "eight", "ninet"]


def _agen(ctx: NoteContext) -> None:
    age = ctx.age if ctx.rng.random() < 0.5 else ctx.rng.randint(45, 96)
    s, suf = format_age(age, ctx.rng, ctx.lang, ctx.patient.sex, kind="bare")
    ctx.builder.add_phi(s, "AGE")
    ctx.builder.add_text(suf)




def _past(ctx: NoteContext, lo: int, hi: int) -> _dt.date:
    return ctx.date - _dt.timedelta(days=ctx.rng.randint(lo, hi))


def _pastdate(ctx):
    ctx.dphi(_past(ctx, 10, 900))


def _pastshort(ctx):
    ctx.dphi(_past(ctx, 1, 20), ctx.choice(("md", "mon_d", ctx.short_fmt, ctx.date_fmt)))


def _pastmy(ctx):
    ctx.dphi(_past(ctx, 60, 2000), ctx.choice(("month_y", "month_y", "mon_y_short", "year")))


def _pastyear(ctx):
    ctx.dphi(_past(ctx, 365, 9000), ctx.choice(("year", "year", "yy_apos", "month_y")))


def _futdate(ctx):
    ctx.dphi(ctx.date + _dt.timedelta(days=ctx.rng.randint(5, 60)))


def _date_in(ctx):
    ctx.dphi(ctx.adm + _dt.timedelta(days=ctx.rng.randint(0, ctx.los)),
           ctx.choice((ctx.date_fmt, ctx.date_fmt, "md", "mon_d")))


def _weekday(ctx):
    ctx.dphi(_past(ctx, 1, 6), "weekday")


def _holiday(ctx):
    ctx.builder.add_phi(ctx.choice(HOLIDAYS_FR if ctx.lang == "fr" else HOLIDAYS_EN), "DATE")


def _doctor(ctx):
    if ctx.rng.random() < ctx.style.title_rate * 0.5:
        d = ctx.choice(ctx.used_doctors)
        glue = ctx.rng.random() < ctx.style.glue_rate
        ctx.builder.add_text("Dr." if glue else "Dr. ")
        ctx.builder.add_phi(d.last if ctx.rng.random() < 0.7 else f"{d.first} {d.last}", "DOCTOR")
    else:
        ctx.doctor()


def _rn(ctx):
    """A nurse (i2b2 tags every care provider as DOCTOR), never with a "Dr." title."""
    d = ctx.choice(ctx.pools.doctors)
    ctx.name(d.first, d.last, d.middle, {"first_last": 2, "first": 2, "first_initial_last": 1}, "DOCTOR", d.sex)


def _pcp(ctx):
    d = ctx.patient.pcp
    ctx.name(d.first, d.last, d.middle, ctx.style.doctor_name_forms, "DOCTOR", d.sex)


def _patient_field(attr: str, subtype: str):
    """A slot that writes the patient's ``attr`` as one PHI span of ``subtype``."""

    def slot(ctx: NoteContext) -> None:
        ctx.builder.add_phi(getattr(ctx.patient, attr), subtype)

    return slot


def _pool_choice(attr: str, subtype: str):
    """A slot that writes one item of the site pool ``attr`` as one PHI span of ``subtype``."""

    def slot(ctx: NoteContext) -> None:
        ctx.builder.add_phi(ctx.choice(getattr(ctx.pools, attr)), subtype)

    return slot


def _hosp(ctx):
    ctx.builder.add_phi(ctx.pools.home_hospital, "HOSPITAL")


def _ohosp(ctx):
    ctx.builder.add_phi(ctx.choice(ctx.pools.hospitals[1:]), "HOSPITAL")


def _room(ctx):
    rng = ctx.rng
    ctx.builder.add_phi(ctx.choice((f"{rng.randint(2, 9)}{rng.randint(0, 40):02d}", f"{rng.randint(1, 9)}{rng.randint(0, 40):02d}-{ctx.choice('AB')}",
                    f"{rng.randint(100, 899)}", f"{rng.randint(2, 9)}{ctx.choice(('W', 'E', 'N'))}-{rng.randint(1, 30)}")), "ROOM")


def _addr(ctx):
    patient = ctx.patient
    builder = ctx.builder
    builder.add_phi(patient.street, "STREET")
    builder.add_text(", ")
    builder.add_phi(patient.city, "CITY")
    builder.add_text(", ")
    builder.add_phi(patient.state, "STATE")
    builder.add_text(" ")
    builder.add_phi(patient.zip, "ZIP")


def _email(ctx):
    ctx.builder.add_phi(ctx.patient.email, "EMAIL")


def _url(ctx):
    rng = ctx.rng
    dom = ctx.choice(ctx.pools.domains)
    ctx.builder.add_phi(ctx.choice((f"https://portal.{dom}/patient/{rng.randint(10000, 99999)}", f"www.{dom}",
                    f"http://{dom}/mychart", f"https://{dom}/education/{ctx.choice(('chf', 'diabetes', 'copd'))}")), "URL")


def _ip(ctx):
    rng = ctx.rng
    ctx.builder.add_phi(ctx.choice((f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
                    f"192.168.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
                    f"{rng.randint(11, 223)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}")), "IPADDR")


def _fax(ctx):
    ctx.builder.add_phi(site_phone(ctx.style, ctx.rng, ctx.lang), "FAX")


def _drphone(ctx):
    ctx.builder.add_phi(ctx.choice(ctx.used_doctors).phone, "PHONE")


def _dremail(ctx):
    ctx.builder.add_phi(ctx.choice(ctx.used_doctors).email, "EMAIL")


def _druser(ctx):
    ctx.builder.add_phi(ctx.choice(ctx.used_doctors).username, "USERNAME")


def _idnum(ctx):
    ctx.builder.add_phi(site_id(ctx.style, "IDNUM", ctx.rng), "IDNUM")


def _prof(ctx):
    ctx.builder.add_phi(ctx.patient.profession, "PROFESSION")


def _prof_plain(ctx):
    # the patient's job as an attributive noun ("a 54-year-old teacher"): still PROFESSION PHI
    ctx.builder.add_phi(ctx.patient.profession, "PROFESSION")


def _insurer(ctx):
    ctx.builder.add_phi(ctx.patient.insurer, "ORGANIZATION")


# non-PHI content -----------------------------------------------------------
def _sexw(ctx):
    ctx.builder.add_text(ctx.choice(("man", "male", "gentleman", "M")) if ctx.patient.sex == "M" else ctx.choice(("woman", "female", "lady", "F")))


def _cc(ctx):
    ctx.builder.add_text(ctx.vocab(ctx.choice(ctx.dx["complaint"])))


def _dxprob(ctx):
    if ctx.patient.primary_site and ctx.rng.random() < 0.6:
        ctx.builder.add_text(f"{ctx.patient.histology} of the {PRIMARY_SITES[ctx.patient.primary_site]['organ'][0]}")
    else:
        ctx.builder.add_text(ctx.vocab(ctx.choice(ctx.dx["problem"])))


def _comorb(ctx):
    if ctx.patient.comorbid and ctx.rng.random() < 0.7:
        ctx.builder.add_text(ctx.vocab(ctx.choice(ctx.patient.comorbid)))
    else:
        ctx.builder.add_text(ctx.choice(("hypertension", "hyperlipidemia", "obesity", "hypothyroidism", "GERD", "anxiety",
                        "osteoporosis", "atrial fibrillation", "BPH", "gout")))


def _med_tuple(ctx):
    if ctx.rng.random() < 0.6:
        return ctx.choice(ctx.dx["meds"])
    return ctx.choice(COMMON_MEDS)


def _medline(ctx):
    name, doses, route, freqs = _med_tuple(ctx)
    ctx.builder.add_text(f"{ctx.vocab(name)} {ctx.choice(doses)} {route} {ctx.choice(freqs)}")


def _medname(ctx):
    ctx.builder.add_text(_med_tuple(ctx)[0])


def _finding(ctx):
    ctx.builder.add_text(ctx.vocab(ctx.choice(ctx.dx["finding"])))


def _proc(ctx):
    ctx.builder.add_text(ctx.choice(ctx.dx["procedure"]))


def _result_c(ctx):
    ctx.builder.add_text(ctx.choice(ctx.dx["result"]))


def _plan_c(ctx):
    ctx.builder.add_text(ctx.choice(ctx.dx["plan"]))


def _eponym(ctx):
    ctx.builder.add_text(ctx.choice(EPONYM_DISEASES))


def _eponym_proc(ctx):
    ctx.builder.add_text(ctx.choice(("Whipple procedure", "Nissen fundoplication", "Hartmann's procedure")))


def _labval(ctx):
    name = ctx.choice(ctx.dx["labs"]) if ctx.rng.random() < 0.6 else ctx.choice(tuple(LABS))
    ctx.builder.add_text(f"{name} {lab_value(ctx.rng, name)}")


def lab_value(rng, name) -> str:
    """A random value of lab ``name`` in its range, with its unit (vocab.LABS)."""
    lo, hi, dec, unit = LABS[name]
    v = rng.uniform(lo, hi)
    return (f"{v:.{dec}f}" if dec else str(int(round(v)))) + unit


def _vit(ctx):
    rng = ctx.rng
    ctx.builder.add_text(ctx.choice((
        f"T {rng.uniform(97.0, 102.5):.1f} HR {rng.randint(58, 128)} BP {rng.randint(92, 178)}/{rng.randint(48, 102)} "
        f"RR {rng.randint(12, 30)} SpO2 {rng.randint(86, 100)}% on {ctx.choice(('RA', '2L NC', '4L NC', 'NRB'))}",
        f"BP {rng.randint(92, 178)}/{rng.randint(48, 102)}, HR {rng.randint(58, 128)}, RR {rng.randint(12, 30)}, "
        f"sat {rng.randint(86, 100)}%",
        f"{rng.uniform(36.2, 39.4):.1f}C {rng.randint(58, 128)} {rng.randint(92, 178)}/{rng.randint(48, 102)} "
        f"{rng.randint(12, 30)} {rng.randint(86, 100)}%RA",
    )))


def _obs(ctx):
    ctx.builder.add_text(ctx.vocab(ctx.choice(NURSING_OBS)))


def _glu(ctx):
    ctx.builder.add_text(str(ctx.rng.randint(70, 380)))


def _small_count(ctx):
    ctx.builder.add_text(str(ctx.rng.randint(2, 7)))


def _relation(ctx):
    ctx.builder.add_text(ctx.patient.relation)


def _dispo_plain(ctx):
    ctx.builder.add_text(ctx.choice(DISPO))


def _findingx(ctx):
    ctx.builder.add_text(ctx.choice(ctx.dx["finding"]))


SLOTS = {
    "PT": _pt, "PTFULL": _ptfull, "PTLAST": _ptlast, "REL": _rel, "AGEA": _agea, "aAGEA": _a_agea, "AGEDEC": _agedec, "AGEN": _agen,
    "PASTDATE": _pastdate, "PASTSHORT": _pastshort, "PASTMY": _pastmy, "PASTYEAR": _pastyear,
    "FUTDATE": _futdate, "DATE_IN": _date_in, "WEEKDAY": _weekday, "HOLIDAY": _holiday,
    "DR": _doctor, "RN": _rn, "PCP": _pcp, "HOSP": _hosp, "OHOSP": _ohosp, "DEPT": _pool_choice("departments", "DEPARTMENT"),
    "ROOM": _room, "STREET": _patient_field("street", "STREET"), "CITY": _patient_field("city", "CITY"), "STATE": _patient_field("state", "STATE"),
    "ZIP": _patient_field("zip", "ZIP"), "COUNTRY": _pool_choice("countries", "COUNTRY"), "ORIGIN": _patient_field("origin_country", "COUNTRY"),
    "LOCOTHER": _pool_choice("landmarks", "LOCATION-OTHER"), "ORG": _patient_field("employer", "ORGANIZATION"),
    "INSURER": _insurer, "PROF": _prof, "prof_plain": _prof_plain, "PHONE": _patient_field("phone", "PHONE"),
    "DRPHONE": _drphone, "FAX": _fax, "EMAIL": _email, "DREMAIL": _dremail, "URL": _url, "IP": _ip,
    "USER": _patient_field("username", "USERNAME"), "DRUSER": _druser, "MRN": _patient_field("mrn", "MEDICALRECORD"),
    "SSN": _patient_field("ssn", "SSN"), "HP": _patient_field("healthplan", "HEALTHPLAN"), "ACCT": _patient_field("account", "ACCOUNT"),
    "LIC": _patient_field("license", "LICENSE"), "VEH": _patient_field("vehicle", "VEHICLE"), "DEV": _patient_field("device", "DEVICE"),
    "BIO": _patient_field("bioid", "BIOID"), "IDNUM": _idnum, "OTHER": _patient_field("other", "OTHER"), "ADDR": _addr,
    "sexw": _sexw, "cc": _cc, "dxprob": _dxprob, "comorb": _comorb, "medline": _medline, "medname": _medname,
    "finding": _finding, "findingx": _findingx, "proc": _proc, "result_c": _result_c, "plan_c": _plan_c,
    "eponym": _eponym, "eponym_proc": _eponym_proc, "labval": _labval, "vit": _vit, "obs": _obs,
    "glu": _glu, "n": _small_count, "relation": _relation, "dispo_plain": _dispo_plain,
}
