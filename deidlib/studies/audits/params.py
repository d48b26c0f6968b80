"""The audit's parameters (:class:`AuditParams`), its profiles and the overrides it passes to
notebook 06's (friedrich §5) and notebook 07's (alawad) parameters."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..dp_recipes import RECIPES
from ..params import StudyParams, profiles

__all__ = ["params_for", "friedrich_params", "alawad_params"]

SCHEME, ENCODING = "binary", "BIO"


@dataclass(frozen=True)
class AuditParams(StudyParams):
    STUDY: ClassVar[str] = "audits"
    MERGED: ClassVar[tuple[str, ...]] = ("tagger", "friedrich", "alawad")

    kind: str = "festag"
    tagger: dict[str, Any] = field(default_factory=lambda: dict(
        char=None, word_dim=32, hidden=32, ff_dim=32, input_dropout=0.0, freeze_embeddings=False))
    patients: int | None = None  # synthetic corpus size (None: the profile's)
    max_pool_sentences: int = 400  # population of the membership game (patients in a seeded order)
    max_patient_sentences: int = 8  # sentences kept per patient (seeded), so that there are many patients
    max_eval_documents: int = 40
    epochs: int = 20
    batch_size: int = 16
    lr: float = 3e-2  # Adam; 3e-3 left the DP-SGD taggers at F1 0 in 10 epochs (all O)
    optimizer: str = "adam"
    max_grad_norm: float = 1.0
    delta: float = 1e-5
    accountant: str = "rdp"
    dp_noises: tuple[float, ...] = (0.5, 1.0, 2.0)  # from-scratch DP-SGD (festag, lot 16): the contrast
    seeds: int = 3  # seeds of the membership, DSSGD and surrogate parts (seed, seed + 1, ...); ε audits: the first
    dp_recipe: str = "minilm"  # the DP recipe that learns (deidlib.studies.dp_recipes.RECIPES)
    dp_recipe_epsilons: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0)  # its target ε (and ε = ∞, its non-private reference)
    dp_recipe_epochs: float | None = None  # None: the recipe's
    dp_recipe_accountant: str = "prv"  # the accountant the recipes use
    references: int = 4
    canary_copies: tuple[int, ...] = (1, 4, 16)
    canaries_per_setting: int = 2
    canary_candidates: int = 256
    dssgd_theta_us: tuple[float, ...] = (0.1, 1.0)
    dssgd_dp_epsilons: tuple[float, ...] = (1.0,)
    dssgd_epochs: int = 3
    dssgd_lr: float = 0.3
    surrogate_epsilons: tuple[float, ...] = (1.0, 10.0)
    pseudonym_ns: tuple[int, ...] = (2, 10, 100)  # friedrich pseudonymization's N (GloVe 6B-50d neighbours)
    pseudonym_guesses: int = 10  # the recovery attacker's guesses per released PHI token
    step_audit_trials: int = 2000
    one_run_canaries: int = 2000
    one_run_steps: int = 2
    one_run_epsilons: tuple[float, ...] = (2.0, 4.0, 8.0)
    one_run_broken_epsilon: float = 2.0
    one_run_sentences: int = 20
    #: friedrich §5 (notebook 06's functions): the N of the adversarial representation (three-phase)
    representation_n: int = 100
    #: overrides of ``friedrich.params_for(profile, ...)`` for the representation rows (the audit's profile)
    friedrich: dict[str, Any] = field(default_factory=dict)
    #: overrides of ``alawad.params_for(profile, ...)`` for the shared-layer rows (the audit's profile)
    alawad: dict[str, Any] = field(default_factory=dict)

    def check(self) -> None:
        if self.references < 1:
            raise ValueError("audits needs references >= 1")
        if self.seeds < 1:
            raise ValueError("audits needs seeds >= 1")
        if self.dp_recipe not in RECIPES:
            raise ValueError(f"unknown dp_recipe {self.dp_recipe!r} (one of {', '.join(RECIPES)})")
        if RECIPES[self.dp_recipe].unit != "sentence":
            raise ValueError("the audit's dp_recipe must have the sentence unit (the membership game's unit)")
        if any(e <= 0 for e in self.dp_recipe_epsilons):
            raise ValueError("dp_recipe_epsilons must be > 0")
        if any(s <= 0 for s in self.dp_noises):
            raise ValueError("noise multipliers must be > 0")
        if self.one_run_canaries < 20 or any(e <= 0 for e in (*self.one_run_epsilons, self.one_run_broken_epsilon)):
            raise ValueError("the one-run audit needs one_run_canaries >= 20 and ε > 0")
        if self.representation_n < 2:
            raise ValueError("representation_n must be >= 2 (a fake pair needs another word)")


PROFILE_PARAMS: dict[str, AuditParams] = profiles(AuditParams, {
    "smoke": AuditParams(
        tagger=dict(char=None, word_dim=8, hidden=8, ff_dim=8, input_dropout=0.0, freeze_embeddings=False),
        patients=24, max_pool_sentences=60, max_patient_sentences=6, max_eval_documents=4, epochs=3, dp_noises=(1.0,), references=1,
        canary_copies=(1, 16), canaries_per_setting=1, canary_candidates=16, dssgd_theta_us=(1.0,),
        dssgd_dp_epsilons=(1.0,), dssgd_epochs=1, surrogate_epsilons=(1.0,), step_audit_trials=1000,
        one_run_canaries=200, one_run_steps=1, one_run_epsilons=(8.0,), one_run_sentences=6,
        seeds=1, dp_recipe_epsilons=(8.0,), dp_recipe_epochs=2, pseudonym_ns=(10,),
        alawad=dict(n_resamples=20),
    ),
    # cpu: one σ for the from-scratch contrast and ε 1, 4, 8 for the recipe keep 3 seeds within the budget
    # the representation rows at notebook 06's cpu scale (stated here, so that a change of notebook 06's
    # profile does not change this frontier's cost) and at notebook 07's cpu scale (100 bootstrap
    # resamples: its significance tests are not used here)
    "cpu": AuditParams(patients=150, max_pool_sentences=300, epochs=10, references=2, dp_noises=(1.0,),
                       dp_recipe_epsilons=(1.0, 4.0, 8.0),
                       friedrich=dict(max_train_sentences=800, max_dev_sentences=200, max_test_sentences=600,
                                      negatives_per_positive=0.25, epochs=6, patience=2, p1_epochs=4, p2_epochs=3,
                                      p3_epochs=3, deid_hidden=64, deid_layers=1, d=50, adv_hidden=32,
                                      frozen_epochs=50, attack_sentences=1000, attack_heldout=400,
                                      attack_lr=1e-2, length_buckets=True),
                       alawad=dict(n_resamples=100)),
    "paper": AuditParams(patients=None, max_pool_sentences=2000, max_eval_documents=200, references=8, seeds=5,
                         canaries_per_setting=5, canary_candidates=1024, one_run_canaries=10000),
})


def params_for(profile: str, **overrides: Any) -> AuditParams:
    """The profile's parameters with ``overrides`` (:meth:`StudyParams.resolve`)."""
    return AuditParams.resolve(profile, **overrides)


def friedrich_params(params: AuditParams):
    """Notebook 06's parameters at the audit's profile with the overrides ``params.friedrich``;
    the controls are attacked at ``representation_n`` only."""
    from ..friedrich.params import params_for as friedrich_params_for

    return friedrich_params_for(params.profile, **{"control_neighbours": (params.representation_n,),
                                                   **params.friedrich})


def alawad_params(params: AuditParams):
    """Notebook 07's parameters at the audit's profile with the overrides ``params.alawad``."""
    from ..alawad import params_for as alawad_params_for

    return alawad_params_for(params.profile, **params.alawad)
