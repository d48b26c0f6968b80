"""Note templates and the span-exact text builder.

A note is built by appending pieces to a :class:`Builder`: plain text, or a PHI piece
whose span is recorded at the current offset. Casing (all-caps / all-lowercase sites)
is applied to each piece *before* its offset is taken, so gold spans are exact by
construction (``text[start:end] == span.text``) whatever the site's style.

Sentence templates use ``{SLOT}`` for PHI (upper-case slot names, one span each, or a
few spans for composite slots such as ``ADDR``) and ``{slot}`` for non-PHI content
(vocabulary items, doses, vitals, lab values, eponyms). Each template is compiled once
into a plain and an abbreviated variant (``patient`` -> ``pt``, ``with`` -> ``w/``, ...);
a note uses the abbreviated variant with its site's ``abbrev_rate``.

Four note types: discharge summary, progress note, nursing note, pathology report
(the latter with primary-site / subsite content for the registry study).
"""

from __future__ import annotations

import datetime as _dt
import random
import re

from ..corpus.document import Span
from ..corpus.phi import TYPE_TO_CATEGORY
from .phi_forms import DATE_FORMATS, format_age, format_date, format_name
from .styles import SECTION_NAMES, SECTION_SYNONYMS, SiteStyle
from .vocab import (
    ABBREVIATIONS,
    COMMON_MEDS,
    DIAGNOSES,
    EPONYM_DISEASES,
    LABS,
    NURSING_OBS,
    PRIMARY_SITES,
)

__all__ = ["Builder", "NoteContext", "render_note", "compile_template"]


class Builder:
    """Appends text pieces and records PHI spans at exact offsets."""

    __slots__ = ("parts", "pos", "spans", "case")

    def __init__(self, case: str = "normal") -> None:
        self.parts: list[str] = []
        self.pos = 0
        self.spans: list[Span] = []
        self.case = case

    def _c(self, s: str) -> str:
        if self.case == "upper":
            return s.upper()
        if self.case == "lower":
            return s.lower()
        return s

    def t(self, s: str) -> None:
        if s:
            s = self._c(s)
            self.parts.append(s)
            self.pos += len(s)

    def p(self, s: str, subtype: str) -> None:
        """Append a PHI piece; its span is ``[pos, pos+len)`` of the cased text."""
        s = self._c(s)
        if not s or s != s.strip():
            raise ValueError(f"PHI piece {s!r} ({subtype}) is empty or has outer whitespace")
        self.spans.append(Span(self.pos, self.pos + len(s), TYPE_TO_CATEGORY[subtype], subtype, s))
        self.parts.append(s)
        self.pos += len(s)

    def text(self) -> str:
        return "".join(self.parts)


# ----------------------------------------------------------------------------- templates
_SLOT_RE = re.compile(r"\{(\w+)\}")
_ABBR_RES = [(re.compile(r"\b" + re.escape(k) + r"\b"), v) for k, v in
             sorted(ABBREVIATIONS.items(), key=lambda kv: -len(kv[0]))]


def _abbreviate(s: str) -> str:
    for rx, v in _ABBR_RES:
        s = rx.sub(v, s)
    return s


def compile_template(src: str) -> tuple[tuple, tuple]:
    """``"{PT} is a ..."`` -> (plain pieces, abbreviated pieces); a piece is ``(is_slot, str)``."""
    parts = _SLOT_RE.split(src)
    plain, abbr = [], []
    for i, part in enumerate(parts):
        if i % 2 == 1:
            plain.append((True, part))
            abbr.append((True, part))
        elif part:
            plain.append((False, part))
            abbr.append((False, _abbreviate(part)))
    return tuple(plain), tuple(abbr)


def _T(*srcs: str) -> list[tuple[tuple, tuple]]:
    return [compile_template(s) for s in srcs]


HPI_OPEN = _T(
    "{PT} is {aAGEA} {sexw} with a history of {comorb} who presents with {cc}.",
    "{PT} is {aAGEA} {sexw} with {dxprob} and {comorb} admitted for {cc}.",
    "This is {aAGEA} {sexw} with {comorb} who comes in complaining of {cc}.",
    "Patient is {aAGEA} {sexw}, known to {DR}, presenting with {cc}.",
    "{AGEA} {sexw} with history of {comorb}, here with {cc}.",
    "{PT}, {aAGEA} {prof_plain}, presents to the {DEPT} with {cc}.",
)
HPI_MORE = _T(
    "{He} was in {his} usual state of health until {WEEKDAY} when {he} developed {cc}.",
    "{He} reports {cc} for the past {n} days.",
    "{He} was seen by {DR} at {OHOSP} on {PASTDATE} and started on {medname}.",
    "{He} was transferred from {OHOSP} for further management.",
    "Of note, {he} was admitted in {PASTMY} for {comorb}.",
    "{His} {relation} {REL} brought {him} to the {DEPT}.",
    "In the ED vitals were {vit}. {He} received {medline}.",
    "{He} denies chest pain, fevers or chills.",
    "{He} recently returned from a trip to {COUNTRY}.",
    "Symptoms started after a long walk at {LOCOTHER}.",
    "{He} has a known history of {eponym}, followed by {DR}.",
    "Initial labs were notable for {labval} and {labval}.",
    "{He} was last seen in clinic on {PASTDATE} by {PCP}.",
    "Per {his} {relation}, {he} has been more confused since {WEEKDAY}.",
    "{He} had {findingx} on arrival.",
    "{He} is s/p Whipple procedure and was followed by {DR}.",
    "{He} was first diagnosed with {comorb} in {his} {AGEDEC}.",
    "{He} presented to {OHOSP} in {CITY} on {PASTSHORT} and was transferred here.",
    "EMS found {him} at home; {his} neighbor called 911.",
    "{He} notes {cc} worse with exertion and relieved by rest.",
    "The patient's {relation}, {REL}, provided additional history by phone.",
    "{He} was started on {medline} by {PCP} on {PASTSHORT} without improvement.",
    "Outside records from {OHOSP} were reviewed.",
    "Prior admission {PASTMY} for similar symptoms, treated with {medname}.",
    "{He} took {his} last dose of {medname} on {PASTSHORT}.",
    "Review of systems otherwise negative x10.",
    "Family reports {he} fell at home over {HOLIDAY}.",
)
PMH = _T("{comorb}", "{eponym}", "{dxprob}, dx {PASTYEAR}", "hypertension", "hyperlipidemia",
         "{comorb} (followed at {OHOSP})", "GERD", "osteoarthritis", "{comorb} since {PASTYEAR}", "depression",
         "atrial fibrillation on Coumadin", "BPH", "obesity, BMI 34")
PSH = _T("cholecystectomy ({PASTYEAR})", "s/p appendectomy in {PASTYEAR}", "CABG x3 at {OHOSP} in {PASTYEAR}",
         "total knee replacement {PASTYEAR}", "cataract surgery", "{proc} {PASTMY}", "hernia repair",
         "{eponym_proc} in {PASTYEAR}")
