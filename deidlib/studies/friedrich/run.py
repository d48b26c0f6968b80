"""Running the friedrich study (Friedrich et al., ACL 2019): one :func:`run_study` for both of its
experiments, chosen by ``experiment`` — ``"pseudonymization"`` (notebook 05: Figure 4, Table 2,
section 8) or ``"adversarial"`` (notebook 06: Figure 5 with the no-privacy controls). Each returns
its own dataclass, both a :class:`FriedrichResults`.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from ...embeddings.neighbours import NeighbourIndex
from ..protocol import StudyResults
from .adversarial import adversarial_run, control_runs
from .common import load_embeddings, prepare_data
from .params import EXPERIMENTS, FriedrichParams
from .pseudonymization import subword_table, sweep, train_pseudonymized
from .tables import summarize_adversarial, summarize_sweep, table2

__all__ = ["FriedrichResults", "run_study"]


@dataclass
class FriedrichResults(StudyResults):
    """What :func:`run_study` returns: :class:`PseudoResults` or :class:`AdvResults`."""


@dataclass
class PseudoResults(FriedrichResults):
    """The pseudonymization experiment (notebook 05)."""

    params: dict[str, Any]  #: asdict(FriedrichParams)
    profile: str
    corpus: str
    seed: int
    sizes: dict[str, int]  #: sentences per split
    sweep: pd.DataFrame  #: one row per (embedding, N, seed)
    summary: pd.DataFrame  #: Figure 4 analog (mean/min/max per embedding and N)
    table2: pd.DataFrame  #: Table 2 analog
    subword: pd.DataFrame  #: section 8 statistic
    adversarial_table_runs: pd.DataFrame | None  #: the adversarial N = table_neighbours runs of Table 2
    fingerprint: str
    seconds: float


@dataclass
class AdvResults(FriedrichResults):
    """The adversarial-representation experiment (notebook 06)."""

    params: dict[str, Any]  #: asdict(FriedrichParams)
    profile: str
    corpus: str
    seed: int
    sizes: dict[str, int]
    runs: pd.DataFrame  #: one row per (embedding, procedure or control, N, seed)
    summary: pd.DataFrame  #: Figure 5 analog
    #: the controls' held-out adversary accuracy every K/5 epochs (epoch, pairs_seen, accuracy)
    attack_curve: pd.DataFrame
    fingerprint: str
    seconds: float


def run_study(params: FriedrichParams, *, experiment: str, corpus: str = "synthetic", data_dir: str | None = None,
              seed: int = 0, progress: bool = False, adversarial_rows: bool = True) -> FriedrichResults:
    """Everything of one experiment's notebook at the scale of ``params`` (resolved once by the caller).

    ``experiment="pseudonymization"`` returns :class:`PseudoResults` (``adversarial_rows=False``
    leaves out Table 2's adversarial rows); ``"adversarial"`` returns :class:`AdvResults`.
    """
    if not isinstance(params, FriedrichParams):
        raise TypeError("run_study takes resolved FriedrichParams (friedrich.params_for(profile, ...))")
    if experiment not in EXPERIMENTS:
        raise ValueError(f"unknown friedrich experiment {experiment!r}; choose one of {', '.join(EXPERIMENTS)}")
    if experiment == "pseudonymization":
        return _run_pseudonymization(params, corpus=corpus, data_dir=data_dir, seed=seed, progress=progress,
                                     adversarial_rows=adversarial_rows)
    return _run_adversarial(params, corpus=corpus, data_dir=data_dir, seed=seed, progress=progress)


def _run_pseudonymization(params: FriedrichParams, *, corpus: str, data_dir: str | None, seed: int,
                          progress: bool, adversarial_rows: bool) -> PseudoResults:
    t0 = time.perf_counter()
    data = prepare_data(params, corpus=corpus, data_dir=data_dir, seed=seed)
    embeddings = {e: load_embeddings(e, params, seed=seed) for e in params.embeddings}
    indexes = {e: NeighbourIndex(v) for e, v in embeddings.items()}
    sw = sweep(data, embeddings, indexes, params, seed=seed, progress=progress)
    extra = []
    if "glove" in embeddings:  # GloVe without the casing feature (Table 2, first GloVe row)
        for k in range(params.n_seeds):
            extra.append({"embedding": "glove", **train_pseudonymized(data, embeddings["glove"], indexes["glove"], 1,
                                                                     params, seed=seed + k, casing=False)})
    extra_df = pd.DataFrame(extra)
    adv = None
    if adversarial_rows:
        adv = pd.DataFrame([{"embedding": e, **adversarial_run(data, embeddings[e], indexes[e], params.table_neighbours,
                                                                params, procedure="three_phase", seed=seed + k,
                                                                attack=False)}
                            for e in embeddings for k in range(params.adv_seeds)])
    out = PseudoResults(
        params=asdict(params), profile=params.profile, corpus=corpus, seed=seed,
        sizes={"train": len(data.train), "dev": len(data.dev), "test": len(data.test)},
        sweep=sw, summary=summarize_sweep(sw), table2=table2(sw, extra_df, adv, params),
        subword=subword_table(data, indexes, 100), adversarial_table_runs=adv,
        fingerprint=data.fingerprint, seconds=0.0,
    )
    out.seconds = time.perf_counter() - t0
    return out


def _run_adversarial(params: FriedrichParams, *, corpus: str, data_dir: str | None, seed: int,
                     progress: bool) -> AdvResults:
    if not params.adv_neighbours:
        raise ValueError("the adversarial study needs at least one N in adv_neighbours")
    t0 = time.perf_counter()
    data = prepare_data(params, corpus=corpus, data_dir=data_dir, seed=seed)
    rows: list[dict[str, Any]] = []
    curves: list[dict[str, Any]] = []
    for e in params.adv_embeddings or params.embeddings:
        emb = load_embeddings(e, params, seed=seed)
        index = NeighbourIndex(emb)
        jobs = [(p, n, seed + k) for p in params.procedures for n in params.adv_neighbours
                for k in range(params.adv_seeds)]
        for p, n, s in tqdm(jobs, desc=f"adversarial {e}", disable=not progress):
            rows.append({"embedding": e, **adversarial_run(data, emb, index, n, params, procedure=p, seed=s)})
        if params.controls:
            for k in tqdm(range(params.adv_seeds), desc=f"controls {e}", disable=not progress):
                for r in control_runs(data, emb, index, params, seed=seed + k):
                    curves += [{"embedding": e, "procedure": r["procedure"], "n": r["n"], "seed": r["seed"], **c}
                               for c in r.pop("curve")]
                    rows.append({"embedding": e, **r})
    runs = pd.DataFrame(rows)
    out = AdvResults(
        params=asdict(params), profile=params.profile, corpus=corpus, seed=seed,
        sizes={"train": len(data.train), "dev": len(data.dev), "test": len(data.test),
               "attack_train": len(data.attack_train or data.train), "attack_test": len(data.attack_test or data.test)},
        runs=runs, summary=summarize_adversarial(runs), attack_curve=pd.DataFrame(curves),
        fingerprint=data.fingerprint, seconds=0.0,
    )
    out.seconds = time.perf_counter() - t0
    return out
