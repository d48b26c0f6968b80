"""The five note types: discharge summary, progress note, nursing note, pathology report
(the latter with primary-site / subsite content for the registry study), built from a
shared header and sections, and the ICU nursing note (:mod:`.icu`); plus the two guideline
note types that only ``extra_note_types`` adds (:mod:`.guideline`: dictated discharge summary,
emergency visit); :func:`render_note` picks the renderer of ``ctx.note_type``.
"""

from __future__ import annotations

import datetime as _dt

from ...corpus.document import Span
from ..phi_forms import format_age, format_date
from ..vocab import PRIMARY_SITES
from .context import NoteContext
from .guideline import GUIDELINE_RENDERERS
from .icu import render_icu_nursing
from .slots import SLOTS, lab_value, render_many, render_template, site_templates
from .templates import (
    ALLERGIES,
    CONTACT,
    COURSE,
    DISPO,
    EXAM_LINES,
    FAMILY,
    FOLLOWUP,
    HPI_MORE,
    HPI_OPEN,
    NURSE,
    PMH,
    PN_AP,
    PN_SUBJ,
    PSH,
    SOCIAL,
)

__all__ = []


def _slot(ctx: NoteContext, name: str) -> None:
    """Write the template slot ``{name}`` (see :data:`.slots.SLOTS`)."""
    SLOTS[name](ctx)

def _age_in_header(ctx: NoteContext) -> None:
    s, suf = format_age(ctx.age, ctx.rng, ctx.lang, ctx.patient.sex, kind="bare")
    ctx.builder.add_phi(s, "AGE")
    ctx.builder.add_text(suf)


def _contact_block(ctx: NoteContext) -> int:
    """Contact sentences (phone, e-mail, address...) at the site's contact rate; returns how many."""
    n = 0
    rate = ctx.style.contact_rate
    for template in CONTACT:
        if ctx.rng.random() < 0.12 * rate:
            render_template(ctx, template)
            ctx.builder.add_text("\n")
            n += 1
    return n


NOTE_TITLES = {
    "discharge_summary": ("DISCHARGE SUMMARY", "Discharge Summary", "D/C SUMMARY", "discharge summary"),
    "progress_note": ("PROGRESS NOTE", "Progress Note", "Daily Progress Note", "MEDICINE PROGRESS NOTE"),
    "nursing_note": ("NURSING NOTE", "Nursing Progress Note", "RN Shift Note", "Nursing Shift Assessment"),
    "pathology_report": ("SURGICAL PATHOLOGY REPORT", "Pathology Report", "SURGICAL PATHOLOGY", "Cytopathology Report"),
}


def _kv_line(ctx: NoteContext, key: str, slot: str) -> None:
    ctx.kv(key)
    SLOTS[slot](ctx)
    ctx.builder.add_text("\n")


