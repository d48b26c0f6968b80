"""Tables of the festag study (Festag & Spreckelsen 2020, Table 3 and Figure 6): per-epoch
curves, each run unit's stopping and dev-selected epochs, Table 3 at the final and at the
dev-selected epoch, stability, the θ_d sweep and the site-heterogeneity table. The test split
never chooses an epoch: selections read dev scores only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ...synthetic import DEFAULT_HETEROGENEITY
from ...training.stopping import select_epoch
from .data import dev_key
from .params import FestagParams

__all__ = ["selection", "table3", "stability", "theta_table", "heterogeneity_table"]


def curves(results: Mapping[str, Any]):
    """Long table: experiment, seed, epoch, site, f1 (+ precision, recall, dev scores, train_loss)."""
    rows = []
    for run in results["runs"]:
        for r in run["records"]:
            rows.append({"experiment": run["experiment"], "seed": run["seed"], **r})
    return pd.DataFrame.from_records(rows)


def _unit_frames(run: Mapping[str, Any]):
    d = pd.DataFrame.from_records(run["records"])
    for site, g in d.groupby("site", sort=False):
        yield site, g.sort_values("epoch").reset_index(drop=True)


def selection(results: Mapping[str, Any], metric: str = "f1") -> pd.DataFrame:
    """One row per run unit (experiment, seed, site; A/B: ``site == "global"``): the epoch its
    stopping rule stopped at (``stop_epoch``; the last epoch when it never fired), the
    dev-selected epoch (``selected_epoch``, :func:`select_epoch` on the unit's own dev scores,
    :func:`dev_key`), and the test ``metric`` at both (``final``, ``best``). The test scores are
    read only at epochs chosen on dev. Runs without dev scores give NaN selections."""
    patience = results.get("params", {}).get("patience")
    min_epochs = results.get("params", {}).get("min_epochs", 1)
    rows = []
    for run in results["runs"]:
        for site, g in _unit_frames(run):
            key = dev_key(site)
            sel_epoch: float  # an epoch number, NaN without dev scores
            if key in g and g[key].notna().all():
                sel, stop = select_epoch(g[key].tolist(), patience, min_epochs)
                best, sel_epoch, dev_best = float(g[metric][sel]), int(g.epoch[sel]), float(g[key][sel])
            else:
                stop, best, sel_epoch, dev_best = len(g) - 1, math.nan, math.nan, math.nan
            rows.append({"experiment": run["experiment"], "seed": run["seed"], "site": site,
                         "selected_epoch": sel_epoch, "stop_epoch": int(g.epoch[stop]), "dev_selected": dev_best,
                         "final": float(g[metric][stop]), "best": best})
    return pd.DataFrame(rows)


def table3(results: Mapping[str, Any], metric: str = "f1", at: str = "final"):
    """Table 3 analog: min / mean / max of the test score per experiment, at each run unit's
    final epoch (``at="final"``: where its stopping rule stopped it, or the last epoch) or at
    its dev-selected epoch (``at="best"``: :func:`selection`; chosen on dev, never on test).
    ``epoch`` is the mean epoch the scores were taken at.

    For C and D the spread is over the workers and seeds; for A and B over seeds
    (the paper has one run, so its table shows only the mean for A and B).
    """
    if at not in ("final", "best"):
        raise ValueError(f"at must be 'final' or 'best', got {at!r}")
    sel = selection(results, metric)
    if at == "best" and sel.best.isna().any():
        raise ValueError("table3(at='best') needs dev scores in every run (run_study records them)")
    rows = []
    for name in results["experiments"]:
        d = sel[sel.experiment == name]
        vals = d[at]
        ep = d["stop_epoch" if at == "final" else "selected_epoch"]
        rows.append({"experiment": name, "min": vals.min(), "mean": vals.mean(), "max": vals.max(), "n": len(vals),
                     "epoch": ep.mean()})
    return pd.DataFrame(rows).set_index("experiment")


def stability(results: Mapping[str, Any], metric: str = "f1", last: int = 5) -> pd.DataFrame:
    """How much each experiment's test score still moves: per run unit the standard deviation
    of ``metric`` over its last ``last`` epochs up to its final epoch (``std_last``, mean over
    units), and the standard deviation over seeds of the seed's mean final score (``std_seeds``)."""
    sel = selection(results, metric).set_index(["experiment", "seed", "site"])
    rows = []
    for name in results["experiments"]:
        stds: list[float] = []
        finals: dict[int, list[float]] = {}  # per seed
        for run in results["runs"]:
            if run["experiment"] != name:
                continue
            for site, g in _unit_frames(run):
                stop = int(sel.loc[(name, run["seed"], site), "stop_epoch"])
                tail = g[g.epoch <= stop][metric].tail(last)
                stds.append(float(tail.std(ddof=0)) if len(tail) else math.nan)
                finals.setdefault(run["seed"], []).append(float(g[g.epoch == stop][metric].iloc[0]))
        seed_means = [float(np.mean(v)) for v in finals.values()]
        rows.append({"experiment": name, "std_last": float(np.nanmean(stds)) if stds else math.nan,
                     "std_seeds": float(np.std(seed_means)) if len(seed_means) > 1 else math.nan,
                     "last": last})
    return pd.DataFrame(rows).set_index("experiment")


