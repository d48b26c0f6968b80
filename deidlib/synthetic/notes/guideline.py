"""Dictated discharge summaries and emergency-visit notes: PHI in the forms the i2b2 2014
guideline lists (Stubbs & Uzuner 2015, §§ 2-3) and that the other note types rarely write.

Two note types, not in any site's default mix (so the studies' corpora stay as they were):
``generate(extra_note_types={"dictated_discharge": w, "emergency_visit": w})`` adds them, and
the default model's recipe does (:mod:`deidlib.pipeline.default_model`). They write:

* patient names as ``LAST,FIRST`` (with or without the space, in capitals or not) after a name
  label, and signature blocks with the clinician's full name in capitals and a credential after
  a comma (``JOHN A. SMITH, M.D.``), a staff user name of two letters and digits (``js45``);
* a dictation line: the dictator's initials and the transcriber's surname in lower case
  (``JAS:smith``), each its own DOCTOR span;
* record numbers in dash groups (``123-45-67``), ISO and two-digit-year dates, date-time stamps
  (only the date is PHI: ``03/09/19`` of ``03/09/19 14:22``), day-only dates (``5th`` of "since
  the 5th"), spelled-out ages over 89 (a relative's: "her ninety-three year old husband"),
  device identifiers and serial numbers (``S/N 7GH2-9981-KL``), IPv6 addresses;
* every label word (``SSN``, ``MRN``, ``DOB``, ``Tel``, ``S/N``, ``DD``) outside its value's span.
"""

from __future__ import annotations

import datetime as _dt

from ..phi_forms import (
    age_words,
    dash_grouped_id,
    device_serial,
    dictation_initials,
    format_phone,
    ipv6_address,
    ordinal,
    staff_user,
)
from .context import NoteContext
from .slots import SLOTS, render_many
from .templates import COURSE, HPI_MORE, PMH

__all__ = []

_CREDENTIALS = ("M.D.", "MD", "M.D., Ph.D.", "D.O.", "NP", "PA-C")
_DEVICES = ("pacemaker", "ICD", "insulin pump", "LVAD", "neurostimulator", "infusion pump", "CPAP machine")
_DEVICE_LABELS = ("S/N ", "serial # ", "Serial number: ", "device ID ", "SN: ")


def _iso_or_short(ctx: NoteContext, d: _dt.date) -> None:
    """A date in ISO or with a two-digit year (``2019-03-04``, ``03/04/19``, ``3/4/19``)."""
    fmt = ctx.choice(("iso", "mdy_short", "two_digit"))
    if fmt == "two_digit":
        ctx.builder.add_phi(f"{d.month:02d}/{d.day:02d}/{d.year % 100:02d}", "DATE")
    else:
        ctx.dphi(d, fmt)


def _stamp(ctx: NoteContext, d: _dt.date) -> None:
    """A date-time stamp: the date (PHI) and a clock time (not PHI) with or without a colon."""
    _iso_or_short(ctx, d)
    t = ctx.time()
    ctx.builder.add_text(" " + (t if ctx.rng.random() < 0.6 else t.replace(":", "")))


def _label(ctx: NoteContext, key: str) -> None:
    """A label word and its separator, never part of the value's span."""
    ctx.builder.add_text(key + ctx.choice((": ", " ", ":  ", " #: ")))


def _last_comma_first(ctx: NoteContext, first: str, last: str, subtype: str) -> None:
    """``SMITH,JOHN``, ``Smith,John``, ``SMITH, JOHN``: the whole name one span."""
    sep = "," if ctx.rng.random() < 0.6 else ", "
    text = f"{last}{sep}{first}"
    ctx.builder.add_phi(text.upper() if ctx.rng.random() < 0.6 else text, subtype)


def _caps_signature(ctx: NoteContext, d) -> None:
    """A signature block: full name (capitals more often than not), comma, credential; then the
    user name in brackets or after "User:"."""
    name = f"{d.first} {d.middle[:1]}. {d.last}" if d.middle and ctx.rng.random() < 0.5 else f"{d.first} {d.last}"
    ctx.builder.add_phi(name.upper() if ctx.rng.random() < 0.7 else name, "DOCTOR")
    ctx.builder.add_text(", " + ctx.choice(_CREDENTIALS) + "\n")
    user = staff_user(d.first, d.last, ctx.rng)
    if ctx.rng.random() < 0.5:
        ctx.builder.add_text("[")
        ctx.builder.add_phi(user, "USERNAME")
        ctx.builder.add_text("]\n")
    else:
        ctx.builder.add_text(ctx.choice(("User: ", "Signed by ", "Entered by: ")))
        ctx.builder.add_phi(user, "USERNAME")
        ctx.builder.add_text("\n")