def _note_header(ctx: NoteContext) -> None:
    builder, rng, style = ctx.builder, ctx.rng, ctx.style
    if rng.random() < 0.85:
        _slot(ctx, "HOSP")
        if rng.random() < 0.3:
            builder.add_text(" - ")
            ctx.builder.add_phi(ctx.patient.city if rng.random() < 0.5 else ctx.pools.home_city, "CITY")
        builder.add_text("\n")
    if ctx.note_type == "pathology_report" or rng.random() < 0.3:
        builder.add_text("Department of " if ctx.lang == "en" else "Service de ")
        builder.add_phi("Pathology" if ctx.note_type == "pathology_report" and ctx.lang == "en"
            else ctx.choice(ctx.pools.departments), "DEPARTMENT")
        builder.add_text("\n")
    builder.add_text(ctx.choice(NOTE_TITLES[ctx.note_type]) + "\n\n")
    _kv_line(ctx, ctx.choice(("Patient", "Name", "Patient Name", "PATIENT")), "PTFULL")
    if rng.random() < style.glue_rate:
        builder.add_text("MRN#")  # the identifier glued to its key: PHI inside a token
        SLOTS["MRN"](ctx)
        builder.add_text("\n")
    else:
        _kv_line(ctx, ctx.choice(("MRN", "Medical Record #", "MR#", "Unit No")), "MRN")
    if rng.random() < 0.7:
        ctx.kv(ctx.choice(("DOB", "Date of Birth", "D.O.B.")))
        ctx.dphi(ctx.patient.birth)
        builder.add_text("\n")
    if rng.random() < 0.6:
        ctx.kv("Age")
        _age_in_header(ctx)
        builder.add_text(f"   Sex{style.kv_sep}{ctx.patient.sex}\n")
    if rng.random() < 0.25 * style.id_rate:
        _kv_line(ctx, "SSN", "SSN")
    if rng.random() < 0.35 * style.id_rate:
        _kv_line(ctx, ctx.choice(("Acct #", "Account No", "Billing Acct")), "ACCT")
    if rng.random() < 0.3 * style.id_rate:
        ctx.kv(ctx.choice(("Insurance", "Payer")))
        _slot(ctx, "INSURER")
        builder.add_text(" #")
        SLOTS["HP"](ctx)
        builder.add_text("\n")
    if rng.random() < 0.4 * style.id_rate:
        _kv_line(ctx, ctx.choice(("Encounter #", "Visit ID", "CSN")), "IDNUM")
    if rng.random() < 0.04 * style.id_rate:
        _kv_line(ctx, "Biometric ID", "BIO")
    if rng.random() < 0.05 * style.id_rate:
        _kv_line(ctx, "Driver's License", "LIC")
    if rng.random() < 0.25 * style.contact_rate:
        ctx.kv("Address")
        _slot(ctx, "ADDR")
        builder.add_text("\n")
    if rng.random() < 0.3 * style.contact_rate:
        _kv_line(ctx, ctx.choice(("Phone", "Home Phone", "Tel")), "PHONE")
    if rng.random() < 0.1 * style.contact_rate:
        _kv_line(ctx, "Email", "EMAIL")
    if ctx.note_type == "discharge_summary":
        ctx.kv(ctx.choice(("Admission Date", "Date of Admission", "Admitted")))
        ctx.dphi(ctx.adm)
        builder.add_text("\n")
        ctx.kv(ctx.choice(("Discharge Date", "Date of Discharge", "Discharged")))
        ctx.dphi(ctx.date)
        builder.add_text("\n")
    else:
        ctx.kv(ctx.choice(("Date", "Date of Service", "Visit Date")))
        ctx.dphi(ctx.date)
        builder.add_text(f" {ctx.time()}\n")
    if rng.random() < 0.7:
        ctx.kv(ctx.choice(("Attending", "Attending Physician", "Provider")))
        ctx.doctor(ctx.patient.doctors[0])
        builder.add_text("\n")
    if rng.random() < 0.5:
        _kv_line(ctx, ctx.choice(("Service", "Unit")), "DEPT")
    if rng.random() < 0.35:
        _kv_line(ctx, ctx.choice(("Room", "Bed", "Rm")), "ROOM")
    if rng.random() < 0.3:
        _kv_line(ctx, "PCP", "PCP")
    builder.add_text("\n")


def _lab_table(ctx: NoteContext) -> None:
    builder, rng = ctx.builder, ctx.rng
    days = [ctx.adm + _dt.timedelta(days=i) for i in range(rng.randint(2, 4))]
    fmt = ctx.choice(("md", ctx.short_fmt, ctx.date_fmt, "mon_d"))
    names = rng.sample(list(dict.fromkeys(list(ctx.dx["labs"]) + ["Na", "K", "Cr", "WBC", "Hgb", "glucose"])), rng.randint(4, 7))
    builder.add_text(f"{'':10s}")
    for d in days:
        s = format_date(d, fmt, ctx.lang)
        ctx.dphi(d, fmt)
        builder.add_text(" " * max(2, 12 - len(s)))
    builder.add_text("\n")
    for n in names:
        builder.add_text(f"{n:10s}")
        for _ in days:
            v = lab_value(rng, n)
            builder.add_text(f"{v:12s}")
        builder.add_text("\n")


def _labs_inline(ctx: NoteContext) -> None:
    for i in range(ctx.rng.randint(3, 6)):
        if i:
            ctx.builder.add_text(", ")
        _slot(ctx, "labval")
    ctx.builder.add_text(".\n")


def _labs_section(ctx: NoteContext) -> None:
    """The labs section: a table of days at the site's ``lab_table_rate``, else one line."""
    ctx.header("labs")
    if ctx.rng.random() < ctx.style.lab_table_rate:
        _lab_table(ctx)
    else:
        _labs_inline(ctx)
    ctx.builder.add_text("\n")


def _list_section(ctx: NoteContext, key: str, tpls, k: tuple[int, int], bullet: str | None = None) -> None:
    ctx.header(key)
    bullet = bullet if bullet is not None else ctx.choice(("- ", "* ", "", "#"))
    tpls = site_templates(ctx, tpls)
    chosen = ctx.rng.sample(tpls, min(len(tpls), ctx.rng.randint(*k)))
    for i, tpl in enumerate(chosen):
        if bullet == "#":
            ctx.builder.add_text(f"{i + 1}. ")
        else:
            ctx.builder.add_text(bullet)
        render_template(ctx, tpl)
        ctx.builder.add_text("\n")
    ctx.builder.add_text("\n")