def _scale(results: Mapping[str, Any]) -> str:
    """The run's scale for figure titles: epochs, sites × sentences, test sentences, seeds."""
    p = results.get("params", {})
    data = results.get("data", [])
    per_site = sorted({n for d in data for n in d.get("site_sentences", [])})
    site_txt = f"{per_site[0]}-{per_site[-1]}" if len(per_site) > 1 else (str(per_site[0]) if per_site else "?")
    test = sorted({d.get("test_sentences") for d in data})
    return (f"{results.get('corpus')}, profile {results.get('profile')}: {p.get('epochs')} epochs, batch "
            f"{p.get('batch_size')}, lr {p.get('lr')}, {p.get('n_sites')} sites × {site_txt} sentences, "
            f"test {'/'.join(map(str, test))} sentences, seeds {results.get('seeds')}")


def _until_stop(results: Mapping[str, Any]) -> pd.DataFrame:
    """:func:`curves` without a unit's records after its final (stopping) epoch."""
    df = curves(results)
    sel = selection(results)[["experiment", "seed", "site", "stop_epoch", "selected_epoch"]]
    df = df.merge(sel, on=["experiment", "seed", "site"])
    return df[df.epoch <= df.stop_epoch]


def theta_table(results: Mapping[str, Any], sweep: Mapping[str, Any], metric: str = "f1"):
    """Final-epoch score (min / mean / max over the workers) of C at every θ_d of the sweep
    and of the study's C_0.1 / C_0.5 on the sweep's seed, with A and D of that seed as
    references (``theta_d`` NaN); the mean at the dev-selected epoch next to it (:func:`selection`)."""
    seed = sweep["seed"]
    p = results["params"]
    named = {"C_0.1": p["theta_d"], "C_0.5": p["theta_d_high"]}
    runs = [dict(r, theta_d=named.get(r["experiment"], math.nan)) for r in results["runs"]
            if r["seed"] == seed] + list(sweep["runs"])
    rows = []
    for run in runs:
        sel = selection({"params": p, "runs": [run]}, metric)
        final = sel.final
        rows.append({"experiment": run["experiment"], "theta_d": run.get("theta_d", math.nan),
                     "final_min": final.min(), "final_mean": final.mean(), "final_max": final.max(),
                     "best_mean": sel.best.mean()})
    t = pd.DataFrame(rows).drop_duplicates("experiment")
    return t.sort_values("theta_d", na_position="last").reset_index(drop=True)


def _heterogeneity_of(params: FestagParams | Mapping[str, Any]) -> float:
    """The corpus heterogeneity a run used (``None`` resolves to the generator's default)."""
    h = params.heterogeneity if isinstance(params, FestagParams) else params.get("heterogeneity")
    if h is None:
        return float(DEFAULT_HETEROGENEITY)
    return float(h)


def _cross_site(results: Mapping[str, Any], experiment: str = "D") -> float:
    """Mean over ``experiment``'s workers (at their dev-selected epoch) of the dev F1 on their
    own site minus the mean dev F1 on the other sites: how much a site's model loses elsewhere."""
    sel = selection(results).set_index(["experiment", "seed", "site"])
    gaps = []
    for run in results["runs"]:
        if run["experiment"] != experiment:
            continue
        for site, g in _unit_frames(run):
            ep = sel.loc[(experiment, run["seed"], site), "selected_epoch"]
            if not math.isfinite(ep):
                continue
            r = g[g.epoch == ep].iloc[0]
            others = [float(r[k]) for k in g.columns if k.startswith("dev_f1@") and k != f"dev_f1@{site}"]
            if others:
                gaps.append(float(r[f"dev_f1@{site}"]) - float(np.mean(others)))
    return float(np.mean(gaps)) if gaps else math.nan


def heterogeneity_table(results: Mapping[str, Any], het: Mapping[str, Any], metric: str = "f1") -> pd.DataFrame:
    """Per heterogeneity level and experiment: test ``metric`` at the final and the
    dev-selected epoch (mean, and min–max of the latter) on the heterogeneity study's seeds,
    the main study supplying its own level; ``cross_site_gap``: D's own-site minus other-site
    dev F1 (:func:`_cross_site`, the measured difference between the sites) on that level."""
    seeds = set(het["seeds"])
    exps = [e for e in het["runs"][0]["experiments"]] if het["runs"] else []
    main = dict(results, runs=[r for r in results["runs"] if r["seed"] in seeds and r["experiment"] in exps],
                experiments=[e for e in results["experiments"] if e in exps])
    rows = []
    for level, res in [(_heterogeneity_of(results["params"]), main),
                       *((_heterogeneity_of(r["params"]), r) for r in het["runs"])]:
        sel = selection(res, metric)
        gap = _cross_site(res)
        for name in res["experiments"]:
            d = sel[sel.experiment == name]
            rows.append({"heterogeneity": level, "experiment": name, "final_mean": d.final.mean(),
                         "best_mean": d.best.mean(), "best_min": d.best.min(), "best_max": d.best.max(),
                         "selected_epoch": d.selected_epoch.mean(), "cross_site_gap": gap})
    t = pd.DataFrame(rows).drop_duplicates(["heterogeneity", "experiment"])
    return t.sort_values(["heterogeneity", "experiment"]).reset_index(drop=True)
