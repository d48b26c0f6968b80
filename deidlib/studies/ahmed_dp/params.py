"""The DP study's parameters (:class:`DPParams`) and its profiles (Ahmed 2020, chapter 5: lot 16,
100 epochs, δ = 1e-5; the profiles scale data and epochs, never the algorithm)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..params import StudyParams, profiles

__all__ = ["params_for"]

SCHEME, ENCODING = "binary", "BIO"


@dataclass(frozen=True)
class DPParams(StudyParams):
    STUDY: ClassVar[str] = "ahmed_dp"
    MERGED: ClassVar[tuple[str, ...]] = ("tagger", "sat_tagger")

    kind: str = "transformer"
    tagger: dict[str, Any] = field(default_factory=dict)  # build_tagger overrides
    n_sites: int = 3
    patients: int | None = None  # synthetic corpus size (None: the profile's)
    epochs: float = 100
    batch_size: int = 16
    lr: float = 3e-3
    optimizer: str = "adam"  # Adam on the noisy gradient is post-processing (no privacy cost)
    max_grad_norm: float = 1.0
    delta: float = 1e-5
    accountant: str = "rdp"
    member_noise: float = 0.55  # thesis: the σ of the published models (ε 6.95–9.15)
    curve_noises: tuple[float, ...] = (0.25, 0.45, 0.55, 1.0)
    #: keep each training sentence of a member with this fixed probability (None: all), by a
    #: coin keyed by the sentence (keyed_subsample: the DP guarantee holds for the full set)
    train_sentence_rate: float | None = None
    #: the same for the F1-vs-ε curve's training set (all sites, or the real corpus)
    curve_sentence_rate: float | None = None
    #: keep every PHI sentence and each PHI-free one with this probability (None: all), before
    #: the subsampling; per-sentence keyed coins as well (thin_negatives)
    negative_keep_rate: float | None = None
    max_eval_documents: int | None = None
    embeddings: str | None = None  # None: random init (word2vec would read the training text)
    table_noises: tuple[float, ...] = (0.25, 0.45, 0.55)
    fine_tune_per_target: int | None = None  # pre-trained members fine-tuned per target (None: all others)
    #: train the members (Tables 5.1/5.2/A.3) with this recipe of dp_recipes at ``member_epsilon``
    #: (None: the thesis' tagger at σ = ``member_noise``, lot ``batch_size``)
    member_recipe: str | None = None
    member_epsilon: float = 8.0
    #: recipes of dp_recipes whose F1-vs-ε curves are drawn on the curve's corpus (ε × seeds)
    recipes: tuple[str, ...] = ()
    recipe_epsilons: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0, math.inf)
    recipe_seeds: int = 2
    recipe_epochs: float | None = None  # None: each recipe's own
    #: the DP cost of the self-attention tagger (:func:`sat_dp_cost`): notebook 02's SAT (pre-trained
    #: MiniLM + CRF; ``sat_tagger``: its build_tagger overrides) trained without DP on the sentences of
    #: the ``sat_dp_recipe`` curve, against that recipe's DP runs at ``member_epsilon``
    sat_dp_recipe: str | None = "minilm"
    sat_tagger: dict[str, Any] = field(default_factory=lambda: {"finetune_layers": None})
    sat_epochs: float | None = None  # None: ``epochs``
    sat_lr: float = 3e-4

    def check(self) -> None:
        from ..dp_recipes import RECIPES

        unknown = sorted({*self.recipes, *([self.member_recipe] if self.member_recipe else []),
                          *([self.sat_dp_recipe] if self.sat_dp_recipe else [])} - set(RECIPES))
        if unknown:
            raise ValueError(f"ahmed_dp: unknown recipe(s) {unknown}; choose from {', '.join(RECIPES)}")
        if not self.member_epsilon > 0:
            raise ValueError(f"ahmed_dp: member_epsilon must be > 0, got {self.member_epsilon}")
        if self.recipe_seeds < 1:
            raise ValueError(f"ahmed_dp: recipe_seeds must be >= 1, got {self.recipe_seeds}")
        if self.sat_dp_recipe and RECIPES[self.sat_dp_recipe].kind != "minilm":
            raise ValueError(f"ahmed_dp: sat_dp_recipe must be a recipe of the pre-trained encoder (kind minilm), "
                             f"got {self.sat_dp_recipe!r}")


PROFILE_PARAMS: dict[str, DPParams] = profiles(DPParams, {
    "smoke": DPParams(
        tagger=dict(word_dim=16, char_emb_dim=8, char_hidden=8, layers=1, heads=2, ff_hidden=32),
        patients=30,
        epochs=2,
        batch_size=8,
        curve_noises=(1.0,),
        train_sentence_rate=0.15,  # sites: 335 / 236 / 637 sentences -> ~50 / 35 / 96
        curve_sentence_rate=0.04,  # 1,208 sentences -> ~48
        max_eval_documents=4,
        fine_tune_per_target=1,
        member_recipe="minilm",
        recipes=("minilm", "synthetic_minilm"),
        recipe_epsilons=(8.0, math.inf),
        recipe_seeds=1,
        recipe_epochs=1,
        sat_tagger={"finetune_layers": 0, "layers": [1]},
        sat_epochs=1,
    ),
    "cpu": DPParams(
        tagger=dict(word_dim=48, char_emb_dim=16, char_hidden=16, layers=2, heads=4, ff_hidden=128),
        patients=150,
        epochs=3,
        batch_size=16,
        curve_noises=(0.25, 0.55, 1.0),
        train_sentence_rate=0.35,  # sites: 3,031 / 1,138 / 2,616 sentences -> ~1,060 / 400 / 916
        curve_sentence_rate=0.15,  # 6,785 sentences -> ~1,018
        max_eval_documents=60,
        fine_tune_per_target=1,  # 3 fine-tunings instead of 6 (each ~1-4 min on 2 loaded cores)
        member_recipe="minilm",
        recipes=("minilm", "synthetic_minilm"),
        recipe_seeds=2,
        recipe_epochs=10,  # the recipe's 30 at the nursing notes' scale; 10 keeps notebook 04 within ~30 min
        # notebook 02's cpu SAT (top 2 of MiniLM's 6 layers fine-tuned), one epoch over the recipe's
        # ~3,000 sentences: about 2 minutes on one thread, what notebook 04's 40-minute budget leaves
        sat_tagger={"finetune_layers": 2},
        sat_epochs=1,
    ),
    "paper": DPParams(tagger={}, patients=None, epochs=100, batch_size=16, member_recipe="minilm",
                      recipes=("minilm", "synthetic_minilm", "glove"), recipe_seeds=3),
})


def params_for(profile: str, **overrides: Any) -> DPParams:
    """The profile's parameters with ``overrides`` (:meth:`StudyParams.resolve`)."""
    return DPParams.resolve(profile, **overrides)