def _meds_section(ctx: NoteContext, key: str) -> None:
    ctx.header(key)
    for i in range(ctx.rng.randint(3, 7)):
        ctx.builder.add_text(f"{i + 1}. " if ctx.rng.random() < 0.5 else "- ")
        _slot(ctx, "medline")
        ctx.builder.add_text("\n")
    ctx.builder.add_text("\n")


def _exam(ctx: NoteContext) -> None:
    ctx.header("exam")
    ctx.builder.add_text("VS: ")
    _slot(ctx, "vit")
    ctx.builder.add_text("\n")
    for k, opts in EXAM_LINES:
        if ctx.rng.random() < 0.8:
            ctx.builder.add_text(f"{k}: {ctx.vocab(ctx.choice(opts))}")
            if ctx.rng.random() < 0.3:
                ctx.builder.add_text("; ")
                _slot(ctx, "finding")
            ctx.builder.add_text("\n")
    ctx.builder.add_text("\n")


def _narr(ctx: NoteContext, key: str, first, more, k_extra: tuple[int, int] | None = None) -> None:
    ctx.header(key)
    if first:
        render_template(ctx, ctx.choice(site_templates(ctx, first)))
        ctx.builder.add_text(" ")
    lo, hi = k_extra or ctx.style.verbosity
    render_many(ctx, more, ctx.rng.randint(lo, hi))
    ctx.builder.add_text("\n\n")


def _discharge(ctx: NoteContext) -> None:
    builder, rng, style = ctx.builder, ctx.rng, ctx.style
    _note_header(ctx)
    ctx.header("cc")
    _slot(ctx, "cc")
    builder.add_text("\n\n")
    _narr(ctx, "hpi", HPI_OPEN, HPI_MORE)
    _list_section(ctx, "pmh", PMH, (2, 6))
    if rng.random() < 0.6:
        _list_section(ctx, "psh", PSH, (1, 3))
    _meds_section(ctx, "adm_meds")
    ctx.header("allergies")
    builder.add_text(ctx.choice(ALLERGIES) + "\n\n")
    _narr(ctx, "social", None, SOCIAL, (2, 4))
    if rng.random() < 0.6:
        _narr(ctx, "family", None, FAMILY, (1, 2))
    _exam(ctx)
    _labs_section(ctx)
    if rng.random() < 0.6:
        ctx.header("imaging")
        ctx.dphi(ctx.adm, ctx.choice(("md", ctx.date_fmt)))
        builder.add_text(f" {ctx.choice(ctx.dx['procedure'])}: {ctx.choice(ctx.dx['result'])}.\n\n")
    ctx.header("course")
    render_many(ctx, COURSE, rng.randint(style.verbosity[0] + 1, style.verbosity[1] + 2), sep="\n")
    builder.add_text("\n\n")
    ctx.header("dx")
    builder.add_text("1. ")
    _slot(ctx, "dxprob")
    builder.add_text("\n2. ")
    _slot(ctx, "comorb")
    builder.add_text("\n\n")
    _meds_section(ctx, "dc_meds")
    ctx.header("dispo")
    builder.add_text(ctx.choice(DISPO) + "\n\n")
    _list_section(ctx, "followup", FOLLOWUP, (1, 3), bullet="- ")
    _contact_block(ctx)
    ctx.signature()


def _progress(ctx: NoteContext) -> None:
    builder, rng, style = ctx.builder, ctx.rng, ctx.style
    _note_header(ctx)
    if rng.random() < 0.5:
        builder.add_text(f"HD #{(ctx.date - ctx.adm).days + 1}\n")
    ctx.header("subjective")
    render_many(ctx, PN_SUBJ, rng.randint(*style.verbosity))
    builder.add_text("\n\n")
    ctx.header("objective")
    builder.add_text("Vitals: ")
    _slot(ctx, "vit")
    builder.add_text("\nI/O: " + f"{rng.randint(500, 2400)}/{rng.randint(400, 3200)}\n")
    for k, opts in EXAM_LINES:
        if rng.random() < 0.5:
            builder.add_text(f"{k}: {ctx.vocab(ctx.choice(opts))}\n")
    if rng.random() < 0.6:
        builder.add_text("Exam notable for ")
        _slot(ctx, "finding")
        builder.add_text(".\n")
    builder.add_text("\n")
    _labs_section(ctx)
    ctx.header("assessment")
    _agea_sentence(ctx)
    render_many(ctx, PN_AP, rng.randint(style.verbosity[0] + 1, style.verbosity[1] + 2), sep="\n")
    builder.add_text("\n")
    if rng.random() < 0.3:
        _contact_block(ctx)
    ctx.signature()


