"""Figures of the alawad study (Alawad et al. 2020): micro/macro F1 per approach, per-class F1
of the most and least represented classes, and the registry attacks."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ...plotting import style
from .tables import attack_table, f1_table, scale_note

__all__ = ["figure_f1", "figure_per_class", "figure_attack"]

LABELS = {"single": "single-registry", "centralized": "centralized", "shared_private": "shared–private",
          "shared_private_no_adv": "shared–private, no adversary", "label_only": "the class label alone"}
COLORS = {"single": "tab:red", "centralized": "black", "shared_private": "tab:green",
          "shared_private_no_adv": "tab:olive", "label_only": "tab:grey"}


def _errorbar(ax, x, mean, lo, hi, color, label, width):
    # min–max over seeds; F1 and accuracies are >= 0, so the bars never go below 0
    ax.bar(x, mean, width, color=color, label=label,
           yerr=np.vstack([np.asarray(mean) - np.asarray(lo), np.asarray(hi) - np.asarray(mean)]), capsize=3)


@style()
def figure_f1(results: Mapping[str, Any]):
    """Micro and macro F1 per approach (bars: mean over seeds; error bars: min–max)."""
    t = f1_table(results)
    fig, ax = plt.subplots(figsize=(9.5, 4))
    x = np.arange(2)
    w = 0.8 / len(t)
    for i, (a, r) in enumerate(t.iterrows()):
        _errorbar(ax, x + (i - (len(t) - 1) / 2) * w, [r.micro_mean, r.macro_mean], [r.micro_min, r.macro_min],
                  [r.micro_max, r.macro_max], COLORS[a], LABELS[a], w)
    ax.set_xticks(x, ["micro F1", "macro F1"])
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("F1 on all registries' test reports")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)  # beside the bars, never on one
    ax.set_title(f"alawad: {scale_note(results)}\nbars: mean over seeds, error bars: min–max", fontsize=8)
    fig.tight_layout()
    return fig


@style()
def figure_per_class(results: Mapping[str, Any]):
    """Left: F1 of the most/least represented classes (≥ min_support training reports) per
    approach (mean, min–max over seeds). Right: every class's F1 gain over single-registry
    against its pooled training count (mean over seeds)."""
    df = pd.DataFrame(results["per_class"])
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4))
    roles = df[df.role != ""]
    if roles.empty:
        ax.text(0.5, 0.5, f"no class with >= {results['params']['min_support']} training reports",
                ha="center", va="center", transform=ax.transAxes)
    else:
        approaches = [a for a in results["approaches"] if a in set(roles.approach)]
        w = 0.8 / len(approaches)
        for i, a in enumerate(approaches):
            g = roles[roles.approach == a].groupby("role").f1
            order = [r for r in ("most", "least") if r in g.groups]
            _errorbar(ax, np.arange(len(order)) + (i - (len(approaches) - 1) / 2) * w, g.mean()[order],
                      g.min()[order], g.max()[order], COLORS[a], LABELS[a], w)
        classes = roles.groupby("role")["class"].agg(lambda s: ", ".join(sorted(set(s))))
        counts = roles.groupby("role").train_count.agg(["min", "max"])
        order = [r for r in ("most", "least") if r in classes.index]
        ax.set_xticks(np.arange(len(order)), [f"{r} represented\n{classes[r]}\n(train {counts.loc[r, 'min']}"
                                              f"–{counts.loc[r, 'max']})" for r in order], fontsize=7)
        ax.set_ylim(0, 1.05)
        ax.legend(fontsize=7)
    ax.set_ylabel("per-class F1")
    ax.set_title(f"classes with >= {results['params']['min_support']} training reports", fontsize=9)
    mean = df.groupby(["approach", "class"]).agg(f1=("f1", "mean"), n=("train_count", "mean")).reset_index()
    if "single" in set(mean.approach):
        base = mean[mean.approach == "single"].set_index("class").f1
        for a in ("centralized", "shared_private"):
            m = mean[mean.approach == a].set_index("class")
            if m.empty:
                continue
            bx.scatter(m.n, m.f1 - base.reindex(m.index), color=COLORS[a], label=f"{LABELS[a]} − single", s=18)
        bx.axhline(0, color="grey", lw=0.8)
        bx.set_xscale("log")
        bx.legend(fontsize=7)
    bx.set_xlabel("pooled training reports of the class (mean over seeds)")
    bx.set_ylabel("F1 gain over single-registry")
    bx.set_title("per-class gain vs class size", fontsize=9)
    fig.suptitle(f"alawad: {scale_note(results)}", fontsize=8)
    fig.tight_layout()
    return fig


@style()
def figure_attack(results: Mapping[str, Any]):
    """Registry-identification accuracy on the shared representation vs chance and majority."""
    t = attack_table(results)
    fig, ax = plt.subplots(figsize=(max(7.5, 1.8 * len(t)), 4.4))
    if not t.empty:  # tick labels wrapped to the bar width, so that neighbours never overlap
        labels = [textwrap.fill(LABELS[a], 18) + "\n" + textwrap.fill(att, 18) for a, att in zip(t.approach, t.attacker)]
        x = np.arange(len(t))
        _errorbar(ax, x, t.accuracy_mean, t.accuracy_min, t.accuracy_max, [COLORS[a] for a in t.approach], None, 0.6)
        ax.axhline(t.chance.iloc[0], color="grey", ls="--", lw=1, label=f"chance 1/{results['params']['n_registries']}")
        ax.axhline(t.majority.max(), color="grey", ls=":", lw=1, label="majority registry")
        ax.set_xticks(x, labels, fontsize=7)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("registry identified (test half)")
    ax.set_title(f"registry attack — {scale_note(results)}\nmean over seeds, error bars min–max", fontsize=8)
    fig.tight_layout()
    return fig
