"""The DP recipes study's table: per recipe, unit and target ε, the mean F1 over seeds with its
t interval and the paired difference to the public model alone (:func:`curve_summary`).
"""

from __future__ import annotations

import math

import pandas as pd

__all__ = ["curve_summary"]


def curve_summary(rows: pd.DataFrame, *, level: float = 0.95, metric: str = "test_f1") -> pd.DataFrame:
    """Per (recipe, unit, target ε) of :func:`recipe_curve`'s ``rows``: seeds, the mean and
    ``level`` t interval over seeds of ``metric`` (and the mean precision and recall of its
    split), and the paired difference to the same seed's ε 0 row (the public model alone):
    ``d_n`` pairs, mean ``d``, its t interval ``d_lo``–``d_hi``, two-sided ``d_p`` (paired
    t-test, :func:`deidlib.studies.seed_stats.paired_effect`) and ``verdict``
    (:func:`~deidlib.studies.seed_stats.effect_verdict`: ``found`` when the interval lies above 0,
    i.e. DP fine-tuning beat the public model). No ε 0 rows: the paired columns are NaN and the
    verdict ``not measured``."""
    from ..seed_stats import effect_verdict, paired_effect, t_interval

    split = metric.rsplit("_", 1)[0]
    out = []
    for (recipe, unit), g in rows.groupby(["recipe", "unit"], sort=False):
        base = g[g.target_epsilon == 0].groupby("seed")[metric].first()
        for eps, e in sorted(g.groupby("target_epsilon"), key=lambda kv: kv[0]):
            by_seed = e.groupby("seed")[metric].first()
            m, lo, hi = t_interval(by_seed.to_numpy(), level)
            row = {"recipe": recipe, "unit": unit, "target_epsilon": eps, "seeds": len(by_seed), "mean": m,
                   "lo": lo, "hi": hi, "precision": e[f"{split}_precision"].mean(),
                   "recall": e[f"{split}_recall"].mean()}
            common = by_seed.index.intersection(base.index)
            if eps != 0 and len(common):
                d = paired_effect(by_seed[common].to_numpy(), base[common].to_numpy(), level)
                row.update(d_n=d["n"], d=d["mean"], d_lo=d["lo"], d_hi=d["hi"], d_p=d["p"],
                           verdict=effect_verdict(d["lo"], d["hi"]))
            else:
                row.update(d_n=0, d=math.nan, d_lo=math.nan, d_hi=math.nan, d_p=math.nan,
                           verdict="baseline" if eps == 0 else "not measured")
            out.append(row)
    return pd.DataFrame(out)
