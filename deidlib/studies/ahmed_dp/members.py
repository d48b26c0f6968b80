"""One DP model of the study: the thesis' tagger under DP-SGD (Algorithm 1, σ given) or the
members' recipe at a target ε; seeded noise and lots (``secure=False``: reproducible, and every
ledger says the guarantee does not hold against anyone holding the seed)."""

from __future__ import annotations

import copy
import time
from typing import Any

from ...privacy.dpsgd import train_dp
from ...training import evaluate_tagger, prepare_tagger, train
from .data import _sentences, _thin_and_subsample
from .params import ENCODING, SCHEME, DPParams

__all__ = []


def _recipe(params: DPParams, name: str, corpus: str = "synthetic"):
    """Recipe ``name`` of :data:`~deidlib.studies.dp_recipes.RECIPES` with ``params.recipe_epochs``;
    a recipe with public pre-training pre-trains on the synthetic corpus of the study's profile,
    its spans aligned to the private ``corpus``' guideline ("physionet" for the nursing notes,
    else "i2b2": the synthetic sites' own)."""
    from ..dp_recipes import RECIPES, with_overrides

    r = RECIPES[name]
    if r.pretrain is not None:
        r = with_overrides(r, pretrain_profile=params.profile,
                           guideline="physionet" if corpus == "physionet" else "i2b2")
    return with_overrides(r, epochs=params.recipe_epochs) if params.recipe_epochs is not None else r


def member_recipe(params: DPParams):
    """The :class:`~deidlib.studies.dp_recipes.Recipe` of the members (``params.member_recipe``,
    with ``recipe_epochs``), or ``None`` for the thesis' tagger."""
    return None if params.member_recipe is None else _recipe(params, params.member_recipe)


def _published_member(train_docs, dev_docs, params: DPParams, *, seed: int, base=None,
                      progress: bool = False) -> dict[str, Any]:
    """A member of the ensemble tables (or its fine-tuning, with ``base``): the members'
    recipe at ``params.member_epsilon`` (all its sentences: the recipe thins or not by
    itself), or the thesis' tagger at σ = ``params.member_noise`` (:func:`train_member`)."""
    from ..dp_recipes import train_recipe

    if params.member_recipe is None:
        return train_member(train_docs, dev_docs, params, noise_multiplier=params.member_noise, seed=seed,
                            base=base, progress=progress)
    m = train_recipe(member_recipe(params), train_docs, epsilon=params.member_epsilon, seed=seed,
                     delta=params.delta, accountant=params.accountant, base=base, progress=progress,
                     secure=False)  # reproducible study runs, as train_member; stated in the ledger (rng_note)
    return {"tagger": m["tagger"], "history": {}, "ledger": m["ledger"], "seconds": m["seconds"],
            "sentences": m["sentences"]}


def train_member(
    train_docs,
    dev_docs,
    params: DPParams,
    *,
    noise_multiplier: float | None,
    seed: int = 0,
    base=None,
    progress: bool = False,
    sentence_rate: float | None = None,
) -> dict[str, Any]:
    """Train one DP model on ``train_docs`` (σ = ``noise_multiplier``; ``None`` = non-private,
    the ordinary trainer with the same epochs/lot size). ``base``: a trained tagger to fine-tune
    (its featurizer is kept). ``sentence_rate``: the fraction of sentences to train on (default
    ``params.train_sentence_rate``). DP-SGD runs with seeded noise and lots (``secure=False``,
    reproducible; the ledger's ``rng_note`` says the guarantee does not hold against anyone
    holding the seed). Returns {"tagger", "history", "ledger", "seconds", "sentences"}."""
    t0 = time.perf_counter()
    rate = params.train_sentence_rate if sentence_rate is None else sentence_rate
    if base is None:
        sents, tagger = prepare_tagger(
            params.kind,
            train_docs,
            scheme=SCHEME,
            encoding=ENCODING,
            embeddings=params.embeddings,
            seed=seed,
            **params.tagger,
        )
        sents = _thin_and_subsample(sents, rate, seed, params.negative_keep_rate)
    else:
        tagger = copy.deepcopy(base)
        sents = _sentences(train_docs, rate, seed, params.negative_keep_rate)
    if noise_multiplier is None:
        hist = train(
            tagger,
            sents,
            None,
            None,
            epochs=max(1, round(params.epochs)),
            batch_size=params.batch_size,
            optimizer=params.optimizer,
            lr=params.lr,
            clip=params.max_grad_norm,
            seed=seed,
            progress=progress,
        )
        ledger = None
    else:
        hist, ledger = train_dp(
            tagger,
            sents,
            None,
            None,
            epochs=params.epochs,
            batch_size=params.batch_size,
            noise_multiplier=noise_multiplier,
            delta=params.delta,
            max_grad_norm=params.max_grad_norm,
            accountant=params.accountant,
            optimizer=params.optimizer,
            lr=params.lr,
            seed=seed,
            progress=progress,
            eval_every=10**9,
            secure=False,  # reproducible study runs; stated in the ledger (rng_note)
        )
    return {
        "tagger": tagger,
        "history": hist.to_dict(),
        "ledger": ledger,
        "seconds": time.perf_counter() - t0,
        "sentences": len(sents),
    }


def _prf(tagger, docs) -> dict[str, float]:

    p, r, f = evaluate_tagger(tagger, docs)
    return {"precision": p, "recall": r, "f1": f}
