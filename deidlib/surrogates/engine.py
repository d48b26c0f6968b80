"""The surrogate engine: a Document with PHI spans in, a Document with every span replaced
(and its spans moved onto the surrogates) out, plus an audit record kept apart.

Tchouka, Couchot & Laiymani (2023), section 4: names and identifiers are replaced at random
(memoised), dates and ages with the ε_v·d-private Laplace mechanism in the unit they are
written in (section 4.1), cities with the exponential mechanism of Algorithm 1 (section 4.2),
and the global ε is shared uniformly between the *distinct* values of a memo scope (a document,
or a patient with ``memo_scope="patient"``) released through a DP mechanism; repeated mentions
reuse the memoised draw (post-processing, no cost).

Choices, each explained in docs/design/surrogates.md:

* the guarantee is per distinct value within a memo scope, so equality of values is disclosed
  (:func:`~deidlib.surrogates.config.guarantee_statement` says so in words);
* HIPAA Safe Harbor: ages clamped to 90, birth dates (:func:`birth_date_spans`) implying an
  age over 90 aggregated before the mechanism and raised after it;
* no surrogate equals its original: :meth:`SurrogateEngine._unequal` redraws, at most
  :data:`~deidlib.surrogates.release.MAX_DRAWS` times, then writes the typed mask;
* the release default of ``deidlib deidentify`` shifts every date of a patient by one secret
  shift (:mod:`deidlib.surrogates.release`);
* the reference date comes from the argument, the config, the note's metadata or its latest
  full date, never the wall clock; PHI metadata keys are dropped from the output;
* no seed: the OS CSPRNG (the release path); a seed derives one generator per scope from
  ``(seed, id)``, for studies only.

Offsets: spans must not overlap; every new span has ``text == new_text[start:end]``.
The per-type draws live in :mod:`.makers`, the settings and records in :mod:`.config`.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from ..corpus.document import Document, Span, SpanError
from ..rng import derive_seed
from .config import (
    HIPAA_AGE_CAP,
    PHI_METADATA_KEYS,
    Replacement,
    SurrogateConfig,
    SurrogateResult,
    guarantee_statement,
)
from .dates import date_value, parse_date, parse_quantity
from .formats import pool_replace
from .locations import PlaceTable, candidate_set, fold, load_places, mechanism_distribution
from .makers import TypeSurrogates, _match_case
from .memo import Memo, normalise_key
from .pools import Pools, get_pools
from .randomness import SeededRNG, SurrogateRNG, make_rng
from .release import MAX_DRAWS, same_surrogate, shift_days, split_time, typed_mask

__all__ = ["SurrogateEngine", "surrogate_document", "birth_date_spans"]

#: the reference date when neither the caller, the config nor the note gives one
DEFAULT_REFERENCE = _dt.date(2000, 1, 1)

#: words before a date that make it a birth date ("DOB: 05/03/1918", "born on ...", "né le ...")
_BIRTH_CONTEXT = re.compile(r"(?i)(\bD\.?\s?O\.?\s?B\.?|\bdate\s+of\s+birth|\bbirth\s*(?:date|day)|\bborn(?:\s+on|\s+in)?"
                            r"|\bn[ée]e?\s+le|\bn[ée]e?\s+en|\bdate\s+de\s+naissance|\bDDN)\s*[:#=-]?\s*$")
_COUNTRY_OF_LOCALE = {"en_us": ("US",), "fr_fr": ("FR",), "en_gb": ("GB",), "fr_ca": ("CA",), "en_ca": ("CA",),
                      "de_de": ("DE",), "es_es": ("ES",), "it_it": ("IT",)}


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


class SurrogateEngine(TypeSurrogates):
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
        pool_seed = cfg.pool_seed if not cfg.secure else int.from_bytes(os.urandom(4), "little")
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


def _name_words(docs) -> set[str]:
    """Folded words of the NAME spans of ``docs`` (excluded from the scope's surrogate names)."""
    return {normalise_key(w) for d in docs for s in d.spans if s.category == "NAME"
            for w in re.findall(r"[^\W\d_]+", s.text) if len(w) > 1}


def _progress(it, enabled: bool, desc: str):
    if not enabled:
        return it
    return tqdm(it, desc=desc)


def surrogate_document(doc: Document, *, epsilon: float = 1.0, seed: int | None = None, **config) -> SurrogateResult:
    """One-call helper: ``SurrogateEngine(SurrogateConfig(epsilon=epsilon, **config), seed=seed).surrogate(doc)``
    (no seed: secure randomness)."""
    return SurrogateEngine(SurrogateConfig(epsilon=epsilon, **config), seed=seed).surrogate(doc)


def _span_key(s: Span) -> tuple:
    """The dataclass order of :class:`Span` as a key (sorting by key avoids generated ``__lt__`` calls)."""
    return (s.start, s.end, s.category, s.subtype, s.text)