SOCIAL = _T(
    "Lives with {his} {relation} {REL} in {CITY}, {STATE}.",
    "Works as a {PROF} at {ORG}.",
    "Retired {PROF}.",
    "Emigrated from {ORIGIN} in {PASTYEAR}.",
    "Former smoker, 30 pack-years, quit in {PASTYEAR}.",
    "Drinks 2 beers daily, denies illicit drug use.",
    "Never smoker. No alcohol.",
    "Lives alone in an apartment on {STREET}.",
    "{He} is a {OTHER}.",
    "Independent in ADLs, walks with a cane.",
    "Resides at {ORG} assisted living.",
    "Involved in an MVC on {PASTDATE}; vehicle plate {VEH}.",
    "Enjoys trips to {LOCOTHER} with {his} {relation}.",
    "Insurance through {INSURER}, member ID {HP}.",
)
FAMILY = _T(
    "Mother with {comorb}; father died of MI at age {AGEN}.",
    "Noncontributory.",
    "Sister with {eponym}.",
    "Brother with colon cancer diagnosed at {AGEN}.",
    "No family history of {eponym}.",
    "Father with {comorb}, mother alive and well at {AGEN}.",
)
COURSE = _T(
    "# {dxprob}: {He} was treated with {medline} with improvement. {result_c}. {plan_c}.",
    "# {comorb}: home medications were continued.",
    "On hospital day {n}, {he} developed {cc} and was evaluated by {DR} of {DEPT}.",
    "{He} was seen by {DR} ({DEPT}) who recommended {plan_c}.",
    "Case discussed with {DR} on {DATE_IN}.",
    "{He} underwent {proc} on {DATE_IN}, which showed {result_c}.",
    "Patient was transferred to the {DEPT} on {DATE_IN} and returned to the floor the next day.",
    "# {eponym}: stable, no changes to regimen.",
    "{labval} on admission, trended to {labval} by discharge.",
    "{He} was evaluated by PT/OT who recommended {dispo_plain}.",
    "Foley catheter was removed on {WEEKDAY} and {he} voided without difficulty.",
    "Goals of care discussed with {his} {relation} {REL} at the bedside.",
    "A Holter monitor was placed on {DATE_IN} and showed paroxysmal atrial fibrillation.",
    "A Swan-Ganz catheter was placed in the {DEPT} and removed after 48 hours.",
    "{He} remained hemodynamically stable throughout the admission.",
    "Repeat {labval} on {DATE_IN}; {plan_c}.",
    "{His} home {medname} was held on admission and restarted on {WEEKDAY}.",
    "Social work met with {him} and {his} {relation} regarding discharge planning.",
    "By the day of discharge {he} was ambulating independently and tolerating a regular diet.",
    "# {dxprob}: {result_c}. Seen by {DR}; {plan_c}.",
)
PN_SUBJ = _T(
    "No acute events overnight.", "{He} c/o {cc}.", "{He} reports feeling better today.",
    "{He} slept poorly, {cc} overnight.", "Tolerating diet. Ambulating with PT.",
    "Spoke with {his} {relation} {REL} by phone ({PHONE}).", "Denies {cc}.",
    "{He} asked about going home by {WEEKDAY}.", "Pain controlled on {medname}.",
    "Overnight {he} required {medline}.", "Feels weak, appetite poor.", "No complaints this AM.",
    "Per nursing, {he} was agitated overnight and received {medname}.",
)
PN_AP = _T(
    "# {dxprob} - {plan_c}.", "# {dxprob} - continue {medline}.", "# {comorb} - stable, continue home meds.",
    "# {dxprob} - {result_c}; {plan_c}.", "# FEN - regular diet, replete lytes prn.",
    "# PPx - heparin SC, PPI.", "# Code status - full code, confirmed with {REL} ({relation}).",
    "# Dispo - anticipate discharge to {dispo_plain} in {n} days.",
    "# {eponym} - followed by {DR}, no acute issues.",
    "Discussed with {DR}, attending of record.",
    "# {dxprob} - {result_c}. Will discuss with {DR}.", "# {comorb} - hold {medname}, recheck {labval}.",
    "# Access - PIV x2.", "Patient seen and examined with {DR}; agree with plan above.",
)
NURSE = _T(
    "{obs}.", "{obs}.", "{obs}.", "{obs}, {obs}.", "Pt {PTLAST} in room {ROOM}, {obs}.",
    "{relation} {REL} called, updated on plan of care. Contact {PHONE}.",
    "{DR} notified of {labval}, new orders received.", "Meds given as ordered: {medline}.",
    "VS: {vit}.", "{He} was transferred to {ROOM} at 14:30.", "Will continue to monitor.",
    "Pt states {he} wants to go home to {CITY}.", "Safety: bed alarm on, {obs}.",
    "Wound care to sacrum per protocol, Foley catheter care done.", "Chaplain visit requested by {relation} {REL}.",
    "Glucometer device {DEV} used for POC glucose: {glu}.",
    "Report received from night RN {RN}.", "Assisted to bathroom x2, steady gait.",
    "Pt educated on {medname}, verbalized understanding.", "{obs}. Will report to oncoming shift.",
    "BS {glu}, no coverage needed.", "Telemetry: sinus rhythm 70s-80s.",
)
FOLLOWUP = _T(
    "Follow up with {DR} in {DEPT} on {FUTDATE} at 10:30 am.",
    "Follow up with PCP {PCP} in 1-2 weeks; office phone {DRPHONE}.",
    "Call {PHONE} with any questions.",
    "Please fax this summary to {PCP} at {FAX}.",
    "Appointment at {OHOSP} {DEPT} clinic on {FUTDATE}.",
    "Return to ED for worsening {cc}.",
    "Labs (BMP) in 1 week, results to {PCP}.",
)
CONTACT = _T(
    "Patient portal: {URL}",
    "Patient e-mail on file: {EMAIL}",
    "Patient can be reached at {PHONE} or {EMAIL}.",
    "Results faxed to {FAX}.",
    "Note accessed by {DRUSER} from workstation {IP}.",
    "Education material sent via {URL}.",
    "Pager {DRPHONE}; email {DREMAIL}.",
    "Portal username {USER}.",
)
ALLERGIES = ["NKDA", "No known drug allergies", "penicillin (rash)", "sulfa (hives)", "codeine - nausea",
             "iodinated contrast (anaphylaxis)", "latex", "NKDA."]
