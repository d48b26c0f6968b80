"""Parameters of the DP recipes study: the recipes (:class:`Recipe`, :data:`RECIPES`: tagger and
optimisation of one way to train a DP tagger) and the sweep over them (:class:`DpRecipesParams`:
recipes, target ε, seeds), with the profiles that scale it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from ...corpus.conventions import GUIDELINES
from ..params import StudyParams, profiles

__all__ = ["RECIPES", "with_overrides", "params_for"]

SCHEME, ENCODING = "binary", "BIO"


@dataclass(frozen=True)
class Recipe:
    """One way to train a DP tagger. ``batch_size`` is the *expected* lot size (Poisson
    sampling; at most ``max_sample_rate`` of the units), ``epochs`` sets the steps
    (epochs / q), ``negative_keep_rate`` thins the PHI-free sentences (None: all kept),
    ``unit`` is the privacy unit."""

    name: str
    kind: str
    tagger: dict[str, Any] = field(default_factory=dict)
    public_vectors: str | None = None  # "glove": frozen GloVe rows over GloVe's own vocabulary
    glove_words: int = 100_000
    batch_size: int = 16
    epochs: float = 3
    lr: float = 3e-3
    optimizer: str = "adam"
    max_grad_norm: float = 1.0
    #: the lot is at most this fraction of the units (small data sets: q stays ≤ it)
    max_sample_rate: float = 0.25
    negative_keep_rate: float | None = None
    unit: str = "sentence"
    note: str = ""
    #: parameter-name prefixes DP-SGD trains (e.g. ``("out.", "crf.")``: the output layer and the CRF);
    #: the tagger's other parameters stay as built or pre-trained. None: every trainable parameter.
    #: Fewer parameters, less noise: the noise's norm grows with the square root of their number
    #: (Yu et al., ICLR 2022: parameter-efficient DP fine-tuning)
    trainable: tuple[str, ...] | None = None
    #: public pre-training before DP-SGD (:func:`pretrain_public`): ``"synthetic"`` trains the
    #: tagger without DP on the package's synthetic corpus first (no private data, no privacy
    #: cost); None: DP-SGD starts from the initialisation
    pretrain: str | None = None
    pretrain_profile: str = "cpu"
    pretrain_epochs: int = 3
    pretrain_lr: float = 1e-3
    #: weight of ICU nursing notes in the public corpus (as the transfer study)
    pretrain_icu_weight: float = 3.0
    #: annotation guideline of the *private* corpus: the public spans are aligned to it
    #: (:func:`deidlib.corpus.conventions.align_spans`; "physionet" for the nursing notes,
    #: "i2b2" keeps every synthetic span)
    guideline: str = "physionet"

    def __post_init__(self) -> None:
        if self.pretrain not in (None, "synthetic"):
            raise ValueError(f"recipe {self.name!r}: pretrain must be None or 'synthetic', got {self.pretrain!r}")
        if self.guideline not in GUIDELINES:
            raise ValueError(f"recipe {self.name!r}: guideline must be one of {', '.join(GUIDELINES)}, "
                             f"got {self.guideline!r}")


#: How the ``minilm`` recipe was chosen (nursing notes' *dev* split, ε = 8, seed 0; the test split
#: was not looked at): frozen-encoder heads without DP — last layer + linear 0.59, layer 3 + linear
#: 0.78, layer 3 + BiGRU 64 0.92, layer 3 + conv(3) 128 0.87 (the conv head is kept: its
#: per-sentence gradients vectorise, the GRU's do not); then DP at ε = 8 — lot 2048, 5 epochs, no
#: thinning: 0.00 (48 steps: all-O); lot 1024, 10 epochs, thinned to 20 %: 0.69 (0.70 without
#: noise); lot 512, lr 3e-3: 0.50; lot 1024, 20 epochs, lr 3e-2: 0.69; lot 1024, 30 epochs, lr 1e-2:
#: 0.75 (``benchmarks/dp_recipes.py``).
#: How ``synthetic_minilm`` was chosen (same dev split, seed 0): fine-tuned on the nursing notes without
#: DP, a head pre-trained on synthetic notes reaches dev F1 0.79 when only its output layer and CRF
#: train, 0.90-0.92 when the whole head trains, so DP fine-tunes the whole head; lot, thinning and 30
#: epochs are the ``minilm`` recipe's; DP at ε = 8, lr 1e-3 / 3e-3 / 1e-2 / 3e-2: 0.811 / 0.841 / 0.851
#: / 0.753; at ε = 1, lr 3e-3 / 1e-2: 0.803 / 0.799 (10 epochs at lr 1e-3: 0.797 at ε = 8, 0.745 at
#: ε = 1). Those runs pre-trained with BIOES labels on the transfer study's corpus; the recipe
#: pre-trains with BIO labels on its own public corpus (:func:`pretrain_public`).
RECIPES: dict[str, Recipe] = {
    "thesis": Recipe(
        "thesis", "transformer", dict(word_dim=48, char_emb_dim=16, char_hidden=16, layers=2, heads=4,
                                      ff_hidden=128),
        batch_size=16, epochs=3, lr=3e-3,
        note="the thesis' recipe (self-attention tagger from scratch, lot 16) at the cpu budget: 3 epochs, "
             "not the thesis' 100"),
    "glove": Recipe(
        "glove", "gru", dict(char="gru", char_onehot=False, char_emb_dim=16, char_hidden=16, casing=True,
                             hidden=64, ff_dim=0, input_dropout=0.0),
        public_vectors="glove", batch_size=512, epochs=8, lr=1e-2, negative_keep_rate=0.25,
        note="frozen public GloVe 6B-50d (vocabulary: GloVe's 100k most frequent words) + casing + char GRU "
             "→ BiGRU 64 → CRF; DP-Adam, large lots, PHI-free sentences thinned"),
    "minilm": Recipe(
        "minilm", "minilm", dict(finetune_layers=0, layers=[3], hidden=128, head="conv", kernel=3),
        batch_size=1024, epochs=30, lr=1e-2, negative_keep_rate=0.2,
        note="frozen public all-MiniLM-L6-v2 (mean of layer 3's pieces) + casing → conv (3 words, 128) → CRF; "
             "DP-Adam, large lots, PHI-free sentences thinned"),
    "synthetic_minilm": Recipe(
        "synthetic_minilm", "minilm", dict(finetune_layers=0, layers=[2, 3, 4], hidden=64, casing=True),
        batch_size=1024, epochs=30, lr=1e-2, negative_keep_rate=0.2, pretrain="synthetic",
        note="frozen public all-MiniLM-L6-v2 (mean of states 2-4) + casing → BiGRU 64 → CRF, pre-trained without "
             "DP on the synthetic corpus (public), then DP-Adam fine-tuning of the whole head, large lots, PHI-free "
             "sentences thinned"),
}


def with_overrides(recipe: Recipe, **kw: Any) -> Recipe:
    """``recipe`` with fields replaced (``tagger`` merged)."""
    if "tagger" in kw:
        kw["tagger"] = {**recipe.tagger, **kw["tagger"]}
    return replace(recipe, **kw)


@dataclass(frozen=True)
class DpRecipesParams(StudyParams):
    """The sweep of :func:`~.run.run_study`: each recipe of ``recipes`` at every target ε of
    ``epsilons`` (0: the public model alone, for a recipe with public pre-training; ``math.inf``:
    no noise) and every seed; ``unit`` overrides the recipes' privacy unit (None: their own)."""

    STUDY: ClassVar[str] = "dp_recipes"

    recipes: tuple[str, ...] = ("minilm",)
    epsilons: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0, math.inf)
    seeds: tuple[int, ...] = (0,)
    unit: str | None = None
    #: also score the dev split
    dev: bool = False
    delta: float = 1e-5
    accountant: str = "prv"

    def check(self) -> None:
        unknown = [r for r in self.recipes if r not in RECIPES]
        if unknown or not self.recipes:
            raise ValueError(f"unknown recipe(s) {unknown}; choose from {', '.join(RECIPES)}")
        if not self.seeds:
            raise ValueError("dp_recipes needs at least one seed")
        if any(e < 0 or math.isnan(e) for e in self.epsilons):
            raise ValueError(f"epsilons must be >= 0 (0: the public model alone, inf: no noise), got {self.epsilons}")
        if self.unit not in (None, "sentence", "patient"):
            raise ValueError(f"unit must be None, 'sentence' or 'patient', got {self.unit!r}")
        if not 0 < self.delta < 1:
            raise ValueError(f"delta must lie in (0, 1), got {self.delta}")


#: per profile (the corpus size is the profile's; smoke: one ε, no curve)
PROFILE_PARAMS = profiles(DpRecipesParams, {
    "smoke": DpRecipesParams(epsilons=(8.0,)),
    "cpu": DpRecipesParams(),
    "paper": DpRecipesParams(seeds=(0, 1, 2, 3, 4)),
})


def params_for(profile: str, **overrides: Any) -> DpRecipesParams:
    """The sweep's parameters at ``profile`` (smoke, cpu, paper), overrides checked."""
    return DpRecipesParams.resolve(profile, **overrides)