def _dictation_line(ctx: NoteContext, d) -> None:
    """``JAS:smith`` then the dictated / transcribed stamps (``DD: 03/09/19 14:22``)."""
    ctx.builder.add_phi(dictation_initials(d.first, d.middle, d.last), "DOCTOR")
    ctx.builder.add_text(":")
    ctx.builder.add_phi(ctx.choice(ctx.pools.doctors).last.lower().replace(" ", ""), "DOCTOR")
    ctx.builder.add_text("\n" if ctx.rng.random() < 0.5 else "  ")
    ctx.builder.add_text("DD: ")
    _stamp(ctx, ctx.date)
    ctx.builder.add_text("\nDT: " if ctx.rng.random() < 0.5 else "  DT: ")
    _stamp(ctx, ctx.date + _dt.timedelta(days=ctx.rng.randint(0, 2)))
    ctx.builder.add_text("\n")
    if ctx.rng.random() < 0.5:
        _label(ctx, ctx.choice(("Job", "Job #", "Doc ID")))
        ctx.builder.add_phi(dash_grouped_id(ctx.rng), "IDNUM")
        ctx.builder.add_text("\n")


def _old_relative(ctx: NoteContext) -> None:
    """A relative's spelled-out age over 89 ("her ninety-three year old husband")."""
    age = ctx.rng.randint(90, 104)
    ctx.builder.add_text(f"Lives with {ctx.pronouns['his']} ")
    ctx.builder.add_phi(age_words(age), "AGE")
    ctx.builder.add_text(ctx.choice((" year old ", "-year-old ", " yo ")) + ctx.choice(("husband", "wife", "mother", "father"))
                         + ". ")


def _day_only(ctx: NoteContext, before: str) -> None:
    """A day-only date: "since the 5th" (only ``5th`` is PHI)."""
    day = (ctx.date - _dt.timedelta(days=ctx.rng.randint(1, 12))).day
    ctx.builder.add_text(f"{before} the ")
    ctx.builder.add_phi(ordinal(day), "DATE")


def _device_line(ctx: NoteContext) -> None:
    ctx.builder.add_text(f"{ctx.choice(_DEVICES).capitalize()} in place, ")
    serial = device_serial(ctx.rng)
    if "-" not in serial or ctx.rng.random() < 0.7:  # a serial without dash groups is known by its label
        ctx.builder.add_text(ctx.choice(_DEVICE_LABELS))
    ctx.builder.add_phi(serial, "DEVICE")
    ctx.builder.add_text(ctx.choice((", interrogated, functioning normally.\n", ".\n", "; rep notified.\n")))


def _ip_line(ctx: NoteContext) -> None:
    ctx.builder.add_text(ctx.choice(("Registered from workstation IP ", "Portal access from ", "Remote access IP: ")))
    ctx.builder.add_phi(ipv6_address(ctx.rng), "IPADDR")
    ctx.builder.add_text("\n")


def _id_header(ctx: NoteContext, title: str) -> None:
    """Title, ``NAME: LAST,FIRST``, dash-grouped record number, DOB and SSN/phone behind their labels."""
    pt, b = ctx.patient, ctx.builder
    if ctx.rng.random() < 0.7:
        SLOTS["HOSP"](ctx)
        b.add_text("\n")
    b.add_text(title + "\n\n")
    _label(ctx, ctx.choice(("NAME", "Name", "PATIENT", "Patient")))
    _last_comma_first(ctx, pt.first, pt.last, "PATIENT")
    b.add_text("    ")
    _label(ctx, ctx.choice(("MRN", "UNIT NO", "MR#", "Med Rec No")))
    b.add_phi(dash_grouped_id(ctx.rng), "MEDICALRECORD")
    b.add_text("\n")
    _label(ctx, ctx.choice(("DOB", "D.O.B.", "DATE OF BIRTH")))
    _iso_or_short(ctx, pt.birth)
    if ctx.rng.random() < 0.4:
        b.add_text("    ")
        _label(ctx, "SSN")
        b.add_phi(pt.ssn, "SSN")
    if ctx.rng.random() < 0.4:
        b.add_text("    ")
        _label(ctx, ctx.choice(("Tel", "Phone", "Ph")))
        b.add_phi(format_phone(ctx.rng, "en", "({a}) {b}-{c}"), "PHONE")
    b.add_text("\n")


