"""tchouka: the notebook's figures (Figure 6 analog, utility, privacy)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ...plotting import style

__all__ = ["plot_figure6", "plot_date_utility", "plot_location_utility", "plot_privacy", "plot_thread"]

# ----------------------------------------------------------------------------- plots
_MCOLORS = {
    "dp": "tab:blue",
    "ldp": "tab:orange",
    "shift": "tab:red",
    "none": "gray",
    "fixed": "tab:blue",
    "paper": "tab:purple",
    "geoind": "tab:green",
    "uniform": "tab:red",
}
_MLABEL = {
    "dp": "ε·d Laplace (dp)",
    "ldp": "bounded-Laplace LDP",
    "shift": "uniform shift / patient",
    "none": "no change",
    "fixed": "exp. mech., fixed candidates",
    "paper": "Algorithm 1 (as published)",
    "geoind": "geo-indistinguishability",
    "uniform": "uniform random place",
}


@style()
def plot_figure6(fig6: pd.DataFrame, city: str = "Dijon"):
    """Figure 6 analog: score ``U`` and probability per candidate (one bar group per ε)."""
    pcols = [c for c in fig6.columns if c.startswith("p_eps=")]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.2), gridspec_kw={"width_ratios": [1, 1.4]})
    x = np.arange(len(fig6))
    a1.bar(x, fig6["score"], color="tab:blue")
    for i, km in enumerate(fig6["km"]):
        a1.text(
            i,
            fig6["score"].iloc[i] + 0.005,
            f"{km:.0f} km",
            ha="center",
            fontsize=7,
            rotation=90,
            va="bottom",
        )
    a1.set_xticks(x, fig6["city"], rotation=60, ha="right", fontsize=8)
    a1.set_ylim(max(0.0, fig6["score"].min() - 0.1), 1.08)
    a1.set_ylabel("score U = 1 − d")
    a1.set_title(f"Algorithm 1 candidates for {city} (k={len(fig6)})")
    w = 0.8 / len(pcols)
    for n, c in enumerate(pcols):
        a2.bar(x + (n - (len(pcols) - 1) / 2) * w, fig6[c], width=w, label=c.replace("p_eps=", "ε = "))
    a2.axhline(1 / len(fig6), color="gray", lw=0.8, ls="--", label="uniform")
    a2.set_xticks(x, fig6["city"], rotation=60, ha="right", fontsize=8)
    a2.set_ylabel("P(substitute)")
    a2.set_title("exponential mechanism, P ∝ exp(ε U)")
    a2.legend(fontsize=8)
    fig.tight_layout()
    return fig


@style()
def plot_date_utility(du: pd.DataFrame):
    """Four panels against ε: date error, chronology preserved, length-of-stay error, age error."""
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.8))
    panels = [
        ("date_abs_error_days", "mean |error| of a date (days)", True),
        ("chronology_preserved", "consecutive events in order", False),
        ("los_abs_error_days", "mean |error| of length of stay (days)", True),
        ("age_abs_error_years", "mean |error| of an age (years)", True),
    ]
    for ax, (col, lab, logy) in zip(axes, panels):
        for m, d in du.groupby("method", sort=False):
            y = d[col].to_numpy(dtype=float)
            if logy:
                y = np.maximum(y, 1e-2)
            ax.plot(d["epsilon"], y, marker="o", ms=3, color=_MCOLORS[m], label=_MLABEL[m])
        ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
        ax.set_xlabel("ε per entity")
        ax.set_title(lab, fontsize=9)
    axes[0].legend(fontsize=7)
    fig.text(0.99, 0.01, "no change: 0 error (drawn at 0.01)", ha="right", fontsize=7, color="gray")
    fig.tight_layout()
    return fig


@style()
def plot_location_utility(lu: pd.DataFrame):
    """Expected feature distance, km and P(same city) of the substitute against ε."""
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    for ax, (col, lab) in zip(
        axes,
        [
            ("feature_distance", "E[d(city, substitute)] (normalised)"),
            ("km", "E[km(city, substitute)]"),
            ("same_city", "P(substitute = city)"),
        ],
    ):
        for m, d in lu.groupby("method", sort=False):
            if m == "paper":  # better utility only because its candidate set leaks the secret city
                ax.plot(d["epsilon"], d[col], marker="x", ms=4, ls="--", lw=1.2, color="0.55", zorder=1,
                        label="published Alg. 1 (fails ε·d guarantee)")
            else:
                ax.plot(d["epsilon"], d[col], marker="o", ms=3, color=_MCOLORS[m], label=_MLABEL[m], zorder=2)
        ax.set_xscale("log")
        ax.set_xlabel("ε per city")
        ax.set_title(lab, fontsize=9)
    axes[1].set_yscale("log")
    axes[2].legend(fontsize=7, loc="upper left")
    fig.text(0.99, 0.01, "dashed grey: Algorithm 1 as published; its candidates depend on the secret city, so it is "
             "not ε·d-private (see the guarantee checks) and its utility is not comparable", ha="right", fontsize=7,
             color="0.4")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return fig


@style()
def plot_privacy(attack: pd.DataFrame, checks: pd.DataFrame, hists: dict, hist_key: str | None = None):
    """Left: known-one-date attack success against ε; middle: output histograms of the dp
    mechanism for two neighbouring dates; right: measured vs claimed log-ratio bound."""
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.6), gridspec_kw={"width_ratios": [1, 0.9, 1.3]})
    ax = axes[0]
    for m, d in attack.groupby("method", sort=False):
        if m == "none":
            continue
        ax.plot(
            d["epsilon"],
            d["patients_fully_recovered"],
            marker="o",
            ms=3,
            color=_MCOLORS[m],
            label=f"{m}: patients fully recovered",
        )
        ax.plot(
            d["epsilon"], d["map_estimator_exact"], ls=":", color=_MCOLORS[m], label=f"{m}: dates exact (MAP)"
        )
    ax.set_xscale("log")
    ax.set_xlabel("ε per date")
    ax.set_ylabel("attack success")
    ax.set_title("known-one-date attack", fontsize=9)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2)
    ax = axes[1]
    key = hist_key or next(k for k in hists if k.startswith("dp"))
    h = hists[key]
    keep = (h["c1"] + h["c2"]) >= 5
    ax.step(h["outputs"][keep], h["c1"][keep], where="mid", label="input v1")
    ax.step(h["outputs"][keep], h["c2"][keep], where="mid", label="input v2")
    ax.set_yscale("log")
    ax.set_xlabel("output (days)")
    ax.set_ylabel("count")
    ax.set_title(f"output histograms: {key}", fontsize=9)
    ax.legend(fontsize=8)
    ax = axes[2]
    y = np.arange(len(checks))
    emp = checks["empirical_max_log_ratio"].to_numpy(dtype=float)
    exa = checks["exact_max_log_ratio"].to_numpy(dtype=float)
    bound = checks["bound"].to_numpy(dtype=float)
    tol = checks["tolerance"].to_numpy(dtype=float)
    finite = np.concatenate([emp[np.isfinite(emp)], exa[np.isfinite(exa)], bound + tol])
    cap = 1.15 * float(finite.max())
    ax.barh(
        y - 0.2,
        np.where(np.isfinite(emp), emp, 0),
        height=0.4,
        color="tab:blue",
        label="empirical max |log ratio|",
    )
    # exact ratio: finite values as bars; ∞ (supports differ) to the edge, marked "∞";
    # unknown (no closed form, NaN) as an empty hatched outline marked "unknown", never like ∞
    inf = np.isposinf(exa)
    unknown = np.isnan(exa)
    ax.barh(
        y + 0.2,
        np.where(np.isfinite(exa), exa, np.where(inf, cap, 0)),
        height=0.4,
        color="tab:gray",
        label="exact max |log ratio| (∞ drawn to the edge)",
    )
    for i in np.flatnonzero(inf).tolist():
        ax.text(cap * 0.98, y[i] + 0.2, "∞", va="center", ha="right", fontsize=8, color="w")
    for i in np.flatnonzero(unknown).tolist():
        ax.barh(y[i] + 0.2, cap, height=0.4, fill=False, hatch="///", edgecolor="0.6", linewidth=0.5)
        ax.text(cap * 0.5, y[i] + 0.2, "exact: unknown", va="center", ha="center", fontsize=7)
    ax.errorbar(
        bound,
        y,
        xerr=[np.zeros_like(tol), tol],
        fmt="|",
        ms=18,
        color="k",
        capsize=3,
        label="claimed bound ε·d (+ sampling tolerance)",
    )
    for i, ok in enumerate(checks["passed"]):
        text = ("pass" if ok else "FAIL") + (" (sampled only)" if unknown[i] else "")
        ax.text(cap * 1.02, i, text, va="center", fontsize=8, color="k" if ok else "red")
    ax.set_yticks(y, checks["mechanism"], fontsize=7)
    ax.set_xlim(0, cap * 1.35)
    ax.set_xlabel("log-ratio")
    ax.set_title("guarantee checks (exact log-ratio where known, else ratio test on samples)", fontsize=9)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)
    fig.tight_layout()
    return fig


@style()
def plot_thread(table: pd.DataFrame, epsilon: float, patient_epsilon: float):
    """The thread figure (the paper's Figure 5 analog and one synthetic patient's notes):
    (a) the paper example's original → surrogate dates and age with their shifts; (b) the
    patient's date shifts (days) per note, memo hits hollow; (c) the patient's ages per note,
    original and surrogate, with the name replacements listed."""
    threads = list(dict.fromkeys(table["thread"]))
    ex, pt = table[table.thread == threads[0]], table[table.thread == threads[-1]]
    fig, (a1, a2, a3) = plt.subplots(1, 3, figsize=(15, 4.4), gridspec_kw={"width_ratios": [1.1, 1.3, 1]})
    nums = ex[ex["shift"].notna()].reset_index(drop=True)
    y = np.arange(len(nums))[::-1]
    colors = ["tab:blue" if t == "DATE" else "tab:orange" for t in nums.type]
    a1.barh(y, nums["shift"].astype(float), color=colors)
    a1.axvline(0, color="k", lw=0.6)
    a1.set_yticks(y, [f"{r.type} {r.original}\n→ {r.surrogate} ({int(r['shift']):+d} {r.unit})"
                      for _, r in nums.iterrows()], fontsize=8)
    a1.set_xlabel("shift (surrogate − original, in the noised unit)")
    names = ex[ex.type.isin(["NAME", "CITY"]) & ~ex.memo_hit.astype(bool)]
    a1.set_title(f"(a) paper example, ε = {epsilon:g} per note (ε/{len(ex[ex.epsilon > 0])} per value)\n"
                 + "; ".join(f"{r.original} → {r.surrogate}" for _, r in names.iterrows())
                 + "\n(paper's draw, Figure 5: age −3 years, dates +8 and +4 days)", fontsize=9)
    notes = list(dict.fromkeys(pt.note))
    xi = {n: i for i, n in enumerate(notes)}
    days = pt[(pt.type == "DATE") & (pt.unit == "day") & pt["shift"].notna()]
    for hit, face in ((False, "tab:blue"), (True, "none")):
        d = days[days.memo_hit.astype(bool) == hit]
        a2.scatter(d.note.map(xi), d["shift"].astype(float), facecolors=face, edgecolors="tab:blue",
                   label="memo hit (same value as before)" if hit else "new value (ε·d Laplace draw)")
    a2.axhline(0, color="k", lw=0.6)
    a2.set_xticks(range(len(notes)), notes, rotation=30, fontsize=8)
    a2.set_ylabel("date shift (days)")
    a2.set_title(f"(b) {threads[-1]}: date shifts per note\nε = {patient_epsilon:g} per patient, "
                 f"{pt[pt.epsilon > 0].epsilon.iloc[0] if (pt.epsilon > 0).any() else 0:.3g} per distinct value", fontsize=9)
    a2.legend(fontsize=8)
    ages = pt[(pt.type == "AGE") & pt["shift"].notna()].drop_duplicates(["note", "original_value"])
    a3.plot(ages.note.map(xi), ages.original_value.astype(float), "o-", color="gray", label="original age")
    a3.plot(ages.note.map(xi), ages.surrogate_value.astype(float), "s--", color="tab:orange", label="surrogate age")
    a3.set_xticks(range(len(notes)), notes, rotation=30, fontsize=8)
    a3.set_ylabel("age (years)")
    pairs = pt[pt.type == "NAME"].drop_duplicates("original").head(4)
    a3.set_title("(c) ages per note; names: " + "; ".join(f"{r.original} → {r.surrogate}" for _, r in pairs.iterrows()),
                 fontsize=8, wrap=True)
    a3.legend(fontsize=8)
    fig.tight_layout()
    return fig
