"""Notebook 04's run: the ε tables, the F1-vs-ε curves, the members per site, the ensemble tables,
the fine-tuning and the ensemble's guarantee."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, fields
from typing import Any

import pandas as pd

from ...corpus.splits import subsample
from ...datasets import load_corpus
from ...privacy.ensemble import ensemble_guarantee
from ...reporting import json_ready
from ...results import fingerprint_documents
from ..protocol import StudyResults
from .curves import privacy_utility_curve, recipe_curves, sat_dp_cost
from .data import SiteData, _sentences, prepare_sites
from .members import _published_member
from .params import DPParams
from .tables import epsilon_table, fine_tuning_table, scenario_tables, thesis_sequence_table

__all__ = ["DPStudyResults", "run_study"]


@dataclass
class DPStudyResults(StudyResults):
    """What :func:`run_study` returns (tables as DataFrames; :func:`_results_json` makes it JSON-able)."""

    params: dict[str, Any]  #: asdict(DPParams)
    profile: str
    corpus: str
    seed: int
    epsilon_table: pd.DataFrame  #: Table 5.3 analog
    thesis_sequences: pd.DataFrame
    curve: pd.DataFrame  #: F1 vs ε
    recipe_curves: pd.DataFrame  #: F1 vs ε per recipe and seed (docs/dp-recipes.md)
    sat_dp: pd.DataFrame  #: Table 5.3's DP cost with the self-attention tagger (sat_dp_cost)
    members: dict[str, dict[str, Any]]  #: per site: epsilon, ledger (dict), sentences, seconds
    scenario_a: pd.DataFrame  #: Table 5.1 analog
    scenario_b: pd.DataFrame  #: Table 5.2 analog
    rules: pd.DataFrame  #: k-of-n aggregation
    fine_tuning: pd.DataFrame | None  #: Table A.3 analog
    guarantee: dict[str, Any]  #: the ensemble's (ε, δ) and composition
    fingerprint: str
    seconds: float


def run_study(
    params: DPParams,
    *,
    corpus: str = "synthetic",
    data_dir: str | None = None,
    seed: int = 0,
    device: str = "cpu",
    progress: bool = False,
    fine_tune: bool = True,
) -> DPStudyResults:
    """Everything of the notebook: ε tables, the F1-vs-ε curve (on ``corpus``), members per
    synthetic site, scenario A/B tables, rule trade-off, fine-tuning, guarantee. Returns
    DataFrames and JSON-able records (:func:`_results_json`). With a real ``corpus``
    (``"physionet"``: the thesis' nursing notes) the curve is computed on it and it joins the
    three synthetic sites as a fourth member / target (its ε table row counts its sentences).
    Outputs computed on real data must not be committed (they are aggregate scores, but the
    repository holds synthetic results only). ``params`` come from :func:`params_for` /
    :meth:`DPParams.resolve` (resolved once, by the caller)."""
    if device != "cpu":
        raise ValueError("the DP study runs on CPU here (device='cpu')")
    if not isinstance(params, DPParams):
        raise TypeError("run_study takes resolved DPParams (ahmed_dp.params_for(profile, ...))")
    profile = params.profile
    t0 = time.perf_counter()
    sites = prepare_sites(profile, seed, params)
    if corpus == "synthetic":
        cur_train = [d for s in sites for d in s.train]
        cur_test = [d for s in sites for d in s.test]
    else:
        # a real corpus (the PhysioNet nursing notes) is the curve's data set and one more member/site
        sp = load_corpus(corpus, data_dir=data_dir, profile=profile, seed=seed)
        cur_train, cur_test = list(sp.train), subsample(list(sp.test), params.max_eval_documents, seed)
        sites.append(SiteData(corpus, cur_train, list(sp.dev), cur_test))
    site_sizes = {s.name: len(_sentences(s.train, None, seed)) for s in sites}
    out: dict[str, Any] = {"params": asdict(params), "profile": profile, "corpus": corpus, "seed": seed}
    out["epsilon_table"] = epsilon_table(
        site_sizes, params, accountants=("rdp", "gdp") if profile == "smoke" else ("prv", "rdp", "gdp")
    )
    out["thesis_sequences"] = thesis_sequence_table()
    out["curve"] = privacy_utility_curve(cur_train, cur_test, params, seed=seed, progress=progress)
    out["recipe_curves"] = recipe_curves(cur_train, cur_test, params, seed=seed, progress=progress, corpus=corpus)
    out["sat_dp"] = sat_dp_cost(cur_train, cur_test, params, out["recipe_curves"], seed=seed, progress=progress)
    members = {s.name: _published_member(s.train, s.dev, params, seed=seed, progress=progress) for s in sites}
    out["members"] = {
        n: {
            "epsilon": m["ledger"].epsilon,
            "ledger": m["ledger"].to_dict(),
            "sentences": m["sentences"],
            "seconds": m["seconds"],
        }
        for n, m in members.items()
    }
    out["scenario_a"], out["scenario_b"], out["rules"] = scenario_tables(sites, members)
    out["fine_tuning"] = (
        fine_tuning_table(sites, members, params, seed=seed, progress=progress) if fine_tune else None
    )
    g = ensemble_guarantee(
        [(m["ledger"].epsilon, m["ledger"].delta, m["ledger"].unit) for m in members.values()]
    )
    out["guarantee"] = {
        "epsilon": g.epsilon, "delta": g.delta, "composition": g.composition, "unit": g.unit,
        "text": f"{g}; seeded noise (reproducible study): does not hold against anyone holding the seed",
    }
    out["fingerprint"] = fingerprint_documents([d for s in sites for d in (*s.train, *s.dev, *s.test)])
    out["seconds"] = time.perf_counter() - t0
    return DPStudyResults(**out)


def _results_json(out: DPStudyResults | dict[str, Any]) -> dict[str, Any]:
    """JSON-able copy of :func:`run_study`'s output (DataFrames as records; :func:`deidlib.reporting.json_ready`)."""
    if isinstance(out, DPStudyResults):
        out = {f.name: getattr(out, f.name) for f in fields(out)}
    return json_ready(out)
