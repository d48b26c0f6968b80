"""Parameters of the festag study (Festag & Spreckelsen 2020, section "Experiments", Table 2):
one dataclass whose defaults are the paper's setup, and the profiles that scale it.

The choices behind each knob, and what each profile was measured to do, are in
``docs/studies/festag.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ...collaborative import TAGGER_LOSSES
from ..params import StudyParams, profiles

__all__ = ["params_for"]

EXPERIMENTS = ("A", "B", "C_0.1", "C_0.5", "D")
_SITE_SPLITS = ("auto", "documents", "random")
SCHEME, ENCODING = "i2b2", "IO"


@dataclass(frozen=True)
class FestagParams(StudyParams):
    """All knobs of the study (defaults = the paper; profiles override some)."""
    STUDY: ClassVar[str] = "festag"
    MERGED: ClassVar[tuple[str, ...]] = ("tagger",)

    n_sites: int = 5
    epochs: int = 200
    lr: float = 0.9
    batch_size: int = 1
    theta_d: float = 0.1  # experiment C_0.1
    theta_d_high: float = 0.5  # experiment C_0.5
    theta_u: float = 0.5
    gamma: float = 10.0
    tau: float = 1e-4
    grad_clip: float | None = None
    #: per-step loss: "token_mean" (NeuroNER's, on which the paper's lr 0.9 was set: the softmax
    #: cross-entropy averaged over the sentence's tokens) or "sentence" (summed over them)
    loss: str = "token_mean"
    #: training seeds (each re-splits the sites and re-initialises the network)
    n_seeds: int = 3
    #: extra download fractions θ_d of a DSSGD sweep on the first seed (C at each θ_d, with
    #: A and D of that seed as references; θ_d and θ_d_high already run in C_0.1 / C_0.5)
    theta_d_sweep: tuple[float, ...] = ()
    #: tagger hyperparameters passed to build_tagger("festag", ...) (paper sizes)
    tagger: dict[str, Any] = field(
        default_factory=lambda: {
            "word_dim": 300,
            "char_hidden": 128,
            "token_hidden": 100,
            "ff_hidden": 100,
            "dropout": 0.5,
        }
    )
    #: cap on training sentences per site and on test sentences (None: all)
    max_site_sentences: int | None = None
    max_test_sentences: int | None = None
    #: keep every PHI sentence of a site and this many PHI-free ones per PHI sentence (None: all)
    negatives_per_positive: float | None = None
    eval_batch_size: int = 64
    #: "word2vec": gensim vectors trained on the training sentences (stand-in for Wikipedia); "random"
    word_vectors: str = "word2vec"
    word2vec_epochs: int = 5
    #: how the training documents become sites: "documents" (each document's own ``site``, the
    #: institutions), "random" (a seeded partition by patient into ``n_sites``) or "auto"
    #: ("documents" when the documents carry more than one site, else "random")
    site_split: str = "auto"
    #: share of each site's patients held out as that site's dev split (early stopping)
    dev_fraction: float = 0.2
    #: cap on each site's dev sentences (None: all)
    max_dev_sentences: int | None = None
    #: early stopping: a run unit stops once its dev F1 has not improved for this many epochs
    #: (None: no stopping, ``epochs`` run; ``epochs`` is then the maximum)
    patience: int | None = None
    #: the stopping rule does not fire before this epoch (a unit still predicting no PHI at all
    #: has a flat dev F1 of 0 for its first epochs)
    min_epochs: int = 1
    #: synthetic corpus only: how different the sites are, in [0, 1] (None: the generator's default)
    heterogeneity: float | None = None
    #: extra heterogeneity levels of the site-heterogeneity experiment (() skips it)
    heterogeneity_levels: tuple[float, ...] = ()
    #: experiments and number of seeds (the first ones) of the heterogeneity experiment
    heterogeneity_experiments: tuple[str, ...] = ("A", "D")
    heterogeneity_seeds: int = 1

    def check(self) -> None:
        if self.loss not in TAGGER_LOSSES:
            raise ValueError(f"loss must be one of {TAGGER_LOSSES}, got {self.loss!r}")
        if self.n_seeds < 1:
            raise ValueError(f"n_seeds must be >= 1, got {self.n_seeds}")
        if any(not 0 < t <= 1 for t in self.theta_d_sweep):
            raise ValueError(f"theta_d_sweep values must lie in (0, 1], got {self.theta_d_sweep}")
        if self.word_vectors not in ("word2vec", "random"):
            raise ValueError(f"word_vectors must be 'word2vec' or 'random', got {self.word_vectors!r}")
        if self.site_split not in _SITE_SPLITS:
            raise ValueError(f"site_split must be one of {_SITE_SPLITS}, got {self.site_split!r}")
        if not 0 < self.dev_fraction < 1:
            raise ValueError(f"dev_fraction must lie in (0, 1), got {self.dev_fraction}")
        if self.patience is not None and self.patience < 1:
            raise ValueError(f"patience must be >= 1 or None, got {self.patience}")
        if self.min_epochs < 1:
            raise ValueError(f"min_epochs must be >= 1, got {self.min_epochs}")
        for h in (*self.heterogeneity_levels, *([] if self.heterogeneity is None else [self.heterogeneity])):
            if not 0 <= h <= 1:
                raise ValueError(f"heterogeneity values must lie in [0, 1], got {h}")
        bad = [e for e in self.heterogeneity_experiments if e not in EXPERIMENTS]
        if bad:
            raise ValueError(f"unknown heterogeneity_experiments {bad}; choose from {EXPERIMENTS}")
        if self.heterogeneity_seeds < 1:
            raise ValueError(f"heterogeneity_seeds must be >= 1, got {self.heterogeneity_seeds}")


PROFILE_PARAMS: dict[str, FestagParams] = profiles(FestagParams, {
    "smoke": FestagParams(
        epochs=2,
        batch_size=8,
        lr=0.5,
        n_seeds=1,
        theta_d_sweep=(1.0,),
        tagger={"word_dim": 16, "char_dim": 8, "char_hidden": 8, "token_hidden": 8, "ff_hidden": 8, "dropout": 0.5},
        max_site_sentences=24,
        max_test_sentences=60,
        max_dev_sentences=12,
        patience=1,
        heterogeneity_levels=(0.0,),
    ),
    "cpu": FestagParams(
        # the paper's optimisation (plain SGD, batch 1, lr 0.9, no clipping, NeuroNER's loss);
        # smaller data and tagger; at most 20 epochs with early stopping on dev, patience 4
        # (docs/studies/festag.md: why these numbers)
        epochs=20,
        tagger={"word_dim": 50, "char_dim": 16, "char_hidden": 25, "token_hidden": 50, "ff_hidden": 50, "dropout": 0.5},
        max_site_sentences=300,
        max_test_sentences=750,
        max_dev_sentences=60,
        patience=4,
        min_epochs=8,
        theta_d_sweep=(1.0,),
        heterogeneity_levels=(0.0,),
    ),
    "paper": FestagParams(),
})


def params_for(profile: str, **overrides: Any) -> FestagParams:
    """The profile's parameters with ``overrides`` (:meth:`StudyParams.resolve`)."""
    return FestagParams.resolve(profile, **overrides)

