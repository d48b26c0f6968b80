"""The operating-point study's figure: the test precision–recall curve over the PHI-marginal
thresholds (:func:`plot_curve`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import matplotlib.pyplot as plt

from ...plotting import style
from .claims import TARGET

__all__ = ["plot_curve"]


@style()
def plot_curve(res: Mapping[str, Any]):
    """Test precision vs recall over the thresholds; the model's own decision, the dev-chosen
    threshold, the target region and (nursing notes only) the default model's curve and the
    peers' points."""
    fig, ax = plt.subplots(figsize=(6, 4.4))
    pts = [p for p in res["test_curve"] if p["threshold"] is not None]
    ax.plot([p["recall"] for p in pts], [p["precision"] for p in pts], "o-", ms=3, label="threshold on 1 − P(O)")
    # axes zoomed to the data (on synthetic notes the points crowd near (1, 1)); the zoom is stated
    # on the figure, since the target region may lie partly outside it
    peers = res.get("peers") or []
    dm = [p for p in res.get("default_model") or [] if p["recall"] > 0]
    others = peers + dm
    xs = [p["recall"] for p in pts + others]
    ys = [p["precision"] for p in pts + others]
    mx = max(0.005, 0.15 * (max(xs) - min(xs)))
    my = max(0.005, 0.15 * (max(ys) - min(ys)))
    x0, x1 = max(0.0, min(xs) - mx), min(1.005, max(xs) + mx / 3)
    y0, y1 = max(0.0, min(ys) - my), min(1.005, max(ys) + my / 3)
    last = None
    for p in pts:
        here = ((p["recall"] - x0) / (x1 - x0), (p["precision"] - y0) / (y1 - y0))
        if last is None or max(abs(here[0] - last[0]), abs(here[1] - last[1])) > 0.06:
            ax.annotate(f"{p['threshold']:g}", (p["recall"], p["precision"]), textcoords="offset points",
                        xytext=(3, -10), fontsize=7)
            last = here
    own = res["test_curve"][0]
    ax.plot(own["recall"], own["precision"], "ks", label="model's own decision (Viterbi)")
    if res["chosen_threshold"] is not None:
        c = next(p for p in pts if p["threshold"] == res["chosen_threshold"])
        ax.plot(c["recall"], c["precision"], "r*", ms=12,
                label=f"dev-chosen for recall ≥ {res['params']['target_recall']:g} (T={c['threshold']:g})")
    ax.fill_between([TARGET["recall"], 1.0], TARGET["precision"], 1.0, color="g", alpha=0.12,
                    label=f"target on the nursing notes: R ≥ {TARGET['recall']:g}, P ≥ {TARGET['precision']:g}")
    if dm:
        curve = [p for p in dm if not p.get("own")]
        ax.plot([p["recall"] for p in curve], [p["precision"] for p in curve], "^-", ms=3, color="tab:purple",
                label="default model (synthetic-only), threshold on 1 − P(O)")
        for p in dm:
            if p.get("own"):
                ax.plot(p["recall"], p["precision"], "P", ms=10, color="tab:purple",
                        label=f"default model's saved decision (T={p['threshold'] or 0:.3g}, chosen on synthetic dev)")
    for p, mk, col in zip(peers, "Dvx", ("tab:orange", "tab:brown", "tab:gray")):
        ax.plot(p["recall"], p["precision"], mk, color=col, ms=8, label=f"{p['system']} (peer), same test notes")
    ax.set_xlabel("binary-token recall (test)")
    ax.set_ylabel("binary-token precision (test)")
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    if others:  # nursing notes: the peers and the default model fill the plot, the legend goes below it
        fig.set_size_inches(6, 6.6)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=1)
    else:
        ax.legend(fontsize=7, loc="lower left")
    zoom = f"axes zoomed to the data: recall {x0:.3f}–{min(x1, 1):.3f}, precision {y0:.3f}–{min(y1, 1):.3f}"
    if x0 >= TARGET["recall"] and y0 >= TARGET["precision"]:
        zoom += " (all inside the target region)"
    d = res["data"]
    ax.set_title(f"{res['params']['model']} on {res['corpus']} ({res['profile']}): {res['epochs_run']} epochs, "
                 f"{d['train_documents']} training notes, {d['test_documents']} test notes, seed {res.get('seed', '?')}\n{zoom}",
                 fontsize=8)
    fig.tight_layout()
    return fig
