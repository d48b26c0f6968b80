"""Running the tchouka study (Tchouka et al. 2023, section 4): every computation of notebook 08
in the notebook's order, at the scale of the parameters, seeded by ``seed``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ...surrogates.locations import PlaceTable
from ..protocol import StudyResults
from .ner import default_tagger_predictions, table2
from .params import TchoukaParams
from .privacy import guarantee_checks, known_date_attack
from .tables import summary
from .thread import before_after, figure6_data, load_french_places, thread_example
from .thread_values import patient_thread, thread_table
from .utility import Timelines, date_utility, km_per_unit, location_utility, simulate_timelines

__all__ = ["TchoukaResults", "run_study"]

#: the city of the Figure 6 panel (the paper's example)
_FIGURE6_CITY = "Dijon"


@dataclass
class TchoukaResults(StudyResults):
    """What :func:`run_study` returns (the notebook's tables, figures' data and summary)."""

    places: PlaceTable  #: the French places (Eurostat populations when present)
    places_desc: str  #: where the places come from
    thread: dict[str, Any]  #: the thread example, Algorithm 1 for the city (:func:`.thread.thread_example`)
    thread_fixed: dict[str, Any]  #: the same with the city kept (location method ``fixed``)
    figure6: pd.DataFrame  #: Figure 6 analog (:func:`.thread.figure6_data`)
    timelines: Timelines  #: simulated patient timelines
    date_utility: pd.DataFrame
    location_utility: pd.DataFrame
    km_per_unit: float  #: L, kilometres per unit of the normalised distance d
    attack: pd.DataFrame  #: the known-date attack of section 2
    checks: pd.DataFrame  #: each mechanism's ε·d bound, exact and empirical
    hists: dict[str, Any]  #: the empirical log-ratio histograms behind ``checks``
    patient: dict[str, Any]  #: the multi-note patient thread (Figure 5 analog)
    thread_table: pd.DataFrame  #: Figure 5 analog: original and surrogate values per note
    ner: dict[str, Any]  #: the default tagger's predictions on synthetic test notes
    table2: pd.DataFrame  #: Table 2 analog
    before_after: dict[str, Any]  #: a synthetic corpus before and after surrogates
    summary: dict[str, Any]  #: key numbers for the results JSON


def run_study(params: TchoukaParams, *, seed: int = 0) -> TchoukaResults:
    """Everything of notebook 08 at the scale of ``params`` (resolved once by the caller)."""
    if not isinstance(params, TchoukaParams):
        raise TypeError("run_study takes resolved TchoukaParams (tchouka.params_for(profile, ...))")
    places, places_desc = load_french_places(params.min_population)
    thread = thread_example(params.epsilon, seed=seed, location_method="paper", k=params.k, max_km=params.max_km,
                            places=places)
    thread_fixed = thread_example(params.epsilon, seed=seed, location_method="fixed", places=places)
    fig6 = figure6_data(places, _FIGURE6_CITY, params.figure6_epsilons, k=params.k, max_km=params.max_km)
    timelines = simulate_timelines(params.timeline_patients, seed)
    du = date_utility(timelines, params.date_epsilons, seed=seed, shift_max_days=params.shift_max_days)
    lu = location_utility(places, params.location_epsilons, queries=params.location_queries,
                          geoind_draws=params.geoind_draws, k=params.k, max_km=params.max_km, seed=seed)
    attack = known_date_attack(timelines, params.date_epsilons, seed=seed, shift_max_days=params.shift_max_days)
    checks, hists = guarantee_checks(places, draws=params.audit_draws, seed=seed, alpha=params.audit_alpha, k=params.k,
                                     max_km=params.max_km, shift_max_days=params.shift_max_days)
    patient = patient_thread(params.thread_patients, seed=seed, epsilon=params.epsilon)
    thread_tab = thread_table(thread, patient, places=places, seed=seed)
    ner = default_tagger_predictions(params.ner_overrides)
    t2 = table2(ner["gold"], ner["system"])
    ba = before_after(params.corpus_patients, seed=seed, epsilon=params.epsilon)
    key_numbers = summary(thread, fig6, du, lu, attack, checks, ba)
    key_numbers["thread_fixed"] = thread_fixed["surrogate"].text
    key_numbers["places"] = places_desc
    key_numbers["thread_table"] = json.loads(thread_tab.to_json(orient="records"))
    key_numbers["table2"] = {"model": ner["model"], "rows": json.loads(t2.to_json(orient="records"))}
    return TchoukaResults(
        places=places, places_desc=places_desc, thread=thread, thread_fixed=thread_fixed, figure6=fig6,
        timelines=timelines, date_utility=du, location_utility=lu, km_per_unit=km_per_unit(places), attack=attack,
        checks=checks, hists=hists, patient=patient, thread_table=thread_tab, ner=ner, table2=t2, before_after=ba,
        summary=key_numbers,
    )
