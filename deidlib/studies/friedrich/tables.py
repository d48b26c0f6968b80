"""The friedrich tables (Friedrich et al., ACL 2019): the Figure 4 summary of the pseudonymization
sweep, the Table 2 analog and the Figure 5 summary of the adversarial runs."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .claims import PAPER_SHAPES, paper_relative
from .params import FriedrichParams

__all__: list[str] = []


def summarize_sweep(df: pd.DataFrame) -> pd.DataFrame:
    """Mean, min and max F1 over seeds per (embedding, N), and the mean relative to N = 1."""
    g = df.groupby(["embedding", "n"]).f1.agg(["mean", "min", "max", "count"]).reset_index()
    base = g[g.n == 1].set_index("embedding")["mean"]
    g["relative_to_n1"] = [r["mean"] / base[r.embedding] if r.embedding in base and base[r.embedding] > 0
                           else float("nan") for _, r in g.iterrows()]
    g["paper_relative"] = g.n.map(paper_relative)
    return g.rename(columns={"mean": "f1_mean", "min": "f1_min", "max": "f1_max", "count": "seeds"})


def table2(sweep_df: pd.DataFrame, extra: pd.DataFrame, adversarial: pd.DataFrame | None,
           params: FriedrichParams) -> pd.DataFrame:
    """Table 2 analog: mean (min–max) binary token F1 over seeds per row, with the paper's value."""
    names = {"fasttext": "FastText", "glove": "GloVe"}
    N = params.table_neighbours
    rows = []

    def add(label, f1s):
        f1s = list(f1s)
        if f1s:
            rows.append({"model": label, "f1_mean": float(np.mean(f1s)), "f1_min": float(np.min(f1s)),
                         "f1_max": float(np.max(f1s)), "runs": len(f1s),
                         "paper": PAPER_SHAPES["table2"].get(label, float("nan"))})

    for e in ("fasttext", "glove"):
        if e == "glove" and len(extra):
            add("non-private GloVe", extra[extra.embedding == "glove"].f1)
        label = f"non-private {names[e]}" + (" + casing" if e == "glove" else "")
        add(label, sweep_df[(sweep_df.embedding == e) & (sweep_df.n == 1)].f1)
    for e in ("fasttext", "glove"):
        add(f"pseudonymized N={N} {names[e]}", sweep_df[(sweep_df.embedding == e) & (sweep_df.n == N)].f1)
    if adversarial is not None and len(adversarial):
        for e in ("fasttext", "glove"):
            add(f"adversarial N={N} {names[e]}", adversarial[adversarial.embedding == e].f1)
    return pd.DataFrame(rows)


def summarize_adversarial(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean, min and max over seeds per (embedding, procedure, N) of F1 and adversary accuracy."""
    g = runs.groupby(["embedding", "procedure", "n"])
    out = g.agg(f1_mean=("f1", "mean"), f1_min=("f1", "min"), f1_max=("f1", "max"),
                adversary_mean=("adversary_accuracy", "mean"), adversary_min=("adversary_accuracy", "min"),
                adversary_max=("adversary_accuracy", "max"),
                adversary_train_mean=("adversary_train_accuracy", "mean"),
                adversary_pairs=("adversary_pairs", "mean"), adversary_train_pairs=("adversary_train_pairs", "mean"),
                seeds=("seed", "count")).reset_index()
    return out