def _render_dictated_discharge(ctx: NoteContext) -> None:
    """A dictated and transcribed discharge summary (see the module docstring for its forms)."""
    b, rng = ctx.builder, ctx.rng
    d = ctx.patient.doctors[0]
    _id_header(ctx, ctx.choice(("DISCHARGE SUMMARY", "Discharge Summary", "DISCHARGE SUMMARY - DICTATED")))
    _label(ctx, "ADMISSION DATE")
    _iso_or_short(ctx, ctx.adm)
    b.add_text("    ")
    _label(ctx, "DISCHARGE DATE")
    _iso_or_short(ctx, ctx.date)
    b.add_text("\nATTENDING: ")
    _caps_signature(ctx, d)
    b.add_text("\nHISTORY OF PRESENT ILLNESS: ")
    SLOTS["PT"](ctx)
    b.add_text(" is a ")
    SLOTS["AGEA"](ctx)
    b.add_text(f" {ctx.choice(('man', 'woman', 'patient'))} ")
    _day_only(ctx, ctx.choice(("with symptoms since", "admitted on", "seen in clinic on")))
    b.add_text(". ")
    render_many(ctx, HPI_MORE, rng.randint(1, 3))
    b.add_text(" ")
    if rng.random() < 0.5:
        _old_relative(ctx)
    b.add_text("\n\nPAST MEDICAL HISTORY: ")
    render_many(ctx, PMH, rng.randint(2, 4), sep="; ")
    b.add_text("\n\nHOSPITAL COURSE: ")
    render_many(ctx, COURSE, rng.randint(2, 4))
    b.add_text("\n")
    if rng.random() < 0.6:
        _device_line(ctx)
    b.add_text("\nFOLLOW UP: with Dr. ")
    b.add_phi(ctx.patient.pcp.last, "DOCTOR")
    b.add_text(" on ")
    _stamp(ctx, ctx.date + _dt.timedelta(days=rng.randint(7, 30)))
    b.add_text(".\n\n" + "_" * 24 + "\n")
    _caps_signature(ctx, d)
    b.add_text("DICTATED BY: " if rng.random() < 0.5 else "")
    _dictation_line(ctx, d)
    if rng.random() < 0.5:
        b.add_text("cc: ")
        o = ctx.choice(ctx.pools.doctors)
        b.add_phi(f"{o.first} {o.last}".upper(), "DOCTOR")
        b.add_text(", M.D.\n")


def _render_emergency_visit(ctx: NoteContext) -> None:
    """An emergency-department visit record (see the module docstring for its forms)."""
    b, rng = ctx.builder, ctx.rng
    d = ctx.choice(ctx.pools.doctors)
    _id_header(ctx, ctx.choice(("EMERGENCY DEPARTMENT RECORD", "ED Visit Note", "EMERGENCY ROOM VISIT")))
    _label(ctx, ctx.choice(("Arrival", "Triage time", "Arrived")))
    _stamp(ctx, ctx.date)
    b.add_text("    Triage RN: ")
    n = ctx.choice(ctx.pools.doctors)
    b.add_phi(staff_user(n.first, n.last, rng), "USERNAME")
    b.add_text("\n\nCHIEF COMPLAINT: ")
    SLOTS["cc"](ctx)
    b.add_text("\nHPI: ")
    SLOTS["PT"](ctx)
    b.add_text(" is a ")
    SLOTS["AGEA"](ctx)
    b.add_text(f" {ctx.choice(('M', 'F', 'man', 'woman'))} brought in by EMS from ")
    SLOTS["CITY"](ctx)
    b.add_text(" ")
    _day_only(ctx, ctx.choice(("with symptoms since", "after a fall on", "unwell since")))
    b.add_text(". ")
    render_many(ctx, HPI_MORE, rng.randint(1, 2))
    b.add_text(" ")
    if rng.random() < 0.5:
        _old_relative(ctx)
    b.add_text("\n")
    if rng.random() < 0.6:
        _device_line(ctx)
    b.add_text("ED COURSE: ")
    render_many(ctx, COURSE, rng.randint(1, 3))
    b.add_text(" Reassessed at ")
    _stamp(ctx, ctx.date)
    b.add_text(".\n")
    if rng.random() < 0.5:
        _ip_line(ctx)
    b.add_text(f"DISPOSITION: {ctx.choice(('admitted', 'discharged home', 'transferred'))}.\n\n")
    _caps_signature(ctx, d)
    if rng.random() < 0.4:
        _dictation_line(ctx, d)


#: renderers of the guideline note types, by name
GUIDELINE_RENDERERS = {"dictated_discharge": _render_dictated_discharge, "emergency_visit": _render_emergency_visit}
