"""tchouka: the study's parameters per profile."""

from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass
from typing import Any, ClassVar

from ..params import StudyParams, profiles

__all__ = ["TchoukaParams", "params_for"]

DATE_METHODS = ("dp", "ldp", "shift", "none")
_LOCATION_STUDY_METHODS = ("fixed", "paper", "geoind", "uniform")


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
    thread_patients: int = 6  #: synthetic corpus the patient thread is picked from
    #: the Table 2 analog's tagger: None = the gru model as ``deidentify --model gru`` builds
    #: it; a dict = GRU_MODEL_RECIPE with these entries replaced (a smaller corpus, fewer epochs)
    ner_overrides: dict[str, Any] | None = None

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
        ner_overrides={"profile": "smoke", "epochs": 1},
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
