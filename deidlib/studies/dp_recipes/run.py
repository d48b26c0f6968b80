"""Training one DP tagger by a recipe (:func:`train_recipe`), its public pre-training
(:func:`pretrain_public`) and the F1-vs-ε sweep (:func:`recipe_curve`, :func:`run_study`); the
choices are in the package docstring (:mod:`deidlib.studies.dp_recipes`).
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd
import torch

from ...corpus.conventions import align_spans
from ...corpus.labels import tagged_sentences, thin_negatives
from ...datasets import load_corpus
from ...privacy.dpsgd import patient_units, train_dp
from ...rng import derive_seed
from ...training import evaluate_tagger, prepare_tagger, train
from ..protocol import StudyResults
from .params import ENCODING, RECIPES, SCHEME, DpRecipesParams, Recipe, with_overrides

__all__ = [
    "DpRecipesResults", "build_recipe_tagger", "pretrain_public", "train_recipe", "recipe_curve",
    "restrict_to_recipe", "run_study",
]


@dataclass
class DpRecipesResults(StudyResults):
    """What :func:`run_study` returns: one row per (recipe, seed, target ε) of :func:`recipe_curve`
    (the input of :func:`~.tables.curve_summary` and of ``ahmed_dp.plot_recipe_curves``)."""

    profile: str
    corpus: str
    params: dict[str, Any]
    rows: pd.DataFrame = field(default_factory=pd.DataFrame)
    seconds: float = 0.0


def build_recipe_tagger(recipe: Recipe, train_docs, *, seed: int = 0):
    """Tagged training sentences (empty ones dropped) and the untrained tagger of ``recipe``."""
    hp = dict(recipe.tagger)
    kw: dict[str, Any] = {}
    if recipe.public_vectors == "glove":
        from ...embeddings.public import glove_vocabulary

        kw["vocabulary"] = glove_vocabulary(recipe.glove_words)
        hp.update(word_dim=50, freeze_embeddings=True)
    elif recipe.public_vectors is not None:
        raise ValueError(f"unknown public vectors {recipe.public_vectors!r} (None or 'glove')")
    sents, tagger = prepare_tagger(recipe.kind, train_docs, scheme=SCHEME, encoding=ENCODING, embeddings=None,
                                   seed=seed, **kw, **hp)
    if recipe.public_vectors == "glove":
        from ...embeddings.public import glove_matrix

        with torch.no_grad():
            tagger.tokens.word.weight.copy_(torch.from_numpy(glove_matrix(tagger.featurizer.words, seed)))
    return [s for s in sents if s.tokens], tagger


def pretrain_public(recipe: Recipe, *, seed: int = 0, progress: bool = False):
    """The tagger of ``recipe`` trained *without* DP on public data (``recipe.pretrain``):
    ``"synthetic"``: the training split of the package's synthetic corpus (profile
    ``pretrain_profile``, generated from ``derive_seed(seed, "dp-public-corpus")``, so it is
    never the corpus of a synthetic private run of the same seed; ICU nursing notes weighted
    ``pretrain_icu_weight``; spans aligned to ``recipe.guideline``), ``pretrain_epochs`` of Adam
    at ``pretrain_lr`` with learning-rate decay 0.15 (the transfer study's frozen-encoder
    recipe, :data:`deidlib.studies.transfer.FROZEN_ENCODER_RECIPE`). Its featurizer (labels; the
    encoder's public pieces) is built from the synthetic notes.

    Privacy position: the generator reads no private note, so this model costs no privacy and
    DP-SGD's guarantee for the fine-tuned model covers everything private it saw. What the
    guarantee does *not* cover, as for every recipe's hyperparameters: the generator's design
    and the recipe's settings were chosen with the nursing notes' *dev* split in view
    (the transfer study; docs/dp-recipes.md); a release would choose them on other
    data or pay for the choice (Papernot & Steinke, ICLR 2022)."""
    if recipe.pretrain != "synthetic":
        raise ValueError(f"recipe {recipe.name!r} has no public pre-training (pretrain={recipe.pretrain!r})")
    scale = {"icu_nursing_note": recipe.pretrain_icu_weight} if recipe.pretrain_icu_weight != 1 else None
    syn = load_corpus("synthetic", profile=recipe.pretrain_profile, seed=derive_seed(seed, "dp-public-corpus"),
                      note_scale=scale)
    sents, tagger = build_recipe_tagger(recipe, align_spans(syn.train, recipe.guideline), seed=seed)
    train(tagger, sents, None, None, epochs=recipe.pretrain_epochs, batch_size=16, optimizer="adam",
          lr=recipe.pretrain_lr, lr_decay=0.15, seed=seed, progress=progress)
    return tagger


def restrict_to_recipe(tagger, recipe: Recipe) -> list[str]:
    """Freeze every parameter of ``tagger`` that ``recipe`` does not train (``recipe.trainable``:
    name prefixes; None: what the tagger itself leaves trainable, e.g. the head of a frozen
    encoder) and return the names of those it trains: the parameters DP-SGD makes private.
    Everything else keeps its public (or pre-trained) value."""
    if recipe.trainable is not None:
        keep = tuple(recipe.trainable)
        if not any(p.requires_grad and n.startswith(keep) for n, p in tagger.named_parameters()):
            raise ValueError(f"recipe {recipe.name!r}: no trainable parameter starts with {keep}")
        for n, p in tagger.named_parameters():
            if not n.startswith(keep):
                p.requires_grad_(False)
    return [n for n, p in tagger.named_parameters() if p.requires_grad]


def train_recipe(
    recipe: Recipe,
    train_docs,
    *,
    epsilon: float,
    seed: int = 0,
    delta: float = 1e-5,
    accountant: str = "prv",
    secure: bool = True,
    progress: bool = False,
    base=None,
    history: list[tuple[float, float, int]] | None = None,
    sentences=None,
) -> dict[str, Any]:
    """One model of ``recipe`` at target ``epsilon`` (``math.inf``: the same lots and
    optimiser without noise or clipping). By default (``secure=True``) the lots and the noise
    come from the OS CSPRNG, as for any model a user may release; ``secure=False`` (the study
    runs: :func:`recipe_curve`, the ahmed_dp members) seeds them, and the ledger's ``rng_note``
    says the guarantee does not hold against anyone holding the seed.
    ``base``: a trained tagger to fine-tune (a copy; its featurizer is kept; default: the
    recipe's public pre-training, :func:`pretrain_public`, when it has one), ``history``: DP
    phases already spent on the same units (their ε composes), ``sentences``: the tagged
    training sentences to use instead of ``train_docs``' (a membership game picks sentences;
    needs ``base``, and the sentence unit).
    Returns {"tagger", "ledger", "history" (``train_dp``'s: privacy spent per epoch), "sentences",
    "seconds"}."""
    if not epsilon > 0:
        raise ValueError(f"ε must be positive (math.inf: no noise), got {epsilon}; ε 0 is the public model "
                         "alone (pretrain_public), trained on no private note")
    t0 = time.perf_counter()
    if sentences is not None and (base is None or recipe.unit != "sentence"):
        raise ValueError("train_recipe(sentences=...) needs a base tagger and the sentence unit")
    if base is None and recipe.pretrain is not None:
        base = pretrain_public(recipe, seed=seed, progress=progress)
    if base is None:
        sents, tagger = build_recipe_tagger(recipe, train_docs, seed=seed)
    else:
        tagger = copy.deepcopy(base)
        task = getattr(base, "task", {}) or {}
        sents = [s for s in (sentences if sentences is not None else tagged_sentences(
            train_docs, task.get("scheme", SCHEME), task.get("encoding", ENCODING), task.get("mode", "default")))
            if s.tokens]
    restrict_to_recipe(tagger, recipe)
    if recipe.negative_keep_rate is not None:
        sents = thin_negatives(sents, recipe.negative_keep_rate, derive_seed(seed, "dp-thin"))
    units = patient_units(sents, train_docs) if recipe.unit == "patient" else None
    private = math.isfinite(epsilon)
    if getattr(tagger, "frozen", False):
        tagger.precompute(sents, progress=progress)  # the public encoder's vectors, once (shared cache)
    method = "vectorized" if getattr(tagger, "supports_vectorized", False) else "micro"
    n_units = len(set(units)) if units is not None else len(sents)
    hist, ledger = train_dp(
        tagger, sents, unit=recipe.unit, units=units, epochs=recipe.epochs,
        batch_size=max(1, min(recipe.batch_size, int(recipe.max_sample_rate * n_units))), history=history,
        noise_multiplier=None if private else 0.0, target_epsilon=epsilon if private else None,
        max_grad_norm=recipe.max_grad_norm if private else math.inf, delta=delta, accountant=accountant,
        optimizer=recipe.optimizer, lr=recipe.lr, seed=seed, progress=progress, eval_every=10**9, secure=secure,
        method=method,
    )
    return {"tagger": tagger, "ledger": ledger, "history": hist, "sentences": len(sents),
            "seconds": time.perf_counter() - t0}


def recipe_curve(
    recipe: Recipe,
    train_docs,
    test_docs,
    *,
    epsilons: Sequence[float] = (1.0, 2.0, 4.0, 8.0, math.inf),
    seeds: Sequence[int] = (0,),
    dev_docs=None,
    delta: float = 1e-5,
    accountant: str = "prv",
    progress: bool = False,
) -> pd.DataFrame:
    """F1 vs ε of ``recipe``: one row per (seed, target ε) with the ε spent, σ, q, steps,
    training sentences, seconds, and binary-token P/R/F1 on ``test_docs`` (and ``dev_docs``).
    A recipe with public pre-training adds a row at ε = 0 per seed: the public model alone,
    which has seen no private note (``epsilons`` may name 0 too; ``epsilons=(0,)`` gives that
    row only and never reads ``train_docs``). The DP rows of a seed fine-tune that seed's
    public model, so rows of one seed are paired (:func:`curve_summary`)."""
    import warnings

    if 0 in epsilons and recipe.pretrain is None:
        raise ValueError(f"recipe {recipe.name!r} has no public pre-training: ε 0 (the public model alone) "
                         "needs one")

    def scored(row: dict, tagger) -> dict:
        for name, docs in (("test", test_docs), ("dev", dev_docs)):
            if docs:
                p, r, f = evaluate_tagger(tagger, docs)
                row.update({f"{name}_precision": p, f"{name}_recall": r, f"{name}_f1": f})
        return row

    rows = []
    for seed in seeds:
        # a public pre-training is done once per seed and shared by that seed's ε (train_recipe copies it)
        base = pretrain_public(recipe, seed=seed, progress=progress) if recipe.pretrain is not None else None
        if base is not None:  # ε = 0: the public model alone, before any private note
            rows.append(scored({"recipe": recipe.name, "unit": recipe.unit, "seed": seed, "target_epsilon": 0.0,
                                "epsilon": 0.0, "delta": 0.0, "noise_multiplier": math.nan, "sample_rate": 0.0,
                                "steps": 0, "lot": 0.0, "sentences": 0, "units": 0, "train_seconds": math.nan}, base))
        for eps in [e for e in epsilons if e != 0]:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="noise_multiplier = 0")
                m = train_recipe(recipe, train_docs, epsilon=eps, seed=seed, delta=delta, accountant=accountant,
                                 progress=progress, secure=False, base=base)  # reproducible study rows (rng_note)
            led = m["ledger"]
            rows.append(scored({"recipe": recipe.name, "unit": recipe.unit, "seed": seed, "target_epsilon": eps,
                                "epsilon": led.epsilon, "delta": delta, "noise_multiplier": led.noise_multiplier,
                                "sample_rate": led.sample_rate, "steps": led.steps, "lot": led.expected_batch_size,
                                "sentences": m["sentences"], "units": led.n_units, "train_seconds": m["seconds"]},
                               m["tagger"]))
    return pd.DataFrame(rows)


def run_study(params: DpRecipesParams, *, corpus: str = "physionet", data_dir: str | None = None,
              progress: bool = False) -> DpRecipesResults:
    """:func:`recipe_curve` of every recipe of ``params`` on ``corpus`` (the profile's split at
    seed 0, as ``benchmarks/dp_recipes.py``), rows of all recipes in one frame."""
    if not isinstance(params, DpRecipesParams):
        raise TypeError("run_study takes resolved DpRecipesParams (dp_recipes.params_for(profile, ...))")
    t0 = time.perf_counter()
    sp = load_corpus(corpus, data_dir=data_dir, profile=params.profile, seed=0)
    frames = []
    for name in params.recipes:
        recipe = with_overrides(RECIPES[name], **({"unit": params.unit} if params.unit else {}))
        frames.append(recipe_curve(recipe, list(sp.train), list(sp.test), epsilons=params.epsilons,
                                   seeds=params.seeds, dev_docs=list(sp.dev) if params.dev else None,
                                   delta=params.delta, accountant=params.accountant, progress=progress))
    return DpRecipesResults(profile=params.profile, corpus=corpus, params=asdict(params),
                            rows=pd.concat(frames, ignore_index=True), seconds=time.perf_counter() - t0)
