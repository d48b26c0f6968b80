"""DP-SGD recipes a hospital would use: the thesis' recipe beside what DP practice has learned
since, on one harness (:func:`deidlib.privacy.dpsgd.train_dp`) and one scorer.

The thesis (ahmed, §5.1.2) trains a self-attention tagger *from scratch* with DP-SGD: lot 16,
100 epochs, σ ∈ {0.25, 0.45, 0.55}. Since then DP practice has learned to

* start from **public pre-trained parts** that cost no privacy (Tramèr & Boneh, ICLR 2021;
  Li et al., ICLR 2022; De et al. 2022): here the frozen all-MiniLM-L6-v2 encoder
  (:mod:`deidlib.models.encoder_tagger`) or frozen GloVe 6B-50d vectors with a public
  vocabulary (:func:`deidlib.embeddings.public.glove_vocabulary`);
* use **large lots** with a learning rate fit to them, and **few epochs** (De et al. 2022 §3;
  Li et al. 2022 §3: the noisy mean gradient's signal-to-noise ratio grows as L / (σ·C));
* use **DP-Adam** (Adam on the privatised gradient: post-processing, no privacy cost);
* **pre-train on public data, then fine-tune with DP** (Li et al. 2022; Yu et al., ICLR 2022):
  here the package's own synthetic corpus (:func:`pretrain_public`, the ``synthetic_minilm``
  recipe), measured against the public model alone (the ε 0 row of :func:`recipe_curve`),
  paired by seed (:func:`curve_summary`; docs/dp-recipes.md gives the measurement);
* **thin the PHI-free sentences** with per-sentence keyed coins
  (:func:`deidlib.corpus.labels.thin_negatives`: the DP guarantee for the thinned set holds
  for the full one).

A :class:`Recipe` fixes the tagger and the optimisation; :func:`train_recipe` trains one model
at a target ε (σ calibrated by the accountant for the recipe's steps), or at ε = ∞ with the
*same* lots and optimiser but no noise and no clipping (the recipe's non-private reference).
:func:`recipe_curve` sweeps ε and seeds. ``minilm`` and ``glove`` have public vocabularies;
``thesis`` keeps the thesis' vocabulary of training words, which DP-SGD does not protect
(:mod:`deidlib.studies.ahmed_dp`).

The package follows the study protocol (:mod:`deidlib.studies.protocol`): :func:`params_for`,
:func:`run_study` (:class:`DpRecipesResults`) and :func:`curve_summary`; its figure is drawn by
``ahmed_dp`` (:mod:`.figures` says why).
"""

from .params import RECIPES, params_for, with_overrides
from .run import (
    DpRecipesResults,
    build_recipe_tagger,
    pretrain_public,
    recipe_curve,
    restrict_to_recipe,
    run_study,
    train_recipe,
)
from .tables import curve_summary

__all__ = [
    "RECIPES", "build_recipe_tagger", "pretrain_public", "train_recipe", "recipe_curve", "curve_summary",
    "restrict_to_recipe", "with_overrides", "DpRecipesResults", "params_for", "run_study",
]
