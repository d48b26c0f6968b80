"""A threshold rule for a target recall that is not knife-edge: the bagged (bootstrap-averaged)
highest threshold reaching the target on a dev split.

**The problem.** The plain rule (:func:`deidlib.training.choose_threshold`: the highest threshold
whose dev recall reaches r*) reads where the dev recall curve crosses r*. Where that curve is flat
near r* (a well-fitted model on easy dev notes: recall within a few tenths of a percent of r* over
a wide range of thresholds), the crossing is ill-conditioned: one dev token more or less, or float
differences between two builds, moves the chosen threshold across the whole flat stretch (the
default model's went from 0.306 to 0.171 for a dev-recall difference of 0.0013 at 0.3).

**The rule.** Bagging (Breiman 1996, *Bagging predictors*, Machine Learning 24: averaging a hard,
unstable decision over bootstrap resamples makes it smooth): draw ``resamples`` bootstrap
resamples of the dev *documents* (the unit the notes come in; tokens of one note are not
independent), apply the plain rule to each on a log-spaced grid (:data:`RULE_GRID`), and take the
**geometric mean** of the resamples' thresholds (thresholds act on a log scale: 0.1 and 0.3 are as
far apart as 0.01 and 0.03). A resample that reaches r* at no grid value counts as the grid's
lowest value. Why a mean and not the median: on a knife-edge curve the resamples' thresholds fall
in two clusters (the two ends of the flat stretch), and a median jumps from one to the other as
the clusters' weights pass one half, which is the instability to remove; a mean moves with the
weights, continuously. The rule aims at r* on average over resamples of dev, so the chosen
threshold's recall on the full dev split may lie a little below r* (reported with the model).

**Resampling.** Poisson bootstrap (Hanley & MacGibbon 2006, *Creating non-parametric bootstrap
samples using Poisson frequencies*, Comput. Methods Programs Biomed. 83: each document appears
Poisson(1) times in each resample, the large-n limit of the multinomial): each document's counts
are drawn from a generator seeded by the rule's seed and the document's key, so the rule is the
same whatever the documents' order, and dropping one document removes only its own contribution
from every resample (``tests/training/test_threshold_rule.py`` bounds how far that moves the
threshold, and shows the plain rule failing that bound on a knife-edge curve). Same seed, same
threshold.

Everything here is a function of per-document counts (:func:`deidlib.training.predict.threshold_doc_counts`),
so resampling never predicts again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "RULE_GRID",
    "highest_reaching",
    "poisson_weights",
    "bagged_threshold",
    "plain_threshold",
    "rule_spread",
    "curve_from_counts",
    "choose_threshold_bagged",
    "knife_edge_counts",
    "rule_probe",
]

#: thresholds the bagged rule reads the dev curve at: 49 log-spaced values from 0.001 to 0.95
#: (neighbours 15 % apart; the bagged average falls between them)
RULE_GRID: tuple[float, ...] = tuple(float(x) for x in np.geomspace(0.95, 0.001, 49))


def highest_reaching(tp: np.ndarray, gold: np.ndarray, thresholds: Sequence[float], target: float) -> np.ndarray:
    """Row by row, the highest of ``thresholds`` whose recall ``tp / gold`` reaches ``target``
    (NaN where none does). ``tp``: ``[..., T]`` true-positive tokens at each threshold; ``gold``:
    ``[...]`` gold PHI tokens."""
    th = np.asarray(thresholds, dtype=float)
    tp = np.asarray(tp, dtype=float)
    g = np.asarray(gold, dtype=float)[..., None]
    with np.errstate(invalid="ignore", divide="ignore"):
        ok = (tp / g) >= target
    best = np.where(ok, th, -np.inf).max(axis=-1)
    return np.where(np.isfinite(best), best, np.nan)


def _key_seed(seed: int, key: str) -> list[int]:
    return [int(seed), int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "little")]


def poisson_weights(keys: Sequence[str], resamples: int, seed: int) -> np.ndarray:
    """``[resamples, len(keys)]`` Poisson(1) counts: how often each document appears in each
    bootstrap resample, a document's column drawn from a generator seeded by ``seed`` and its
    key only (so it does not depend on the other documents or their order)."""
    cols = [np.random.default_rng(_key_seed(seed, k)).poisson(1.0, resamples) for k in keys]
    return np.stack(cols, axis=1) if cols else np.zeros((resamples, 0), dtype=np.int64)


def plain_threshold(tp: np.ndarray, gold: np.ndarray, thresholds: Sequence[float], target: float) -> float | None:
    """The plain rule on per-document counts (``tp``: ``[D, T]``, ``gold``: ``[D]``): the highest
    threshold whose recall over all documents reaches ``target``, or None."""
    v = float(highest_reaching(np.asarray(tp).sum(0), np.asarray(gold).sum(), thresholds, target))
    return None if np.isnan(v) else v


def bagged_threshold(tp: np.ndarray, gold: np.ndarray, thresholds: Sequence[float], target: float,
                     keys: Sequence[str], *, resamples: int = 1000, seed: int = 0) -> float | None:
    """The bagged rule (module docstring): the geometric mean over ``resamples`` Poisson-bootstrap
    resamples of the documents of the highest threshold reaching ``target`` in each (the lowest
    of ``thresholds`` where a resample reaches it at none). None when the full set of documents
    reaches ``target`` at no threshold (as the plain rule). ``keys``: one per document (its id),
    seeding its resampling counts."""
    tp, gold = np.asarray(tp), np.asarray(gold)
    if plain_threshold(tp, gold, thresholds, target) is None:
        return None
    w = poisson_weights(keys, resamples, seed)
    per = highest_reaching(w @ tp, w @ gold, thresholds, target)
    per = np.where(np.isnan(per), min(thresholds), per)
    return float(np.exp(np.log(per).mean()))


def rule_spread(tp: np.ndarray, gold: np.ndarray, thresholds: Sequence[float], target: float,
                keys: Sequence[str], *, outer: int = 200, resamples: int = 1000, seed: int = 0) -> dict:
    """How much each rule's threshold moves when the dev documents change: over ``outer``
    bootstrap resamples of the documents (drawn by ``np.random.default_rng(seed)``; a document
    drawn twice is two documents, with keys of their own), the 5th, 50th and 95th percentiles of
    the plain and the bagged rule's thresholds and their ratio of 95th to 5th percentile; and,
    dropping one document at a time (every one), the largest factor by which each rule's
    threshold moves (``max |log(th_drop / th_all)|``, as a factor ``exp`` of it)."""
    tp, gold = np.asarray(tp), np.asarray(gold)
    n = len(gold)
    rng = np.random.default_rng(seed)
    rules = {
        "plain": lambda t, g, k: plain_threshold(t, g, thresholds, target),
        "bagged": lambda t, g, k: bagged_threshold(t, g, thresholds, target, k, resamples=resamples, seed=seed),
    }
    low = min(thresholds)
    out: dict = {"documents": n, "outer_resamples": outer, "inner_resamples": resamples}
    draws = [rng.integers(0, n, n) for _ in range(outer)]
    for name, rule in rules.items():
        vals = []
        for idx in draws:
            seen: dict[int, int] = {}
            ks = []
            for i in idx:
                seen[i] = seen.get(i, 0) + 1
                ks.append(f"{keys[i]}#{seen[i]}")
            v = rule(tp[idx], gold[idx], ks)
            vals.append(low if v is None else v)
        q5, q50, q95 = (float(x) for x in np.percentile(vals, [5, 50, 95]))
        full = rule(tp, gold, list(keys))
        full = low if full is None else full
        drops = []
        for i in range(n):
            keep = np.arange(n) != i
            v = rule(tp[keep], gold[keep], [k for j, k in enumerate(keys) if j != i])
            drops.append(abs(np.log((low if v is None else v) / full)))
        out[name] = {"threshold": full, "p5": q5, "p50": q50, "p95": q95, "p95_over_p5": q95 / q5,
                     "max_drop_one_factor": float(np.exp(max(drops))) if drops else 1.0}
    return out


def curve_from_counts(counts: dict, thresholds: Sequence[float] | None = None) -> list[dict]:
    """Binary-token P/R/F1 of all documents at each threshold of ``counts``
    (:func:`deidlib.training.predict.threshold_doc_counts`), or at those of ``thresholds``."""
    from ..evaluation.scorer import prf

    want = None if thresholds is None else set(thresholds)
    g = int(counts["gold"].sum())
    rows = []
    for j, th in enumerate(counts["thresholds"]):
        if want is not None and th not in want:
            continue
        tp, fp = int(counts["tp"][:, j].sum()), int(counts["fp"][:, j].sum())
        r = prf(tp, fp, g - tp)
        rows.append({"threshold": th, "precision": r.precision, "recall": r.recall, "f1": r.f1})
    return rows


def choose_threshold_bagged(tagger, dev_docs, target_recall: float, *, resamples: int = 1000, seed: int = 0,
                            grid: Sequence[float] = RULE_GRID, spread: bool = False,
                            device="cpu") -> tuple[float | None, dict]:
    """The bagged rule on a tagger's dev split: its threshold (None when no value of ``grid``
    reaches ``target_recall`` on all of ``dev_docs``) and a record: the dev curve at ``grid``
    and at the chosen threshold (what the threshold gives on the whole dev split), the plain
    rule's threshold on the same grid, and with ``spread=True`` :func:`rule_spread` (100 outer
    resamples)."""
    from .predict import _sentence_marginals, threshold_doc_counts

    keys = [d.id for d in dev_docs]
    decoded = _sentence_marginals(tagger, dev_docs, 64, device, None)  # once: each threshold re-decodes them
    counts = threshold_doc_counts(tagger, dev_docs, grid, decoded=decoded)
    th = bagged_threshold(counts["tp"], counts["gold"], grid, target_recall, keys, resamples=resamples, seed=seed)
    curve = curve_from_counts(counts)
    if th is not None:
        at = threshold_doc_counts(tagger, dev_docs, [th], decoded=decoded)
        curve = sorted([*curve, *curve_from_counts(at)], key=lambda p: -p["threshold"])
    info: dict[str, Any] = {"rule": f"bagged: geometric mean over {resamples} Poisson-bootstrap resamples of the dev documents "
                    f"(seed {seed}) of the highest threshold of a {len(grid)}-value log grid whose recall "
                    f">= {target_recall}",
            "curve": curve, "plain_threshold_on_grid": plain_threshold(counts["tp"], counts["gold"], grid,
                                                                      target_recall)}
    if spread:
        info["spread"] = rule_spread(counts["tp"], counts["gold"], grid, target_recall, keys, outer=100,
                                     resamples=resamples, seed=seed)
    return th, info


def knife_edge_counts(n_docs: int = 200, gold_per_doc: int = 20, seed: int = 0, *, low: float = 0.17,
                      high: float = 0.3) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Per-document counts ``(tp [D, T] on RULE_GRID, gold [D], keys)`` whose recall curve sits
    exactly on r* = 0.99 over a plateau of thresholds: each missed token is found below its own
    rescue threshold; 38 tokens are never found, 2 are found at the grid value nearest ``low``
    and below, 40 at the one nearest ``high`` and below, each in a document of its own (drawn by
    ``seed``; document 0 misses nothing). Recall (``n_docs=200``): 0.9905 up to ``low``, exactly
    0.99 above it up to ``high``, 0.98 above ``high``: the plain rule picks ``high``, and dropping
    document 0 takes it down to ``low``. The test of the rule's stability, and its probe."""
    rng = np.random.default_rng(seed)
    lo, hi = (min(RULE_GRID, key=lambda g: abs(np.log(g / x))) for x in (low, high))
    rescue = [0.0] * 38 + [lo] * 2 + [hi] * 40
    owners = rng.choice(np.arange(1, n_docs), size=len(rescue), replace=False)
    th = np.array(RULE_GRID)
    tp = np.full((n_docs, len(th)), gold_per_doc, dtype=np.int64)
    for doc, rho in zip(owners, rescue):
        tp[doc] -= (th > rho).astype(np.int64)
    return tp, np.full(n_docs, gold_per_doc, dtype=np.int64), [f"doc{i}" for i in range(n_docs)]


def rule_probe(resamples: int, seed: int, target: float) -> str:
    """What the bagged rule answers on fixed probe curves (:func:`knife_edge_counts` with and
    without its document 0, and at a target no threshold reaches): the default model's cache
    fingerprint includes it, so a change of the rule's code that changes its output names a new
    model, and an edit that does not (a comment, a refactoring) keeps the cached one."""
    tp, gold, keys = knife_edge_counts()
    out = [bagged_threshold(tp[cut:], gold[cut:], RULE_GRID, t, keys[cut:], resamples=resamples, seed=seed)
           for cut, t in ((0, target), (1, target), (0, 0.999))]
    return ",".join("none" if v is None else f"{v:.12g}" for v in out)