EXAM_LINES = [
    ("Gen", ["NAD, pleasant", "ill-appearing, diaphoretic", "elderly, in mild distress", "alert, conversant"]),
    ("HEENT", ["PERRL, EOMI, MMM", "anicteric sclerae, dry mucous membranes", "OP clear"]),
    ("CV", ["RRR, no m/r/g", "irregularly irregular", "RRR, 2/6 SEM at RUSB", "tachycardic, regular"]),
    ("Lungs", ["CTAB", "crackles at bases bilaterally", "diffuse wheezes", "decreased BS on the right"]),
    ("Abd", ["soft, NT/ND, +BS", "mildly distended, nontender", "obese, soft, no HSM",
             "RUQ tenderness, Murphy's sign negative", "Murphy's sign positive"]),
    ("Ext", ["no c/c/e", "1+ pitting edema to the knees", "warm, well perfused, 2+ DP pulses"]),
    ("Neuro", ["A&O x3, CN II-XII intact", "strength 5/5 throughout", "A&O x2, 4/5 strength LLE",
               "no focal deficits", "Glasgow Coma Scale 15", "GCS 14, Babinski sign absent bilaterally",
               "Babinski sign upgoing on the right"]),
]
DISPO = ["home", "home with VNA services", "skilled nursing facility", "acute rehab", "home with hospice",
         "long-term acute care"]
HOLIDAYS_EN = ["Christmas", "Thanksgiving", "New Year's Eve", "Easter", "the Fourth of July", "Labor Day"]
HOLIDAYS_FR = ["Noël", "Pâques", "le 14 juillet", "la Toussaint", "le Nouvel An"]


def _misspell(word: str, rng: random.Random) -> str:
    if len(word) < 5:
        return word
    i = rng.randrange(1, len(word) - 2)
    op = rng.randrange(3)
    if op == 0:  # swap
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    if op == 1:  # drop
        return word[:i] + word[i + 1:]
    return word[:i] + word[i] + word[i:]  # double


_SUBSETS: dict = {}


class NoteContext:
    """Everything one note needs: patient, site style and pools, dates, the builder and RNG."""

    def __init__(self, *, rng: random.Random, style: SiteStyle, pools, patient, note_type: str,
                 note_date: _dt.date, record: int, case: str, abbr: bool) -> None:
        self.rng = rng
        self.style = style
        self.pools = pools
        self.pt = patient
        self.note_type = note_type
        self.date = note_date
        self.record = record
        self.lang = pools.lang
        self.abbr = abbr
        self.b = Builder(case)
        fmts = list(style.date_formats)
        self.date_fmt = rng.choices(fmts, weights=[style.date_formats[k] for k in fmts], k=1)[0]
        self.age = _years_between(patient.birth, note_date)
        self.los = rng.randint(1, 9)
        if note_type == "discharge_summary":
            self.adm = note_date - _dt.timedelta(days=self.los)
        else:
            self.adm = note_date - _dt.timedelta(days=rng.randint(0, 3))
        self.dx = DIAGNOSES[patient.diagnosis]
        m = patient.sex == "M"
        self.pron = {"he": "he" if m else "she", "He": "He" if m else "She", "his": "his" if m else "her",
                     "His": "His" if m else "Her", "him": "him" if m else "her"}
        self.misspell = style.misspell_rate
        self.used_doctors = patient.doctors

    # ------------------------------------------------------------------ helpers
    def choice(self, seq):
        return seq[self.rng.randrange(len(seq))]

    def vocab(self, s: str) -> str:
        """A vocabulary item, misspelled now and then at the site's rate."""
        if self.misspell and self.rng.random() < self.misspell * 4:
            words = s.split(" ")
            j = self.rng.randrange(len(words))
            words[j] = _misspell(words[j], self.rng)
            return " ".join(words)
        return s

    def render(self, tpl) -> None:
        pieces = tpl[1] if self.abbr else tpl[0]
        b = self.b
        for is_slot, s in pieces:
            if is_slot:
                fn = _SLOTS.get(s)
                if fn is None:
                    b.t(self.pron[s])
                else:
                    fn(self)
            else:
                b.t(s)

    def site_tpls(self, tpls: list) -> list:
        """The ~75% of ``tpls`` this site uses (fixed per site style): sites phrase things differently."""
        key = (id(tpls), self.style.name)
        sub = _SUBSETS.get(key)
        if sub is None:
            r = random.Random(f"{self.style.name}/{len(tpls)}/{tpls[0][0]!r}")
            sub = r.sample(tpls, max(1, round(len(tpls) * 0.75))) if len(tpls) > 3 else list(tpls)
            _SUBSETS[key] = sub
        return sub

    def render_many(self, tpls, k: int, sep: str = " ") -> None:
        tpls = self.site_tpls(tpls)
        for i, tpl in enumerate(self.rng.sample(tpls, min(k, len(tpls)))):
            if i:
                self.b.t(sep)
            self.render(tpl)

    def header(self, key: str, inline: bool | None = None) -> None:
        """A section header in the site's decoration; ends with a newline or a space (inline)."""
        full, short = SECTION_NAMES[key]
        syn = SECTION_SYNONYMS.get(key)
        if syn is not None and self.rng.random() < 0.85:
            full = syn[self.style.section_variant % len(syn)]
        h = self.style.header
        b = self.b
        if h == "caps_colon":
            b.t(f"{full.upper()}:\n")
        elif h == "title_colon":
            b.t(f"{full}: ")
        elif h == "abbr":
            b.t(f"{short if self.abbr or self.rng.random() < 0.6 else full}: ")
        elif h == "stars":
            b.t(f"*** {full.upper()} ***\n")
        else:
            b.t(f"[{full.lower()}]\n")

    def kv(self, key: str) -> None:
        self.b.t(key + self.style.kv_sep)

    def date_str(self, d: _dt.date, fmt: str | None = None) -> str:
        if fmt is None:
            fmt = self.date_fmt if self.rng.random() < 0.8 else self.choice(DATE_FORMATS)
        return format_date(d, fmt, self.lang)

    def dphi(self, d: _dt.date, fmt: str | None = None) -> None:
        self.b.p(self.date_str(d, fmt), "DATE")

    def time(self) -> str:
        return f"{self.rng.randint(0, 23):02d}:{self.rng.choice(('00', '15', '30', '45', '05', '50'))}"

    # names ---------------------------------------------------------------
    def name(self, first, last, middle, forms: dict, subtype: str, sex: str = "", title_rate: float = 0.0) -> None:
        b = self.b
        keys = list(forms)
        form = self.rng.choices(keys, weights=[forms[k] for k in keys], k=1)[0]
        if form in ("title_last", "title_first_last") or (title_rate and self.rng.random() < title_rate
                                                            and form in ("last", "first_last")):
            if subtype == "DOCTOR":
                title = "Dr."
            elif self.lang == "fr":
                title = "M." if sex == "M" else "Mme"
            else:
                title = "Mr." if sex == "M" else self.choice(("Ms.", "Mrs."))
            glue = subtype == "DOCTOR" and self.rng.random() < self.style.glue_rate
            b.t(title if glue else title + " ")
            form = "first_last" if form == "title_first_last" else "last"
        text = format_name(first, last, form, middle=middle)
        if self.rng.random() < self.misspell * 2 and form != "initials":
            text = _misspell(text, self.rng) if len(text) >= 5 else text
        b.p(text, subtype)

    def doctor(self, d=None, forms=None) -> None:
        d = d or self.choice(self.used_doctors)
        self.name(d.first, d.last, d.middle, forms or self.style.doctor_name_forms, "DOCTOR", d.sex)

    def signature(self, role: str = "MD") -> None:
        b, rng, st = self.b, self.rng, self.style
        d = self.pt.doctors[0] if rng.random() < 0.6 else self.choice(self.pools.doctors)
        b.t("\n")
        r = rng.random()
        if r < 0.4:
            b.t("Electronically signed by ")
            self.doctor(d, {"first_last": 2, "first_mi_last": 1, "last_comma_first": 1})
            b.t(f", {role} on ")
            self.dphi(self.date)
            b.t(f" {self.time()}")
        elif r < 0.7:
            b.t("Dictated by: ")
            self.doctor(d, {"first_last": 1, "first_initial_last": 1})
            b.t(f", {role}\nTranscribed by: ")
            b.p(self.choice(self.pools.doctors).username, "USERNAME")
            b.t("  D: ")
            self.dphi(self.date)
            b.t("  T: ")
            self.dphi(self.date + _dt.timedelta(days=rng.randint(0, 2)))
        else:
            b.t("_" * 20 + "\n")
            self.doctor(d, {"first_last": 1, "last_comma_first": 1, "initials": 0.3})
            b.t(f", {role}")
            if rng.random() < 0.5:
                b.t(" [")
                b.p(d.username, "USERNAME")
                b.t("]")
        if rng.random() < 0.25 * st.id_rate:
            b.t("\nLicense #: " if rng.random() < 0.5 else "\nLic ")
            b.p(d.license, "LICENSE")
        if rng.random() < 0.2 * st.contact_rate:
            b.t("\nPager: " if rng.random() < 0.5 else "\nPhone ")
            b.p(d.phone, "PHONE")
        b.t("\n")

    def contact_block(self) -> None:
        n = 0
        rate = self.style.contact_rate
        for tpl in CONTACT:
            if self.rng.random() < 0.12 * rate:
                self.render(tpl)
                self.b.t("\n")
                n += 1
        return n


