"""Run profiles: ``smoke`` (CI), ``cpu`` (default, laptop), ``paper`` (GPU, real data).

A profile scales the data and the number of epochs; it never changes an algorithm.
Studies keep their own per-profile tables (``deidlib.studies.<study>.PROFILE_PARAMS``,
resolved by :meth:`deidlib.studies.params.StudyParams.resolve`); this module holds what
all of them share: the size of the embedded synthetic corpus.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Profile", "PROFILES", "get_profile"]


@dataclass(frozen=True)
class Profile:
    name: str
    #: synthetic corpus size
    patients: int
    sites: int
    #: what the profile is for (one line)
    description: str


PROFILES: dict[str, Profile] = {
    "smoke": Profile("smoke", patients=24, sites=5, description="CI: every notebook in well under a minute on 2 CPU cores"),
    "cpu": Profile("cpu", patients=300, sites=5, description="default: meaningful figures on a laptop CPU"),
    "paper": Profile("paper", patients=1500, sites=5, description="papers' hyperparameters and epochs; GPU and real data"),
}


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown profile {name!r}; choose one of {', '.join(PROFILES)}") from None
