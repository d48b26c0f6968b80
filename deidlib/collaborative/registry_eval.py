"""Evaluation for the Alawad et al. 2020 highlight: micro/macro F1, per-class F1 of the most
and least represented classes, significance between approaches, and a registry-identification
attack on the shared representation.

* F1: scikit-learn ``f1_score``; macro averages over the classes present in the gold labels
  (a class no registry's test set holds has no defined recall and is left out).
* Most / least represented: among classes with at least ``min_support`` training samples
  (the highlight: "the most and least represented classes with at least 100 samples"),
  the ones with the most and the fewest; counts are over all registries' training reports.
* Significance: the paired bootstrap (Koehn, EMNLP 2004; Berg-Kirkpatrick et al., EMNLP 2012)
  resamples test reports with replacement and gives a two-sided p-value
  ``2 · min(P(δ* ≤ 0), P(δ* ≥ 0))`` of the metric difference δ = B − A; McNemar's exact test
  (binomial on the discordant pairs, scipy ``binomtest``) compares per-report correctness.
  The highlight says only "statistically indistinguishable"; both are offered.
* Equivalence: a non-significant difference is not evidence of equality, so "statistically
  indistinguishable" is tested as equivalence by two one-sided tests (TOST; Schuirmann 1987)
  on the same paired bootstrap: ``p = max(P(δ* ≤ −m), P(δ* ≥ m))`` for the margin ``m``
  (the caller states it); ``p < α`` ⇔ the ``1 − 2α`` percentile interval of δ lies inside
  ``(−m, m)``.
* Attack: an observer who sees the shared features (frozen) and the registry of each report
  trains a one-hidden-layer classifier on half of them for ``epochs`` epochs and predicts the
  registry of the other half (stratified split); accuracy is reported next to chance,
  ``1 / n_registries``, and the majority-class rate (registries differ in size).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from scipy.stats import binomtest
from sklearn.metrics import f1_score
from sklearn.model_selection import train_test_split
from torch import nn
from torch.nn import functional as F

from ..rng import derive_seed

__all__ = [
    "f1_micro_macro", "extreme_classes", "per_class_f1", "paired_bootstrap", "mcnemar",
    "equivalence_bootstrap", "registry_attack",
]


def f1_micro_macro(y_true: Sequence[int] | np.ndarray, y_pred: Sequence[int] | np.ndarray) -> dict[str, float]:
    """``{"micro": ..., "macro": ...}`` F1 (macro over the classes in ``y_true``)."""
    labels = sorted(set(int(y) for y in y_true))
    return {
        "micro": float(f1_score(y_true, y_pred, labels=labels, average="micro", zero_division=0)),
        "macro": float(f1_score(y_true, y_pred, labels=labels, average="macro", zero_division=0)),
    }


def extreme_classes(train_counts: Sequence[int], min_support: int = 100) -> tuple[int, int] | None:
    """``(most, least)`` represented class ids among those with ``>= min_support`` training
    samples, or ``None`` when no class qualifies (ties: the lower id)."""
    counts = np.asarray(train_counts)
    ok = np.flatnonzero(counts >= min_support)
    if not len(ok):
        return None
    most = int(ok[np.argmax(counts[ok])])
    least = int(ok[np.argmin(counts[ok])])
    return most, least


def per_class_f1(y_true: Sequence[int] | np.ndarray, y_pred: Sequence[int] | np.ndarray,
                 classes: Sequence[int]) -> dict[int, float]:
    """F1 of each class in ``classes`` (one-vs-rest)."""
    scores = f1_score(y_true, y_pred, labels=list(classes), average=None, zero_division=0)
    return {int(c): float(s) for c, s in zip(classes, scores)}


def _f1_counts(t: np.ndarray, p: np.ndarray, metric: str) -> float:
    """The same numbers as :func:`f1_micro_macro` from bincounts (fast enough to resample)."""
    n = int(max(t.max(), p.max())) + 1
    true, pred = np.bincount(t, minlength=n), np.bincount(p, minlength=n)
    tp = np.bincount(t[t == p], minlength=n)
    present = true > 0
    if metric == "micro":
        denom = true[present].sum() + pred[present].sum()
        return float(2 * tp[present].sum() / denom) if denom else 0.0
    denom = true[present] + pred[present]
    return float(np.mean(np.where(denom > 0, 2 * tp[present] / np.maximum(denom, 1), 0.0)))


def paired_bootstrap(y_true: Sequence[int], pred_a: Sequence[int], pred_b: Sequence[int], *, metric: str = "macro",
                     n_resamples: int = 1000, seed: int = 0) -> tuple[float, float]:
    """``(δ, p)``: observed F1(B) − F1(A) and the two-sided paired-bootstrap p-value (F1 as
    :func:`f1_micro_macro`, macro over the classes present in each resample's gold labels)."""
    t, a, b = (np.asarray(x) for x in (y_true, pred_a, pred_b))
    if not (len(t) == len(a) == len(b)) or not len(t):
        raise ValueError("gold labels and both predictions must have the same non-zero length")
    if metric not in ("micro", "macro"):
        raise ValueError(f"metric must be 'micro' or 'macro', got {metric!r}")
    t, a, b = t.astype(np.int64), a.astype(np.int64), b.astype(np.int64)

    def f(tt, pp):
        return _f1_counts(tt, pp, metric)

    delta = f(t, b) - f(t, a)
    rng = np.random.default_rng(derive_seed(seed, "paired-bootstrap"))
    d = np.empty(n_resamples)
    for i in range(n_resamples):
        idx = rng.integers(0, len(t), len(t))
        d[i] = f(t[idx], b[idx]) - f(t[idx], a[idx])
    p = min(1.0, 2 * min(float(np.mean(d <= 0)), float(np.mean(d >= 0))))
    return float(delta), float(p)


def _bootstrap_deltas(t, a, b, metric, n_resamples, seed) -> tuple[float, np.ndarray]:
    if not (len(t) == len(a) == len(b)) or not len(t):
        raise ValueError("gold labels and both predictions must have the same non-zero length")
    if metric not in ("micro", "macro"):
        raise ValueError(f"metric must be 'micro' or 'macro', got {metric!r}")
    t, a, b = t.astype(np.int64), a.astype(np.int64), b.astype(np.int64)
    delta = _f1_counts(t, b, metric) - _f1_counts(t, a, metric)
    rng = np.random.default_rng(derive_seed(seed, "paired-bootstrap"))
    d = np.empty(n_resamples)
    for i in range(n_resamples):
        idx = rng.integers(0, len(t), len(t))
        d[i] = _f1_counts(t[idx], b[idx], metric) - _f1_counts(t[idx], a[idx], metric)
    return float(delta), d


def equivalence_bootstrap(y_true: Sequence[int], pred_a: Sequence[int], pred_b: Sequence[int], margin: float, *,
                          metric: str = "macro", n_resamples: int = 1000, alpha: float = 0.05,
                          seed: int = 0) -> dict[str, float]:
    """TOST on the paired bootstrap of δ = F1(B) − F1(A): ``delta``, the ``1 − 2α`` percentile
    interval ``lo``/``hi``, ``p_tost`` = max(P(δ* ≤ −margin), P(δ* ≥ margin)); equivalent
    within ``margin`` when ``p_tost < alpha``."""
    if margin <= 0 or not 0 < alpha < 0.5:
        raise ValueError(f"need margin > 0 and 0 < alpha < 0.5, got {margin} and {alpha}")
    t, a, b = (np.asarray(x) for x in (y_true, pred_a, pred_b))
    delta, d = _bootstrap_deltas(t, a, b, metric, n_resamples, seed)
    lo, hi = np.quantile(d, [alpha, 1 - alpha])
    p = float(max(np.mean(d <= -margin), np.mean(d >= margin)))
    return {"delta": delta, "lo": float(lo), "hi": float(hi), "margin": float(margin), "p_tost": p}


def mcnemar(y_true: Sequence[int], pred_a: Sequence[int], pred_b: Sequence[int]) -> tuple[int, int, float]:
    """``(a_only, b_only, p)``: reports only A / only B gets right, exact two-sided p-value."""
    t, a, b = (np.asarray(x) for x in (y_true, pred_a, pred_b))
    if not (len(t) == len(a) == len(b)):
        raise ValueError("gold labels and both predictions must have the same length")
    ca, cb = a == t, b == t
    a_only, b_only = int(np.sum(ca & ~cb)), int(np.sum(cb & ~ca))
    n = a_only + b_only
    p = 1.0 if n == 0 else float(binomtest(a_only, n, 0.5).pvalue)
    return a_only, b_only, p


@dataclass(frozen=True)
class AttackResult:
    """Registry-identification accuracy on held-out features, next to chance and majority."""

    accuracy: float
    chance: float
    majority: float
    n_train: int
    n_test: int


def registry_attack(features: np.ndarray, registry: Sequence[int] | np.ndarray, *, epochs: int = 50, hidden: int = 64,
                    lr: float = 1e-2, test_fraction: float = 0.5, seed: int = 0) -> AttackResult:
    """Train a classifier of the registry on frozen features; accuracy on held-out ones."""
    x = np.asarray(features, dtype=np.float32)
    y = np.asarray(registry, dtype=np.int64)
    n_reg = int(y.max()) + 1 if len(y) else 0
    if x.ndim != 2 or len(x) != len(y) or n_reg < 2 or epochs < 1:
        raise ValueError("need 2-d features, one registry id each, >= 2 registries and epochs >= 1")
    split_seed = derive_seed(seed, "attack-split") % 2**32
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=test_fraction, random_state=split_seed, stratify=y)
    mu, sd = xtr.mean(0), xtr.std(0) + 1e-6
    xtr_t, xte_t = torch.from_numpy((xtr - mu) / sd), torch.from_numpy((xte - mu) / sd)
    ytr_t = torch.from_numpy(ytr)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(derive_seed(seed, "attack-model"))
        clf = nn.Sequential(nn.Linear(x.shape[1], hidden), nn.ReLU(), nn.Linear(hidden, n_reg))
        opt = torch.optim.Adam(clf.parameters(), lr=lr)
        g = torch.Generator().manual_seed(derive_seed(seed, "attack-batches"))
        for _ in range(epochs):
            for b in torch.randperm(len(xtr_t), generator=g).split(64):
                loss = F.cross_entropy(clf(xtr_t[b]), ytr_t[b])
                opt.zero_grad()
                loss.backward()
                opt.step()
        with torch.no_grad():
            pred = clf(xte_t).argmax(-1).numpy()
    majority = float(np.bincount(yte, minlength=n_reg).max() / len(yte))
    return AttackResult(float(np.mean(pred == yte)), 1.0 / n_reg, majority, len(ytr), len(yte))
