"""Run profiles: ``smoke`` (CI), ``cpu`` (default, laptop), ``paper`` (GPU, real data).

A profile scales the data and the number of epochs; it never changes an algorithm.
Studies keep their own per-profile tables (``deidlib.studies.<study>.PROFILE_PARAMS``,
resolved by :meth:`deidlib.studies.params.StudyParams.resolve`); this module holds what
all of them share: the size of the embedded synthetic corpus, and the batch size of training
on an accelerator (:func:`batch_size_for`).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["get_profile", "batch_size_for"]


@dataclass(frozen=True)
class Profile:
    name: str
    #: synthetic corpus size
    patients: int
    sites: int
    #: what the profile is for (one line)
    description: str
    #: training batch (sentences) on a CUDA device: a GPU step costs about the same for 16 or
    #: a few hundred sentences of a small tagger, so CPU-sized batches leave it idle
    device_batch_size: int = 128


_PROFILES: dict[str, Profile] = {
    "smoke": Profile("smoke", patients=24, sites=5, description="CI: every notebook in well under a minute on 2 CPU cores",
                     device_batch_size=64),
    "cpu": Profile("cpu", patients=300, sites=5, description="default: meaningful figures on a laptop CPU",
                   device_batch_size=128),
    "paper": Profile("paper", patients=1500, sites=5, description="papers' hyperparameters and epochs; GPU and real data",
                     device_batch_size=256),
}


def get_profile(name: str) -> Profile:
    try:
        return _PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown profile {name!r}; choose one of {', '.join(_PROFILES)}") from None


def batch_size_for(profile: str, device, cpu_batch_size: int) -> int:
    """The training batch for ``device``: ``cpu_batch_size`` on the CPU (so CPU runs are
    unchanged), the profile's :attr:`Profile.device_batch_size` on an accelerator (never less
    than ``cpu_batch_size``). Not for DP-SGD, whose lot size is part of the privacy accounting."""
    kind = device if isinstance(device, str) else getattr(device, "type", str(device))
    if kind.split(":")[0] == "cpu":
        return int(cpu_batch_size)
    return max(int(cpu_batch_size), get_profile(profile).device_batch_size)
