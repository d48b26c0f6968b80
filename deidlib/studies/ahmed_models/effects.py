"""ahmed chapter 4: each effect the thesis claims as a paired comparison over seeds.

Two configurations trained on the same seed share the data split, the word vectors, the
misspelled test split and the seed of initialisation and batch order, so their scores on that
seed form a pair. :func:`paired_effects` gives per effect the mean paired difference A − B (in
percentage points), its 95 % t interval, the two-sided paired t-test p-value and the verdict
of :func:`deidlib.studies.seed_stats.effect_verdict` (``found`` / ``not distinguishable from
zero`` / ``reversed``). Guarded by ``tests/studies/test_ahmed_models.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..seed_stats import effect_verdict, paired_effect
from .params import SAT_KIND, SCRATCH_KIND, AhmedParams, _fmt

__all__ = ["paired_effects"]

#: stands for the Table 4.2 RNN row with the highest mean test F1 (the thesis's "best RNN")
BEST_RNN = "best RNN"


def _get(r: dict[str, Any], *path: str) -> float:
    v: Any = r
    for k in path:
        if not isinstance(v, dict) or k not in v:
            return float("nan")
        v = v[k]
    return float(v) if v is not None else float("nan")


#: how each effect metric is read off a run record (a fraction; reported ×100)
_METRIC_SOURCES = {
    "f1": lambda r: _get(r, "f1"),
    "recall": lambda r: _get(r, "recall"),
    "oov_recall": lambda r: _get(r, "by_vocabulary", "oov", "recall"),
    "misspelled_recall": lambda r: _get(r, "misspelled", "by_token", "misspelled", "recall"),
    "misspelled_split_f1": lambda r: _get(r, "misspelled", "binary", "f1"),
}


@dataclass(frozen=True)
class Effect:
    """A claimed difference ``metric(a) − metric(b)`` with the thesis's value (pp; its sign is
    the claim) and the :class:`deidlib.reporting.Claim` rule and tolerance of the claims table."""

    key: str
    claim: str
    a: str
    b: str
    metric: str
    paper: float
    rule: str = "same_sign"
    tol: float = 1.0
    paper_text: str | None = None


def effects_for(params: AhmedParams) -> list[Effect]:
    """The thesis's chapter-4 claims for the configurations of ``params``."""
    rd, sd = _fmt(params.rnn_dropout), _fmt(params.sat_dropout)
    gru, nochar, soft = f"gru-crf-d{rd}", f"gru-nochar-crf-d{rd}", f"gru-softmax-d{rd}"
    sat = f"sat-crf-d{sd}"
    out = [
        Effect("sat_vs_rnn", "self-attention beats the best RNN tagger: F1 gap (Table 4.2, Nursing Notes: 85.9 vs 77.0)",
               sat, BEST_RNN, "f1", 85.9 - 77.0),
        Effect("char_f1", "character embeddings help the GRU-CRF (dropout 0.5): F1 with − without "
               "(Table 4.3, i2b2: 97.3 vs 90.7)", gru, nochar, "f1", 97.3 - 90.7),
        Effect("char_oov", "character embeddings raise recall on test tokens out of the training vocabulary "
               "(§4.1.2: characters for unseen words)", gru, nochar, "oov_recall", 1.0, paper_text="> 0"),
        Effect("char_misspelled", "character embeddings raise recall on misspelled test tokens "
               "(§4.1.2: characters for misspellings)", gru, nochar, "misspelled_recall", 1.0, paper_text="> 0"),
        Effect("char_misspelled_f1", "character embeddings raise F1 on the misspelled test split "
               "(§4.1.2)", gru, nochar, "misspelled_split_f1", 1.0, paper_text="> 0"),
        Effect("crf_gru", "a CRF output beats softmax for the GRU: F1 CRF − softmax (Table 4.3, i2b2: 97.3 vs 96.5)",
               gru, soft, "f1", 97.3 - 96.5, tol=0.5),
        Effect("crf_sat", "CRF and softmax tie for self-attention: F1 CRF − softmax (Table 4.3, i2b2: 98.2 vs 98.1)",
               sat, f"sat-softmax-d{sd}", "f1", 98.2 - 98.1, rule="close"),
    ]
    drop = list(params.gru_dropouts)
    if 0.0 in drop:
        thesis = {0.25: 96.8, 0.5: 97.3}
        for d in drop:
            if d > 0:
                out.append(Effect(f"dropout_{_fmt(d)}", f"dropout {_fmt(d)} beats no dropout for the GRU-CRF: F1 "
                                  f"(Table 4.3, i2b2: {thesis.get(d, float('nan'))} vs 95.8)", f"gru-crf-d{_fmt(d)}",
                                  "gru-crf-d0", "f1", thesis.get(d, 96.0) - 95.8, tol=0.5))
    thesis_r = {3.0: 97.4, 5.0: 97.3, 10.0: 97.5, 15.0: 95.7}
    for dp in params.deltas:
        if dp != 1 and dp in thesis_r:
            out.append(Effect(f"delta_p_{_fmt(dp)}", f"recall penalty δ_p = {_fmt(dp)} vs 1: recall "
                              f"(Table 4.4, i2b2: {thesis_r[dp]} vs 97.1)", f"{sat}-dp{_fmt(dp)}", sat, "recall",
                              thesis_r[dp] - 97.1, tol=0.2))
    return out


def _values(results: dict[str, Any], config: str, metric: str) -> dict[int, float]:
    read = _METRIC_SOURCES[metric]
    return {int(r["seed"]): 100 * read(r) for r in results["runs"] if r["config"] == config}


def _best_rnn(results: dict[str, Any]) -> str | None:
    rows = results.get("table_rows", {}).get("4.2", [])
    kinds = {r["config"]: r["kind"] for r in results["runs"]}
    means = {c: np.nanmean(list(_values(results, c, "f1").values())) for c in rows
             if kinds.get(c) not in (None, SAT_KIND, SCRATCH_KIND)}
    return max(means, key=lambda c: means[c]) if means else None


def paired_effects(results: dict[str, Any], params: AhmedParams | list[Effect]) -> pd.DataFrame:
    """One row per effect of :func:`effects_for` ``(params)`` (or of the given list): ``key``, ``claim``, configurations ``a`` and ``b``, ``metric``, the
    thesis value ``paper``, ``n`` seed pairs, ``mean`` paired difference a − b (pp), its 95 % t
    interval ``lo``–``hi``, the paired t-test ``p`` and the ``verdict`` on the thesis's sign
    (``not measured`` when a configuration was not run or fewer than two seeds pair up)."""
    effects = effects_for(params) if isinstance(params, AhmedParams) else list(params)
    rows = []
    for e in effects:
        b = _best_rnn(results) if e.b == BEST_RNN else e.b
        va = _values(results, e.a, e.metric)
        vb = _values(results, b, e.metric) if b else {}
        seeds = sorted(set(va) & set(vb))
        st = paired_effect([va[s] for s in seeds], [vb[s] for s in seeds])
        rows.append({"key": e.key, "claim": e.claim, "a": e.a, "b": b or e.b, "metric": e.metric,
                     "paper": e.paper, "rule": e.rule, "tol": e.tol, "paper_text": e.paper_text, **st,
                     "verdict": effect_verdict(st["lo"], st["hi"], 1.0 if e.paper >= 0 else -1.0)})
    return pd.DataFrame(rows)