def _years_between(a: _dt.date, b: _dt.date) -> int:
    return b.year - a.year - ((b.month, b.day) < (a.month, a.day))


# ----------------------------------------------------------------------------- slots
def _pt(c: NoteContext) -> None:
    p = c.pt
    c.name(p.first, p.last, p.middle, c.style.patient_name_forms, "PATIENT", p.sex, c.style.title_rate)


def _ptfull(c: NoteContext) -> None:
    p = c.pt
    c.name(p.first, p.last, p.middle, {"last_comma_first": 3, "first_last": 2, "first_mi_last": 1}, "PATIENT")


def _ptlast(c: NoteContext) -> None:
    c.b.p(c.pt.last, "PATIENT")


def _rel(c: NoteContext) -> None:
    p = c.pt
    if c.rng.random() < 0.6:
        c.b.p(p.relative_first, "PATIENT")
    else:
        c.b.p(f"{p.relative_first} {p.relative_last}", "PATIENT")


def _agea(c: NoteContext) -> None:
    s, suf = format_age(c.age, c.rng, c.lang, c.pt.sex, kind="attr")
    c.b.p(s, "AGE")
    c.b.t(suf)


def _a_agea(c: NoteContext) -> None:
    """Article + attributive age: "a 78-year-old", "an 81 y/o", "an eighty-year-old"."""
    s, suf = format_age(c.age, c.rng, c.lang, c.pt.sex, kind="attr")
    an = s.startswith("8") or s in ("11", "18") or s.lower().startswith(("eight", "eleven"))
    c.b.t("an " if an and c.lang == "en" else "a ")
    c.b.p(s, "AGE")
    c.b.t(suf)


