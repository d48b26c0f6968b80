"""ahmed chapter 4: Figure 4.2 (bar chart of Table 4.2) and Figure A.1 analogs."""

from __future__ import annotations

import math
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from ...plotting import apply_style
from .tables import best_config, figure_a1_data, table_4_2

# ------------------------------------------------------------------------- figures


def figure_4_2(results: dict[str, Any]):
    """Table 4.2 as grouped bars (P, R, F1 per model) with ± sd error bars over seeds."""
    apply_style()
    t = table_4_2(results)
    fig, ax = plt.subplots(figsize=(9, 4))
    x = np.arange(len(t))
    w = 0.27
    for i, (m, color) in enumerate((("P", "#4C72B0"), ("R", "#DD8452"), ("F1", "#55A868"))):
        sd = t[f"{m}_sd"].fillna(0).to_numpy()
        ax.bar(x + (i - 1) * w, t[f"{m}_mean"], w, yerr=sd, capsize=3, color=color, label=m)
    ax.set_xticks(x)
    ax.set_xticklabels(t["model"], rotation=20, ha="right")
    ax.set_ylabel("binary token score (%)")
    lo = np.nanmin(t[["P_mean", "R_mean", "F1_mean"]].to_numpy())
    ax.set_ylim(max(0.0, math.floor(lo / 10) * 10 - 10), 100)
    ax.legend(loc="lower right", ncol=3, fontsize=8)
    seeds = results.get("seeds", [])
    ax.set_title(
        f"ahmed Table 4.2 analog — {results.get('corpus')}, profile {results.get('profile')}, "
        f"{len(seeds)} seed(s)",
        fontsize=10,
    )
    fig.tight_layout()
    return fig


def figure_a1(results: dict[str, Any], config: str | None = None):
    """Figure A.1 analog: test F1 vs PHI instances in training, per category (left) and
    per TYPE (right), for ``config`` (default :func:`best_config`); ± sd error bars."""
    apply_style()
    config = config or best_config(results)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, level in zip(axes, ("category", "type")):
        d = figure_a1_data(results, config, level)
        x = np.maximum(d["train_instances"].to_numpy(), 0.8)  # 0 instances shown at the left edge
        ax.errorbar(x, d["F1_mean"], yerr=d["F1_sd"].fillna(0), fmt="o", capsize=3)
        for xi, yi, name in zip(x, d["F1_mean"], d[level]):
            ax.annotate(name, (xi, yi), textcoords="offset points", xytext=(4, 3), fontsize=7)
        ax.set_xscale("log")
        ax.set_xlabel(f"PHI instances in training ({level})")
        ax.set_title(f"per {'TYPE' if level == 'type' else 'category'}")
    axes[0].set_ylabel("test F1 (%, typed token)")
    axes[0].set_ylim(-2, 102)
    fig.suptitle(
        f"ahmed Figure A.1 analog — {config}, {results.get('corpus')}, profile {results.get('profile')}",
        fontsize=10,
    )
    fig.tight_layout()
    return fig