def _agea_sentence(ctx: NoteContext) -> None:
    builder = ctx.builder
    if ctx.rng.random() < 0.5:
        _slot(ctx, "PT")
        builder.add_text(" is a ")
    _slot(ctx, "AGEA")
    builder.add_text(" ")
    _slot(ctx, "sexw")
    builder.add_text(" with ")
    _slot(ctx, "dxprob")
    builder.add_text(f", {ctx.choice(('improving', 'stable', 'slowly improving', 'clinically worse'))}.\n")


def _nursing(ctx: NoteContext) -> None:
    builder, rng, style = ctx.builder, ctx.rng, ctx.style
    if rng.random() < 0.5:
        _note_header(ctx)
    else:
        builder.add_text(ctx.choice(NOTE_TITLES["nursing_note"]) + " ")
        ctx.dphi(ctx.date)
        builder.add_text(f" {ctx.time()}\n")
        _slot(ctx, "PTFULL")
        builder.add_text("  ")
        SLOTS["MRN"](ctx)
        builder.add_text("  Rm ")
        _slot(ctx, "ROOM")
        builder.add_text("\n\n")
    if rng.random() < 0.5:
        ctx.header("nursing")
    k = rng.randint(style.verbosity[0] + 2, style.verbosity[1] + 5)
    nurse = site_templates(ctx, NURSE)
    for tpl in (ctx.choice(nurse) for _ in range(k)):
        render_template(ctx, tpl)
        builder.add_text("\n" if rng.random() < 0.6 else " ")
    builder.add_text("\n")
    if rng.random() < 0.4:
        ctx.header("interventions")
        render_many(ctx, NURSE, rng.randint(1, 3))
        builder.add_text("\n")
    if rng.random() < 0.2:
        _contact_block(ctx)
    ctx.signature(role="RN")


GRADES = ["well differentiated", "moderately differentiated", "poorly differentiated"]


