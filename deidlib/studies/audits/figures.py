"""The frontier figure: utility against attack success, one panel per attack metric."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ...plotting import style
from ..labels import place_labels
from .methods import FAMILIES
from .tables import UTILITY

__all__ = ["plot_frontier"]


@style()
def plot_frontier(frontier: pd.DataFrame, title: str = "utility vs attack success", seed: int | None = None):
    """The frontier: utility against attack success, one panel per attack metric (each family
    has one; the metrics are not comparable, so they never share an axis), each panel's utility
    axis labelled with its rows' utility metric (binary-token F1; alawad: subsite micro F1), one
    marker per method, each point labelled with its setting and, where the table has them, bars
    for the min–max over seeds and dotted lines at the attack's chance level and floor; ``seed``
    (or a seeds text) is stated under the title."""
    f = frontier[frontier.status == "measured"]
    order = {fam: i for i, fam in enumerate(FAMILIES)}
    if "family" in f:
        f = f.assign(_o=f.family.map(order).fillna(len(order))).sort_values("_o", kind="stable")
    families = list(dict.fromkeys(f.attack_metric)) or ["attack success"]
    ncols = min(len(families), 4)
    nrows = -(-len(families) // ncols)
    fig, grid = plt.subplots(nrows, ncols, figsize=(4.2 * ncols + 0.6, 4.6 * nrows), squeeze=False)
    axes = grid.ravel()
    for ax in axes[len(families):]:
        ax.remove()
    markers = {"non-private": "*", "DP-SGD": "o", "DP-SGD from scratch": "o", "DSSGD": "s",
               "DSSGD + DP upload": "D", "surrogates": "^", "pseudonymization": "v",
               "adversarial representation": "h", "raw public vectors": "x", "shared layers": "h",
               "shared layers, no adversary": "d"}
    bars = {"utility_lo", "utility_hi", "attack_lo", "attack_hi"} <= set(f.columns)
    labels = []
    for ax, metric in zip(axes, families):
        d_fam = f[f.attack_metric == metric]
        for method, d in d_fam.groupby("method", sort=False):
            marker = markers.get(method, markers.get(method.split(" (")[0], "x"))
            if "recipe)" in method:
                marker = "P" if method.startswith("non-private") else "h"
            pts = ax.scatter(d.attack_success, d.utility_f1, marker=marker, s=55, label=method, zorder=3)
            if bars:
                x, y = d.attack_success.to_numpy(float), d.utility_f1.to_numpy(float)
                xerr = np.vstack([x - d.attack_lo.to_numpy(float), d.attack_hi.to_numpy(float) - x])
                yerr = np.vstack([y - d.utility_lo.to_numpy(float), d.utility_hi.to_numpy(float) - y])
                ax.errorbar(x, y, xerr=np.clip(np.nan_to_num(xerr), 0, None), yerr=np.clip(np.nan_to_num(yerr), 0, None), fmt="none", lw=0.8,
                            ecolor=pts.get_facecolor()[0], alpha=0.6, zorder=2)
        names = [r.setting if isinstance(r.setting, str) and r.setting else "" for r in d_fam.itertuples()]
        labels.append((ax, d_fam.attack_success.to_numpy(float), d_fam.utility_f1.to_numpy(float), names))
        attack = d_fam.attack.iloc[0] if len(d_fam) else ""
        for col, name, ls in (("attack_chance", "chance", ":"), ("attack_floor", "class-label floor", "-.")):
            if col in d_fam and d_fam[col].notna().any():
                ax.axvline(float(d_fam[col].mean()), color="grey", ls=ls, lw=0.9, label=name, zorder=1)
        ax.set_title(attack, fontsize=8)
        ax.set_xlabel(f"{metric} (attack success)", fontsize=8)
        utility = ", ".join(dict.fromkeys(d_fam.utility_metric)) if "utility_metric" in d_fam else UTILITY
        ax.set_ylabel(utility or UTILITY, fontsize=8)
        ax.set_ylim(-0.03, 1.03)
        if metric.startswith("exposure"):
            top = float(d_fam["max_exposure"].max()) if "max_exposure" in d_fam else float(d_fam.attack_success.max())
            ax.set_xlim(-0.3, (top if math.isfinite(top) else 1.0) + 0.3)
        else:
            ax.set_xlim(-0.03, 1.03)
        ax.legend(fontsize=6, loc="best")
    stated = "" if seed is None else (f"; seed {seed}" if isinstance(seed, int) else f"; {seed}")
    fig.suptitle(title + stated, fontsize=8)
    fig.tight_layout()
    for ax, x, y, names in labels:  # once the layout is final, so that no label sits on another
        keep = [i for i, n in enumerate(names) if n]
        place_labels(ax, x[keep], y[keep], [names[i] for i in keep], fontsize=6)
    return fig
