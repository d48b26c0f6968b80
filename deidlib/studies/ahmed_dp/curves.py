"""F1 against ε: the thesis' tagger per σ, every DP recipe per target ε and seed, and Table 5.3's
DP cost with the self-attention tagger (notebook 02's SAT against the recipe with and without DP)."""

from __future__ import annotations

import math
import time

import pandas as pd

from ...rng import derive_seed
from ...training import prepare_tagger, train
from .members import _prf, _recipe, train_member
from .params import ENCODING, SCHEME, DPParams

__all__ = []


def privacy_utility_curve(train_docs, test_docs, params: DPParams, *, seed: int = 0, progress: bool = False):
    """F1 vs ε: one model per σ in ``params.curve_noises`` plus a non-private one (ε = ∞)."""
    rows = []
    for s in (None, *params.curve_noises):
        m = train_member(
            train_docs, None, params, noise_multiplier=s, seed=seed, progress=progress,
            sentence_rate=1.0 if params.curve_sentence_rate is None else params.curve_sentence_rate,
        )
        led = m["ledger"]
        rows.append(
            {
                "noise_multiplier": s if s is not None else 0.0,
                "epsilon": led.epsilon if led else math.inf,
                "delta": params.delta,
                "steps": led.steps if led else None,
                "sentences": m["sentences"],
                "seconds": m["seconds"],
                **_prf(m["tagger"], test_docs),
            }
        )
    return pd.DataFrame(rows)



def recipe_curves(train_docs, test_docs, params: DPParams, *, seed: int = 0, progress: bool = False,
                  corpus: str = "synthetic"):
    """F1 vs ε of every recipe in ``params.recipes`` (:func:`deidlib.studies.dp_recipes.recipe_curve`:
    target ε in ``recipe_epsilons``, seeds ``seed … seed + recipe_seeds − 1``), one DataFrame.
    ``corpus`` names the private corpus (the guideline a public pre-training aligns to)."""
    from ..dp_recipes import recipe_curve

    frames = []
    for name in params.recipes:
        frames.append(recipe_curve(_recipe(params, name, corpus), train_docs, test_docs,
                                   epsilons=params.recipe_epsilons,
                                   seeds=range(seed, seed + params.recipe_seeds), delta=params.delta,
                                   accountant=params.accountant, progress=progress))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


#: what each model of :func:`sat_dp_cost` trains and what DP-SGD makes private
_SAT_ROLES = {
    "non-private SAT": "notebook 02's self-attention tagger (pre-trained MiniLM + CRF), no DP",
    "recipe without DP": "the DP recipe's model, same lots and optimiser, no noise, no clipping",
    "DP SAT": "the DP recipe's model under DP-SGD",
}


def sat_dp_cost(train_docs, test_docs, params: DPParams, curves: pd.DataFrame, *, seed: int = 0,
                progress: bool = False) -> pd.DataFrame:
    """Table 5.3's DP cost with the self-attention tagger (SAT): one row per model and seed.

    * ``non-private SAT``: notebook 02's SAT, all-MiniLM-L6-v2 with a CRF (``params.sat_tagger``:
      cpu fine-tunes its top two layers; paper end to end), trained *without* DP for
      ``sat_epochs`` at ``sat_lr`` on exactly the sentences the ``sat_dp_recipe`` recipe trains on
      (the same PHI-free thinning, same seed);
    * ``recipe without DP`` and ``DP SAT``: that recipe's rows of the F1-vs-ε ``curves``
      (:func:`recipe_curves`) at ε = ∞ and at ``member_epsilon``, every seed.

    What is private: the DP variant of a pre-trained encoder trains only what the recipe trains
    (:func:`deidlib.studies.dp_recipes.restrict_to_recipe`: for ``minilm``, the head on top of the
    frozen encoder: casing embedding, convolution, output layer, CRF); the MiniLM encoder keeps its
    public pre-trained weights and sees no private gradient. The ``private`` column lists those
    parameters, ``trained_parameters`` counts them. The DP cost is then ``non-private SAT − DP SAT``
    (what going private costs against notebook 02's tagger) and ``recipe without DP − DP SAT``
    (what DP-SGD alone costs). Rows are empty when the recipe's curve is not in ``curves``."""
    from ...corpus.labels import thin_negatives
    from ..dp_recipes import build_recipe_tagger, restrict_to_recipe

    name = params.sat_dp_recipe
    if not name or not len(curves) or name not in set(curves.recipe):
        return pd.DataFrame()
    recipe = _recipe(params, name)
    _, dp_tagger = build_recipe_tagger(recipe, train_docs[:1], seed=seed)
    private = restrict_to_recipe(dp_tagger, recipe)
    n_private = sum(p.numel() for n, p in dp_tagger.named_parameters() if n in set(private))
    heads = sorted({n.rsplit(".", 1)[0] for n in private})
    rows = []
    c = curves[curves.recipe == name]
    for role, eps in (("recipe without DP", math.inf), ("DP SAT", params.member_epsilon)):
        for _, r in c[c.target_epsilon == eps].iterrows():
            rows.append({"role": role, "model": f"{name} recipe", "seed": int(r.seed), "epsilon": float(r.epsilon),
                         "precision": r.test_precision, "recall": r.test_recall, "f1": r.test_f1,
                         "trained_parameters": n_private,
                         "private": ", ".join(heads) if role == "DP SAT" else "nothing (no DP)",
                         "sentences": int(r.sentences), "seconds": r.train_seconds})
    t0 = time.perf_counter()
    sents, tagger = prepare_tagger("minilm", train_docs, scheme=SCHEME, encoding=ENCODING, embeddings=None,
                                   seed=seed, **params.sat_tagger)
    sents = [x for x in sents if x.tokens]
    if recipe.negative_keep_rate is not None:  # the recipe's own thinning (train_recipe), same coins
        sents = thin_negatives(sents, recipe.negative_keep_rate, derive_seed(seed, "dp-thin"))
    epochs = params.sat_epochs if params.sat_epochs is not None else params.epochs
    train(tagger, sents, None, None, epochs=max(1, round(epochs)), batch_size=16, optimizer="adam",
          lr=params.sat_lr, clip=1.0, seed=seed, progress=progress)
    ft = params.sat_tagger.get("finetune_layers")
    rows.insert(0, {"role": "non-private SAT",
                    "model": "MiniLM + CRF, " + ("end to end" if ft is None else f"top {ft} layers fine-tuned"),
                    "seed": seed, "epsilon": math.inf, **_prf(tagger, test_docs),
                    "trained_parameters": sum(p.numel() for p in tagger.parameters() if p.requires_grad),
                    "private": "nothing (no DP)", "sentences": len(sents), "seconds": time.perf_counter() - t0})
    return pd.DataFrame(rows)
