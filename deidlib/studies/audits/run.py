"""Notebook 09's run: every part of the study on every seed, the ε audits on the first."""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd
import torch

from ..protocol import StudyResults
from .accountant import epsilon_audits
from .claims import method_statements
from .data import prepare_data
from .membership import membership_setting, recipe_base, recipe_setting
from .params import AuditParams
from .releases import dssgd_rows, pseudonym_rows, surrogate_rows
from .representations import representation_rows, shared_layer_rows
from .tables import frontier_table

__all__ = ["AuditResults", "run_study"]


@dataclass
class AuditResults(StudyResults):
    """What :func:`run_study` returns: the raw rows of every part (lists of records), the
    tables built from them (DataFrames) and the run's provenance."""

    params: dict[str, Any]  #: asdict(AuditParams)
    profile: str
    seed: int
    seeds: list[int]
    population: dict[str, int]  #: sentences, patients, documents, test_documents (first seed)
    membership: list[dict[str, Any]]  #: one record per membership setting and seed
    dssgd: list[dict[str, Any]]
    surrogates: list[dict[str, Any]]
    pseudonyms: list[dict[str, Any]]
    representations: list[dict[str, Any]]  #: friedrich §5 (:func:`representation_rows`), every seed
    shared_layers: list[dict[str, Any]]  #: alawad (:func:`shared_layer_rows`), every seed
    epsilon_audits: pd.DataFrame
    frontier: pd.DataFrame
    statements: pd.DataFrame
    membership_table: pd.DataFrame
    canary_table: pd.DataFrame
    fingerprint: str
    seconds: float


def run_study(params: AuditParams, *, seed: int = 0, progress: bool = True) -> AuditResults:
    """Everything of notebook 09 (synthetic corpus only: the attacks need to train many models
    and to know the ground truth of membership): membership, DSSGD, surrogates,
    pseudonymization, the friedrich representations and alawad's shared layers on seeds
    ``seed`` … ``seed + params.seeds − 1``, the ε audits on ``seed``."""
    if not isinstance(params, AuditParams):
        raise TypeError("run_study takes resolved AuditParams (audits.params_for(profile, ...))")
    from tqdm.auto import tqdm

    t0 = time.perf_counter()
    seeds = [seed + i for i in range(params.seeds)]
    recipe_eps = [*params.dp_recipe_epsilons, math.inf]
    settings = [None, *params.dp_noises]
    bar = tqdm(total=len(seeds) * (len(settings) + len(recipe_eps) + 5) + 1, desc="audits", disable=not progress)
    membership, dssgd, sur, pseudo, reps, shared = [], [], [], [], [], []
    index = None
    if params.pseudonym_ns:
        from ...embeddings.neighbours import NeighbourIndex
        from ...embeddings.public import load_glove

        index = NeighbourIndex(load_glove())
    first = None
    with torch.random.fork_rng(devices=[]):
        for sd in seeds:
            data = prepare_data(params, sd)
            first = first or data
            for s in settings:
                bar.set_postfix_str(f"seed {sd}, " + ("non-private" if s is None else f"σ={s:g}"))
                membership.append(membership_setting(data, params, s, seed=sd))
                bar.update()
            base = recipe_base(data, params, seed=sd)
            for e in recipe_eps:
                bar.set_postfix_str(f"seed {sd}, {params.dp_recipe} ε={e:g}")
                membership.append(recipe_setting(data, params, e, base, seed=sd))
                bar.update()
            bar.set_postfix_str(f"seed {sd}, dssgd")
            dssgd += [{**r, "seed": sd} for r in dssgd_rows(data, params, seed=sd)]
            bar.update()
            bar.set_postfix_str(f"seed {sd}, surrogates")
            sur += [{**r, "seed": sd} for r in surrogate_rows(data, params, seed=sd)]
            bar.update()
            if index is not None:
                bar.set_postfix_str(f"seed {sd}, pseudonymization")
                pseudo += pseudonym_rows(data, params, index, seed=sd)
            bar.update()
            bar.set_postfix_str(f"seed {sd}, adversarial representation (friedrich)")
            reps += representation_rows(params, seed=sd)
            bar.update()
            bar.set_postfix_str(f"seed {sd}, shared layers (alawad)")
            shared += shared_layer_rows(params, seed=sd)
            bar.update()
        bar.set_postfix_str("ε audits")
        if first is None:
            raise ValueError("the audits need at least one seed")
        eps = epsilon_audits(first, params, seed=seed)
        bar.update()
    bar.close()
    parts: dict[str, Any] = {
        "params": asdict(params), "profile": params.profile, "seed": seed, "seeds": seeds,
        "population": {"sentences": len(first.sentences), "patients": len(set(first.patients)),
                       "documents": len(first.docs), "test_documents": len(first.test_docs)},
        "membership": membership, "dssgd": dssgd, "surrogates": sur, "pseudonyms": pseudo,
        "representations": reps, "shared_layers": shared, "epsilon_audits": eps, "fingerprint": first.fingerprint,
    }
    membership_table = pd.DataFrame([
        {"method": m["method"], "setting": m["setting"], "seed": m["seed"], "epsilon": m["epsilon"], **r}
        for m in membership for r in m["membership"]])
    canary_table = pd.DataFrame([
        {"method": m["method"], "setting": m["setting"], "seed": m["seed"], "epsilon": m["epsilon"], **c}
        for m in membership for c in m["canaries"]])
    return AuditResults(**parts, frontier=frontier_table(parts), statements=method_statements(parts),
                        membership_table=membership_table, canary_table=canary_table,
                        seconds=time.perf_counter() - t0)