def _agedec(c: NoteContext) -> None:
    """A decade ("50s", "fifties"), earlier than the current age: AGE in i2b2."""
    dec = max(2, min(9, (c.age - c.rng.randint(0, 25)) // 10))
    c.b.p(c.choice((f"{dec}0s", f"{dec}0s", f"{dec}0's", _TENS_WORDS[dec] + "ies")), "AGE")


_TENS_WORDS = ["", "", "twent", "thirt", "fort", "fift", "sixt", "sevent", "eight", "ninet"]


def _agen(c: NoteContext) -> None:
    age = c.age if c.rng.random() < 0.5 else c.rng.randint(45, 96)
    s, suf = format_age(age, c.rng, c.lang, c.pt.sex, kind="bare")
    c.b.p(s, "AGE")
    c.b.t(suf)


def _age_hdr(c: NoteContext) -> None:
    s, suf = format_age(c.age, c.rng, c.lang, c.pt.sex, kind="bare")
    c.b.p(s, "AGE")
    c.b.t(suf)


def _past(c: NoteContext, lo: int, hi: int) -> _dt.date:
    return c.date - _dt.timedelta(days=c.rng.randint(lo, hi))


def _pastdate(c):
    c.dphi(_past(c, 10, 900))


def _pastshort(c):
    c.dphi(_past(c, 1, 20), c.choice(("md", "mon_d", "mdy_short", c.date_fmt)))


def _pastmy(c):
    c.dphi(_past(c, 60, 2000), c.choice(("month_y", "month_y", "mon_y_short", "year")))


def _pastyear(c):
    c.dphi(_past(c, 365, 9000), c.choice(("year", "year", "yy_apos", "month_y")))


def _futdate(c):
    c.dphi(c.date + _dt.timedelta(days=c.rng.randint(5, 60)))


def _date_in(c):
    c.dphi(c.adm + _dt.timedelta(days=c.rng.randint(0, c.los)),
           c.choice((c.date_fmt, c.date_fmt, "md", "mon_d")))


def _weekday(c):
    c.dphi(_past(c, 1, 6), "weekday")


def _holiday(c):
    c.b.p(c.choice(HOLIDAYS_FR if c.lang == "fr" else HOLIDAYS_EN), "DATE")


def _doctor(c):
    if c.rng.random() < c.style.title_rate * 0.5:
        d = c.choice(c.used_doctors)
        glue = c.rng.random() < c.style.glue_rate
        c.b.t("Dr." if glue else "Dr. ")
        c.b.p(d.last if c.rng.random() < 0.7 else f"{d.first} {d.last}", "DOCTOR")
    else:
        c.doctor()


def _rn(c):
    """A nurse (i2b2 tags every care provider as DOCTOR), never with a "Dr." title."""
    d = c.choice(c.pools.doctors)
    c.name(d.first, d.last, d.middle, {"first_last": 2, "first": 2, "first_initial_last": 1}, "DOCTOR", d.sex)


def _pcp(c):
    d = c.pt.pcp
    c.name(d.first, d.last, d.middle, c.style.doctor_name_forms, "DOCTOR", d.sex)


def _p(attr: str, subtype: str):
    def f(c: NoteContext) -> None:
        c.b.p(getattr(c.pt, attr), subtype)

    return f


def _pool(attr: str, subtype: str):
    def f(c: NoteContext) -> None:
        c.b.p(c.choice(getattr(c.pools, attr)), subtype)

    return f


def _hosp(c):
    c.b.p(c.pools.home_hospital, "HOSPITAL")


def _ohosp(c):
    c.b.p(c.choice(c.pools.hospitals[1:]), "HOSPITAL")


def _room(c):
    r = c.rng
    c.b.p(c.choice((f"{r.randint(2, 9)}{r.randint(0, 40):02d}", f"{r.randint(1, 9)}{r.randint(0, 40):02d}-{c.choice('AB')}",
                    f"{r.randint(100, 899)}", f"{r.randint(2, 9)}{c.choice(('W', 'E', 'N'))}-{r.randint(1, 30)}")), "ROOM")


def _addr(c):
    p = c.pt
    b = c.b
    b.p(p.street, "STREET")
    b.t(", ")
    b.p(p.city, "CITY")
    b.t(", ")
    b.p(p.state, "STATE")
    b.t(" ")
    b.p(p.zip, "ZIP")


def _email(c):
    c.b.p(c.pt.email, "EMAIL")


def _url(c):
    r = c.rng
    dom = c.choice(c.pools.domains)
    c.b.p(c.choice((f"https://portal.{dom}/patient/{r.randint(10000, 99999)}", f"www.{dom}",
                    f"http://{dom}/mychart", f"https://{dom}/education/{c.choice(('chf', 'diabetes', 'copd'))}")), "URL")


def _ip(c):
    r = c.rng
    c.b.p(c.choice((f"10.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(1, 254)}",
                    f"192.168.{r.randint(0, 255)}.{r.randint(1, 254)}",
                    f"{r.randint(11, 223)}.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(1, 254)}")), "IPADDR")


def _fax(c):
    from .phi_forms import format_phone

    c.b.p(format_phone(c.rng, c.lang), "FAX")


def _drphone(c):
    c.b.p(c.choice(c.used_doctors).phone, "PHONE")


def _dremail(c):
    c.b.p(c.choice(c.used_doctors).email, "EMAIL")


def _druser(c):
    c.b.p(c.choice(c.used_doctors).username, "USERNAME")


def _idnum(c):
    from .phi_forms import random_id

    c.b.p(random_id("IDNUM", c.rng), "IDNUM")


def _prof(c):
    c.b.p(c.pt.profession, "PROFESSION")


def _prof_plain(c):
    # the patient's job as an attributive noun ("a 54-year-old teacher"): still PROFESSION PHI
    c.b.p(c.pt.profession, "PROFESSION")


def _insurer(c):
    c.b.p(c.pt.insurer, "ORGANIZATION")


# non-PHI content -----------------------------------------------------------
def _sexw(c):
    c.b.t(c.choice(("man", "male", "gentleman", "M")) if c.pt.sex == "M" else c.choice(("woman", "female", "lady", "F")))


def _cc(c):
    c.b.t(c.vocab(c.choice(c.dx["complaint"])))


def _dxprob(c):
    if c.pt.primary_site and c.rng.random() < 0.6:
        c.b.t(f"{c.pt.histology} of the {PRIMARY_SITES[c.pt.primary_site]['organ'][0]}")
    else:
        c.b.t(c.vocab(c.choice(c.dx["problem"])))


def _comorb(c):
    if c.pt.comorbid and c.rng.random() < 0.7:
        c.b.t(c.vocab(c.choice(c.pt.comorbid)))
    else:
        c.b.t(c.choice(("hypertension", "hyperlipidemia", "obesity", "hypothyroidism", "GERD", "anxiety",
                        "osteoporosis", "atrial fibrillation", "BPH", "gout")))


def _med_tuple(c):
    if c.rng.random() < 0.6:
        return c.choice(c.dx["meds"])
    return c.choice(COMMON_MEDS)


def _medline(c):
    name, doses, route, freqs = _med_tuple(c)
    c.b.t(f"{c.vocab(name)} {c.choice(doses)} {route} {c.choice(freqs)}")


def _medname(c):
    c.b.t(_med_tuple(c)[0])


def _finding(c):
    c.b.t(c.vocab(c.choice(c.dx["finding"])))


def _proc(c):
    c.b.t(c.choice(c.dx["procedure"]))


def _result_c(c):
    c.b.t(c.choice(c.dx["result"]))


def _plan_c(c):
    c.b.t(c.choice(c.dx["plan"]))


def _eponym(c):
    c.b.t(c.choice(EPONYM_DISEASES))


def _eponym_proc(c):
    c.b.t(c.choice(("Whipple procedure", "Nissen fundoplication", "Hartmann's procedure")))


def _labval(c):
    name = c.choice(c.dx["labs"]) if c.rng.random() < 0.6 else c.choice(tuple(LABS))
    c.b.t(f"{name} {_lab_value(c.rng, name)}")


def _lab_value(rng, name):
    lo, hi, dec, unit = LABS[name]
    v = rng.uniform(lo, hi)
    return (f"{v:.{dec}f}" if dec else str(int(round(v)))) + unit


def _vit(c):
    r = c.rng
    c.b.t(c.choice((
        f"T {r.uniform(97.0, 102.5):.1f} HR {r.randint(58, 128)} BP {r.randint(92, 178)}/{r.randint(48, 102)} "
        f"RR {r.randint(12, 30)} SpO2 {r.randint(86, 100)}% on {c.choice(('RA', '2L NC', '4L NC', 'NRB'))}",
        f"BP {r.randint(92, 178)}/{r.randint(48, 102)}, HR {r.randint(58, 128)}, RR {r.randint(12, 30)}, "
        f"sat {r.randint(86, 100)}%",
        f"{r.uniform(36.2, 39.4):.1f}C {r.randint(58, 128)} {r.randint(92, 178)}/{r.randint(48, 102)} "
        f"{r.randint(12, 30)} {r.randint(86, 100)}%RA",
    )))


def _obs(c):
    c.b.t(c.vocab(c.choice(NURSING_OBS)))


def _glu(c):
    c.b.t(str(c.rng.randint(70, 380)))


def _n(c):
    c.b.t(str(c.rng.randint(2, 7)))


def _relation(c):
    c.b.t(c.pt.relation)


def _dispo_plain(c):
    c.b.t(c.choice(DISPO))


def _findingx(c):
    c.b.t(c.choice(c.dx["finding"]))


_SLOTS = {
    "PT": _pt, "PTFULL": _ptfull, "PTLAST": _ptlast, "REL": _rel, "AGEA": _agea, "aAGEA": _a_agea, "AGEDEC": _agedec, "AGEN": _agen,
    "PASTDATE": _pastdate, "PASTSHORT": _pastshort, "PASTMY": _pastmy, "PASTYEAR": _pastyear,
    "FUTDATE": _futdate, "DATE_IN": _date_in, "WEEKDAY": _weekday, "HOLIDAY": _holiday,
    "DR": _doctor, "RN": _rn, "PCP": _pcp, "HOSP": _hosp, "OHOSP": _ohosp, "DEPT": _pool("departments", "DEPARTMENT"),
    "ROOM": _room, "STREET": _p("street", "STREET"), "CITY": _p("city", "CITY"), "STATE": _p("state", "STATE"),
    "ZIP": _p("zip", "ZIP"), "COUNTRY": _pool("countries", "COUNTRY"), "ORIGIN": _p("origin_country", "COUNTRY"),
    "LOCOTHER": _pool("landmarks", "LOCATION-OTHER"), "ORG": _p("employer", "ORGANIZATION"),
    "INSURER": _insurer, "PROF": _prof, "prof_plain": _prof_plain, "PHONE": _p("phone", "PHONE"),
    "DRPHONE": _drphone, "FAX": _fax, "EMAIL": _email, "DREMAIL": _dremail, "URL": _url, "IP": _ip,
    "USER": _p("username", "USERNAME"), "DRUSER": _druser, "MRN": _p("mrn", "MEDICALRECORD"),
    "SSN": _p("ssn", "SSN"), "HP": _p("healthplan", "HEALTHPLAN"), "ACCT": _p("account", "ACCOUNT"),
    "LIC": _p("license", "LICENSE"), "VEH": _p("vehicle", "VEHICLE"), "DEV": _p("device", "DEVICE"),
    "BIO": _p("bioid", "BIOID"), "IDNUM": _idnum, "OTHER": _p("other", "OTHER"), "ADDR": _addr,
    "sexw": _sexw, "cc": _cc, "dxprob": _dxprob, "comorb": _comorb, "medline": _medline, "medname": _medname,
    "finding": _finding, "findingx": _findingx, "proc": _proc, "result_c": _result_c, "plan_c": _plan_c,
    "eponym": _eponym, "eponym_proc": _eponym_proc, "labval": _labval, "vit": _vit, "obs": _obs,
    "glu": _glu, "n": _n, "relation": _relation, "dispo_plain": _dispo_plain,
}


# ----------------------------------------------------------------------------- note parts
_TITLES = {
    "discharge_summary": ("DISCHARGE SUMMARY", "Discharge Summary", "D/C SUMMARY", "discharge summary"),
    "progress_note": ("PROGRESS NOTE", "Progress Note", "Daily Progress Note", "MEDICINE PROGRESS NOTE"),
    "nursing_note": ("NURSING NOTE", "Nursing Progress Note", "RN Shift Note", "Nursing Shift Assessment"),
    "pathology_report": ("SURGICAL PATHOLOGY REPORT", "Pathology Report", "SURGICAL PATHOLOGY", "Cytopathology Report"),
}


def _kv_line(c: NoteContext, key: str, slot: str) -> None:
    c.kv(key)
    _SLOTS[slot](c)
    c.b.t("\n")


def _note_header(c: NoteContext) -> None:
    b, rng, st = c.b, c.rng, c.style
    if rng.random() < 0.85:
        _hosp(c)
        if rng.random() < 0.3:
            b.t(" - ")
            c.b.p(c.pt.city if rng.random() < 0.5 else c.pools.home_city, "CITY")
        b.t("\n")
    if c.note_type == "pathology_report" or rng.random() < 0.3:
        b.t("Department of " if c.lang == "en" else "Service de ")
        b.p("Pathology" if c.note_type == "pathology_report" and c.lang == "en"
            else c.choice(c.pools.departments), "DEPARTMENT")
        b.t("\n")
    b.t(c.choice(_TITLES[c.note_type]) + "\n\n")
    _kv_line(c, c.choice(("Patient", "Name", "Patient Name", "PATIENT")), "PTFULL")
    if rng.random() < st.glue_rate:
        b.t("MRN#")  # the identifier glued to its key: PHI inside a token
        _SLOTS["MRN"](c)
        b.t("\n")
    else:
        _kv_line(c, c.choice(("MRN", "Medical Record #", "MR#", "Unit No")), "MRN")
    if rng.random() < 0.7:
        c.kv(c.choice(("DOB", "Date of Birth", "D.O.B.")))
        c.dphi(c.pt.birth)
        b.t("\n")
    if rng.random() < 0.6:
        c.kv("Age")
        _age_hdr(c)
        b.t(f"   Sex{st.kv_sep}{c.pt.sex}\n")
    if rng.random() < 0.25 * st.id_rate:
        _kv_line(c, "SSN", "SSN")
    if rng.random() < 0.35 * st.id_rate:
        _kv_line(c, c.choice(("Acct #", "Account No", "Billing Acct")), "ACCT")
    if rng.random() < 0.3 * st.id_rate:
        c.kv(c.choice(("Insurance", "Payer")))
        _insurer(c)
        b.t(" #")
        _SLOTS["HP"](c)
        b.t("\n")
    if rng.random() < 0.4 * st.id_rate:
        _kv_line(c, c.choice(("Encounter #", "Visit ID", "CSN")), "IDNUM")
    if rng.random() < 0.04 * st.id_rate:
        _kv_line(c, "Biometric ID", "BIO")
    if rng.random() < 0.05 * st.id_rate:
        _kv_line(c, "Driver's License", "LIC")
    if rng.random() < 0.25 * st.contact_rate:
        c.kv("Address")
        _addr(c)
        b.t("\n")
    if rng.random() < 0.3 * st.contact_rate:
        _kv_line(c, c.choice(("Phone", "Home Phone", "Tel")), "PHONE")
    if rng.random() < 0.1 * st.contact_rate:
        _kv_line(c, "Email", "EMAIL")
    if c.note_type == "discharge_summary":
        c.kv(c.choice(("Admission Date", "Date of Admission", "Admitted")))
        c.dphi(c.adm)
        b.t("\n")
        c.kv(c.choice(("Discharge Date", "Date of Discharge", "Discharged")))
        c.dphi(c.date)
        b.t("\n")
    else:
        c.kv(c.choice(("Date", "Date of Service", "Visit Date")))
        c.dphi(c.date)
        b.t(f" {c.time()}\n")
    if rng.random() < 0.7:
        c.kv(c.choice(("Attending", "Attending Physician", "Provider")))
        c.doctor(c.pt.doctors[0])
        b.t("\n")
    if rng.random() < 0.5:
        _kv_line(c, c.choice(("Service", "Unit")), "DEPT")
    if rng.random() < 0.35:
        _kv_line(c, c.choice(("Room", "Bed", "Rm")), "ROOM")
    if rng.random() < 0.3:
        _kv_line(c, "PCP", "PCP")
    b.t("\n")


def _lab_table(c: NoteContext) -> None:
    b, rng = c.b, c.rng
    days = [c.adm + _dt.timedelta(days=i) for i in range(rng.randint(2, 4))]
    fmt = c.choice(("md", "mdy_short", c.date_fmt, "mon_d"))
    names = rng.sample(list(dict.fromkeys(list(c.dx["labs"]) + ["Na", "K", "Cr", "WBC", "Hgb", "glucose"])), rng.randint(4, 7))
    b.t(f"{'':10s}")
    for d in days:
        s = format_date(d, fmt, c.lang)
        c.dphi(d, fmt)
        b.t(" " * max(2, 12 - len(s)))
    b.t("\n")
    for n in names:
        b.t(f"{n:10s}")
        for _ in days:
            v = _lab_value(rng, n)
            b.t(f"{v:12s}")
        b.t("\n")


def _labs_inline(c: NoteContext) -> None:
    for i in range(c.rng.randint(3, 6)):
        if i:
            c.b.t(", ")
        _labval(c)
    c.b.t(".\n")


def _list_section(c: NoteContext, key: str, tpls, k: tuple[int, int], bullet: str | None = None) -> None:
    c.header(key)
    bullet = bullet if bullet is not None else c.choice(("- ", "* ", "", "#"))
    tpls = c.site_tpls(tpls)
    chosen = c.rng.sample(tpls, min(len(tpls), c.rng.randint(*k)))
    for i, tpl in enumerate(chosen):
        if bullet == "#":
            c.b.t(f"{i + 1}. ")
        else:
            c.b.t(bullet)
        c.render(tpl)
        c.b.t("\n")
    c.b.t("\n")


def _meds_section(c: NoteContext, key: str) -> None:
    c.header(key)
    for i in range(c.rng.randint(3, 7)):
        c.b.t(f"{i + 1}. " if c.rng.random() < 0.5 else "- ")
        _medline(c)
        c.b.t("\n")
    c.b.t("\n")


def _exam(c: NoteContext) -> None:
    c.header("exam")
    c.b.t("VS: ")
    _vit(c)
    c.b.t("\n")
    for k, opts in EXAM_LINES:
        if c.rng.random() < 0.8:
            c.b.t(f"{k}: {c.vocab(c.choice(opts))}")
            if c.rng.random() < 0.3:
                c.b.t("; ")
                _finding(c)
            c.b.t("\n")
    c.b.t("\n")


def _narr(c: NoteContext, key: str, first, more, k_extra: tuple[int, int] | None = None) -> None:
    c.header(key)
    if first:
        c.render(c.choice(c.site_tpls(first)))
        c.b.t(" ")
    lo, hi = k_extra or c.style.verbosity
    c.render_many(more, c.rng.randint(lo, hi))
    c.b.t("\n\n")


def _discharge(c: NoteContext) -> None:
    b, rng, st = c.b, c.rng, c.style
    _note_header(c)
    c.header("cc")
    _cc(c)
    b.t("\n\n")
    _narr(c, "hpi", HPI_OPEN, HPI_MORE)
    _list_section(c, "pmh", PMH, (2, 6))
    if rng.random() < 0.6:
        _list_section(c, "psh", PSH, (1, 3))
    _meds_section(c, "adm_meds")
    c.header("allergies")
    b.t(c.choice(ALLERGIES) + "\n\n")
    _narr(c, "social", None, SOCIAL, (2, 4))
    if rng.random() < 0.6:
        _narr(c, "family", None, FAMILY, (1, 2))
    _exam(c)
    c.header("labs")
    if rng.random() < st.lab_table_rate:
        _lab_table(c)
    else:
        _labs_inline(c)
    b.t("\n")
    if rng.random() < 0.6:
        c.header("imaging")
        c.dphi(c.adm, c.choice(("md", c.date_fmt)))
        b.t(f" {c.choice(c.dx['procedure'])}: {c.choice(c.dx['result'])}.\n\n")
    c.header("course")
    c.render_many(COURSE, rng.randint(st.verbosity[0] + 1, st.verbosity[1] + 2), sep="\n")
    b.t("\n\n")
    c.header("dx")
    b.t("1. ")
    _dxprob(c)
    b.t("\n2. ")
    _comorb(c)
    b.t("\n\n")
    _meds_section(c, "dc_meds")
    c.header("dispo")
    b.t(c.choice(DISPO) + "\n\n")
    _list_section(c, "followup", FOLLOWUP, (1, 3), bullet="- ")
    c.contact_block()
    c.signature()


def _progress(c: NoteContext) -> None:
    b, rng, st = c.b, c.rng, c.style
    _note_header(c)
    if rng.random() < 0.5:
        b.t(f"HD #{(c.date - c.adm).days + 1}\n")
    c.header("subjective")
    c.render_many(PN_SUBJ, rng.randint(*st.verbosity))
    b.t("\n\n")
    c.header("objective")
    b.t("Vitals: ")
    _vit(c)
    b.t("\nI/O: " + f"{rng.randint(500, 2400)}/{rng.randint(400, 3200)}\n")
    for k, opts in EXAM_LINES:
        if rng.random() < 0.5:
            b.t(f"{k}: {c.vocab(c.choice(opts))}\n")
    if rng.random() < 0.6:
        b.t("Exam notable for ")
        _finding(c)
        b.t(".\n")
    b.t("\n")
    c.header("labs")
    if rng.random() < st.lab_table_rate:
        _lab_table(c)
    else:
        _labs_inline(c)
    b.t("\n")
    c.header("assessment")
    _agea_sentence(c)
    c.render_many(PN_AP, rng.randint(st.verbosity[0] + 1, st.verbosity[1] + 2), sep="\n")
    b.t("\n")
    if rng.random() < 0.3:
        c.contact_block()
    c.signature()


def _agea_sentence(c: NoteContext) -> None:
    b = c.b
    if c.rng.random() < 0.5:
        _pt(c)
        b.t(" is a ")
    _agea(c)
    b.t(" ")
    _sexw(c)
    b.t(" with ")
    _dxprob(c)
    b.t(f", {c.choice(('improving', 'stable', 'slowly improving', 'clinically worse'))}.\n")


def _nursing(c: NoteContext) -> None:
    b, rng, st = c.b, c.rng, c.style
    if rng.random() < 0.5:
        _note_header(c)
    else:
        b.t(c.choice(_TITLES["nursing_note"]) + " ")
        c.dphi(c.date)
        b.t(f" {c.time()}\n")
        _ptfull(c)
        b.t("  ")
        _SLOTS["MRN"](c)
        b.t("  Rm ")
        _room(c)
        b.t("\n\n")
    if rng.random() < 0.5:
        c.header("nursing")
    k = rng.randint(st.verbosity[0] + 2, st.verbosity[1] + 5)
    nurse = c.site_tpls(NURSE)
    for tpl in (c.choice(nurse) for _ in range(k)):
        c.render(tpl)
        b.t("\n" if rng.random() < 0.6 else " ")
    b.t("\n")
    if rng.random() < 0.4:
        c.header("interventions")
        c.render_many(NURSE, rng.randint(1, 3))
        b.t("\n")
    if rng.random() < 0.2:
        c.contact_block()
    c.signature(role="RN")


_GRADE = ["well differentiated", "moderately differentiated", "poorly differentiated"]


def _pathology(c: NoteContext) -> None:
    b, rng, st = c.b, c.rng, c.style
    p = c.pt
    ps = PRIMARY_SITES[p.primary_site]
    sub_name, sub_phr = ps["subsites"][p.subsite]
    organ = c.choice(ps["organ"])
    side = f"{p.laterality} " if p.laterality else ""
    loc = c.choice(sub_phr)
    spec = c.choice(ps["specimen"])
    _note_header(c)
    c.kv(c.choice(("Accession #", "Case #", "Surgical Pathology #")))
    _idnum(c)
    b.t("\n")
    c.kv("Collected")
    c.dphi(c.date - _dt.timedelta(days=rng.randint(1, 4)))
    b.t("   ")
    c.kv("Received")
    c.dphi(c.date - _dt.timedelta(days=rng.randint(0, 1)))
    b.t("\n")
    c.kv(c.choice(("Submitting physician", "Ordering MD", "Requested by")))
    c.doctor()
    b.t("\n\n")
    c.header("clin_hx")
    _agea(c)
    b.t(" ")
    _sexw(c)
    b.t(c.choice((f" with {c.choice(('a mass', 'an abnormal imaging finding', 'a lesion'))} in the {side}{organ}",
                  f", {side}{organ} lesion", f" with history of {c.choice(c.dx['complaint'])}")))
    b.t(". ")
    if rng.random() < 0.4:
        b.t("Prior history of ")
        b.t(c.choice(("hypertension", "basal cell carcinoma of the skin", "colon polyps", "benign breast biopsy",
                      "smoking", "BPH", "Barrett's esophagus")))
        b.t(". ")
    if rng.random() < 0.3:
        # a second, earlier primary elsewhere: a distractor for site/subsite classifiers
        other = c.choice([k for k in PRIMARY_SITES if k != p.primary_site])
        oinfo = PRIMARY_SITES[other]
        b.t(f"History of {c.choice(oinfo['histology'])} of the {c.choice(oinfo['organ'])}, treated in ")
        _pastyear(c)
        b.t(". ")
    if rng.random() < 0.3:
        b.t("Previous biopsy at ")
        _ohosp(c)
        b.t(" on ")
        _pastdate(c)
        b.t(".")
    b.t("\n\n")
    c.header("specimen")
    b.t(f"A. {side.capitalize() if side else ''}{organ if side else organ.capitalize()}, {loc}, {spec}\n")
    if rng.random() < 0.4:
        b.t(f"B. {c.choice(('Sentinel lymph node #1', 'Regional lymph nodes', 'Additional margin'))}\n")
    b.t("\n")
    c.header("gross")
    b.t("Received in formalin labeled with the patient's name ")
    _ptfull(c)
    b.t(" and medical record number ")
    _SLOTS["MRN"](c)
    b.t(f" is a {c.choice(('tan-pink', 'gray-white', 'tan-yellow', 'red-brown'))} "
        f"{c.choice(('fragment', 'ellipse of tissue', 'resection specimen', 'core biopsies'))} measuring "
        f"{rng.uniform(0.3, 9.0):.1f} x {rng.uniform(0.2, 6.0):.1f} x {rng.uniform(0.1, 4.0):.1f} cm. "
        f"The lesion is located in the {loc}" + (f" of the {side}{organ}" if loc != organ else "") +
        f" and measures {rng.uniform(0.4, 5.5):.1f} cm in greatest dimension. "
        f"Sectioned and submitted in cassettes A1-A{rng.randint(2, 12)}.")
    if rng.random() < 0.3:
        b.t(" Grossed by ")
        _druser(c)
        b.t(".")
    b.t("\n\n")
    if rng.random() < 0.7:
        c.header("micro")
        b.t(f"Sections show {p.histology}, {c.choice(_GRADE)}. ")
        b.t(c.choice(ps["extra"]).format(g=rng.randint(1, 3)) + ". ")
        b.t(f"{c.choice(ps['extra']).format(g=rng.randint(1, 3))}.\n\n")
    c.header("final")
    up = c.choice((str.upper, lambda s: s))
    b.t(up(f"{side}{organ}, {loc}, {spec}:") + "\n")
    b.t(f"- {p.histology.upper() if rng.random() < 0.3 else p.histology}, {c.choice(_GRADE)}.\n")
    b.t(f"- Margins {c.choice(('negative', 'negative, closest 2 mm', 'positive at the deep margin'))}.\n")
    b.t(f"- {rng.randint(0, 3)}/{rng.randint(3, 22)} lymph nodes involved.\n\n")
    if rng.random() < 0.4 + (0.4 if st.name.startswith("cancer_registry") else 0.0):
        c.header("synoptic")
        b.t(f"Procedure: {spec}\nTumor site: {loc}\n")
        if p.laterality:
            b.t(f"Laterality: {p.laterality}\n")
        b.t(f"Histologic type: {p.histology}\nTumor size: {rng.uniform(0.4, 5.5):.1f} cm\n"
            f"pT{rng.randint(1, 4)} pN{rng.randint(0, 2)} pMX\n\n")
    if rng.random() < 0.4:
        c.header("comment")
        b.t("Case reviewed at intradepartmental consensus conference with ")
        _doctor(c)
        b.t(". Results called to ")
        _doctor(c)
        b.t(" on ")
        c.dphi(c.date)
        b.t(f" at {c.time()}.")
        if rng.random() < 0.3:
            b.t(" Outside slides (")
            _idnum(c)
            b.t(") returned to ")
            _ohosp(c)
            b.t(".")
        b.t("\n\n")
    b.t("I have personally reviewed the slides and agree with the above diagnosis.\n")
    c.signature()


RENDERERS = {
    "discharge_summary": _discharge,
    "progress_note": _progress,
    "nursing_note": _nursing,
    "pathology_report": _pathology,
}


def render_note(c: NoteContext) -> tuple[str, list[Span]]:
    """Render the note of ``c`` and return ``(text, spans)``."""
    RENDERERS[c.note_type](c)
    return c.b.text(), c.b.spans
