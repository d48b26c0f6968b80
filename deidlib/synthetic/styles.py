"""Site writing styles: how each hospital / registry writes its notes.

Collaborative training (festag), ensembles across data sets (ahmed) and the
registry-invariant classifier (alawad) all need sites whose data differ in more than
their patients. A :class:`SiteStyle` fixes, per site: the note-type mix, the diagnosis
and tumour-site mix (label shift), section-header wording and decoration, abbreviation
rate, casing (some sites write notes in all caps or all lower case), the surface forms
of PHI (date formats, name order, phone patterns, MRN / account / order-number shapes,
how the site names hospitals), how much contact/identifier PHI their headers carry,
site wording of common clinical vocabulary, the share of the template phrasings it
uses, and the misspelling rate.

Five archetypes are defined; sites beyond five reuse an archetype with weights
perturbed by a seeded generator (so ``sites=8`` gives eight distinct mixes).

**Heterogeneity** (``heterogeneity`` of :func:`site_style`, :func:`deidlib.synthetic.generate`,
:func:`deidlib.datasets.load_corpus`; a float in [0, 1], default
:data:`DEFAULT_HETEROGENEITY`) is the one parameter that sets how different the sites are.
Every weight table of a site is ``(1 - h) * common + h * own``, where ``common`` is the
mean of the five archetypes' tables and ``own`` is the site's table; every rate
(abbreviations, misspellings, titles, contact/identifier lines, lab tables, glued titles)
and the verbosity interpolate the same way. What each level changes:

* ``h = 0``: one shared style; sites differ only in their patients and place pools.
* ``0 < h < 1``: each choice is the site's own with probability rising with ``h``.
* ``h = 1``: each archetype writes PHI in site-exclusive surface forms
  (:data:`_SITE_DATE_FORMATS`, :data:`_SITE_PHONE_FORMATS`, :data:`_SITE_ID_SHAPES`,
  :data:`_SITE_HOSPITAL_SUFFIXES`), ICU nursing notes included; what each level changes in full:
  docs/design/synthetic.md.

The measured effect (cross-site binary-token F1, :mod:`deidlib.studies.corpus_overview.sites`) is stated at
:data:`DEFAULT_HETEROGENEITY`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from typing import Any

from .vocab import DIAGNOSIS_LABELS, PRIMARY_SITES

__all__ = ["DEFAULT_HETEROGENEITY"]

NOTE_TYPES: tuple[str, ...] = ("discharge_summary", "progress_note", "nursing_note", "pathology_report", "icu_nursing_note")
#: note types in no site's default mix, added by ``generate(extra_note_types=...)``
#: (:mod:`.notes.guideline`: PHI in the i2b2 guideline's forms; the default model's training notes)
GUIDELINE_NOTE_TYPES: tuple[str, ...] = ("dictated_discharge", "emergency_visit")

#: section key -> (full name, abbreviated name)
SECTION_NAMES: dict[str, tuple[str, str]] = {
    "cc": ("Chief Complaint", "CC"),
    "hpi": ("History of Present Illness", "HPI"),
    "pmh": ("Past Medical History", "PMH"),
    "psh": ("Past Surgical History", "PSH"),
    "meds": ("Medications", "Meds"),
    "adm_meds": ("Medications on Admission", "Adm Meds"),
    "dc_meds": ("Discharge Medications", "D/C Meds"),
    "allergies": ("Allergies", "All"),
    "social": ("Social History", "SH"),
    "family": ("Family History", "FH"),
    "exam": ("Physical Examination", "PE"),
    "labs": ("Laboratory Data", "Labs"),
    "imaging": ("Imaging", "Rads"),
    "course": ("Hospital Course", "Hosp Course"),
    "assessment": ("Assessment and Plan", "A/P"),
    "subjective": ("Subjective", "S"),
    "objective": ("Objective", "O"),
    "dispo": ("Disposition", "Dispo"),
    "followup": ("Follow-up", "F/U"),
    "dx": ("Discharge Diagnosis", "D/C Dx"),
    "nursing": ("Nursing Assessment", "RN Assessment"),
    "interventions": ("Interventions", "Interv"),
    "clin_hx": ("Clinical History", "Clin Hx"),
    "specimen": ("Specimen", "Spec"),
    "gross": ("Gross Description", "Gross"),
    "micro": ("Microscopic Description", "Micro"),
    "final": ("Final Diagnosis", "Final Dx"),
    "synoptic": ("Synoptic Report", "Synoptic"),
    "comment": ("Comment", "Cmt"),
    "contact": ("Contact Information", "Contact"),
}


#: site-specific wording of some headers (a style picks one by ``section_variant``)
SECTION_SYNONYMS: dict[str, tuple[str, ...]] = {
    "cc": ("Chief Complaint", "Reason for Admission", "Presenting Complaint", "Reason for Visit"),
    "hpi": ("History of Present Illness", "History", "Present Illness", "HPI / Interval History"),
    "pmh": ("Past Medical History", "Medical History", "Problem List", "Past History"),
    "exam": ("Physical Examination", "Examination", "Physical Exam", "Exam on Admission"),
    "labs": ("Laboratory Data", "Labs", "Pertinent Results", "Laboratory Results"),
    "course": ("Hospital Course", "Brief Hospital Course", "Clinical Course", "Summary of Hospitalization"),
    "assessment": ("Assessment and Plan", "Impression and Plan", "Assessment/Plan", "Impression"),
    "final": ("Final Diagnosis", "Diagnosis", "Final Pathologic Diagnosis", "Pathologic Diagnosis"),
    "gross": ("Gross Description", "Gross", "Macroscopic Description", "Gross Examination"),
    "dx": ("Discharge Diagnosis", "Discharge Diagnoses", "Final Diagnoses", "Principal Diagnosis"),
}


@dataclass(frozen=True)
class SiteStyle:
    """How one site writes. Weights are relative (normalized where used)."""

    name: str
    note_mix: dict[str, float]
    diagnosis_weights: dict[str, float]
    primary_site_weights: dict[str, float]
    date_formats: dict[str, float]
    #: casing of whole notes: normal / upper / lower
    casing: dict[str, float]
    #: header decoration: caps_colon | title_colon | abbr | stars | lower_dash
    header: str
    #: probability that a note is written with abbreviations (pt, w/, h/o, s/p, ...)
    abbrev_rate: float
    #: patient name forms in running text (see phi_forms.NAME_FORMS)
    patient_name_forms: dict[str, float]
    doctor_name_forms: dict[str, float]
    #: probability of a courtesy title (Mr./Ms./Mrs.) in running text
    title_rate: float
    #: multiplier for contact PHI (phone, fax, email, URL, IP, username) lines
    contact_rate: float
    #: multiplier for identifier PHI (SSN, account, health plan, license, ...) lines
    id_rate: float
    #: probability per vocabulary item of a misspelling
    misspell_rate: float
    #: probability of a lab table with dated columns in progress notes / discharge summaries
    lab_table_rate: float
    #: sentences per narrative section (min, max)
    verbosity: tuple[int, int] = (2, 4)
    #: key/value separator in headers
    kv_sep: str = ": "
    #: "Dr.Brown"-style glued titles (PHI inside a token)
    glue_rate: float = 0.05
    #: which wording of :data:`SECTION_SYNONYMS` this site uses
    section_variant: int = 0
    extra: dict = field(default_factory=dict)
    #: English phone patterns (keys of :data:`deidlib.synthetic.phi_forms.PHONE_FORMATS`
    #: or site patterns); empty: the shared list
    phone_formats: dict[str, float] = field(default_factory=dict)
    #: identifier kind -> shape weights (see :data:`deidlib.synthetic.phi_forms.ID_SHAPES`);
    #: kinds not named use the shared shapes
    id_shapes: dict[str, dict[str, float]] = field(default_factory=dict)
    #: hospital-name suffix weights (English); empty: the pools' own names
    hospital_suffixes: dict[str, float] = field(default_factory=dict)
    #: site wording of common words in running text ("patient" -> "pt")
    vocab: dict[str, str] = field(default_factory=dict)
    #: how different this site is from the common style (see the module docstring)
    heterogeneity: float = 1.0


def _uniform(keys, **over) -> dict[str, float]:
    d = {k: 1.0 for k in keys}
    d.update(over)
    return d


_PS = tuple(PRIMARY_SITES)

_ARCHETYPES: tuple[SiteStyle, ...] = (
    SiteStyle(
        name="academic",
        note_mix={"discharge_summary": 0.4, "progress_note": 0.35, "nursing_note": 0.15, "pathology_report": 0.1, "icu_nursing_note": 0.35},
        diagnosis_weights=_uniform(DIAGNOSIS_LABELS, heart_failure=1.5, stroke=1.3),
        primary_site_weights=_uniform(_PS, breast=2.0, lung=1.5),
        date_formats={"mdy_slash": 6, "month_d_y": 2, "mdy_short": 1, "mon_d_y": 1},
        casing={"normal": 0.97, "upper": 0.03},
        header="caps_colon",
        abbrev_rate=0.15,
        patient_name_forms={"first_last": 3, "title_last": 3, "last_comma_first": 1, "first_mi_last": 1},
        doctor_name_forms={"title_first_last": 2, "first_last": 2, "title_last": 2, "first_initial_last": 1},
        title_rate=0.6, contact_rate=0.6, id_rate=1.0, misspell_rate=0.004, lab_table_rate=0.6,
        verbosity=(2, 5), section_variant=0,
    ),
    SiteStyle(
        name="community_terse",
        note_mix={"discharge_summary": 0.15, "progress_note": 0.45, "nursing_note": 0.37, "pathology_report": 0.03, "icu_nursing_note": 0.7},
        diagnosis_weights=_uniform(DIAGNOSIS_LABELS, pneumonia=2.2, copd=2.0, cancer=0.5),
        primary_site_weights=_uniform(_PS, lung=2.5, skin=2.0),
        date_formats={"mdy_short": 6, "mdy_dash": 2, "mdy_slash": 1},
        casing={"normal": 0.55, "lower": 0.45},
        header="abbr",
        abbrev_rate=0.9,
        patient_name_forms={"last": 3, "first": 1, "initials": 2, "first_last": 1},
        doctor_name_forms={"last": 2, "initials": 2, "title_last": 2},
        title_rate=0.2, contact_rate=0.5, id_rate=0.5, misspell_rate=0.04, lab_table_rate=0.2,
        verbosity=(1, 3), kv_sep=": ", glue_rate=0.15, section_variant=1,
    ),
    SiteStyle(
        name="cancer_registry",
        note_mix={"discharge_summary": 0.12, "progress_note": 0.2, "nursing_note": 0.03, "pathology_report": 0.65, "icu_nursing_note": 0.08},
        diagnosis_weights=_uniform(DIAGNOSIS_LABELS, cancer=6.0),
        primary_site_weights=_uniform(_PS, colorectal=2.5, prostate=2.0, bladder=1.5),
        date_formats={"iso": 6, "ymd_slash": 2, "d_mon_y": 1},
        casing={"upper": 0.7, "normal": 0.3},
        header="stars",
        abbrev_rate=0.35,
        patient_name_forms={"last_comma_first": 4, "last_upper": 1, "first_last": 1},
        doctor_name_forms={"last_comma_first": 2, "first_last": 2, "title_first_last": 1},
        title_rate=0.1, contact_rate=0.4, id_rate=1.8, misspell_rate=0.006, lab_table_rate=0.3,
        verbosity=(1, 3), kv_sep=": ", section_variant=2,
    ),
    SiteStyle(
        name="narrative",
        note_mix={"discharge_summary": 0.5, "progress_note": 0.3, "nursing_note": 0.1, "pathology_report": 0.1, "icu_nursing_note": 0.3},
        diagnosis_weights=_uniform(DIAGNOSIS_LABELS, heart_failure=2.0, stroke=2.0, ckd=1.5),
        primary_site_weights=_uniform(_PS, breast=1.5, skin=1.5),
        date_formats={"d_month_y": 4, "month_d_y": 3, "mon_d_y": 2, "dot": 1},
        casing={"normal": 1.0},
        header="title_colon",
        abbrev_rate=0.05,
        patient_name_forms={"title_last": 5, "first_last": 2, "title_first_last": 1},
        doctor_name_forms={"title_last": 4, "title_first_last": 2},
        title_rate=0.9, contact_rate=0.4, id_rate=0.6, misspell_rate=0.003, lab_table_rate=0.25,
        verbosity=(3, 6), section_variant=3,
    ),
    SiteStyle(
        name="ehr_portal",
        note_mix={"discharge_summary": 0.2, "progress_note": 0.35, "nursing_note": 0.35, "pathology_report": 0.1, "icu_nursing_note": 0.6},
        diagnosis_weights=_uniform(DIAGNOSIS_LABELS, diabetes=2.5, ckd=2.0),
        primary_site_weights=_uniform(_PS, prostate=1.5, breast=1.5),
        date_formats={"d_mon_y": 4, "mdy_slash": 2, "iso": 1, "mon_d_y": 1},
        casing={"normal": 0.85, "upper": 0.15},
        header="lower_dash",
        abbrev_rate=0.5,
        patient_name_forms={"last_comma_first": 3, "first_last": 2, "first_initial_last": 1},
        doctor_name_forms={"last_comma_first": 2, "first_last": 2, "first_initial_last": 1},
        title_rate=0.3, contact_rate=2.2, id_rate=1.5, misspell_rate=0.01, lab_table_rate=0.5,
        verbosity=(1, 4), kv_sep=" = ", section_variant=1,
    ),
)


#: site-exclusive full-date formats of the five archetypes (pairwise disjoint)
_SITE_DATE_FORMATS: tuple[dict[str, float], ...] = (
    {"mdy_slash": 4, "month_d_y": 1},
    {"mdy_short": 4, "mdy_dash": 1},
    {"iso": 4, "ymd_slash": 1},
    {"d_month_y": 3, "dot": 2},
    {"d_mon_y": 4, "mon_d_y": 1},
)
#: site-exclusive English phone patterns (pairwise disjoint; ``{a}`` area code, ``{b}-{c}`` number)
_SITE_PHONE_FORMATS: tuple[dict[str, float], ...] = (
    {"({a}) {b}-{c}": 1.0},
    {"{a}-{b}-{c}": 2.0, "{b}-{c}": 1.0},
    {"{a}{b}{c}": 1.0, "{a}.{b}.{c}": 1.0},
    {"+1 {a} {b} {c}": 1.0, "1-{a}-{b}-{c}": 1.0},
    {"({a}){b}-{c}": 1.0, "{a} {b} {c}": 1.0},
)
#: site-exclusive shapes of medical record, account and order numbers (pairwise disjoint)
_SITE_ID_SHAPES: tuple[dict[str, dict[str, float]], ...] = (
    {"MEDICALRECORD": {"MR#######": 1.0}, "ACCOUNT": {"ACCT-#######": 1.0}, "IDNUM": {"ORD-########": 1.0}},
    {"MEDICALRECORD": {"#######": 1.0}, "ACCOUNT": {"##########": 1.0}, "IDNUM": {"#######": 1.0}},
    {"MEDICALRECORD": {"##-###-###": 1.0}, "ACCOUNT": {"#####-#####": 1.0}, "IDNUM": {"AA-##-######": 1.0}},
    {"MEDICALRECORD": {"A#######": 1.0}, "ACCOUNT": {"A########": 1.0}, "IDNUM": {"A##-######": 1.0}},
    {"MEDICALRECORD": {"###-##-##": 1.0, "########": 1.0}, "ACCOUNT": {"AC########": 1.0},
     "IDNUM": {"AA##-#####": 1.0, "##AA####": 1.0}},
)
#: site-exclusive hospital-name suffixes (English; pairwise disjoint)
_SITE_HOSPITAL_SUFFIXES: tuple[dict[str, float], ...] = (
    {"University Hospital": 2.0, "Medical Center": 1.0},
    {"Community Hospital": 2.0, "Regional Medical Center": 1.0},
    {"Cancer Center": 2.0, "Health Center": 1.0},
    {"Memorial Hospital": 2.0, "Infirmary": 1.0},
    {"Health System": 2.0, "General Hospital": 1.0},
)
#: site wording of common clinical vocabulary in running text (whole words, case-sensitive)
_SITE_VOCAB: tuple[dict[str, str], ...] = (
    {"patient": "patient", "history": "history"},
    {"patient": "pt", "Patient": "Pt", "history": "hx", "with": "w/", "without": "w/o", "and": "&",
     "blood pressure": "BP", "shortness of breath": "SOB", "daily": "qd"},
    {"patient": "subject", "Patient": "Subject", "history": "Hx", "diagnosis": "Dx", "treatment": "Tx"},
    {"patient": "gentleman or lady", "Patient": "The patient", "reports": "relates", "denies": "does not endorse",
     "daily": "once a day"},
    {"patient": "client", "Patient": "Client", "with": "w/", "history": "hist.", "follow-up": "f/u",
     "follow up": "f/u", "twice daily": "BID"},
)
#: header decorations and key/value separators the archetypes use (drawn at random at h = 0)
HEADERS: tuple[str, ...] = tuple(a.header for a in _ARCHETYPES)
KV_SEPS: tuple[str, ...] = (": ", " = ")

#: how different the sites are by default (0 = every site writes alike, 1 = the most
#: different); see the module docstring and :func:`site_style`. Measured (cross-site
#: binary-token F1, :func:`deidlib.studies.corpus_overview.cross_site_matrix` with its cpu tagger, cpu
#: profile corpus of 300 patients over 5 sites, one tagger per site, seeds 0-2, i.e.
#: ``cross_site_summary(cross_site_matrix({s: load_corpus("synthetic", profile="cpu", seed=s,
#: heterogeneity=1.0) for s in (0, 1, 2)}))``): at 1.0 the mean diagonal is 0.949 (every site
#: >= 0.896) and the mean off-diagonal 0.789, a gap of 15.9 points (target: 15); at 0.0 the
#: gap is 0.4 points over the same seeds. Notebook 00 recomputes both levels and prints the
#: verdict (``figures/00_corpus_overview/corpus_cross_site.csv``).
DEFAULT_HETEROGENEITY: float = 1.0


def check_heterogeneity(h) -> float:
    """``h`` as a float in [0, 1], or a ``ValueError`` naming the parameter."""
    if isinstance(h, bool):
        raise ValueError(f"heterogeneity must be a number in [0, 1], got {h!r}")
    try:
        v = float(h)
    except (TypeError, ValueError):
        raise ValueError(f"heterogeneity must be a number in [0, 1], got {h!r}") from None
    if not 0.0 <= v <= 1.0:
        raise ValueError(f"heterogeneity must be a number in [0, 1], got {h!r}")
    return v


def site_names(k: int) -> list[str]:
    """Names of ``k`` sites: ``site0`` ... ``site{k-1}``."""
    if not isinstance(k, int) or k < 1:
        raise ValueError(f"number of sites must be a positive integer, got {k!r}")
    return [f"site{i}" for i in range(k)]


def _norm(d: dict[str, float]) -> dict[str, float]:
    t = sum(d.values())
    return {k: v / t for k, v in d.items()} if t > 0 else dict(d)


def _mean_table(tables) -> dict[str, float]:
    out: dict[str, float] = {}
    tables = [_norm(t) for t in tables]
    for t in tables:
        for k, v in t.items():
            out[k] = out.get(k, 0.0) + v / len(tables)
    return out


def _mix(common: dict[str, float], own: dict[str, float], h: float) -> dict[str, float]:
    """``(1 - h) * common + h * own`` over the union of keys (both normalized), zero weights dropped."""
    c, o = _norm(common), _norm(own)
    out = {k: (1 - h) * c.get(k, 0.0) + h * o.get(k, 0.0) for k in dict.fromkeys([*c, *o])}
    return {k: v for k, v in out.items() if v > 0}


def _lin(common: float, own: float, h: float) -> float:
    return (1 - h) * common + h * own


def _mean(xs) -> float:
    xs = list(xs)
    return sum(xs) / len(xs)


def _common_ids() -> dict[str, dict[str, float]]:
    return {k: _mean_table([t[k] for t in _SITE_ID_SHAPES]) for k in _SITE_ID_SHAPES[0]}


def _styled(a: int, h: float) -> SiteStyle:
    """Archetype ``a`` at heterogeneity ``h``: each table and rate between the common pool and its own."""
    base, A = _ARCHETYPES[a], _ARCHETYPES
    tables = ("note_mix", "diagnosis_weights", "primary_site_weights", "casing", "patient_name_forms",
              "doctor_name_forms")
    rates = ("abbrev_rate", "title_rate", "contact_rate", "id_rate", "misspell_rate", "lab_table_rate", "glue_rate")
    over: dict[str, Any] = {t: _mix(_mean_table([getattr(x, t) for x in A]), getattr(base, t), h) for t in tables}
    over.update({r: _lin(_mean(getattr(x, r) for x in A), getattr(base, r), h) for r in rates})
    lo = _lin(_mean(x.verbosity[0] for x in A), base.verbosity[0], h)
    hi = _lin(_mean(x.verbosity[1] for x in A), base.verbosity[1], h)
    common_ids = _common_ids()
    return replace(
        base, **over,
        verbosity=(round(lo), max(round(lo), round(hi))),
        date_formats=_mix(_mean_table(_SITE_DATE_FORMATS), _SITE_DATE_FORMATS[a], h),
        phone_formats=_mix(_mean_table(_SITE_PHONE_FORMATS), _SITE_PHONE_FORMATS[a], h),
        id_shapes={k: _mix(common_ids[k], _SITE_ID_SHAPES[a][k], h) for k in common_ids},
        hospital_suffixes=_mix(_mean_table(_SITE_HOSPITAL_SUFFIXES), _SITE_HOSPITAL_SUFFIXES[a], h),
        vocab=dict(_SITE_VOCAB[a]),
        heterogeneity=h,
    )


def _perturb(d: dict[str, float], rng: random.Random, h: float, lo: float = 0.4, hi: float = 2.5) -> dict[str, float]:
    return {k: v * rng.uniform(lo, hi) ** h for k, v in d.items()}


def site_style(index: int, seed: int, heterogeneity: float = DEFAULT_HETEROGENEITY) -> SiteStyle:
    """The style of site ``index`` at ``heterogeneity`` (see the module docstring).

    Archetype ``index % 5`` moved towards the common style by ``1 - heterogeneity``;
    indices >= 5 also get seeded perturbations of their weights (scaled by ``heterogeneity``).
    """
    h = check_heterogeneity(heterogeneity)
    if index < 0:
        raise ValueError(f"site index must be >= 0, got {index}")
    a = index % len(_ARCHETYPES)
    base = _styled(a, h)
    if index < len(_ARCHETYPES):
        return base
    rng = random.Random(f"{seed}/style/{index}")
    return replace(
        base,
        name=f"{base.name}-{index // len(_ARCHETYPES) + 1}",
        note_mix=_perturb(base.note_mix, rng, h),
        diagnosis_weights=_perturb(base.diagnosis_weights, rng, h),
        primary_site_weights=_perturb(base.primary_site_weights, rng, h),
        date_formats=_perturb(base.date_formats, rng, h),
        abbrev_rate=min(1.0, base.abbrev_rate * rng.uniform(0.5, 1.5) ** h),
        contact_rate=base.contact_rate * rng.uniform(0.6, 1.6) ** h,
        misspell_rate=base.misspell_rate * rng.uniform(0.5, 2.0) ** h,
        section_variant=rng.randrange(4),
    )
