"""Parameters of the alawad study (Alawad et al. 2020): one dataclass whose defaults are the
paper's setup where it states one, and the profiles that scale it (``docs/studies/alawad.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ...collaborative.shared_private import ADVERSARIES, CNNConfig, RegistryTraining
from ..params import StudyParams, profiles

__all__ = ["params_for"]

APPROACHES = ("single", "centralized", "shared_private", "shared_private_no_adv")
CORPORA = ("synthetic", "abstracts")


@dataclass(frozen=True)
class AlawadParams(StudyParams):
    """All knobs of the study (defaults = the paper's setup where it states one)."""

    STUDY: ClassVar[str] = "alawad"

    #: registries (the paper: 2, LTR and KCR)
    n_registries: int = 2
    #: synthetic: cancer patients generated (one pathology report each, before prevalence thinning)
    patients: int = 20000
    #: synthetic label field: "subsite" (30 ICD-O-3 codes) or "primary_site" (6)
    label: str = "subsite"
    #: Dirichlet concentration of the registries' label prevalence (small = strong skew)
    concentration: float = 5.0
    #: abstracts: concentration of the label-skewed partition; cap on abstracts read (None: all)
    abstracts_concentration: float = 0.5
    abstracts_limit: int | None = None
    test_fraction: float = 0.3
    #: CNN sizes (Kim 2014 defaults; see deidlib.models.cnn)
    n_buckets: int = 2**15
    emb_dim: int = 300
    filters: int = 100
    dropout: float = 0.5
    max_len: int = 600
    #: optimisation (Adam); shared–private hands its shared layers on after visit_batches batches
    epochs: int = 10
    visit_batches: int = 1
    batch_size: int = 64
    lr: float = 1e-3
    #: weight λ of the shared encoder's adversarial term and the optional difference loss weight
    adv_weight: float = 1.0
    orth_weight: float = 0.0
    disc_hidden: int = 64
    #: the shared encoder's adversarial objective ("confusion" or "reversal") and the discriminator's lr scale
    adversary: str = "confusion"
    disc_lr_scale: float = 1.0
    #: classes with at least this many pooled training reports qualify as most/least represented
    min_support: int = 100
    n_seeds: int = 3
    n_resamples: int = 1000
    attack_epochs: int = 50
    #: TOST margin (F1) of "statistically indistinguishable from centralized"
    equivalence_margin: float = 0.03

    def check(self) -> None:
        if self.n_registries < 2:
            raise ValueError(f"alawad needs at least 2 registries, got {self.n_registries}")
        if self.label not in ("subsite", "primary_site"):
            raise ValueError(f"label must be 'subsite' or 'primary_site', got {self.label!r}")
        if min(self.epochs, self.visit_batches) < 1:
            raise ValueError(f"epochs and visit_batches must be >= 1, got {self.epochs} and {self.visit_batches}")
        if self.adversary not in ADVERSARIES:
            raise ValueError(f"adversary must be one of {', '.join(ADVERSARIES)}, got {self.adversary!r}")
        if not self.equivalence_margin > 0:
            raise ValueError(f"equivalence_margin must be > 0, got {self.equivalence_margin}")
        if min(self.patients, self.n_seeds, self.n_resamples, self.attack_epochs, self.batch_size) < 1:
            raise ValueError("patients, n_seeds, n_resamples, attack_epochs and batch_size must be >= 1")
        if self.min_support < 1:
            raise ValueError(f"min_support must be >= 1, got {self.min_support}")

    def cnn(self) -> CNNConfig:
        return CNNConfig(n_buckets=self.n_buckets, emb_dim=self.emb_dim, filters=self.filters,
                         dropout=self.dropout, max_len=self.max_len)

    def training(self, seed: int, adv_weight: float | None = None) -> RegistryTraining:
        return RegistryTraining(epochs=self.epochs, visit_batches=self.visit_batches, batch_size=self.batch_size, lr=self.lr,
                                adv_weight=self.adv_weight if adv_weight is None else adv_weight,
                                orth_weight=self.orth_weight, disc_hidden=self.disc_hidden, adversary=self.adversary,
                                disc_lr_scale=self.disc_lr_scale, seed=seed)


PROFILE_PARAMS: dict[str, AlawadParams] = profiles(AlawadParams, {
    "smoke": AlawadParams(n_registries=3, patients=500, n_buckets=2**12, emb_dim=16, filters=8, max_len=200,
                          epochs=2, batch_size=32, lr=2e-3, min_support=5, n_seeds=1, n_resamples=100,
                          attack_epochs=5, abstracts_limit=300),
    "cpu": AlawadParams(n_registries=3, patients=6000, n_buckets=2**14, emb_dim=64, filters=32, max_len=400,
                        epochs=10, batch_size=32, lr=5e-3, min_support=50, n_seeds=3, n_resamples=1000,
                        attack_epochs=30),
    "paper": AlawadParams(),
})


def params_for(profile: str, **overrides: Any) -> AlawadParams:
    """The profile's parameters with ``overrides`` (:meth:`StudyParams.resolve`)."""
    return AlawadParams.resolve(profile, **overrides)

