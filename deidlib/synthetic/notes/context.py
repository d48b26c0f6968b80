""":class:`NoteContext`: everything one note needs (patient, site style and pools, dates,
the builder and the RNG) and the writing helpers shared by slots and note types (section
headers, key/value labels, dates, names, signatures).
"""

from __future__ import annotations

import datetime as _dt
import random

from ..phi_forms import DATE_FORMATS, format_date, format_name
from ..styles import HEADERS, KV_SEPS, SECTION_NAMES, SECTION_SYNONYMS, SiteStyle
from ..vocab import DIAGNOSES
from .builder import NoteBuilder

__all__ = []


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


class NoteContext:
    """Everything one note needs: patient, site style and pools, dates, the builder and RNG."""

    def __init__(self, *, rng: random.Random, style: SiteStyle, pools, patient, note_type: str,
                 note_date: _dt.date, record: int, case: str, abbr: bool) -> None:
        self.rng = rng
        self.style = style
        self.pools = pools
        self.patient = patient
        self.note_type = note_type
        self.date = note_date
        self.record = record
        self.lang = pools.lang
        self.abbr = abbr
        self.builder = NoteBuilder(case, style.vocab if rng.random() < style.heterogeneity else None)
        fmts = list(style.date_formats)
        self.date_fmt = rng.choices(fmts, weights=[style.date_formats[k] for k in fmts], k=1)[0]
        h = style.heterogeneity
        #: the numeric short date of lab tables and "on 3/4" mentions: the site's own format as h rises
        self.short_fmt = self.date_fmt if rng.random() < h else "mdy_short"
        own = rng.random() < h
        self.header_style = style.header if own else rng.choice(HEADERS)
        self.section_variant = style.section_variant if own else rng.randrange(4)
        self.kv_sep = style.kv_sep if own else rng.choice(KV_SEPS)
        self.age = _years_between(patient.birth, note_date)
        self.los = rng.randint(1, 9)
        if note_type == "discharge_summary":
            self.adm = note_date - _dt.timedelta(days=self.los)
        else:
            self.adm = note_date - _dt.timedelta(days=rng.randint(0, 3))
        self.dx = DIAGNOSES[patient.diagnosis]
        m = patient.sex == "M"
        self.pronouns = {"he": "he" if m else "she", "He": "He" if m else "She", "his": "his" if m else "her",
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

    def header(self, key: str, inline: bool | None = None) -> None:
        """A section header in the site's decoration; ends with a newline or a space (inline)."""
        full, short = SECTION_NAMES[key]
        syn = SECTION_SYNONYMS.get(key)
        if syn is not None and self.rng.random() < 0.85:
            full = syn[self.section_variant % len(syn)]
        h = self.header_style
        builder = self.builder
        if h == "caps_colon":
            builder.add_text(f"{full.upper()}:\n")
        elif h == "title_colon":
            builder.add_text(f"{full}: ")
        elif h == "abbr":
            builder.add_text(f"{short if self.abbr or self.rng.random() < 0.6 else full}: ")
        elif h == "stars":
            builder.add_text(f"*** {full.upper()} ***\n")
        else:
            builder.add_text(f"[{full.lower()}]\n")

    def kv(self, key: str) -> None:
        self.builder.add_text(key + self.kv_sep)

    def date_str(self, d: _dt.date, fmt: str | None = None) -> str:
        if fmt is None:
            fmt = self.date_fmt if self.rng.random() < 0.8 + 0.2 * self.style.heterogeneity else self.choice(DATE_FORMATS)
        return format_date(d, fmt, self.lang)

    def dphi(self, d: _dt.date, fmt: str | None = None) -> None:
        self.builder.add_phi(self.date_str(d, fmt), "DATE")

    def time(self) -> str:
        return f"{self.rng.randint(0, 23):02d}:{self.rng.choice(('00', '15', '30', '45', '05', '50'))}"

    # names ---------------------------------------------------------------
    def name(self, first, last, middle, forms: dict, subtype: str, sex: str = "", title_rate: float = 0.0) -> None:
        builder = self.builder
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
            builder.add_text(title if glue else title + " ")
            form = "first_last" if form == "title_first_last" else "last"
        text = format_name(first, last, form, middle=middle)
        if self.rng.random() < self.misspell * 2 and form != "initials":
            text = _misspell(text, self.rng) if len(text) >= 5 else text
        builder.add_phi(text, subtype)

    def doctor(self, d=None, forms=None) -> None:
        d = d or self.choice(self.used_doctors)
        self.name(d.first, d.last, d.middle, forms or self.style.doctor_name_forms, "DOCTOR", d.sex)

    def signature(self, role: str = "MD") -> None:
        builder, rng, style = self.builder, self.rng, self.style
        d = self.patient.doctors[0] if rng.random() < 0.6 else self.choice(self.pools.doctors)
        builder.add_text("\n")
        roll = rng.random()
        if roll < 0.4:
            builder.add_text("Electronically signed by ")
            self.doctor(d, {"first_last": 2, "first_mi_last": 1, "last_comma_first": 1})
            builder.add_text(f", {role} on ")
            self.dphi(self.date)
            builder.add_text(f" {self.time()}")
        elif roll < 0.7:
            builder.add_text("Dictated by: ")
            self.doctor(d, {"first_last": 1, "first_initial_last": 1})
            builder.add_text(f", {role}\nTranscribed by: ")
            builder.add_phi(self.choice(self.pools.doctors).username, "USERNAME")
            builder.add_text("  D: ")
            self.dphi(self.date)
            builder.add_text("  T: ")
            self.dphi(self.date + _dt.timedelta(days=rng.randint(0, 2)))
        else:
            builder.add_text("_" * 20 + "\n")
            self.doctor(d, {"first_last": 1, "last_comma_first": 1, "initials": 0.3})
            builder.add_text(f", {role}")
            if rng.random() < 0.5:
                builder.add_text(" [")
                builder.add_phi(d.username, "USERNAME")
                builder.add_text("]")
        if rng.random() < 0.25 * style.id_rate:
            builder.add_text("\nLicense #: " if rng.random() < 0.5 else "\nLic ")
            builder.add_phi(d.license, "LICENSE")
        if rng.random() < 0.2 * style.contact_rate:
            builder.add_text("\nPager: " if rng.random() < 0.5 else "\nPhone ")
            builder.add_phi(d.phone, "PHONE")
        builder.add_text("\n")


def _years_between(a: _dt.date, b: _dt.date) -> int:
    return b.year - a.year - ((b.month, b.day) < (a.month, a.day))
