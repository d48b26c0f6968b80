"""tchouka (b): simulated patient timelines and the utility of dates, ages and cities against ε."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...rng import as_generator, derive_seed
from ...surrogates.baselines import release_ages, release_dates
from ...surrogates.locations import (
    PlaceTable,
    candidate_tree,
    geoind_samples,
    paper_candidates,
)
from ...surrogates.mechanisms import (
    EARTH_KM,
    exponential_probabilities,
)
from .params import DATE_METHODS

__all__: list[str] = []


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
    patient: list[int] = []
    days: list[int] = []
    adm: list[int] = []
    dis: list[int] = []
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
    if w is None:  # PlaceTable sets its weights on construction
        raise ValueError("the place table has no weights")
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
