"""ahmed chapter 4: Figure 4.2 (bar chart of Table 4.2) and Figure A.1 analogs."""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from ...plotting import style
from ..labels import place_labels
from .tables import best_config, figure_a1_data, table_4_2

__all__ = ["figure_4_2", "figure_a1"]

# ------------------------------------------------------------------------- figures


def min_max_err(t, metric: str) -> np.ndarray:
    """Asymmetric error bars ``[mean − min, max − mean]`` over seeds (shape 2 × rows): the bar
    spans exactly the seeds' range, so it never leaves [min, max] (never below 0 for a
    score), unlike ± sd over a few seeds where one seed stayed in the all-O phase."""
    mean = t[f"{metric}_mean"].to_numpy(dtype=float)
    lo = np.nan_to_num(mean - t[f"{metric}_min"].to_numpy(dtype=float))
    hi = np.nan_to_num(t[f"{metric}_max"].to_numpy(dtype=float) - mean)
    return np.vstack([lo, hi])


def _scale_text(results: dict[str, Any]) -> str:
    """The run's scale for a title: corpus, profile, epochs, training sentences, seeds."""
    p = results.get("params", {})
    d = results.get("data", {})
    seeds = results.get("seeds", [])
    sat = f"; SAT {p['sat_epochs']}" if p.get("sat_epochs") else ""
    return (
        f"{results.get('corpus')}, profile {results.get('profile')}: {p.get('epochs', '?')} epochs (max{sat}), "
        f"{d.get('train_sentences', '?')} training sentences, {len(seeds)} seed(s)"
    )


@style()
def figure_4_2(results: dict[str, Any]):
    """Table 4.2 as grouped bars (P, R, F1 per model: mean over seeds, value on each bar) with
    min–max bars; the axis starts at 0."""
    t = table_4_2(results)
    fig, ax = plt.subplots(figsize=(9, 4.6))
    x = np.arange(len(t))
    w = 0.27
    for i, (m, color) in enumerate((("P", "#4C72B0"), ("R", "#DD8452"), ("F1", "#55A868"))):
        bars = ax.bar(x + (i - 1) * w, t[f"{m}_mean"], w, yerr=min_max_err(t, m), capsize=3, color=color,
                      label=f"{m} (mean, min–max over seeds)")
        # the value on each bar: the axis starts at 0, so small gaps look small and are read off the labels
        vals = t[f"{m}_mean"].to_numpy(dtype=float)
        ax.bar_label(bars, labels=[f"{v:.1f}" if v >= 15 else "" for v in vals], label_type="center", rotation=90,
                     fontsize=6.5, color="white")
        ax.bar_label(bars, labels=[f"{v:.1f}" if v < 15 else "" for v in vals], label_type="edge", rotation=90,
                     fontsize=6.5, padding=2)  # short bars: the value above the bar
    ax.set_xticks(x)
    ax.set_xticklabels(t["model"], rotation=20, ha="right")
    ax.set_ylabel("binary token score (%)")
    ax.set_ylim(0, 105)
    # legend above the axes: never over the bars
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, fontsize=8, frameon=False)
    fig.suptitle(f"ahmed Table 4.2 analog — {_scale_text(results)}", fontsize=9)
    fig.tight_layout()
    return fig


@style()
def figure_a1(results: dict[str, Any], config: str | None = None):
    """Figure A.1 analog: test F1 vs PHI instances in training, per category (left) and
    per TYPE (right), for ``config`` (default :func:`best_config`); min–max bars over seeds.
    Labels are placed so that none overlaps another (:func:`deidlib.studies.labels.place_labels`)."""
    config = config or best_config(results)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6), sharey=True)
    points = []
    for ax, level in zip(axes, ("category", "type")):
        d = figure_a1_data(results, config, level)
        x = np.maximum(d["train_instances"].to_numpy(), 0.8)  # 0 instances shown at the left edge
        ax.errorbar(x, d["F1_mean"], yerr=min_max_err(d, "F1"), fmt="o", capsize=3)
        ax.set_xscale("log")
        ax.set_xlim(0.5, max(10.0, float(np.nanmax(x)) * 3))  # room for the labels of the right-most points
        ax.set_xlabel(f"PHI instances in training ({level})")
        ax.set_title(f"per {'TYPE' if level == 'type' else 'category'}")
        points.append((ax, x, d["F1_mean"].to_numpy(dtype=float), [str(v) for v in d[level]]))
    axes[0].set_ylabel("test F1 (%, typed token)")
    axes[0].set_ylim(0, 108)
    fig.suptitle(f"ahmed Figure A.1 analog — {config}; {_scale_text(results)}", fontsize=9)
    fig.tight_layout()
    for ax, x, y, names in points:  # labels placed once the layout is final, none over another
        place_labels(ax, x, y, names, fontsize=6.5)
    return fig