def _pathology(ctx: NoteContext) -> None:
    builder, rng, style = ctx.builder, ctx.rng, ctx.style
    patient = ctx.patient
    ps = PRIMARY_SITES[patient.primary_site]
    sub_name, sub_phr = ps["subsites"][patient.subsite]
    organ = ctx.choice(ps["organ"])
    side = f"{patient.laterality} " if patient.laterality else ""
    loc = ctx.choice(sub_phr)
    spec = ctx.choice(ps["specimen"])
    _note_header(ctx)
    ctx.kv(ctx.choice(("Accession #", "Case #", "Surgical Pathology #")))
    _slot(ctx, "IDNUM")
    builder.add_text("\n")
    ctx.kv("Collected")
    ctx.dphi(ctx.date - _dt.timedelta(days=rng.randint(1, 4)))
    builder.add_text("   ")
    ctx.kv("Received")
    ctx.dphi(ctx.date - _dt.timedelta(days=rng.randint(0, 1)))
    builder.add_text("\n")
    ctx.kv(ctx.choice(("Submitting physician", "Ordering MD", "Requested by")))
    ctx.doctor()
    builder.add_text("\n\n")
    ctx.header("clin_hx")
    _slot(ctx, "AGEA")
    builder.add_text(" ")
    _slot(ctx, "sexw")
    builder.add_text(ctx.choice((f" with {ctx.choice(('a mass', 'an abnormal imaging finding', 'a lesion'))} in the {side}{organ}",
                  f", {side}{organ} lesion", f" with history of {ctx.choice(ctx.dx['complaint'])}")))
    builder.add_text(". ")
    if rng.random() < 0.4:
        builder.add_text("Prior history of ")
        builder.add_text(ctx.choice(("hypertension", "basal cell carcinoma of the skin", "colon polyps", "benign breast biopsy",
                      "smoking", "BPH", "Barrett's esophagus")))
        builder.add_text(". ")
    if rng.random() < 0.3:
        # a second, earlier primary elsewhere: a distractor for site/subsite classifiers
        other = ctx.choice([k for k in PRIMARY_SITES if k != patient.primary_site])
        oinfo = PRIMARY_SITES[other]
        builder.add_text(f"History of {ctx.choice(oinfo['histology'])} of the {ctx.choice(oinfo['organ'])}, treated in ")
        _slot(ctx, "PASTYEAR")
        builder.add_text(". ")
    if rng.random() < 0.3:
        builder.add_text("Previous biopsy at ")
        _slot(ctx, "OHOSP")
        builder.add_text(" on ")
        _slot(ctx, "PASTDATE")
        builder.add_text(".")
    builder.add_text("\n\n")
    ctx.header("specimen")
    builder.add_text(f"A. {side.capitalize() if side else ''}{organ if side else organ.capitalize()}, {loc}, {spec}\n")
    if rng.random() < 0.4:
        builder.add_text(f"B. {ctx.choice(('Sentinel lymph node #1', 'Regional lymph nodes', 'Additional margin'))}\n")
    builder.add_text("\n")
    ctx.header("gross")
    builder.add_text("Received in formalin labeled with the patient's name ")
    _slot(ctx, "PTFULL")
    builder.add_text(" and medical record number ")
    SLOTS["MRN"](ctx)
    builder.add_text(f" is a {ctx.choice(('tan-pink', 'gray-white', 'tan-yellow', 'red-brown'))} "
        f"{ctx.choice(('fragment', 'ellipse of tissue', 'resection specimen', 'core biopsies'))} measuring "
        f"{rng.uniform(0.3, 9.0):.1f} x {rng.uniform(0.2, 6.0):.1f} x {rng.uniform(0.1, 4.0):.1f} cm. "
        f"The lesion is located in the {loc}" + (f" of the {side}{organ}" if loc != organ else "") +
        f" and measures {rng.uniform(0.4, 5.5):.1f} cm in greatest dimension. "
        f"Sectioned and submitted in cassettes A1-A{rng.randint(2, 12)}.")
    if rng.random() < 0.3:
        builder.add_text(" Grossed by ")
        _slot(ctx, "DRUSER")
        builder.add_text(".")
    builder.add_text("\n\n")
    if rng.random() < 0.7:
        ctx.header("micro")
        builder.add_text(f"Sections show {patient.histology}, {ctx.choice(GRADES)}. ")
        builder.add_text(ctx.choice(ps["extra"]).format(g=rng.randint(1, 3)) + ". ")
        builder.add_text(f"{ctx.choice(ps['extra']).format(g=rng.randint(1, 3))}.\n\n")
    ctx.header("final")
    up = ctx.choice((str.upper, lambda s: s))
    builder.add_text(up(f"{side}{organ}, {loc}, {spec}:") + "\n")
    builder.add_text(f"- {patient.histology.upper() if rng.random() < 0.3 else patient.histology}, {ctx.choice(GRADES)}.\n")
    builder.add_text(f"- Margins {ctx.choice(('negative', 'negative, closest 2 mm', 'positive at the deep margin'))}.\n")
    builder.add_text(f"- {rng.randint(0, 3)}/{rng.randint(3, 22)} lymph nodes involved.\n\n")
    if rng.random() < 0.4 + (0.4 if style.name.startswith("cancer_registry") else 0.0):
        ctx.header("synoptic")
        builder.add_text(f"Procedure: {spec}\nTumor site: {loc}\n")
        if patient.laterality:
            builder.add_text(f"Laterality: {patient.laterality}\n")
        builder.add_text(f"Histologic type: {patient.histology}\nTumor size: {rng.uniform(0.4, 5.5):.1f} cm\n"
            f"pT{rng.randint(1, 4)} pN{rng.randint(0, 2)} pMX\n\n")
    if rng.random() < 0.4:
        ctx.header("comment")
        builder.add_text("Case reviewed at intradepartmental consensus conference with ")
        _slot(ctx, "DR")
        builder.add_text(". Results called to ")
        _slot(ctx, "DR")
        builder.add_text(" on ")
        ctx.dphi(ctx.date)
        builder.add_text(f" at {ctx.time()}.")
        if rng.random() < 0.3:
            builder.add_text(" Outside slides (")
            _slot(ctx, "IDNUM")
            builder.add_text(") returned to ")
            _slot(ctx, "OHOSP")
            builder.add_text(".")
        builder.add_text("\n\n")
    builder.add_text("I have personally reviewed the slides and agree with the above diagnosis.\n")
    ctx.signature()


_RENDERERS = {
    "discharge_summary": _discharge,
    "progress_note": _progress,
    "nursing_note": _nursing,
    "pathology_report": _pathology,
    "icu_nursing_note": render_icu_nursing,
    **GUIDELINE_RENDERERS,
}


def render_note(ctx: NoteContext) -> tuple[str, list[Span]]:
    """Render the note of ``ctx`` and return ``(text, spans)``."""
    _RENDERERS[ctx.note_type](ctx)
    return ctx.builder.text(), ctx.builder.spans
