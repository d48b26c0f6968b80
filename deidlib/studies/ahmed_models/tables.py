"""ahmed chapter 4: the paper-table analogs (Tables 4.2-4.4, 4.10, A.1) from run_study's records."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...corpus.labels import scheme_labels
from ...corpus.phi import TYPE_TO_CATEGORY
from ..seed_stats import t_interval
from .params import (
    METRICS,
    SAT_KIND,
    SAT_LABEL,
    SCHEME,
    SHORT,
)

__all__ = ["interval_view", "table_4_2", "table_4_3", "table_vocabulary", "table_misspelled", "table_4_4", "table_4_10", "best_config", "table_a1", "figure_a1_data"]

# -------------------------------------------------------------------------- tables


def runs_frame(results: dict[str, Any]):
    """One row per (config, seed) with the scalar fields of the run records."""
    skip = {"hparams", "history", "per_category", "per_type", "by_vocabulary", "misspelled"}
    return pd.DataFrame.from_records([{k: v for k, v in r.items() if k not in skip} for r in results["runs"]])


def summarize(df, by: Sequence[str] | str, metrics: Sequence[str] = METRICS, scale: float = 100.0):
    """Mean, sample sd (ddof=1; NaN for one seed), min, max and the 95 % Student t interval of
    the mean over seeds (:func:`deidlib.studies.seed_stats.t_interval`; NaN for one seed) of
    ``metrics`` per group, times ``scale``; columns ``<M>_mean``, ``<M>_sd``, ``<M>_min``,
    ``<M>_max``, ``<M>_ci_lo``, ``<M>_ci_hi`` (M = P, R, F1 for precision/recall/f1) and ``n``.
    Figures draw min–max (never below 0), tables mean [95 % interval] (:func:`interval_view`)."""
    by = [by] if isinstance(by, str) else list(by)
    g = df.groupby(by, sort=False)
    cols: dict[str, Any] = {}
    for m in metrics:
        s = SHORT.get(m, m)
        cols[f"{s}_mean"] = g[m].mean() * scale
        cols[f"{s}_sd"] = g[m].std(ddof=1) * scale
        cols[f"{s}_min"] = g[m].min() * scale
        cols[f"{s}_max"] = g[m].max() * scale
        ci = g[m].agg(lambda v: t_interval(v.to_numpy(dtype=float))[1:])
        cols[f"{s}_ci_lo"] = ci.map(lambda x: x[0]) * scale
        cols[f"{s}_ci_hi"] = ci.map(lambda x: x[1]) * scale
    cols["n"] = g[metrics[0]].count()
    return pd.DataFrame(cols)


def interval_view(t, digits: int = 1):
    """``t`` for reading: each ``<M>_mean`` with its ``<M>_ci_lo``/``<M>_ci_hi`` becomes one
    column ``<M> [95% CI]`` = ``"mean [lo, hi]"`` (just the mean with one seed); sd, min, max
    and the interval columns are dropped (they stay in the CSV)."""
    t = t.copy()
    for m in [c[:-5] for c in t.columns if c.endswith("_mean")]:
        lo, hi = f"{m}_ci_lo", f"{m}_ci_hi"
        if lo not in t:
            continue

        def cell(mean, a, b):
            if mean is None or not np.isfinite(mean):
                return "–"
            if not (np.isfinite(a) and np.isfinite(b)):
                return f"{mean:.{digits}f}"
            return f"{mean:.{digits}f} [{a:.{digits}f}, {b:.{digits}f}]"

        t[f"{m} [95% CI]"] = [cell(*v) for v in zip(t[f"{m}_mean"].astype(float), t[lo].astype(float),
                                                     t[hi].astype(float))]
        t = t.drop(columns=[c for c in (f"{m}_mean", f"{m}_sd", f"{m}_min", f"{m}_max", lo, hi) if c in t])
    return t


def _rows(results: dict[str, Any], table: str):
    rows = results.get("table_rows", {}).get(table)
    if rows is None:
        raise ValueError(f"these results have no Table {table} (ran tables {results.get('tables')})")
    return rows


def _table(results: dict[str, Any], table: str, columns: Sequence[str], metrics: Sequence[str] = METRICS):
    df = runs_frame(results)
    rows = _rows(results, table)
    df = df[df.config.isin(rows)]
    s = summarize(df, "config", metrics).reindex(rows)
    first = df.drop_duplicates("config").set_index("config").reindex(rows)
    t = first[list(columns)].join(s)
    return t.reset_index()


def table_4_2(results: dict[str, Any]):
    """Table 4.2 analog: binary-token P/R/F1 (%) mean ± sd over seeds per model."""
    return _table(results, "4.2", ["model", "kind", "crf"])


def table_4_3(results: dict[str, Any]):
    """Table 4.3 analog: GRU with/without character embedding (CE), CRF vs softmax,
    dropout; self-attention (SAT) dropout and CRF vs softmax."""
    t = _table(results, "4.3", ["model", "kind", "char", "crf", "dropout"])
    t.insert(1, "CE", t.pop("char"))
    t.insert(3, "softmax", ~t["crf"].astype(bool))
    t["model"] = t["model"].replace({SAT_LABEL: "SAT (pre-trained MiniLM)"})
    # the character embedding is a variable of the word-based taggers only: the SAT's encoder reads sub-words
    t["CE"] = [("n/a (sub-words)" if k == SAT_KIND else bool(c)) for k, c in zip(t["kind"], t["CE"])]
    return t


def _grouped_table(results: dict[str, Any], tables: Sequence[str], groups):
    recs = []
    rows: list[str] = []
    for t in tables:
        if t in results.get("table_rows", {}):
            rows += [r for r in results["table_rows"][t] if r not in rows]
    for r in results["runs"]:
        if r["config"] not in rows:
            continue
        for g, c in (groups(r) or {}).items():
            if g == "?":
                continue
            recs.append({"config": r["config"], "model": r["model"],
                         "char": "n/a (sub-words)" if r["kind"] == SAT_KIND else r["char"], "crf": r["crf"],
                         "dropout": r["dropout"], "tokens": g, "gold": c["tp"] + c["fn"],
                         **{m: c[m] for m in METRICS}})
    if not recs:
        return pd.DataFrame()
    df = pd.DataFrame.from_records(recs)
    s = summarize(df, ["config", "tokens"]).reset_index()
    first = df.drop_duplicates(["config", "tokens"])[["config", "tokens", "model", "char", "crf", "dropout", "gold"]]
    t = first.merge(s, on=["config", "tokens"])
    t["order"] = t["config"].map({c: i for i, c in enumerate(rows)})
    t = t.sort_values(["tokens", "order"], ascending=[False, True]).drop(columns="order")
    t.insert(3, "CE", t.pop("char"))
    return t.reset_index(drop=True)


def table_vocabulary(results: dict[str, Any], tables: Sequence[str] = ("4.2", "4.3")):
    """The character-feature effect where it should matter: binary-token P/R/F1 (%) of each
    configuration of ``tables`` on the test tokens out of the training vocabulary (``oov``:
    only the character encoder sees anything of them) and in it, mean ± sd / min / max / 95 %
    t interval over seeds, with the gold PHI tokens of each group (``gold``). Runs recorded
    before ``by_vocabulary`` existed give an empty table."""
    return _grouped_table(results, tables, lambda r: r.get("by_vocabulary"))


def table_misspelled(results: dict[str, Any], tables: Sequence[str] = ("4.2", "4.3")):
    """The same models on the misspelled test split (:mod:`deidlib.synthetic.misspell`):
    binary-token P/R/F1 (%) on the tokens given a typing error (``misspelled``) and on the
    others (``intact``), mean ± sd / 95 % t interval over seeds; ``gold`` = gold PHI tokens of
    the group. Empty when the run scored no misspelled split."""
    return _grouped_table(results, tables, lambda r: r.get("misspelled", {}).get("by_token"))


def table_4_4(results: dict[str, Any]):
    """Table 4.4 analog: the recall penalty δ_p on the self-attention model."""
    return _table(results, "4.4", ["delta_p"])


def table_4_10(results: dict[str, Any]):
    """Table 4.10 analog: seconds per training epoch, prediction seconds on the test split
    (mean ± sd over seeds), trained parameters (``n_parameters``), all parameters
    (``n_parameters_total``: the SAT's frozen encoder layers included) and prediction
    throughput, for the Table 4.2 models (all configurations when Table 4.2 was not run).
    Seconds are CPU seconds on ``results["torch_threads"]`` threads."""
    df = runs_frame(results)
    rows = results.get("table_rows", {}).get("4.2") or list(dict.fromkeys(df.config))
    df = df[df.config.isin(rows)].copy()
    df["predict_tokens_per_s"] = df["test_whitespace_tokens"] / df["predict_seconds"]
    g = df.groupby("config", sort=False)
    t = pd.DataFrame(
        {
            "model": g["model"].first(),
            "crf": g["crf"].first(),
            "train_s_per_epoch_mean": g["train_seconds_per_epoch"].mean(),
            "train_s_per_epoch_sd": g["train_seconds_per_epoch"].std(ddof=1),
            "predict_s_mean": g["predict_seconds"].mean(),
            "predict_s_sd": g["predict_seconds"].std(ddof=1),
            "predict_tokens_per_s": g["predict_tokens_per_s"].mean(),
            "n_parameters": g["n_parameters"].first(),
            "n_parameters_total": (g["n_parameters_total"] if "n_parameters_total" in df else g["n_parameters"]).first(),
            "epochs_run_mean": g["epochs_run"].mean(),
        }
    ).reindex(rows)
    return t.reset_index()


def best_config(results: dict[str, Any]) -> str:
    """The Table 4.2 configuration with the highest mean dev F1 (test F1 without dev)."""
    df = runs_frame(results)
    rows = results.get("table_rows", {}).get("4.2") or list(dict.fromkeys(df.config))
    df = df[df.config.isin(rows)]
    key = "best_dev_f1" if df["best_dev_f1"].notna().all() else "f1"
    means = df.groupby("config", sort=False)[key].mean()
    return str(means.idxmax())


def _predictable(level: str) -> set[str]:
    """TYPEs (or categories) the ``i2b2`` label scheme can predict (not ROOM, DEPARTMENT,
    OTHER: they are folded into LOCATION-OTHER or treated as non-PHI)."""
    types = {t for t in scheme_labels(SCHEME) if t in TYPE_TO_CATEGORY}
    return types if level == "type" else {TYPE_TO_CATEGORY[t] for t in types}


def category_table(records: Sequence[dict[str, Any]], level: str = "category", predictable_only: bool = True):
    """Per-category (``level="category"``) or per-TYPE (``"type"``) typed token P/R/F1 (%)
    mean ± sd over the given run records (one configuration, several seeds), with the
    gold test counts (TP + FN) of the first record. ``predictable_only`` drops the
    categories/TYPEs the label scheme has no label for (OTHER; ROOM, DEPARTMENT)."""
    key = {"category": "per_category", "type": "per_type"}.get(level)
    if key is None:
        raise ValueError(f"level must be 'category' or 'type', got {level!r}")
    if not records:
        raise ValueError("no run records")
    keep = _predictable(level) if predictable_only else None
    rows = [
        {level: name, "seed": r["seed"], **v}
        for r in records
        for name, v in r[key].items()
        if keep is None or name in keep
    ]
    df = pd.DataFrame.from_records(rows)
    s = summarize(df, level)
    gold = {name: v["tp"] + v["fn"] for name, v in records[0][key].items()}
    s.insert(0, "test_gold", [gold.get(n, 0) for n in s.index])
    return s.reset_index()


def table_a1(results: dict[str, Any], config: str | None = None, level: str = "category"):
    """Table A.1 analog: per-category P/R/F1 (%) of ``config`` (default :func:`best_config`)."""
    config = config or best_config(results)
    recs = [r for r in results["runs"] if r["config"] == config]
    if not recs:
        raise ValueError(f"no runs of configuration {config!r}")
    t = category_table(recs, level)
    t.insert(0, "config", config)
    return t


def figure_a1_data(results: dict[str, Any], config: str | None = None, level: str = "category"):
    """Figure A.1 analog data: per category (or TYPE), the PHI instances in the training
    sentences and the mean ± sd test F1 (%) of ``config`` (default :func:`best_config`).
    Categories absent from the test gold standard are left out (their F1 is undefined)."""
    t = table_a1(results, config, level)
    t = t[t["test_gold"] > 0].copy()
    inst = results["train_instances"][level]
    t.insert(2, "train_instances", [int(inst.get(n, 0)) for n in t[level]])
    return t.reset_index(drop=True)
