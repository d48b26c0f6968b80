"""Running the festag study (Festag & Spreckelsen 2020): the five experiments A, B, C_0.1, C_0.5
and D per seed through :mod:`deidlib.collaborative`, one early-stopping rule for every run unit
(:class:`deidlib.training.EarlyStopping`, on the unit's own dev split), the θ_d sweep and the
site-heterogeneity experiment. The choices are in ``docs/studies/festag.md``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from ...collaborative import (
    DSSGD,
    Centralized,
    DSSGDConfig,
    LocalOnly,
    RoundRobin,
    simulate,
    tagger_trainer,
)
from ...training.stopping import EarlyStopping
from ..protocol import StudyResults
from .data import binary_token_evaluator, dev_key, prepare_data, tagger_factory
from .params import EXPERIMENTS, FestagParams, params_for

__all__ = ["FestagResults", "run_study", "theta_sweep", "heterogeneity_study"]


@dataclass
class FestagResults(StudyResults):
    """What :func:`run_study` returns (JSON-able; the input of :func:`~.tables.curves`,
    :func:`~.tables.table3`, :func:`~.figures.figure6` and the claims)."""

    study: str
    profile: str
    corpus: str
    params: dict[str, Any]  #: asdict(FestagParams)
    seeds: list[int]
    experiments: list[str]
    #: experiment, seed, seconds and the simulation history
    runs: list[dict[str, Any]] = field(default_factory=list)
    #: per seed: sentences/documents/patients per site, test size, fingerprint
    data: list[dict[str, Any]] = field(default_factory=list)


def _strategy(name: str, params: FestagParams):
    cfg = DSSGDConfig(theta_d=params.theta_d, theta_u=params.theta_u, gamma=params.gamma, tau=params.tau)
    return {
        "A": lambda: Centralized(),
        "B": lambda: RoundRobin(),
        "C_0.1": lambda: DSSGD(cfg),
        "C_0.5": lambda: DSSGD(replace(cfg, theta_d=params.theta_d_high)),
        "D": lambda: LocalOnly(),
    }[name]()


def run_study(
    params: FestagParams,
    *,
    corpus: str = "synthetic",
    data_dir: str | None = None,
    seeds: Sequence[int] = (0,),
    experiments: Sequence[str] = EXPERIMENTS,
    device: str = "cpu",
    progress: bool = True,
    engine: str = "simulator",
) -> FestagResults:
    """Run the experiments for every seed; returns their histories and parameters (:class:`FestagResults`).

    ``params`` come from :func:`params_for` / :meth:`FestagParams.resolve` (resolved once,
    by the caller). Each seed re-splits the data into sites and re-initialises the shared network.
    ``engine="flower"`` runs B and C as Flower apps (:mod:`deidlib.collaborative.flower`,
    bit-identical to the simulator); A and D exchange no messages and stay in-process.
    """
    if not isinstance(params, FestagParams):
        raise TypeError("run_study takes resolved FestagParams (festag.params_for(profile, ...))")
    if engine not in ("simulator", "flower"):
        raise ValueError(f"unknown engine {engine!r}; choose 'simulator' or 'flower'")
    profile = params.profile
    bad = [e for e in experiments if e not in EXPERIMENTS]
    if bad:
        raise ValueError(f"unknown experiments {bad}; choose from {EXPERIMENTS}")
    out = FestagResults(study="festag", profile=profile, corpus=corpus, params=asdict(params), seeds=list(seeds),
                        experiments=list(experiments))
    for seed in seeds:
        data = prepare_data(corpus, data_dir, profile, seed, params)
        out.data.append(
            {
                "seed": seed,
                "site_split": data.site_split,
                "site_names": data.site_names,
                "dev_sentences": [len(d) for d in data.dev],
                "site_sentences": [len(s) for s in data.sites],
                "site_documents": data.site_docs,
                "site_patients": data.site_patients,
                "test_sentences": len(data.test),
                "test_tokens": int(sum(len(s.tokens) for s in data.test)),
                "fingerprint": data.fingerprint,
            }
        )
        factory = tagger_factory([s for site in data.sites for s in site], params, seed=seed,
                                 cache_vectors=corpus == "synthetic")  # never cache vectors of real text
        trainer = tagger_trainer(lr=params.lr, batch_size=params.batch_size, device=device,
                                 grad_clip=params.grad_clip, loss=params.loss)
        evaluate = binary_token_evaluator(data.test, batch_size=params.eval_batch_size, device=device,
                                          dev=dict(zip(data.site_names, data.dev)))
        for name in experiments:
            t0 = time.perf_counter()
            on_flower = engine == "flower" and name not in ("A", "D")
            stop = {} if on_flower else {"stop": stop_rule(params.patience, params.min_epochs)}  # Flower runs all epochs
            hist = _engine(on_flower)(
                _strategy(name, params), data.sites, model_factory=_on_device(factory, device), trainer=trainer,
                evaluate=evaluate, epochs=params.epochs, seed=seed, progress=progress,
                names=list(data.site_names), **stop,
            )
            out.runs.append({"experiment": name, "seed": seed, "seconds": time.perf_counter() - t0,
                                "engine": "flower" if on_flower else "simulator",
                                **hist.to_dict()})
    return out




def _fired(dev: Sequence[float], patience: int | None, min_epochs: int = 1) -> bool:
    """Whether the library's stopping rule has fired on a unit's dev scores so far."""
    rule = EarlyStopping(patience, "max", min_epochs=min_epochs)
    return any(rule.update(v) for v in dev)


def stop_rule(patience: int | None, min_epochs: int = 1) -> Callable[[Any], bool]:
    """``stop(history) -> bool`` for :func:`deidlib.collaborative.simulate`: the run ends once
    every run unit (A/B: the global model on the pooled dev split; C/D: each worker on its own
    site's dev split) has met the stopping condition of
    :class:`deidlib.training.EarlyStopping`. ``None``: never stops."""

    def stop(hist) -> bool:
        if patience is None:
            return False
        series: dict[str, list[float]] = {}
        for r in hist.records:
            series.setdefault(r["site"], []).append(float(r[dev_key(r["site"])]))
        return bool(series) and all(_fired(v, patience, min_epochs) for v in series.values())

    return stop


def _engine(flower: bool):
    if not flower:
        return simulate
    try:
        from ...collaborative.flower import flower_simulate
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] != "flwr":
            raise
        raise ImportError("engine='flower' needs Flower: pip install 'deidlib[flower]'") from None

    return flower_simulate


def _on_device(factory, device):
    if device == "cpu":
        return factory
    return lambda s: factory(s).to(device)




def theta_sweep(
    params: FestagParams,
    *,
    corpus: str = "synthetic",
    data_dir: str | None = None,
    seed: int = 0,
    thetas: Sequence[float] | None = None,
    device: str = "cpu",
    progress: bool = True,
) -> dict[str, Any]:
    """DSSGD (experiment C) at further download fractions θ_d on one seed (the paper has
    only θ_d = 0.1 and 0.5): ``{"seed", "thetas", "runs"}``, each run a C run of
    :func:`run_study` (same sites, initialisation and order as that seed's C_0.1) with its
    ``theta_d``. ``thetas`` default to ``params.theta_d_sweep``."""
    thetas = list(params.theta_d_sweep if thetas is None else thetas)
    runs = []
    for th in thetas:
        r = run_study(replace(params, theta_d=float(th)), corpus=corpus, data_dir=data_dir, seeds=[seed],
                      experiments=["C_0.1"], device=device, progress=progress)
        run = dict(r["runs"][0], experiment=f"C_{th:g}", theta_d=float(th))
        runs.append(run)
    return {"seed": seed, "thetas": thetas, "runs": runs}




def heterogeneity_study(
    params: FestagParams,
    *,
    corpus: str = "synthetic",
    data_dir: str | None = None,
    seeds: Sequence[int] = (0,),
    device: str = "cpu",
    progress: bool = True,
) -> dict[str, Any]:
    """The study's ``heterogeneity_experiments`` (default A and D) on its first
    ``heterogeneity_seeds`` seeds at every extra level of ``heterogeneity_levels``, with the
    same stopping rule: ``{"levels", "seeds", "runs": [run_study results, one per level]}``.
    The study's own level comes from the main results (:func:`heterogeneity_table`)."""
    seeds = list(seeds)[: params.heterogeneity_seeds]
    runs = [run_study(replace(params, heterogeneity=float(h)), corpus=corpus, data_dir=data_dir, seeds=seeds,
                      experiments=list(params.heterogeneity_experiments), device=device, progress=progress)
            for h in params.heterogeneity_levels]
    return {"levels": [float(h) for h in params.heterogeneity_levels], "seeds": seeds, "runs": runs}




def benchmark_setup(n_sentences: int, seed: int, profile: str = "cpu", corpus: str = "synthetic"):
    """``(model_factory, site_sentences, trainer)`` for ``benchmarks/collaborative.py --model festag``."""
    params = params_for(profile)
    data = prepare_data(corpus, None, profile, seed, params)
    sents = [s for site in data.sites for s in site][:n_sentences]
    factory = tagger_factory(sents, params, seed=seed)
    return factory, sents, tagger_trainer(lr=params.lr, batch_size=params.batch_size, grad_clip=params.grad_clip,
                                          loss=params.loss)
