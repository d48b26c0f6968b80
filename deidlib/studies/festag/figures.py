"""Figures of the festag study (Festag & Spreckelsen 2020, Figure 6; the θ_d sweep and the
site-heterogeneity experiment, which the paper does not have)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator

from ...plotting import COLORS, style
from .tables import _scale, _until_stop, heterogeneity_table, theta_table

__all__ = ["figure6", "figure_theta_sweep", "figure_heterogeneity"]


@style()
def figure6(results: Mapping[str, Any], metric: str = "f1"):
    """Figure 6 analog: two panels (C_0.1, C_0.5). Every series is the mean over seeds of the
    seed's score (A, B: the global model; C, D: the mean over the workers) with a min–max band
    over seeds (D hatched, so that overlapping bands stay apart), up to each run unit's final
    (stopping) epoch; a marker on each series at the mean dev-selected epoch."""
    df = _until_stop(results)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.3), sharey=True)
    styles = {
        "A": dict(color=COLORS["A"], linestyle="-", linewidth=1.6, hatch=None, alpha=0.12),
        "B": dict(color=COLORS["B"], linestyle="--", linewidth=1.1, hatch=None, alpha=0.10),
        "C": dict(color=COLORS["C"], linestyle="-", linewidth=1.4, hatch=None, alpha=0.22),
        "D": dict(color=COLORS["D"], linestyle="-", linewidth=1.4, hatch="///", alpha=0.0),
    }
    n_seeds = len(results.get("seeds", [])) or 1
    for ax, c_name in zip(axes, ("C_0.1", "C_0.5")):
        for name in ("D", c_name, "B", "A"):
            d = df[df.experiment == name]
            if d.empty:
                continue
            st = styles[name[0]]
            per_seed = d.groupby(["seed", "epoch"])[metric].mean()
            g = per_seed.groupby(level="epoch")
            lo, hi, mean = g.min(), g.max(), g.mean()
            if st["hatch"]:
                ax.fill_between(lo.index, lo, hi, facecolor="none", edgecolor=st["color"], hatch=st["hatch"],
                                linewidth=0.0, alpha=0.5)
            else:
                ax.fill_between(lo.index, lo, hi, color=st["color"], alpha=st["alpha"], linewidth=0)
            what = "mean over workers" if name[0] in "CD" else "global model"
            ax.plot(mean.index, mean.values, color=st["color"], linestyle=st["linestyle"], linewidth=st["linewidth"],
                    label=f"{name} ({what}; mean, min–max over {n_seeds} seeds)")
            sel_ep = d.groupby(["seed", "site"]).selected_epoch.first().mean()
            if math.isfinite(sel_ep):
                near = int(mean.index[np.argmin(np.abs(mean.index - sel_ep))])
                ax.plot([near], [mean[near]], marker="v", color=st["color"], markersize=6, linestyle="none")
        ax.set_xlabel("epoch (▼: mean dev-selected epoch)")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # epochs are whole numbers
        ax.set_title(f"A, B, {c_name}, D")
        ax.set_ylim(0, 1)
        ax.legend(loc="lower right", fontsize=7)
    axes[0].set_ylabel(f"binary token {metric.upper()} (test)")
    fig.suptitle(f"festag Figure 6 analog — {_scale(results)}", fontsize=8.5)
    fig.tight_layout()
    return fig


@style()
def figure_theta_sweep(results: Mapping[str, Any], sweep: Mapping[str, Any], metric: str = "f1"):
    """Final-epoch F1 of DSSGD against θ_d (mean over workers, min–max bars), with the
    same seed's A and D as horizontal references."""
    t = theta_table(results, sweep, metric)
    c = t[t.theta_d.notna()]
    fig, ax = plt.subplots(figsize=(6, 3.8))
    ax.errorbar(c.theta_d, c.final_mean, yerr=[c.final_mean - c.final_min, c.final_max - c.final_mean],
                fmt="o-", color=COLORS["C"], capsize=3, label="C (DSSGD): final F1, mean and min–max over workers")
    # A and D: distinct line styles, each labelled at the right end of its line (they can be close)
    ref_styles: dict[str, dict[str, Any]] = {"A": dict(linestyle="--", linewidth=1.4), "D": dict(linestyle=(0, (1, 1.5)), linewidth=1.8)}
    ref_y = {}
    for key in ("A", "D"):
        row = t[t.experiment == key]
        if len(row):
            ref_y[key] = float(row.final_mean.iloc[0])
            ax.axhline(ref_y[key], color=COLORS[key], **ref_styles[key],
                       label=f"{key} (final, {'mean over workers' if key == 'D' else 'one model'})")
    ax.set_xscale("log")
    true_y = dict(ref_y)
    if len(ref_y) == 2 and abs(ref_y["A"] - ref_y["D"]) < 0.04:  # keep the two direct labels apart
        lo, hi = sorted(ref_y, key=lambda k: ref_y[k])
        mid = (ref_y["A"] + ref_y["D"]) / 2
        ref_y = {lo: mid - 0.025, hi: mid + 0.025}
    for key, y in ref_y.items():
        ax.annotate(f"{key} ({'centralized' if key == 'A' else 'local only'}) {true_y[key]:.3f}", xy=(1.0, y),
                    xycoords=("axes fraction", "data"), xytext=(3, 0), textcoords="offset points",
                    va="center", fontsize=7, color=COLORS[key])
    ax.set_xlabel("download fraction θ_d (log scale)")
    ax.set_ylabel(f"binary token {metric.upper()} (test), final epoch")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title(f"DSSGD θ_d sweep — seed {sweep['seed']}, {results['params'].get('epochs')} epochs", fontsize=9)
    fig.tight_layout()
    return fig


@style()
def figure_heterogeneity(results: Mapping[str, Any], het: Mapping[str, Any], metric: str = "f1"):
    """Left: test F1 at the dev-selected epoch (mean, min–max bars over workers and seeds)
    against the corpus heterogeneity, per experiment. Right: D's own-site minus other-site
    dev F1 (how different the sites are, measured)."""
    t = heterogeneity_table(results, het, metric)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 3.8), gridspec_kw={"width_ratios": [2, 1]})
    for name, d in t.groupby("experiment", sort=False):
        color = COLORS.get(name[0], "grey")
        ax.errorbar(d.heterogeneity, d.best_mean, yerr=[d.best_mean - d.best_min, d.best_max - d.best_mean],
                    fmt="o-", color=color, capsize=3, label=f"{name} (dev-selected epoch)")
    ax.set_xlabel("site heterogeneity of the synthetic corpus")
    ax.set_ylabel(f"binary token {metric.upper()} (test)")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7, loc="lower left")
    g = t.drop_duplicates("heterogeneity")
    ax2.plot(g.heterogeneity, g.cross_site_gap, "o-", color=COLORS.get("D", "red"))
    ax2.axhline(0, color="grey", linewidth=0.8)
    ax2.set_xlabel("site heterogeneity")
    ax2.set_ylabel("D: own-site − other-site dev F1")
    fig.suptitle(f"festag: site heterogeneity — seeds {het['seeds']}, {_scale(results)}", fontsize=8)
    fig.tight_layout()
    return fig
