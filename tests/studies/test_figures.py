"""Study figures stay readable: point labels never overlap, the privacy frontier never puts two
attack families' incomparable metrics on one axis, and the published Algorithm 1 is marked."""

from __future__ import annotations

import matplotlib.pyplot as plt  # the backend comes from tests/conftest.py (MPLBACKEND=Agg)
import numpy as np
import pandas as pd
from matplotlib.text import Text

from deidlib.studies import audits
from deidlib.studies.labels import _area, place_labels


def test_place_labels_leaves_no_two_labels_overlapping():
    fig, ax = plt.subplots(figsize=(4, 3))
    xs = np.array([0.10, 0.11, 0.12, 0.5, 0.51, 0.9])
    ys = np.array([0.50, 0.51, 0.49, 0.2, 0.21, 0.8])
    ax.scatter(xs, ys)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    anns = place_labels(ax, xs, ys, [f"setting {i}, ε={i * 3.3:.2f}" for i in range(len(xs))])
    r = fig.canvas.get_renderer()
    boxes = [Text.get_window_extent(a, r) for a in anns]  # the text's box (a leader line may cross)
    assert len(boxes) == len(xs)
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            assert _area(boxes[i], boxes[j]) == 0, (i, j)
    plt.close(fig)


def test_frontier_has_one_panel_per_attack_family_and_states_the_seed():
    fr = pd.DataFrame({
        "method": ["non-private", "DP-SGD", "DSSGD", "surrogates"],
        "setting": ["", "σ=1, ε=7.11", "θ_u=0.1", "ε=1, memo=patient"],
        "utility_f1": [0.6, 0.1, 0.2, 0.7], "attack": ["membership", "membership", "reconstruction", "linkage"],
        "attack_metric": ["TPR@1%FPR", "TPR@1%FPR", "F1 of recovered words", "F1 of note pairs"],
        "attack_success": [0.1, 0.05, 0.95, 0.3], "status": ["measured"] * 4})
    fig = audits.plot_frontier(fr, title="t", seed=7)
    axes = [a for a in fig.axes if a.get_xlabel()]
    assert len(axes) == 3
    assert {a.get_xlabel().split(" (")[0] for a in axes} == {"TPR@1%FPR", "F1 of recovered words", "F1 of note pairs"}
    assert "seed 7" in fig._suptitle.get_text()
    plt.close(fig)


def test_published_algorithm_1_is_drawn_apart_as_failing_its_guarantee():
    from deidlib.studies.tchouka.figures import plot_location_utility

    lu = pd.DataFrame({"method": ["fixed", "fixed", "paper", "paper"], "epsilon": [1.0, 10.0, 1.0, 10.0],
                       "feature_distance": [0.3, 0.1, 0.05, 0.01], "km": [400.0, 100.0, 30.0, 5.0],
                       "same_city": [0.0, 0.2, 0.1, 0.5]})
    fig = plot_location_utility(lu)
    lines = [ln for ln in fig.axes[0].get_lines() if "Alg. 1" in ln.get_label()]
    assert len(lines) == 1 and "fails ε·d guarantee" in lines[0].get_label()
    assert lines[0].get_linestyle() == "--"
    plt.close(fig)
