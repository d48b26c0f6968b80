"""The corpus overview's figures: PHI per category and site with the label distribution
(:func:`plot_overview`) and the cross-site matrix's heat maps (:func:`plot_cross_site`).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from ...plotting import style

__all__ = ["plot_overview", "plot_cross_site"]


@style()
def plot_overview(phi_by_site: pd.DataFrame, labels: pd.Series, title: str = "synthetic corpus",
                  sizes: pd.DataFrame | None = None):
    """Two panels: PHI mentions per category and site (stacked bars) and the label distribution
    (horizontal bars, log scale, so that every label name reads). ``sizes`` (a
    :func:`corpus_table` with its ``total`` row) puts the corpus size in the title: documents,
    patients, tokens and PHI mentions."""
    data = phi_by_site.drop(columns="total", errors="ignore")
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, max(4.4, 0.19 * len(labels) + 1.2)),
                               gridspec_kw={"width_ratios": [1.3, 1]})
    bottom = None
    for site in data.columns:
        a.bar(data.index, data[site], bottom=bottom, label=site)
        bottom = data[site] if bottom is None else bottom + data[site]
    a.set_title("PHI mentions per category and site", fontsize=10)
    a.set_ylabel("mentions")
    a.tick_params(axis="x", labelsize=8)
    plt.setp(a.get_xticklabels(), rotation=30, ha="right")
    a.legend(fontsize=8, title="site", title_fontsize=8)
    b.barh(labels.index[::-1], labels.values[::-1], color="tab:purple")
    b.set_xscale("log")
    b.set_xlabel("mentions (log scale)")
    b.tick_params(axis="y", labelsize=7)
    b.set_title("label distribution (festag 29-class scheme, non-PHI omitted)", fontsize=10)
    head = title
    if sizes is not None and "total" in sizes.index:
        t = sizes.loc["total"]
        head += (f": {int(t['documents']):,} documents, {int(t['patients']):,} patients, {int(t['tokens']):,} tokens, "
                 f"{int(t['PHI mentions']):,} PHI mentions")
    fig.suptitle(head, fontsize=10)
    fig.tight_layout()
    return fig


@style()
def plot_cross_site(cells_by_level: dict[str, pd.DataFrame], title: str = "cross-site binary-token F1"):
    """One heat map per level (``label -> cells`` of :func:`cross_site_summary`): rows the training
    site, columns the test site, mean F1 over seeds written in each cell."""
    n = len(cells_by_level)
    fig, axes = plt.subplots(1, n, figsize=(4.6 * n, 4.2), squeeze=False)
    im = None
    for ax, (label, cells) in zip(axes[0], cells_by_level.items()):
        m = cells.pivot(index="train", columns="test", values="f1_mean")
        im = ax.imshow(m.values, vmin=0.0, vmax=1.0, cmap="viridis")
        ax.set_xticks(range(len(m.columns)), m.columns, rotation=45, ha="right")
        ax.set_yticks(range(len(m.index)), m.index)
        for i in range(m.shape[0]):
            for j in range(m.shape[1]):
                v = m.values[i, j]
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=8, color="white" if v < 0.6 else "black")
        ax.set_xlabel("test site")
        ax.set_ylabel("train site")
        ax.set_title(label)
    if im is not None:
        fig.colorbar(im, ax=list(axes[0]), shrink=0.8, label="F1")
    fig.suptitle(title)
    return fig
