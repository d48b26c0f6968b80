"""The membership game of one setting (target with canaries and reference models on seeded
patient halves; loss-threshold and offline-LiRA attacks per sentence and per patient; canary
exposure; utility), for the from-scratch taggers and for the DP recipe that learns."""

from __future__ import annotations

import copy
import math
import time
import warnings
from typing import Any

import numpy as np
import torch

from ...audits import (
    attack_scores,
    canary_exposure,
    canary_words,
    group_scores,
    insert_canaries,
    lira_offline_scores,
    loss_scores,
    make_canaries,
    sentence_losses,
)
from ...rng import derive_seed
from ...training import evaluate_tagger
from ..dp_recipes import RECIPES, build_recipe_tagger, train_recipe, with_overrides
from .data import AuditData, _featurizer, _half, fit, make_tagger
from .params import AuditParams

__all__ = []


def _membership_game(data: AuditData, params: AuditParams, seed: int, new_model, fit_model) -> dict[str, Any]:
    """The membership game of one setting: model 0 (the target, with the canaries) and
    ``references`` reference models, each trained by ``fit_model(new_model(r, canaries), train_set, r)``
    (→ ``(tagger, ledger)``) on the sentences of a seeded random half of the patients; the attacks
    per sentence and per patient, the canaries' exposure and the target's utility."""
    t0 = time.perf_counter()
    canaries = make_canaries(params.canary_copies, params.canaries_per_setting, params.canary_candidates,
                             derive_seed(seed, "audits-canaries"))
    n = len(data.sentences)
    losses, ins = [], []
    target = None
    ledger = None
    for r in range(params.references + 1):
        coin = _half(data.patients, seed, f"model-{r}")
        member = np.array([coin[p] for p in data.patients])
        train_set = [s for s, m in zip(data.sentences, member) if m]
        if r == 0:
            train_set = insert_canaries(train_set, canaries, derive_seed(seed, "audits-insert"))
        tagger, led = fit_model(new_model(r, canaries), train_set, r)
        losses.append(sentence_losses(tagger, data.sentences))
        ins.append(member)
        if r == 0:
            target, ledger = tagger, led
    L, IN = np.stack(losses), np.stack(ins)
    scores = {"loss": loss_scores(L[0]), "lira": lira_offline_scores(L[0], L[1:], IN[1:])}
    rows = []
    coin0 = _half(data.patients, seed, "model-0")
    for attack, s in scores.items():
        rows.append({"level": "sentence", "attack": attack, **attack_scores(s[IN[0]], s[~IN[0]])})
        g = group_scores(s, data.patients)
        gi = [v for p, v in g.items() if coin0[p]]
        go = [v for p, v in g.items() if not coin0[p]]
        rows.append({"level": "patient", "attack": attack, **attack_scores(gi, go)})
    p, rcl, f = evaluate_tagger(target, data.test_docs)
    return {
        "seed": seed,
        "epsilon": ledger.epsilon if ledger else math.inf,
        "ledger": ledger.to_dict() if ledger else None,
        "utility": {"precision": p, "recall": rcl, "f1": f},
        "membership": rows,
        "canaries": canary_exposure(target, canaries),
        "population": n,
        "references": params.references,
        "seconds": time.perf_counter() - t0,
    }


def membership_setting(data: AuditData, params: AuditParams, noise: float | None, *, seed: int = 0
                       ) -> dict[str, Any]:
    """One setting of the from-scratch tagger (``params.kind``; σ = ``noise``, None:
    non-private): target + references, membership attacks per sentence and per patient,
    canary exposure, utility."""
    fz = None

    def new_model(r, canaries):
        nonlocal fz
        if fz is None:
            fz = _featurizer([s.words for s in data.sentences], canary_words(canaries))
        return make_tagger(fz, params, derive_seed(seed, "audits-init", r))

    def fit_model(tagger, train_set, r):
        return tagger, fit(tagger, train_set, params, noise, derive_seed(seed, "audits-train", r))

    out = _membership_game(data, params, seed, new_model, fit_model)
    return {"method": f"non-private ({params.kind})" if noise is None else f"DP-SGD from scratch ({params.kind})",
            "setting": "" if noise is None else f"σ={noise:g}", "noise_multiplier": noise,
            "target_epsilon": math.inf, **out}


def _recipe(params: AuditParams):
    """The audit's DP recipe: ``dp_recipe`` without thinning (exact membership ground truth) and
    with ``dp_recipe_epochs`` if set."""
    r = RECIPES[params.dp_recipe]
    return with_overrides(r, negative_keep_rate=None,
                          **({} if params.dp_recipe_epochs is None else {"epochs": params.dp_recipe_epochs}))


def recipe_base(data: AuditData, params: AuditParams, *, seed: int = 0):
    """The recipe's untrained tagger for one seed (its public pre-training when it has one),
    shared by that seed's settings (each model trains a copy)."""
    from ..dp_recipes import pretrain_public

    recipe = _recipe(params)
    if recipe.pretrain is not None:
        return pretrain_public(recipe, seed=derive_seed(seed, "audits-recipe-public"))
    return build_recipe_tagger(recipe, data.docs, seed=derive_seed(seed, "audits-recipe-init"))[1]


def _reinit_head(tagger, seed: int) -> None:
    """Fresh initialisation (seeded) of every trainable module outside a frozen encoder."""
    frozen = {id(m) for m in getattr(tagger, "encoder", torch.nn.Module()).modules()}
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        for m in tagger.modules():
            if id(m) not in frozen and m is not tagger and hasattr(m, "reset_parameters"):
                m.reset_parameters()


def recipe_setting(data: AuditData, params: AuditParams, epsilon: float, base, *, seed: int = 0
                   ) -> dict[str, Any]:
    """One setting of the DP recipe ``params.dp_recipe`` at target ``epsilon`` (``math.inf``:
    the recipe's non-private reference), attacked like :func:`membership_setting`'s taggers.
    ``base``: :func:`recipe_base` of this seed. Models without public pre-training get a head
    initialised from their own seed."""
    recipe = _recipe(params)

    def new_model(r, canaries):
        m = copy.deepcopy(base)
        if recipe.pretrain is None:
            _reinit_head(m, derive_seed(seed, "audits-recipe-init", r))
        return m

    def fit_model(tagger, train_set, r):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="noise_multiplier = 0")
            m = train_recipe(recipe, None, epsilon=epsilon, seed=derive_seed(seed, "audits-recipe-train", r),
                             delta=params.delta, accountant=params.dp_recipe_accountant, secure=False, base=tagger,
                             sentences=train_set)
        return m["tagger"], (m["ledger"] if math.isfinite(epsilon) else None)

    out = _membership_game(data, params, seed, new_model, fit_model)
    private = math.isfinite(epsilon)
    return {"method": f"{'DP-SGD' if private else 'non-private'} ({recipe.name} recipe)",
            "setting": f"ε={epsilon:g}" if private else "", "noise_multiplier": (
                out["ledger"]["noise_multiplier"] if private and out["ledger"] else None),
            "target_epsilon": epsilon, "recipe": recipe.name, **out}
