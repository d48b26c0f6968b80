"""Date/age release methods as vectorised functions (the study compares them side by side).

All take integer values in a unit (days for dates; years or days for ages) and a seeded
:class:`numpy.random.Generator` and return the released integers:

* ``dp`` — :func:`deidlib.surrogates.mechanisms.ddp_laplace_array`: ε·d-private discrete
  Laplace in the unit of the expression (Tchouka et al. 2023, section 4.1);
* ``ldp`` — :func:`deidlib.surrogates.mechanisms.ldp_time_category_array`: bounded-Laplace
  ε-LDP inside the three time categories of Tchouka et al. 2022, in days from the
  reference date (ages are converted to days, released, and converted back);
* ``shift`` — Stubbs et al. (2015): one uniform shift per patient (``±1..max_days`` days)
  added to every date of the patient; ages only get the HIPAA cap at 90;
* ``none`` — unchanged.

:func:`release_dates` / :func:`release_ages` dispatch on the method name; the engine
(:mod:`deidlib.surrogates.engine`) applies the same mechanisms one span at a time.
"""

from __future__ import annotations

import numpy as np

from .dates import UNIT_DAYS
from .mechanisms import ddp_laplace_array, ldp_time_category_array

__all__ = ["patient_shifts", "release_dates", "release_ages"]

_DATE_BASELINES = ("dp", "ldp", "shift", "none")


def patient_shifts(n_patients: int, generator: np.random.Generator, max_days: int = 365) -> np.ndarray:
    """One shift per patient, uniform on ``{-max_days..-1} ∪ {1..max_days}``."""
    if max_days < 1:
        raise ValueError("max_days must be >= 1")
    mag = generator.integers(1, max_days + 1, n_patients)
    sign = np.where(generator.random(n_patients) < 0.5, -1, 1)
    return mag * sign


def release_dates(method: str, days: np.ndarray, epsilon: float, generator: np.random.Generator, *,
                  patient: np.ndarray | None = None, shifts: np.ndarray | None = None,
                  max_shift_days: int = 365) -> np.ndarray:
    """Release dates given as integer days **before the reference date** (``ref - date``).

    ``patient``: patient index of each value (needed by ``shift``; ``shifts`` optionally
    gives the per-patient shifts, else they are drawn). Returns days before the reference.
    """
    d = np.asarray(days, dtype=np.int64)
    if method == "none":
        return d.copy()
    if method == "dp":
        return ddp_laplace_array(d, epsilon, generator)
    if method == "ldp":
        return ldp_time_category_array(d, epsilon, generator)
    if method == "shift":
        if patient is None:
            raise ValueError("the shift baseline needs the patient index of every date")
        p = np.asarray(patient)
        if shifts is None:
            shifts = patient_shifts(int(p.max()) + 1, generator, max_shift_days)
        return d - np.asarray(shifts)[p]  # a later date is fewer days before the reference
    raise ValueError(f"unknown date method {method!r}; expected one of {_DATE_BASELINES}")


def release_ages(method: str, years: np.ndarray, epsilon: float, generator: np.random.Generator, *,
                 cap: bool = True) -> np.ndarray:
    """Release ages in years (HIPAA cap: inputs and outputs clamped to at most 90 when ``cap``)."""
    a = np.asarray(years, dtype=np.int64)
    a_in = np.minimum(a, 90) if cap else a
    if method == "none":
        return a.copy()
    if method == "shift":
        return a_in.copy()
    if method == "dp":
        out = ddp_laplace_array(a_in, epsilon, generator)
    elif method == "ldp":
        days = np.rint(a_in * UNIT_DAYS["year"]).astype(np.int64)
        out = np.rint(ldp_time_category_array(days, epsilon, generator) / UNIT_DAYS["year"]).astype(np.int64)
    else:
        raise ValueError(f"unknown age method {method!r}; expected one of {_DATE_BASELINES}")
    out = np.maximum(out, 0)
    return np.minimum(out, 90) if cap else out
