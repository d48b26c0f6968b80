"""The ahmed_utility study's figure (Ahmed 2020 thesis §4.3.2): utility against PHI recall, one
point per (span source, transform) (:func:`plot_tradeoff`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import matplotlib.pyplot as plt

from ...plotting import style

__all__ = ["plot_tradeoff"]

_MARKERS = ["o", "s", "^", "v", "D", "P", "X", "*"]
_COLORS = {"ground truth": "black", "GRU-CRF": "tab:blue"}


@style()
def plot_tradeoff(res: Mapping[str, Any], title: str = ""):
    """Utility vs PHI recall: one point per (span source, transform); panels BLEU-2, topic
    overlap (overall, k = 5) and classification accuracy with the most classes available."""
    panels = [("BLEU-2", res["bleu"]["BLEU-2"], "BLEU-2 vs original")]
    panels.append(("topic overlap (%)", res["topics"]["Overall"], "LDA topic words matched (overall)"))
    cls = res["classification"]
    acc_cols = [c for c in cls.columns if c.startswith("acc ")]
    if acc_cols:
        panels.append((f"accuracy, {acc_cols[-1][4:]} classes (%)", cls[acc_cols[-1]], "downstream classification"))
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 4.2), squeeze=False)
    transforms = list(dict.fromkeys(t for _, t in res["bleu"].index))
    for ax, (ylabel, series, sub) in zip(axes[0], panels):
        for (src, t), y in series.items():
            if t == "original":
                ax.axhline(y, color="grey", ls="--", lw=1, label="original text")
                continue
            r = res["scores"].set_index("source").loc[src, "R(%)"]
            ax.scatter(r, y, marker=_MARKERS[transforms.index(t) % len(_MARKERS)],
                       color=_COLORS.get(src, "tab:orange"), s=46, alpha=0.85, label=f"{src} · {t}")
        ax.set_xlabel("PHI recall of the span source (binary token, %)")
        ax.set_ylabel(ylabel)
        ax.set_title(sub, fontsize=10)
    h, lab = axes[0][-1].get_legend_handles_labels()
    seen = dict(zip(lab, h))
    fig.legend(list(seen.values()), list(seen.keys()), loc="lower center", ncol=3, fontsize=7, frameon=False,
               bbox_to_anchor=(0.5, -0.02 - 0.035 * math.ceil(len(seen) / 3)))
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig
