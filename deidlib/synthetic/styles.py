"""Site writing styles: how each hospital / registry writes its notes.

Collaborative training (festag), ensembles across data sets (ahmed) and the
registry-invariant classifier (alawad) all need sites whose data differ in more than
their patients. A :class:`SiteStyle` fixes, per site: the note-type mix, the diagnosis
and tumour-site mix (label shift), section-header wording and decoration, abbreviation
rate, casing (some sites write notes in all caps or all lower case), preferred date
formats, name forms, how much contact/identifier PHI their headers carry, and the
misspelling rate.

Five archetypes are defined; sites beyond five reuse an archetype with weights
perturbed by a seeded generator (so ``sites=8`` gives eight distinct mixes).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

from .vocab import DIAGNOSIS_LABELS, PRIMARY_SITES

__all__ = ["SiteStyle", "ARCHETYPES", "DEFAULT_HETEROGENEITY", "check_heterogeneity", "site_style", "site_names", "NOTE_TYPES", "SECTION_NAMES", "SECTION_SYNONYMS"]

NOTE_TYPES: tuple[str, ...] = ("discharge_summary", "progress_note", "nursing_note", "pathology_report", "icu_nursing_note")

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


def _uniform(keys, **over) -> dict[str, float]:
    d = {k: 1.0 for k in keys}
    d.update(over)
    return d


_PS = tuple(PRIMARY_SITES)

ARCHETYPES: tuple[SiteStyle, ...] = (
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


#: how different the sites are by default (0 = every site writes alike, 1 = the most
#: different); see :func:`site_style`
DEFAULT_HETEROGENEITY: float = 1.0


def check_heterogeneity(h) -> float:
    """``h`` as a float in [0, 1], or a ``ValueError`` naming the parameter."""
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


def _perturb(d: dict[str, float], rng: random.Random, lo: float = 0.4, hi: float = 2.5) -> dict[str, float]:
    return {k: v * rng.uniform(lo, hi) for k, v in d.items()}


def site_style(index: int, seed: int, heterogeneity: float = DEFAULT_HETEROGENEITY) -> SiteStyle:
    """The style of site ``index``: archetype ``index % 5``; indices >= 5 get seeded perturbations."""
    check_heterogeneity(heterogeneity)
    if index < 0:
        raise ValueError(f"site index must be >= 0, got {index}")
    base = ARCHETYPES[index % len(ARCHETYPES)]
    if index < len(ARCHETYPES):
        return base
    rng = random.Random(f"{seed}/style/{index}")
    return replace(
        base,
        name=f"{base.name}-{index // len(ARCHETYPES) + 1}",
        note_mix=_perturb(base.note_mix, rng),
        diagnosis_weights=_perturb(base.diagnosis_weights, rng),
        primary_site_weights=_perturb(base.primary_site_weights, rng),
        date_formats=_perturb(base.date_formats, rng),
        abbrev_rate=min(1.0, base.abbrev_rate * rng.uniform(0.5, 1.5)),
        contact_rate=base.contact_rate * rng.uniform(0.6, 1.6),
        misspell_rate=base.misspell_rate * rng.uniform(0.5, 2.0),
        section_variant=rng.randrange(4),
    )
