"""Membership inference against a PHI tagger, per sentence and per patient.

Two attacks, both reading the per-sentence loss ``L`` (:func:`deidlib.audits.scoring.sentence_losses`):

* **Loss threshold** (Yeom et al. 2018, §3.2): score ``−L``; members were fitted, so they have
  lower loss.
* **Offline LiRA** (Carlini et al. 2022, "Membership Inference Attacks From First Principles",
  §IV–VI, Algorithm 1 offline variant with a global variance): ``R`` reference models are
  trained like the target on random halves of the same population; for each example, the
  losses of the reference models that did *not* train on it give its "out" distribution
  ``N(μ_out, σ²)``; the score is ``(φ − μ_out)/σ`` with φ the logit-scaled confidence
  ``φ = log(p/(1−p))``, ``p = exp(−L)`` (§IV-B; a sentence loss is ``−log p(tags|words)``).
  With few references σ is one global value (the standard deviation of all "out" φ around
  their per-example means; §VI-C "fixed variance"). An example that no reference model left
  out gets the mean of all out φ as μ_out (documented fallback).

Patient membership: a patient is a member if their sentences were trained on; the patient's
score is the mean score of their sentences (:func:`group_scores`).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

import numpy as np

__all__ = ["loss_scores", "lira_offline_scores", "group_scores"]

K = TypeVar("K", bound=Hashable)  # a group key (e.g. a patient id)


def loss_scores(losses: Sequence[float]) -> np.ndarray:
    """The loss-threshold attack's score: ``−L``."""
    return -np.asarray(losses, float)


def _logit_confidence(losses: Sequence[float] | np.ndarray) -> np.ndarray:
    """φ = log(p / (1 − p)) with p = exp(−L), computed stably: −L − log(1 − e^{−L})."""
    L = np.maximum(np.asarray(losses, float), 1e-12)
    return -L - np.log(-np.expm1(-L))


def lira_offline_scores(target_losses: Sequence[float], reference_losses: np.ndarray,
                        reference_in: np.ndarray) -> np.ndarray:
    """Offline LiRA score per example (higher = member). ``reference_losses``: [R, n] losses of
    the R reference models on the n examples; ``reference_in``: [R, n] bool, whether the
    reference model trained on the example (those entries are not used)."""
    ref = np.asarray(reference_losses, float)
    rin = np.asarray(reference_in, bool)
    t = np.asarray(target_losses, float)
    if ref.ndim != 2 or ref.shape != rin.shape or ref.shape[1] != t.size:
        raise ValueError("reference_losses and reference_in must be [R, n] with n = len(target_losses)")
    out = ~rin
    if not out.any():
        raise ValueError("no reference model left any example out")
    phi = _logit_confidence(ref)
    counts = out.sum(0)
    mu = np.where(counts > 0, (phi * out).sum(0) / np.maximum(counts, 1), phi[out].mean())
    resid = (phi - mu[None, :])[out]
    sigma = float(resid.std()) if resid.size > 1 and resid.std() > 0 else 1.0
    return (_logit_confidence(t) - mu) / sigma


def group_scores(scores: Sequence[float] | np.ndarray, groups: Sequence[K]) -> dict[K, float]:
    """Mean score per group (e.g. per patient)."""
    s = np.asarray(scores, float)
    if s.size != len(groups):
        raise ValueError("one group key per score")
    acc: dict[K, list[float]] = {}
    for v, g in zip(s, groups):
        acc.setdefault(g, []).append(float(v))
    return {g: float(np.mean(v)) for g, v in acc.items()}
