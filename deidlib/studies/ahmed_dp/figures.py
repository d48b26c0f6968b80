"""The study's figures: F1 against ε (the thesis' tagger, every recipe) and the k-of-n rules."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt

from ...plotting import style
from ..dp_recipes import RECIPES
from ..labels import place_labels
from .claims import THESIS_POINTS

__all__ = ["plot_curve", "plot_recipe_curves", "plot_rules"]


@style()
def plot_curve(curve, title: str = "F1 vs ε", epochs: int | None = None, seeds: int = 1):
    """F1 vs ε (log x), one point per σ, the non-private model as a dashed line. The title
    always states the scale (epochs, training sentences, seeds): a point near 0 from a short
    run must not read as a property of DP-SGD."""
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    dp = curve[curve.epsilon.apply(math.isfinite)].sort_values("epsilon")
    ax.plot(dp.epsilon, dp.f1, "o-", label="DP-SGD")
    for _, r in dp.iterrows():
        ax.annotate(
            f"σ={r.noise_multiplier:g}",
            (r.epsilon, r.f1),
            textcoords="offset points",
            xytext=(4, 4),
            fontsize=8,
        )
    base = curve[~curve.epsilon.apply(math.isfinite)]
    if len(base):
        ax.axhline(float(base.f1.iloc[0]), color="k", ls="--", label="non-private")
    ax.set_xscale("log")
    ax.set_xlabel(f"ε (δ = {curve.delta.iloc[0]:g})")
    ax.set_ylabel("binary token F1")
    n = int(curve.sentences.max()) if "sentences" in curve else None
    scale = f"{epochs if epochs is not None else '?'} epochs, ≤{n} training sentences, {seeds} seed(s)"
    ax.set_title(f"{title}\n({scale})", fontsize=9)
    ax.legend()
    fig.tight_layout()
    return fig


@style()
def plot_recipe_curves(df, title: str = "F1 vs ε per DP recipe", thesis_points=None):
    """F1 vs ε (log x) per recipe: the median over seeds with the min–max range as error bars
    (the number of seeds in the legend), the recipe's ε = ∞ run (same lots and optimiser, no
    noise, no clipping) as a dotted line, a recipe's public pre-training alone (its ε = 0 rows)
    as a dashed line, and the thesis' points (nursing notes) as stars.
    The title states the scale (epochs, lot, training sentences)."""
    fig, ax = plt.subplots(figsize=(6.2, 4.0))
    scale = []
    for i, (name, d) in enumerate(df.groupby("recipe", sort=False)):
        color = f"C{i}"
        dp = d[d.target_epsilon.apply(math.isfinite) & (d.target_epsilon > 0)]
        g = dp.groupby("target_epsilon").agg(eps=("epsilon", "median"), f1=("test_f1", "median"),
                                             lo=("test_f1", "min"), hi=("test_f1", "max"), n=("test_f1", "size"))
        n = int(g.n.max()) if len(g) else 0
        ax.errorbar(g.eps, g.f1, yerr=[g.f1 - g.lo, g.hi - g.f1], fmt="o-", color=color, capsize=3,
                    label=f"{name} ({n} seed{'s' if n != 1 else ''})")
        base = d[~d.target_epsilon.apply(math.isfinite)]
        if len(base):
            ax.axhline(float(base.test_f1.median()), color=color, ls=":", lw=1,
                       label=f"{name}, same lots without DP")
        public = d[d.target_epsilon == 0]
        if len(public):
            ax.axhline(float(public.test_f1.median()), color=color, ls="--", lw=1,
                       label=f"{name}, public pre-training alone (ε = 0)")
        r = RECIPES.get(name)
        epochs = r.epochs if r is not None else "?"
        if "steps" in d and len(dp):
            lot = int(round(float(dp.lot.median())))
            scale.append(f"{name}: lot {lot}, {int(dp.steps.median())} steps, {int(d.sentences.max())} sent.")
        elif r is not None:
            scale.append(f"{name}: {epochs} epochs")
    pts = THESIS_POINTS if thesis_points is None else thesis_points
    if pts:
        ax.plot([p["epsilon"] for p in pts], [p["f1"] for p in pts], "k*", ms=11,
                label="thesis, nursing notes (σ 0.25 / 0.55)")
    ax.set_xscale("log")
    ax.set_ylim(-0.02, 1.02)
    delta = float(df.delta.iloc[0]) if len(df) else 1e-5
    ax.set_xlabel(f"ε (δ = {delta:g}, per {df.unit.iloc[0] if len(df) else 'sentence'})")
    ax.set_ylabel("binary token F1 (test)")
    ax.set_title(f"{title}\n({'; '.join(scale)})", fontsize=8)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig


@style()
def plot_rules(rules, scale: str = ""):
    """Precision vs recall of the k-of-n aggregation rules per target site (1/n = minimality);
    ``scale`` (profile, corpus size, epochs, seed) is stated under the title."""
    fig, ax = plt.subplots(figsize=(6.2, 4.4))
    pts = []
    for t, d in rules.groupby("target"):
        d = d[d.rule.str.contains("_of_")]
        ax.plot(d.recall, d.precision, "o-", label=t)
        pts += [(r.recall, r.precision, r.rule.replace("_of_", "/")) for r in d.itertuples()]
    ax.set_xlabel("recall")
    ax.set_ylabel("precision")
    ax.set_title("k-of-n aggregation (1/n = minimality)" + (f"\n{scale}" if scale else ""), fontsize=9)
    ax.legend(title="target site", fontsize=7)
    fig.tight_layout()
    if pts:
        xs, ys, names = zip(*pts)
        place_labels(ax, list(xs), list(ys), list(names), fontsize=7)
    return fig
