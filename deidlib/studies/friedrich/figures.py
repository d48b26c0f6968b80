"""The friedrich figures (Friedrich et al., ACL 2019): Figure 4 (F1 against N after
pseudonymization), Figure 5 (F1 and frozen-adversary accuracy against N) and the attack curve of
the controls, each titled with the scale it ran at."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from ...plotting import style
from .claims import PAPER_SHAPES, paper_relative
from .params import FriedrichParams

__all__ = ["pseudo_scale_note", "adv_scale_note", "figure4", "figure5", "attack_curve_figure"]


def pseudo_scale_note(params: FriedrichParams, sizes: dict[str, int], corpus: str, seeds: int) -> str:
    """One line stating the scale of a figure (profile, corpus, sentences, epochs, seeds)."""
    return (f"{params.profile} profile, {corpus}: {sizes['train']} train / {sizes['test']} test sentences, "
            f"≤{params.epochs} epochs, {seeds} seed{'s' if seeds != 1 else ''}, BiLSTM {params.deid_layers}×"
            f"{params.deid_hidden}")


def adv_scale_note(params: FriedrichParams, sizes: dict[str, int], corpus: str) -> str:
    """One line stating the scale of Figure 5 (profile, corpus, sentences, epochs, K, d, seeds)."""
    att = (f"; adversary on {sizes['attack_train']} train / {sizes['attack_test']} held-out sentences"
           if "attack_train" in sizes else "")
    return (f"{params.profile} profile, {corpus}: {sizes['train']} train / {sizes['test']} test sentences, "
            f"P1/P2/P3 ≤{params.p1_epochs}/{params.p2_epochs}/{params.p3_epochs} epochs, DANN ≤{params.dann_epochs}, "
            f"K={params.frozen_epochs}, d={params.d}, {params.adv_seeds} seed{'s' if params.adv_seeds != 1 else ''}{att}")


@style()
def figure4(res: Mapping[str, Any]):
    """F1 vs N per embedding: mean over seeds, band = min–max over seeds, the 95 % line, and
    the paper's shape (fraction of each embedding's non-private F1) dotted."""
    p = FriedrichParams(**res["params"])
    s = res["summary"]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for e, d in s.groupby("embedding"):
        d = d.sort_values("n")
        (line,) = ax.plot(d.n, d.f1_mean, "o-", label=f"{e} (mean)")
        if (d.seeds > 1).any():
            ax.fill_between(d.n, d.f1_min.clip(lower=0), d.f1_max.clip(lower=0), alpha=0.2, color=line.get_color(),
                            label=f"{e} min–max over seeds")
        base = d[d.n == 1].f1_mean
        if len(base):
            xs = np.unique(np.r_[d.n.values, 200])
            ax.plot(xs, [float(base.iloc[0]) * paper_relative(x) for x in xs], ":", color=line.get_color(),
                    label=f"paper's shape × {e} N=1")
    ax.axhline(0.95, color="grey", ls="--", lw=1, label="95 % target F1")
    ax.set_xscale("log")
    ax.set_xlabel("number of neighbours N")
    ax.set_ylabel("binary HIPAA token F1")
    ax.set_title("Figure 4 analog: training on pseudonymized PHI\n" + pseudo_scale_note(p, res["sizes"], res["corpus"],
                                                                                  p.n_seeds), fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


_STYLE = {"three_phase": "o-", "dann": "s--", "control raw": "x:", "control P1": "+:"}


@style()
def figure5(res: Mapping[str, Any]):
    """Left: F1 vs N per embedding and procedure (mean, min–max band over seeds, 95 % line);
    right: frozen-adversary test accuracy vs N (chance 0.5; the paper's DANN level 0.8)."""
    p = FriedrichParams(**res["params"])
    s = res["summary"]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4.2))
    for (e, proc), d in s.groupby(["embedding", "procedure"]):
        d = d.sort_values("n")
        ctl = proc.startswith("control")
        label = f"{e} {proc}"
        kw = dict(alpha=0.6, color="grey" if ctl else None)
        if not ctl:
            (line,) = a1.plot(d.n, d.f1_mean, _STYLE[proc], label=label)
            if (d.seeds > 1).any():
                a1.fill_between(d.n, d.f1_min.clip(lower=0), d.f1_max.clip(lower=0), alpha=0.2, color=line.get_color())
            kw = dict(color=line.get_color())
        (l2,) = a2.plot(d.n, d.adversary_mean, _STYLE[proc], label=label, **kw)
        if (d.seeds > 1).any():
            a2.fill_between(d.n, d.adversary_min.clip(lower=0), d.adversary_max.clip(lower=0), alpha=0.15, color=l2.get_color())
    a1.axhline(0.95, color="grey", ls="--", lw=1, label="95 % target F1")
    a1.set_ylabel("binary HIPAA token F1")
    a1.set_title("de-identification on the adversarial representation", fontsize=9)
    a2.axhline(0.5, color="k", ls="-", lw=0.8, label="chance (0.5)")
    a2.axhline(PAPER_SHAPES["dann_adversary_above"], color="tab:red", ls=":", lw=1,
               label="paper: DANN adversary > 0.8")
    a2.axvline(PAPER_SHAPES["three_phase_private_up_to"], color="grey", ls=":", lw=1,
               label="paper: three-phase at chance up to N=500")
    a2.set_ylim(0.3, 1.02)
    a2.set_ylabel("frozen-adversary accuracy (test pairs)")
    a2.set_title(f"adversary trained K={p.frozen_epochs} more epochs on the frozen representation", fontsize=9)
    for a in (a1, a2):
        a.set_xscale("log")
        a.set_xlabel("number of neighbours N")
        a.legend(fontsize=6)
    fig.suptitle("Figure 5 analog — " + adv_scale_note(p, res["sizes"], res["corpus"]), fontsize=9)
    fig.tight_layout()
    return fig


@style()
def attack_curve_figure(res: Mapping[str, Any]):
    """The controls' held-out frozen-adversary accuracy against the real/fake training pairs it
    has seen (every K/5 epochs; one line per seed): still rising at K means the attack is
    limited by its pairs and epochs, flat below 0.8 by the adversary itself."""
    p = FriedrichParams(**res["params"])
    c = res.get("attack_curve")
    fig, ax = plt.subplots(figsize=(6, 4))
    if c is not None and len(c):
        for (e, proc, n), d in c.groupby(["embedding", "procedure", "n"]):
            color = None
            for _, ds in d.groupby("seed"):
                (line,) = ax.plot(ds.pairs_seen, ds.accuracy, _STYLE.get(proc, "o-"), color=color, alpha=0.8,
                                  label=None if color else f"{e} {proc} N={n}")
                color = line.get_color()
    ax.axhline(0.5, color="k", lw=0.8, label="chance (0.5)")
    ax.axhline(PAPER_SHAPES["dann_adversary_above"], color="tab:red", ls=":", lw=1, label="yardstick 0.8")
    ax.set_ylim(0.3, 1.02)
    ax.set_xlabel("real/fake training pairs seen by the frozen adversary")
    ax.set_ylabel("held-out accuracy")
    ax.set_title(f"controls without privacy training: attack vs its training (K={p.frozen_epochs} epochs)\n"
                 + adv_scale_note(p, res["sizes"], res["corpus"]), fontsize=8)
    ax.legend(fontsize=6)
    fig.tight_layout()
    return fig
