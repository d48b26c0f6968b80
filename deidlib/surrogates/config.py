"""The settings and records of the surrogate engine (Tchouka, Couchot & Laiymani 2023, section
4): :class:`SurrogateConfig` (every choice of the engine; defaults follow the paper), the audit
record :class:`Replacement` (it holds the original PHI: kept apart), :class:`SurrogateResult`,
the exact statement of what a release guarantees (:func:`guarantee_statement`) and the warning
for an ε so large that values come out nearly unchanged (:func:`epsilon_warning`).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from ..corpus.document import Document
from ..results import atomic_write_text
from .locations import LOCATION_METHODS
from .pools import lang_of

__all__ = [
    "SurrogateConfig",
    "SurrogateResult",
    "Replacement",
    "DATE_METHODS",
    "AGE_METHODS",
    "LOCATION_METHODS",
    "PHI_METADATA_KEYS",
    "write_audit",
    "guarantee_statement",
    "NEARLY_UNCHANGED_EPSILON",
    "epsilon_warning",
]

DATE_METHODS = ("dp", "ldp", "shift", "none")
AGE_METHODS = ("dp", "ldp", "shift", "none")
DEFAULT_REFERENCE = _dt.date(2000, 1, 1)
#: metadata keys that hold PHI (dropped from surrogate documents: the note's date, the age, ...)
PHI_METADATA_KEYS = frozenset({"note_date", "date", "age", "dob", "birth_date", "birthdate", "admission_date",
                               "discharge_date", "patient_name", "name", "mrn", "address", "phone", "email",
                               "source", "path", "file"})
#: the HIPAA Safe Harbor age cap: ages over 89 and birth dates implying them are aggregated to 90
HIPAA_AGE_CAP = 90


#: ε per document (or patient) above which dates, ages and cities come out nearly unchanged: a
#: document with up to 4 distinct values released through a mechanism gives each ε_v >= 5, and the
#: discrete Laplace keeps a date or age exactly with probability tanh(ε_v / 2) >= 0.987; cities
#: at such ε keep the original (or its nearest candidate) almost surely. Guarded by
#: tests/surrogates/test_release_safety.py (the warning of ``deidlib surrogate --epsilon``).
NEARLY_UNCHANGED_EPSILON = 20.0


def epsilon_warning(epsilon: float, scope: str = "document", *, dates: bool = True) -> str | None:
    """A one-line warning when ``epsilon`` (per ``scope``) exceeds :data:`NEARLY_UNCHANGED_EPSILON`
    (``dates=False``: the dates are shifted, not released through ε)."""
    if not epsilon > NEARLY_UNCHANGED_EPSILON:
        return None
    what = "dates, ages and cities are" if dates else "ages and cities are"
    return (f"epsilon {epsilon:g} per {scope} is above {NEARLY_UNCHANGED_EPSILON:g}: {what} "
            f"released nearly unchanged (with up to 4 distinct values per {scope}, a draw keeps a date or age exactly "
            "with probability >= 0.987; as no surrogate may equal its original, such values come out one unit off "
            "or masked); only names and identifiers are really replaced")


@dataclass
class SurrogateConfig:
    """Every choice of the engine (defaults follow the paper; see the module docstring)."""

    epsilon: float = 1.0  #: per document (or per patient with memo_scope="patient")
    locale: str = "en_US"  #: Faker locale of the surrogates; also the date language and day-first default
    date_method: str = "dp"  #: dp (ε·d Laplace, unit-dependent) | ldp (Tchouka 2022) | shift (Stubbs 2015) | none
    age_method: str = "dp"  #: dp | ldp | shift (only the HIPAA cap at 90) | none
    location_method: str = "fixed"  #: fixed (ε·d-private) | paper (Algorithm 1 as published) | geoind | uniform | none
    memo_scope: str = "document"  #: document | patient
    k: int = 10  #: paper variant: number of candidates (Figure 6 uses 10)
    max_km: float = 100.0  #: paper variant: geographic threshold in km
    countries: tuple[str, ...] | None = None  #: place table countries (default from the locale)
    min_population: int = 5000  #: smallest place of the table
    candidate_anchor: tuple[float, float] | None = None  #: fixed/geoind/uniform: public centre of the candidate set
    candidate_radius_km: float | None = None  #: radius around candidate_anchor
    candidate_min_population: int = 0  #: fixed/geoind/uniform: smallest candidate
    exp_factor: float = 0.5  #: fixed variant: exp(-factor ε d); 0.5 gives ε·d-privacy, 1.0 the paper's constant
    shift_max_days: int = 365  #: shift: per-patient shift uniform in ±shift_min_days..shift_max_days
    shift_min_days: int = 1  #: shift: smallest absolute shift in days (the release default of ``deidentify`` is 30)
    #: shift: the key the per-patient shift is derived from (HMAC; None: drawn at random)
    shift_key: bytes | None = field(default=None, repr=False)
    #: text for ages >= 90; when set, an age over 89 is released as this text with no draw
    #: (HIPAA Safe Harbor aggregates them; None: "90" in the original style, after the mechanism)
    age_over_89: str | None = None
    #: text for a birth date implying an age over 89; None: the date of an age of exactly 90
    birth_over_89: str | None = None
    #: the day of the release: a birth date is capped against the later of it and the note's date
    release_date: _dt.date | None = None
    hipaa_age_cap: bool = True  #: clamp ages (in years) to at most 90 before and after the mechanism
    reference_date: _dt.date | None = None
    dayfirst: bool | None = None  #: numeric dates day first (default: True for French locales)
    secure: bool = False  #: OS CSPRNG + exact discrete Laplace (seed ignored)
    pool_seed: int = 0  #: seed of the Faker pools (public; the secure mode draws it at random)

    def __post_init__(self):
        if not (isinstance(self.epsilon, (int, float)) and self.epsilon > 0 and math.isfinite(self.epsilon)):
            raise ValueError(f"epsilon must be a positive finite number, got {self.epsilon!r}")
        for name, allowed in (("date_method", DATE_METHODS), ("age_method", AGE_METHODS),
                              ("location_method", LOCATION_METHODS), ("memo_scope", ("document", "patient"))):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        if self.k < 1 or self.max_km <= 0:
            raise ValueError("k must be >= 1 and max_km > 0")
        if self.shift_max_days < 1 or not 1 <= self.shift_min_days <= self.shift_max_days:
            raise ValueError("shift_min_days and shift_max_days must satisfy 1 <= min <= max")
        if self.reference_date is not None and not isinstance(self.reference_date, _dt.date):
            raise TypeError("reference_date must be a datetime.date")

    @property
    def lang(self) -> str:
        return lang_of(self.locale)

    @property
    def is_dayfirst(self) -> bool:
        return self.lang == "fr" if self.dayfirst is None else bool(self.dayfirst)


@dataclass(frozen=True)
class Replacement:
    """What replaced what (the audit record; it holds the original PHI: keep it apart)."""

    document_id: str
    patient_id: str
    span_index: int
    category: str
    subtype: str
    original: str
    surrogate: str
    original_start: int
    original_end: int
    start: int
    end: int
    method: str
    epsilon: float  #: budget this replacement consumed (0 for memo hits and non-DP methods)
    unit: str | None
    key: str
    memo_hit: bool


@dataclass
class SurrogateResult:
    document: Document
    replacements: list[Replacement]
    budget: dict = field(default_factory=dict)


def guarantee_statement(config: SurrogateConfig, *, seeded: bool) -> str:
    """The exact statement of what a surrogate release guarantees (see the module docstring)."""
    scope = config.memo_scope
    dp = [n for n, m in (("dates/durations", config.date_method), ("ages", config.age_method)) if m in ("dp", "ldp")]
    if config.location_method in ("fixed", "paper", "geoind"):
        dp.append("cities")
    parts = []
    if config.date_method == "shift":
        how = ("derived from the pseudonym key (the same in every run with that key)" if config.shift_key is not None
               else "drawn at random")
        parts.append(f"Dates: every date of a {'patient' if scope == 'patient' else 'note'} is moved by one secret "
                     f"shift of {config.shift_min_days}-{config.shift_max_days} days either way (never a multiple of "
                     f"7), {how}; intervals between them are kept.")
    if dp:
        parts.append(f"epsilon={config.epsilon:g} per {scope}, split evenly over the {scope}'s distinct values "
                     f"released through a DP mechanism ({', '.join(dp)}): each distinct value is epsilon_v*d-private "
                     f"(epsilon_v = epsilon / number of distinct values). Equal values within a {scope} get the same "
                     f"surrogate (memo), so which values are equal is disclosed (two equal dates: equal surrogates "
                     f"with probability 1); "
                     f"{'documents of one patient compose (k notes: k*epsilon)' if scope == 'document' else 'one budget per patient'}.")
    parts.append("Names, identifiers and contacts are random replacements (no DP parameter). No surrogate equals its "
                 "original (redrawn, else masked with its type), so a released value is never the original.")
    if seeded:
        parts.append("SEEDED run: the guarantee does not hold against anyone holding the seed (not for releases).")
    else:
        parts.append("Randomness: OS CSPRNG (secure).")
    return " ".join(parts)


def write_audit(records: Sequence[Replacement], path) -> None:
    """Write the replacement records as JSON lines (atomically). They contain the original PHI."""
    atomic_write_text(path, "".join(json.dumps(asdict(r), ensure_ascii=False) + "\n" for r in records))
