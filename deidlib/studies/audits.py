"""Notebook ``09_privacy_frontier``: every privacy method of the package attacked the
same way on one corpus, and its utility next to the attack's success.

One synthetic corpus (``load_corpus("synthetic")``, split by patient); the training split's
sentences (capped at ``max_pool_sentences`` whole patients) are the *population*; the test
split scores utility (binary-token F1, :func:`deidlib.training.evaluate_tagger`).

Every part but the ε audits runs on ``seeds`` seeds (``seed``, ``seed + 1``, ...: each its own
synthetic corpus, coins, initialisation and noise); the frontier and the per-method statements
(:func:`method_statements`) give the mean over seeds with the min–max interval, and the F1 cost
with the 95 % t interval of the paired (same-seed) difference (:mod:`.seed_stats`).

* **DP-SGD through a recipe that learns** (:func:`recipe_setting`, recipe ``dp_recipe`` of
  :data:`deidlib.studies.dp_recipes.RECIPES`, default ``minilm``: the frozen public
  all-MiniLM-L6-v2 encoder, a small conv head, DP-Adam with large lots) at each target ε of
  ``dp_recipe_epsilons`` and at ε = ∞ (the recipe's lots and optimiser without noise or
  clipping: its non-private reference), attacked exactly like the taggers below (same
  population, coins, canaries, attacks). What DP protects there: one sentence of the *head's*
  training set; the encoder and its WordPiece vocabulary are public and saw no private text, so
  the attacks attack what the guarantee covers. The recipe's PHI-free-sentence thinning is off
  in the audit (every member sentence is trained on, so the membership ground truth is exact),
  and the target and its reference models of one seed start from the same public encoder with
  heads initialised from different seeds.
* **Non-private and from-scratch DP-SGD taggers** (:func:`membership_setting`, the contrast:
  the thesis' way, a small tagger trained from scratch with lot 16): a target tagger is trained
  on the sentences of a random half of the population's patients (one seeded coin per
  patient) plus the canaries (:mod:`deidlib.audits.canary`, ``k`` copies each); ``references``
  reference models are trained the same way on other random halves (no canaries). Attacks:
  loss threshold and offline LiRA (:mod:`deidlib.audits.membership`), per sentence and per
  patient, scored by AUC and TPR at 1 % / 0.1 % FPR; canary exposure per ``k``. DP-SGD runs
  through :func:`deidlib.privacy.dpsgd.train_dp` (unit = sentence, seeded noise for
  reproducibility: the ε does not hold against anyone holding the seed). The guarantee is per
  *sentence*; patient membership is reported as well because it is what a patient cares about.
  The ``k`` copies of a canary are ``k`` units, so the per-sentence ε bounds a ``k``-copy
  canary only through group privacy (``k·ε``). The frontier's membership point is the
  stronger (higher TPR at 1 % FPR) of the two sentence-level attacks.
* **DSSGD** (:func:`dssgd_rows`): two sites (the population's patients halved), the festag
  tagger with *trainable* word embeddings (the festag preset freezes them, which hides the word
  leak from the parameter vector; stated), one DSSGD run per θ_u and per DP-upload ε for
  utility, and the word-reconstruction attack (:mod:`deidlib.audits.reconstruction`) on the
  first upload of site 1 (one local epoch from the shared initialisation: the first upload of
  round 1).
* **Surrogates** (:func:`surrogate_rows`): the surrogate engine at each ε and memo scope on the
  population's documents; utility = F1 on the *original* test notes of a tagger trained on the
  surrogate notes; attacks = note linkage by shared surrogate names/places and equal-value
  disclosure (:mod:`deidlib.audits.linkage`).
* **ε audits** (:func:`epsilon_audits`): the white-box one-step audit of the DP-SGD noise at
  every σ of the study (and a deliberately broken mechanism, noise 10× smaller than claimed,
  which must exceed its claim), and the one-run audit of ``train_dp`` (Steinke, Nasr &
  Jagielski 2023; :mod:`deidlib.audits.one_run`, :func:`one_run_audit`): ``one_run_canaries``
  Dirac gradient canaries, each in the training set with probability 1/2, one full-batch
  ``train_dp`` run of ``one_run_steps`` steps with σ calibrated to each ε of
  ``one_run_epsilons`` on ``one_run_sentences`` population sentences, and the same run with the
  noise 10× smaller than the ledger claims at ``one_run_broken_epsilon`` (which must exceed its
  claim). Every correct mechanism's lower bound must stay at or below the accountant's ε; the
  study raises if one does not (a bug).
* **Pseudonymization** (:func:`pseudonym_rows`, Friedrich et al. §4): the population's
  sentences with every PHI word replaced by one of its N nearest GloVe 6B-50d neighbours, per N
  of ``pseudonym_ns``; utility = F1 on the original test notes of a tagger trained on them;
  attack = recovery of the original word from its pseudonym (:mod:`deidlib.audits.recovery`).
* **Adversarial representation (friedrich §5, notebook 06)** (:func:`representation_rows`):
  :func:`deidlib.studies.friedrich.adversarial.adversarial_run` (three-phase training at
  N = ``representation_n``) and :func:`~deidlib.studies.friedrich.adversarial.control_runs` (the
  two controls without privacy training: ``control raw``, R = the public GloVe vectors, and
  ``control P1``, a noise-free BiLSTM trained on de-identification only: the non-private
  reference) on friedrich's own synthetic corpus at the audit's profile, with the overrides
  ``friedrich`` (:func:`friedrich_params`; the cpu profile pins notebook 06's cpu scale: one N
  and the three-phase procedure where notebook 06 sweeps four N and DANN).
  Attack: the frozen-representation adversary on held-out real/fake pairs (accuracy, chance
  0.5); utility: the head's binary-token F1 on the raw test sentences.
* **Shared layers (alawad, notebook 07)** (:func:`shared_layer_rows`):
  :func:`deidlib.studies.alawad.run_study` with the approaches ``shared_private`` (the shared
  layers trained against a registry discriminator), ``shared_private_no_adv`` (the same with
  λ = 0: the adversary's control) and ``centralized`` (one CNN on the pooled reports: the
  non-private reference, its whole encoder attacked), with the overrides ``alawad``
  (:func:`alawad_params`). Attack: a fresh registry classifier trained on the frozen shared
  features of half the test reports, scored on the other half (accuracy; chance
  1/``n_registries``; the class-label floor, how often a report's class alone names its
  registry, is drawn too). Utility: micro F1 of the *subsite classification* of pathology
  reports (not de-identification), its cost against the centralized CNN.

The two representation attacks have their own metrics and chance levels: each is its own
family (:data:`FAMILIES`), one panel each. :data:`METHODS` lists every privacy method of the
package with its family; :func:`missing_methods` names those a frontier lacks (the notebook
refuses a frontier that lacks one).

One vocabulary per experiment (all population words and all canary candidates): the
vocabulary itself is not what is audited (see :mod:`deidlib.audits.canary`).
"""

from __future__ import annotations

import copy
import math
import time
import warnings
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, TypedDict

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch

from ..audits import (
    attack_scores,
    audit_dp_step,
    audit_train_dp_one_run,
    batch_rows,
    canary_exposure,
    canary_words,
    embedding_slice,
    equal_value_disclosure,
    group_scores,
    insert_canaries,
    lira_offline_scores,
    loss_scores,
    make_canaries,
    neighbour_recovery,
    note_linkage,
    raise_if_violated,
    reconstruction_prf,
    recovered_rows,
    sentence_losses,
)
from ..collaborative import DSSGD, DSSGDConfig, simulate, tagger_trainer
from ..collaborative.dp_upload import UploadLedger
from ..collaborative.dssgd import flatten_parameters, make_generator
from ..collaborative.worker_upload import worker_upload
from ..corpus.labels import tag_set, tagged_sentences
from ..corpus.splits import subsample
from ..datasets import load_corpus
from ..models import Featurizer, build_tagger
from ..plotting import style
from ..privacy.accounting import noise_for_epsilon
from ..privacy.dpsgd import train_dp
from ..results import fingerprint_documents
from ..rng import derive_seed
from ..surrogates.engine import SurrogateEngine
from ..training import evaluate_tagger, train
from .dp_recipes import RECIPES, build_recipe_tagger, train_recipe, with_overrides
from .festag import binary_token_evaluator
from .params import StudyParams, profiles
from .seed_stats import paired_effect

__all__ = [
    "AuditParams", "PROFILE_PARAMS", "params_for", "AuditData", "prepare_data", "make_tagger", "fit",
    "membership_setting", "recipe_setting", "dssgd_rows", "surrogate_rows", "epsilon_audits", "one_run_audit", "frontier_table",
    "plot_frontier", "run_study", "pseudonym_rows", "AuditResults", "seed_table", "method_statements", "FAMILIES",
    "PROTECTS", "METHODS", "missing_methods", "representation_rows", "shared_layer_rows", "friedrich_params",
    "alawad_params",
]

SCHEME, ENCODING = "binary", "BIO"

#: attack families, one frontier panel each (a family's success metric is one metric: no panel mixes two)
FAMILIES = ("membership", "canary exposure", "reconstruction", "word recovery", "linkage",
            "representation (real/fake pairs)", "representation (registry)")

#: every privacy method of the package (with its non-private references and controls) and the
#: family it is attacked in: the frontier must hold each on every seed (:func:`missing_methods`)
METHODS: tuple[tuple[str, str], ...] = (
    ("non-private (festag)", "membership"),
    ("DP-SGD from scratch (festag)", "membership"),
    ("non-private ({recipe} recipe)", "membership"),
    ("DP-SGD ({recipe} recipe)", "membership"),
    ("DSSGD", "reconstruction"),
    ("DSSGD + DP upload", "reconstruction"),
    ("pseudonymization", "word recovery"),
    ("surrogates", "linkage"),
    ("adversarial representation (friedrich §5)", "representation (real/fake pairs)"),
    ("non-private (friedrich §5)", "representation (real/fake pairs)"),
    ("raw public vectors (friedrich §5 control)", "representation (real/fake pairs)"),
    ("shared layers (alawad)", "representation (registry)"),
    ("shared layers, no adversary (alawad)", "representation (registry)"),
    ("non-private (alawad)", "representation (registry)"),
)

#: the non-private row each method's F1 cost is measured against, where the name does not say it
REFERENCES = {"raw public vectors (friedrich §5 control)": "non-private (friedrich §5)"}

#: what each method protects: (unit, threat); keyed by the method's name in the frontier
PROTECTS: dict[str, tuple[str, str]] = {
    "non-private (festag)": ("nothing", "—"),
    "DP-SGD from scratch (festag)": (
        "one training sentence ((ε, δ)-DP of the weights; a k-copy canary only k·ε; the tagger's word list is "
        "built from training words and not protected)",
        "anyone holding the released weights (white box)"),
    "non-private ({recipe} recipe)": ("nothing (the same lots and optimiser, no noise, no clipping)", "—"),
    "DP-SGD ({recipe} recipe)": (
        "one training sentence of the head's DP training ((ε, δ)-DP; a k-copy canary only k·ε); the frozen encoder "
        "and its WordPiece vocabulary are public and saw no private text",
        "anyone holding the released weights (white box)"),
    "DSSGD": ("nothing formal: θ_u is the share of the update uploaded", "the server reading a site's uploads"),
    "DSSGD + DP upload": ("each uploaded entry (ε per upload, Shokri & Shmatikov's per-entry noise)",
                          "the server reading a site's uploads"),
    "pseudonymization": ("a PHI word of the released training text: moved to one of its N nearest GloVe neighbours "
                         "(itself included), no formal guarantee", "a reader of the released sentences"),
    "surrogates": ("the original value behind one surrogate (ε·d: metric DP of the value)",
                   "a reader of the released notes"),
    "adversarial representation (friedrich §5)": (
        "nothing formal: the representation of a sentence is trained so that an adversary cannot tell it from the "
        "same sentence with one PHI word replaced by one of its N − 1 nearest GloVe neighbours",
        "anyone holding sentences' representations (the frozen-representation adversary)"),
    "non-private (friedrich §5)": ("nothing (control P1: a noise-free BiLSTM trained on de-identification only)",
                                   "—"),
    "raw public vectors (friedrich §5 control)": ("nothing (control raw: R = the public GloVe vectors)", "—"),
    "shared layers (alawad)": (
        "nothing formal: the shared layers (the only parameters that leave a registry) are trained against a "
        "registry discriminator so that their features should not name a report's registry",
        "anyone holding the shared layers (every other registry)"),
    "shared layers, no adversary (alawad)": ("nothing (the same shared layers trained with λ = 0: the control)",
                                             "anyone holding the shared layers (every other registry)"),
    "non-private (alawad)": ("nothing (one CNN on the pooled reports; its whole encoder is attacked)", "—"),
}


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


# ------------------------------------------------------------------------------ data
@dataclass
class AuditData:
    docs: list  # population documents (whole patients)
    sentences: list  # their tagged sentences
    patients: list  # patient id of every sentence
    test_docs: list
    test_sentences: list
    fingerprint: str


def prepare_data(params: AuditParams, seed: int = 0) -> AuditData:
    """The population (patients of the training split in a seeded order, at most
    ``max_patient_sentences`` seeded sentences each, up to ``max_pool_sentences`` sentences)
    and the test documents. ``docs`` are the population patients' documents (surrogates)."""
    sp = load_corpus("synthetic", profile=params.profile, seed=seed, patients=params.patients, split="patient")
    by_patient: dict[str, list] = {}
    for d in sp.train:
        by_patient.setdefault(d.patient_id, []).append(d)
    order = np.random.default_rng(derive_seed(seed, "audits-population")).permutation(sorted(by_patient))
    docs, sents, pats = [], [], []
    for p in order:
        ss = [s for s in tagged_sentences(by_patient[p], SCHEME, ENCODING) if s.tokens]
        ss = subsample(ss, params.max_patient_sentences, derive_seed(seed, "audits-patient", str(p)))
        if sents and len(sents) + len(ss) > params.max_pool_sentences:
            break
        docs.extend(by_patient[p])
        sents.extend(ss)
        pats.extend([str(p)] * len(ss))
    test_docs = subsample(list(sp.test), params.max_eval_documents, derive_seed(seed, "audits-eval"))
    test = [s for s in tagged_sentences(test_docs, SCHEME, ENCODING, use_spans=False) if s.tokens]
    return AuditData(docs, sents, pats, test_docs, test, fingerprint_documents([*sp.train, *test_docs]))


def make_tagger(featurizer: Featurizer, params: AuditParams, seed: int):
    """An untrained tagger of ``params.kind`` over ``featurizer``."""
    t = build_tagger(params.kind, featurizer, seed=seed, **params.tagger)
    t.task = {"scheme": SCHEME, "encoding": ENCODING, "mode": "default"}
    return t


def _featurizer(words_of, extra=()) -> Featurizer:
    return Featurizer.build(words_of, tag_set(SCHEME, ENCODING), min_count=1, extra_words=extra)


def fit(tagger, sentences, params: AuditParams, noise: float | None, seed: int, *, epochs: float | None = None,
        batch_size: float | None = None, accountant: str | None = None):
    """Train in place: the ordinary trainer (``noise=None``) or DP-SGD at σ = ``noise``
    (seeded, ``secure=False``). Returns the ledger (None if non-private). ``accountant``
    overrides the ledger's accountant."""
    epochs = params.epochs if epochs is None else epochs
    bs = params.batch_size if batch_size is None else batch_size
    if noise is None:
        train(tagger, sentences, None, None, epochs=max(1, round(epochs)), batch_size=int(bs),
              optimizer=params.optimizer, lr=params.lr, clip=params.max_grad_norm, seed=seed, progress=False)
        return None
    _, ledger = train_dp(tagger, sentences, None, None, epochs=epochs, batch_size=bs, noise_multiplier=noise,
                         delta=params.delta, max_grad_norm=params.max_grad_norm,
                         accountant=accountant or params.accountant,
                         optimizer=params.optimizer, lr=params.lr, seed=seed, progress=False,
                         eval_every=10**9, secure=False)
    return ledger


# ------------------------------------------------------------------------ membership
def _half(patients, seed: int, tag: str) -> dict[str, bool]:
    """A seeded random half of the patients (exactly ⌈n/2⌉ in, so both sides are never empty)."""
    ids = sorted(set(patients))
    if len(ids) < 2:
        raise ValueError(f"the membership game needs at least 2 patients in the population, got {len(ids)}")
    perm = np.random.default_rng(derive_seed(seed, "audits-coin", tag)).permutation(len(ids))
    inside = set(perm[: (len(ids) + 1) // 2].tolist())
    return {p: i in inside for i, p in enumerate(ids)}


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
    from .dp_recipes import pretrain_public

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


# ----------------------------------------------------------------------------- DSSGD
def dssgd_rows(data: AuditData, params: AuditParams, *, seed: int = 0) -> list[dict[str, Any]]:
    """Utility of DSSGD per θ_u (and per DP-upload ε at the largest θ_u) and the word
    reconstruction from site 1's first upload."""
    half = _half(data.patients, seed, "dssgd-sites")
    sites = [[s for s, p in zip(data.sentences, data.patients) if half[p] == b] for b in (True, False)]
    fz = _featurizer([s.words for s in data.sentences])

    def factory(init_seed: int):
        return make_tagger(fz, params, int(init_seed) & 0x7FFF_FFFF)

    trainer = tagger_trainer(lr=params.dssgd_lr, batch_size=1, grad_clip=params.max_grad_norm)
    evaluate = binary_token_evaluator(data.test_sentences)
    settings = [(tu, None) for tu in params.dssgd_theta_us]
    settings += [(max(params.dssgd_theta_us), e) for e in params.dssgd_dp_epsilons]
    rows = []
    true_rows = batch_rows(fz, sites[0])
    for theta_u, eps in settings:
        t0 = time.perf_counter()
        cfg = DSSGDConfig(theta_u=theta_u, dp_epsilon=eps)
        hist = simulate(DSSGD(cfg), sites, model_factory=factory, trainer=trainer, evaluate=evaluate,
                        epochs=params.dssgd_epochs, seed=seed, names=["site1", "site2"])
        last = [r for r in hist.records if r["epoch"] == params.dssgd_epochs]
        # the attack: site 1's first upload (one local epoch from the shared initialisation)
        model = factory(derive_seed(seed, "init"))
        before = flatten_parameters(model)
        trainer(model, sites[0], seed=derive_seed(seed, "dssgd-attack"))
        update = flatten_parameters(model) - before
        ledger = UploadLedger("site1") if eps is not None else None
        idx, vals = worker_upload(update, theta_u=cfg.theta_u, gamma=cfg.gamma, tau=cfg.tau,
                                  generator=make_generator(derive_seed(seed, "dssgd-upload")),
                                  dp_epsilon=eps, ledger=ledger)
        rec = reconstruction_prf(recovered_rows(idx, vals, embedding_slice(model)), true_rows)
        rows.append({
            "theta_u": theta_u, "dp_epsilon_per_upload": eps if eps is not None else math.inf,
            "f1": float(np.mean([r["f1"] for r in last])),
            **{f"reconstruction_{k}": v for k, v in rec.items()},
            "vocabulary": fz.num_words - 2, "seconds": time.perf_counter() - t0,
        })
    return rows


# ------------------------------------------------------------------------ surrogates
def surrogate_rows(data: AuditData, params: AuditParams, *, seed: int = 0) -> list[dict[str, Any]]:
    """Per surrogate ε and memo scope: utility of a tagger trained on the surrogate notes
    (F1 on the original test notes) and the linkage attacks on the release; plus the same
    attacks on the original notes (``epsilon = 0``, the ceiling: nothing replaced)."""
    rows = []
    for eps in params.surrogate_epsilons:
        for scope in ("document", "patient"):
            t0 = time.perf_counter()
            eng = SurrogateEngine(seed=derive_seed(seed, "audits-surrogates"), epsilon=eps, memo_scope=scope)
            docs, records = eng.surrogate_documents(data.docs)
            sents = [s for s in tagged_sentences(docs, SCHEME, ENCODING) if s.tokens]
            sents = subsample(sents, len(data.sentences), derive_seed(seed, "audits-sur-cap"))
            tagger = make_tagger(_featurizer([s.words for s in sents]), params, derive_seed(seed, "audits-sur"))
            fit(tagger, sents, params, None, derive_seed(seed, "audits-sur-train"))
            f = evaluate_tagger(tagger, data.test_docs)[2]
            link = note_linkage(records)
            eq = equal_value_disclosure(records)
            rows.append({"epsilon": eps, "memo_scope": scope, "f1": f,
                         **{f"linkage_{k}": v for k, v in link.items()},
                         **{f"equal_value_{k}": v for k, v in eq.items()},
                         "seconds": time.perf_counter() - t0})
            if eps == params.surrogate_epsilons[0] and scope == "document":
                ceil = note_linkage(records, field="original")
                rows.append({"epsilon": 0.0, "memo_scope": "none (original notes)", "f1": math.nan,
                             **{f"linkage_{k}": v for k, v in ceil.items()}})
    return rows


# ------------------------------------------------------------------- pseudonymization
def pseudonym_rows(data: AuditData, params: AuditParams, index, *, seed: int = 0) -> list[dict[str, Any]]:
    """Per N of ``pseudonym_ns``: the population's sentences pseudonymized (Friedrich et al.
    §4, :func:`deidlib.privacy.pseudonymize.pseudonymize`, seeded, not shuffled so that the
    attack can be scored), utility of a tagger trained on them (F1 on the original test notes),
    and the nearest-neighbour recovery of the original PHI words
    (:func:`deidlib.audits.recovery.neighbour_recovery`, ``pseudonym_guesses`` guesses).
    ``index``: a :class:`~deidlib.embeddings.neighbours.NeighbourIndex` over GloVe 6B-50d."""
    from ..privacy.pseudonymize import pseudonymize

    rows = []
    for n in params.pseudonym_ns:
        t0 = time.perf_counter()
        released, st = pseudonymize(data.sentences, index, n, seed=derive_seed(seed, "audits-pseudo", n),
                                     shuffle=False)
        tagger = make_tagger(_featurizer([s.words for s in released]), params, derive_seed(seed, "audits-pseudo-init"))
        fit(tagger, released, params, None, derive_seed(seed, "audits-pseudo-train"))
        rec = neighbour_recovery(data.sentences, released, index, params.pseudonym_guesses)
        rows.append({"n": n, "seed": seed, "f1": evaluate_tagger(tagger, data.test_docs)[2],
                     **{f"recovery_{k}": v for k, v in rec.items()}, "phi_tokens": st.phi_tokens,
                     "replaced": st.replaced, "oov": st.oov, "seconds": time.perf_counter() - t0})
    return rows


# ------------------------------------------------------------- representations
def friedrich_params(params: AuditParams):
    """Notebook 06's parameters at the audit's profile with the overrides ``params.friedrich``;
    the controls are attacked at ``representation_n`` only."""
    from .friedrich.params import params_for as friedrich_params_for

    return friedrich_params_for(params.profile, **{"control_neighbours": (params.representation_n,),
                                                   **params.friedrich})


def alawad_params(params: AuditParams):
    """Notebook 07's parameters at the audit's profile with the overrides ``params.alawad``."""
    from .alawad import params_for as alawad_params_for

    return alawad_params_for(params.profile, **params.alawad)


def representation_rows(params: AuditParams, *, seed: int = 0) -> list[dict[str, Any]]:
    """Friedrich §5 on one seed through notebook 06's functions: the three-phase adversarial
    representation at N = ``representation_n`` and the two controls without privacy training,
    each attacked by the frozen-representation adversary (held-out real/fake pairs). One row per
    representation: ``procedure``, ``n``, ``f1`` (the head's binary-token F1 on the raw test
    sentences), ``adversary_accuracy`` (chance 0.5), ``adversary_pairs``, ``seconds``, ``seed``."""
    from ..embeddings.neighbours import NeighbourIndex
    from .friedrich.adversarial import adversarial_run, control_runs
    from .friedrich.common import load_embeddings
    from .friedrich.common import prepare_data as friedrich_data

    fp = friedrich_params(params)
    data = friedrich_data(fp, seed=seed)
    emb = load_embeddings("glove", fp, seed=seed)
    index = NeighbourIndex(emb)
    runs = [adversarial_run(data, emb, index, params.representation_n, fp, procedure="three_phase", seed=seed),
            *control_runs(data, emb, index, fp, seed=seed)]
    keep = ("procedure", "n", "f1", "adversary_accuracy", "adversary_train_accuracy", "adversary_pairs", "seconds")
    return [{**{k: r[k] for k in keep}, "seed": seed, "train_sentences": len(data.train),
             "test_sentences": len(data.test)} for r in runs if r["n"] == params.representation_n]


#: notebook 07's approaches joined into the frontier: the method, the non-private reference and the control
SHARED_APPROACHES = ("shared_private", "shared_private_no_adv", "centralized")


def shared_layer_rows(params: AuditParams, *, seed: int = 0) -> list[dict[str, Any]]:
    """Alawad on one seed through notebook 07's :func:`~deidlib.studies.alawad.run_study`
    (approaches :data:`SHARED_APPROACHES`): per approach the micro/macro F1 of the subsite
    classification and the fresh registry classifier's accuracy on the frozen shared features
    (centralized: its whole encoder), with chance (1/registries), the majority-registry rate and
    the class-label floor of that seed."""
    from .alawad import run_study as alawad_study

    ap = alawad_params(params)
    res = alawad_study(ap, seeds=[seed], approaches=SHARED_APPROACHES, progress=False)
    att = pd.DataFrame(res["attack"])
    floor = float(att[att.approach == "label_only"].accuracy.iloc[0])
    fresh = att[att.attacker == "fresh classifier, frozen features"].set_index("approach")
    rows = []
    for sc in res["scores"]:
        a = fresh.loc[sc["approach"]]
        rows.append({"approach": sc["approach"], "seed": seed, "micro": sc["micro"], "macro": sc["macro"],
                     "registry_accuracy": float(a.accuracy), "chance": float(a.chance), "majority": float(a.majority),
                     "class_label_floor": floor, "n_test": int(a.n_test), "registries": ap.n_registries,
                     "adv_weight": ap.adv_weight if sc["approach"] == "shared_private" else 0.0,
                     "seconds": sc["seconds"]})
    return rows


# ------------------------------------------------------------------------- ε audits
def one_run_audit(data: AuditData, params: AuditParams, target_epsilon: float, *, seed: int = 0,
                  actual_noise: float | None = None, train_dp_fn=None) -> dict[str, Any]:
    """The one-run audit of :func:`~deidlib.privacy.dpsgd.train_dp` (Steinke, Nasr & Jagielski
    2023; :func:`deidlib.audits.one_run.audit_train_dp_one_run`): the first ``one_run_sentences``
    population sentences plus ``one_run_canaries`` Dirac gradient canaries (each in with
    probability 1/2), one full-batch run of ``one_run_steps`` steps at the σ calibrated to
    ``target_epsilon`` (params' δ, accountant and C; seeded). ``actual_noise`` (a fraction of the
    calibrated σ) runs a deliberately broken mechanism; ``train_dp_fn`` replaces ``train_dp``
    (a test passes a mutant)."""
    base = data.sentences[: params.one_run_sentences]

    def make_base(extra_words):
        fz = _featurizer([s.words for s in base], extra_words)
        return make_tagger(fz, params, derive_seed(seed, "one-run-init"))

    a = audit_train_dp_one_run(
        make_base, base, canaries=params.one_run_canaries, target_epsilon=target_epsilon,
        steps=params.one_run_steps, delta=params.delta, accountant=params.accountant,
        max_grad_norm=params.max_grad_norm, seed=derive_seed(seed, "one-run", target_epsilon, actual_noise or 0.0),
        actual_noise_multiplier=actual_noise, train_dp=train_dp_fn)
    return a.to_dict()


def epsilon_audits(data: AuditData, params: AuditParams, *, seed: int = 0) -> pd.DataFrame:
    """One-step white-box audits at every σ (and one broken mechanism), the one-run audits of
    ``train_dp`` (and one broken run); raises if a correct mechanism's lower bound exceeds its
    accountant ε (a bug, :func:`deidlib.audits.epsilon.raise_if_violated`)."""
    rows = []
    for s in params.dp_noises:
        a = audit_dp_step(s, trials=params.step_audit_trials, delta=params.delta, accountant="rdp",
                          seed=derive_seed(seed, "audit-step", s))
        rows.append({"audit": "one DP-SGD step (gradient canary)", **a.to_dict(), "broken": False})
    # the broken mechanism claims the largest σ (smallest ε): with 2×1000 trials the audit can
    # prove at most ≈ 5.6, so a claim above that could not be caught whatever the noise
    s = max(params.dp_noises)
    a = audit_dp_step(s, actual_noise_multiplier=s / 10, trials=params.step_audit_trials, delta=params.delta,
                      accountant="rdp", seed=derive_seed(seed, "audit-broken"))
    rows.append({"audit": "one DP-SGD step, noise 10x too small (deliberately broken)", **a.to_dict(),
                 "broken": True})
    for eps in params.one_run_epsilons:
        rows.append({**one_run_audit(data, params, eps, seed=seed), "broken": False})
    eps = params.one_run_broken_epsilon
    sigma = noise_for_epsilon(eps, 1.0, params.one_run_steps, params.delta, params.accountant)
    b = one_run_audit(data, params, eps, seed=seed, actual_noise=sigma / 10)
    rows.append({**b, "audit": b["audit"] + ", noise 10x too small (deliberately broken)", "broken": True})
    df = pd.DataFrame(rows)
    raise_if_violated(df.to_dict("records"))
    return df


# --------------------------------------------------------------------------- summary
def _exposure_metric(canaries: list[dict]) -> str:
    return f"exposure (bits) of the k={max(c['copies'] for c in canaries)} canaries"


#: the utility of every row but alawad's (``utility_metric``)
UTILITY = "binary-token F1 (test)"
#: alawad's utility: its task is the subsite classification of pathology reports, not de-identification
ALAWAD_UTILITY = "micro F1 (subsite classification, test)"
_FRIEDRICH = {"three_phase": ("adversarial representation (friedrich §5)", "three-phase, N={n}"),
              "control P1": ("non-private (friedrich §5)", "control P1 (BiLSTM, de-id only)"),
              "control raw": ("raw public vectors (friedrich §5 control)", "control raw (R = GloVe)")}
_ALAWAD = {"shared_private": ("shared layers (alawad)", "shared–private CNN, λ={w:g}"),
           "shared_private_no_adv": ("shared layers, no adversary (alawad)", "λ=0 (control)"),
           "centralized": ("non-private (alawad)", "centralized CNN (whole encoder)")}


def _representation_seed_rows(res: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for r in res.get("representations", []):
        method, setting = _FRIEDRICH[r["procedure"]]
        rows.append({"method": method, "setting": setting.format(n=r["n"]), "seed": r["seed"], "epsilon": math.nan,
                     "utility_f1": r["f1"], "utility_metric": UTILITY, "family": "representation (real/fake pairs)",
                     "attack": "frozen-representation adversary (held-out real/fake pairs)",
                     "attack_metric": "accuracy on held-out real/fake pairs", "attack_success": r["adversary_accuracy"],
                     "attack_chance": 0.5, "status": "measured"})
    for r in res.get("shared_layers", []):
        method, setting = _ALAWAD[r["approach"]]
        rows.append({"method": method, "setting": setting.format(w=r["adv_weight"]), "seed": r["seed"],
                     "epsilon": math.nan, "utility_f1": r["micro"], "utility_metric": ALAWAD_UTILITY,
                     "family": "representation (registry)",
                     "attack": "fresh registry classifier on the frozen shared features",
                     "attack_metric": "registry accuracy (held-out reports)", "attack_success": r["registry_accuracy"],
                     "attack_chance": r["chance"], "attack_floor": r["class_label_floor"], "status": "measured"})
    return rows


def seed_table(res: dict[str, Any]) -> pd.DataFrame:
    """One row per method, setting, attack family and seed: the utility (``utility_metric``:
    binary-token F1, alawad's subsite micro F1) and the attack's success in that family's metric
    (``attack_metric``; ``attack_chance`` and ``attack_floor`` where the attack has them)."""
    rows = []
    for m in res["membership"]:
        base = {"method": m["method"], "setting": m["setting"], "seed": m.get("seed", 0), "epsilon": m["epsilon"],
                "utility_f1": m["utility"]["f1"], "status": "measured"}
        sent = [r for r in m["membership"] if r["level"] == "sentence"]
        best = max(sent, key=lambda r: r["tpr@1%"])
        pat = [r for r in m["membership"] if r["level"] == "patient"]
        rows.append({**base, "family": "membership", "attack": "membership per sentence (loss, offline LiRA)",
                     "attack_metric": "TPR@1%FPR", "attack_success": best["tpr@1%"],
                     "strongest_attack": best["attack"], "tpr@0.1%": max(r["tpr@0.1%"] for r in sent),
                     "auc": max(r["auc"] for r in sent), "patient_auc": max(r["auc"] for r in pat),
                     "references": m.get("references", math.nan)})
        if m["canaries"]:
            k = max(c["copies"] for c in m["canaries"])
            rows.append({**base, "family": "canary exposure", "attack": "canary exposure (rank of the secret)",
                         "attack_metric": _exposure_metric(m["canaries"]),
                         "attack_success": float(np.mean([c["exposure"] for c in m["canaries"] if c["copies"] == k])),
                         "max_exposure": max(c["max_exposure"] for c in m["canaries"])})
    for d in res["dssgd"]:
        dp = math.isfinite(d["dp_epsilon_per_upload"])
        rows.append({"method": "DSSGD + DP upload" if dp else "DSSGD", "seed": d.get("seed", 0),
                     "setting": f"θ_u={d['theta_u']:g}" + (f", ε/upload={d['dp_epsilon_per_upload']:g}" if dp else ""),
                     "epsilon": d["dp_epsilon_per_upload"] if dp else math.inf, "utility_f1": d["f1"],
                     "family": "reconstruction", "attack": "word reconstruction (site 1, first upload)",
                     "attack_metric": "F1 of recovered words", "attack_success": d["reconstruction_f1"],
                     "status": "measured"})
    for p in res.get("pseudonyms", []):
        rows.append({"method": "pseudonymization", "setting": f"N={p['n']}", "seed": p.get("seed", 0),
                     "epsilon": math.nan, "utility_f1": p["f1"], "family": "word recovery",
                     "attack": "original PHI word from its pseudonym (nearest neighbours)",
                     "attack_metric": "share of PHI words recovered", "attack_success": p["recovery_recovered"],
                     "status": "measured"})
    for s in res["surrogates"]:
        if s["memo_scope"].startswith("none"):
            continue
        rows.append({"method": "surrogates", "setting": f"ε={s['epsilon']:g}, memo={s['memo_scope']}",
                     "seed": s.get("seed", 0), "epsilon": s["epsilon"], "utility_f1": s["f1"], "family": "linkage",
                     "attack": "note linkage (names/places)", "attack_metric": "F1 of same-patient note pairs",
                     "attack_success": s["linkage_f1"], "status": "measured"})
    rows += _representation_seed_rows(res)
    df = pd.DataFrame(rows)
    if len(df):
        df["utility_metric"] = df["utility_metric"].fillna(UTILITY) if "utility_metric" in df else UTILITY
    return df


def frontier_table(res: dict[str, Any]) -> pd.DataFrame:
    """One row per method, setting and attack family: mean over seeds of the utility and of
    the attack's success, with their min–max over seeds (``*_lo``, ``*_hi``)."""
    st = seed_table(res)
    rows = []
    if len(st):
        keys = ["method", "setting", "family", "attack", "attack_metric", "utility_metric", "status"]
        extra = [c for c in ("tpr@0.1%", "auc", "patient_auc", "max_exposure", "references", "attack_chance",
                             "attack_floor") if c in st]
        for key, g in st.groupby(keys, sort=False, dropna=False):
            row = dict(zip(keys, key))
            row.update({"seeds": len(g), "epsilon": float(g.epsilon.mean()),
                        "utility_f1": float(g.utility_f1.mean()), "utility_lo": float(g.utility_f1.min()),
                        "utility_hi": float(g.utility_f1.max()), "attack_success": float(g.attack_success.mean()),
                        "attack_lo": float(g.attack_success.min()), "attack_hi": float(g.attack_success.max())})
            row.update({c: float(g[c].mean()) for c in extra})
            if "strongest_attack" in g and g.strongest_attack.notna().any():
                row["strongest_attack"] = "/".join(sorted(set(g.strongest_attack.dropna())))
            rows.append(row)
    return pd.DataFrame(rows)


def missing_methods(frontier: pd.DataFrame, seeds: int, recipe: str = AuditParams.dp_recipe) -> list[str]:
    """The methods of :data:`METHODS` that ``frontier`` lacks in their family, or holds on fewer
    than ``seeds`` seeds in one of their settings (empty: the frontier is complete)."""
    out = []
    for method, family in METHODS:
        name = method.format(recipe=recipe)
        rows = frontier[(frontier.method == name) & (frontier.family == family)] if len(frontier) else frontier
        if not len(rows) or (rows.seeds < seeds).any():
            out.append(f"{name} ({family})")
    return out


def _reference(method: str) -> str:
    """The non-private row whose F1 a method's F1 cost is measured against."""
    if method in REFERENCES:
        return REFERENCES[method]
    if method.endswith(" recipe)"):
        return "non-private (" + method.split("(", 1)[1]
    if "(" in method:
        return "non-private (" + method.split("(", 1)[1]
    return f"non-private ({AuditParams.kind})"


def _protects(method: str) -> tuple[str, str]:
    if method in PROTECTS:
        return PROTECTS[method]
    for key, v in PROTECTS.items():
        head, _, tail = key.partition("{recipe}")
        if tail and method.startswith(head) and method.endswith(tail):
            return v
    return ("not stated", "not stated")


def _fmt(mean: float, lo: float, hi: float, digits: int = 3) -> str:
    if not math.isfinite(mean):
        return "—"
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo == hi:
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} [{lo:.{digits}f}–{hi:.{digits}f}]"


def method_statements(res: dict[str, Any]) -> pd.DataFrame:
    """Per method and setting, from the run's numbers: what it protects (unit, threat), what
    each attack found (mean [min–max over seeds]), its F1 and its F1 cost against its
    non-private reference (mean paired difference over seeds with its 95 % t interval,
    :func:`deidlib.studies.seed_stats.paired_effect`), in the row's own utility metric (alawad:
    the micro F1 of its subsite classification). A reference with one setting is that setting;
    an attack with a chance level or a floor states it next to its result."""
    st = seed_table(res)
    if not len(st):
        return pd.DataFrame(columns=["method", "setting", "protects", "threat", "attack found", "F1", "F1 cost",
                                     "reference", "utility"])
    f1 = st.drop_duplicates(["method", "setting", "seed"]).set_index(["method", "setting", "seed"]).utility_f1.sort_index()
    settings = st.groupby("method", sort=False).setting.unique()
    rows = []
    for (method, setting), g in st.groupby(["method", "setting"], sort=False):
        found = []
        for (attack, metric), a in g.groupby(["attack", "attack_metric"], sort=False):
            text = f"{attack}: {metric} {_fmt(a.attack_success.mean(), a.attack_success.min(), a.attack_success.max())}"
            levels = [f"{name} {a[col].mean():.3f}" for col, name in (("attack_chance", "chance"),
                                                                      ("attack_floor", "class-label floor"))
                      if col in a and a[col].notna().any()]
            found.append(text + (f" ({', '.join(levels)})" if levels else ""))
        mine = f1.loc[(method, setting)]
        ref = _reference(method)
        cost, ref_name = "—", "—"
        if ref != method and ref in settings and len(settings[ref]) == 1:
            r = f1.loc[(ref, settings[ref][0])]
            common = sorted(set(mine.index) & set(r.index))
            e = paired_effect([r[s] for s in common], [mine[s] for s in common])
            cost, ref_name = f"{_fmt(e['mean'], e['lo'], e['hi'])} (n={e['n']})", ref
        unit, threat = _protects(method)
        rows.append({"method": method, "setting": setting, "protects": unit, "threat": threat,
                     "attack found": "; ".join(found), "F1": _fmt(mine.mean(), mine.min(), mine.max()),
                     "F1 cost": cost, "reference": ref_name, "utility": g.utility_metric.iloc[0]})
    return pd.DataFrame(rows)


@style()
def plot_frontier(frontier: pd.DataFrame, title: str = "utility vs attack success", seed: int | None = None):
    """The frontier: utility against attack success, one panel per attack metric (each family
    has one; the metrics are not comparable, so they never share an axis), each panel's utility
    axis labelled with its rows' utility metric (binary-token F1; alawad: subsite micro F1), one
    marker per method, each point labelled with its setting and, where the table has them, bars
    for the min–max over seeds and dotted lines at the attack's chance level and floor; ``seed``
    (or a seeds text) is stated under the title."""
    from .labels import place_labels

    f = frontier[frontier.status == "measured"]
    order = {fam: i for i, fam in enumerate(FAMILIES)}
    if "family" in f:
        f = f.assign(_o=f.family.map(order).fillna(len(order))).sort_values("_o", kind="stable")
    families = list(dict.fromkeys(f.attack_metric)) or ["attack success"]
    ncols = min(len(families), 4)
    nrows = -(-len(families) // ncols)
    fig, grid = plt.subplots(nrows, ncols, figsize=(4.2 * ncols + 0.6, 4.6 * nrows), squeeze=False)
    axes = grid.ravel()
    for ax in axes[len(families):]:
        ax.remove()
    markers = {"non-private": "*", "DP-SGD": "o", "DP-SGD from scratch": "o", "DSSGD": "s",
               "DSSGD + DP upload": "D", "surrogates": "^", "pseudonymization": "v",
               "adversarial representation": "h", "raw public vectors": "x", "shared layers": "h",
               "shared layers, no adversary": "d"}
    bars = {"utility_lo", "utility_hi", "attack_lo", "attack_hi"} <= set(f.columns)
    labels = []
    for ax, metric in zip(axes, families):
        d_fam = f[f.attack_metric == metric]
        for method, d in d_fam.groupby("method", sort=False):
            marker = markers.get(method, markers.get(method.split(" (")[0], "x"))
            if "recipe)" in method:
                marker = "P" if method.startswith("non-private") else "h"
            pts = ax.scatter(d.attack_success, d.utility_f1, marker=marker, s=55, label=method, zorder=3)
            if bars:
                x, y = d.attack_success.to_numpy(float), d.utility_f1.to_numpy(float)
                xerr = np.vstack([x - d.attack_lo.to_numpy(float), d.attack_hi.to_numpy(float) - x])
                yerr = np.vstack([y - d.utility_lo.to_numpy(float), d.utility_hi.to_numpy(float) - y])
                ax.errorbar(x, y, xerr=np.clip(np.nan_to_num(xerr), 0, None), yerr=np.clip(np.nan_to_num(yerr), 0, None), fmt="none", lw=0.8,
                            ecolor=pts.get_facecolor()[0], alpha=0.6, zorder=2)
        names = [r.setting if isinstance(r.setting, str) and r.setting else "" for r in d_fam.itertuples()]
        labels.append((ax, d_fam.attack_success.to_numpy(float), d_fam.utility_f1.to_numpy(float), names))
        attack = d_fam.attack.iloc[0] if len(d_fam) else ""
        for col, name, ls in (("attack_chance", "chance", ":"), ("attack_floor", "class-label floor", "-.")):
            if col in d_fam and d_fam[col].notna().any():
                ax.axvline(float(d_fam[col].mean()), color="grey", ls=ls, lw=0.9, label=name, zorder=1)
        ax.set_title(attack, fontsize=8)
        ax.set_xlabel(f"{metric} (attack success)", fontsize=8)
        utility = ", ".join(dict.fromkeys(d_fam.utility_metric)) if "utility_metric" in d_fam else UTILITY
        ax.set_ylabel(utility or UTILITY, fontsize=8)
        ax.set_ylim(-0.03, 1.03)
        if metric.startswith("exposure"):
            top = float(d_fam["max_exposure"].max()) if "max_exposure" in d_fam else float(d_fam.attack_success.max())
            ax.set_xlim(-0.3, (top if math.isfinite(top) else 1.0) + 0.3)
        else:
            ax.set_xlim(-0.03, 1.03)
        ax.legend(fontsize=6, loc="best")
    stated = "" if seed is None else (f"; seed {seed}" if isinstance(seed, int) else f"; {seed}")
    fig.suptitle(title + stated, fontsize=8)
    fig.tight_layout()
    for ax, x, y, names in labels:  # once the layout is final, so that no label sits on another
        keep = [i for i, n in enumerate(names) if n]
        place_labels(ax, x[keep], y[keep], [names[i] for i in keep], fontsize=6)
    return fig


class AuditResults(TypedDict):
    params: dict[str, Any]
    profile: str
    seed: int
    seeds: list[int]
    population: dict[str, int]
    membership: list[dict[str, Any]]
    dssgd: list[dict[str, Any]]
    surrogates: list[dict[str, Any]]
    pseudonyms: list[dict[str, Any]]
    representations: list[dict[str, Any]]  #: friedrich §5 (:func:`representation_rows`), every seed
    shared_layers: list[dict[str, Any]]  #: alawad (:func:`shared_layer_rows`), every seed
    epsilon_audits: pd.DataFrame
    frontier: pd.DataFrame
    statements: pd.DataFrame
    membership_table: pd.DataFrame
    canary_table: pd.DataFrame
    fingerprint: str
    seconds: float


def run_study(params: AuditParams, *, seed: int = 0, progress: bool = True) -> AuditResults:
    """Everything of notebook 09 (synthetic corpus only: the attacks need to train many models
    and to know the ground truth of membership): membership, DSSGD, surrogates,
    pseudonymization, the friedrich representations and alawad's shared layers on seeds
    ``seed`` … ``seed + params.seeds − 1``, the ε audits on ``seed``."""
    if not isinstance(params, AuditParams):
        raise TypeError("run_study takes resolved AuditParams (audits.params_for(profile, ...))")
    from tqdm.auto import tqdm

    t0 = time.perf_counter()
    seeds = [seed + i for i in range(params.seeds)]
    recipe_eps = [*params.dp_recipe_epsilons, math.inf]
    settings = [None, *params.dp_noises]
    bar = tqdm(total=len(seeds) * (len(settings) + len(recipe_eps) + 5) + 1, desc="audits", disable=not progress)
    membership, dssgd, sur, pseudo, reps, shared = [], [], [], [], [], []
    index = None
    if params.pseudonym_ns:
        from ..embeddings.neighbours import NeighbourIndex
        from ..embeddings.public import load_glove

        index = NeighbourIndex(load_glove())
    first = None
    with torch.random.fork_rng(devices=[]):
        for sd in seeds:
            data = prepare_data(params, sd)
            first = first or data
            for s in settings:
                bar.set_postfix_str(f"seed {sd}, " + ("non-private" if s is None else f"σ={s:g}"))
                membership.append(membership_setting(data, params, s, seed=sd))
                bar.update()
            base = recipe_base(data, params, seed=sd)
            for e in recipe_eps:
                bar.set_postfix_str(f"seed {sd}, {params.dp_recipe} ε={e:g}")
                membership.append(recipe_setting(data, params, e, base, seed=sd))
                bar.update()
            bar.set_postfix_str(f"seed {sd}, dssgd")
            dssgd += [{**r, "seed": sd} for r in dssgd_rows(data, params, seed=sd)]
            bar.update()
            bar.set_postfix_str(f"seed {sd}, surrogates")
            sur += [{**r, "seed": sd} for r in surrogate_rows(data, params, seed=sd)]
            bar.update()
            if index is not None:
                bar.set_postfix_str(f"seed {sd}, pseudonymization")
                pseudo += pseudonym_rows(data, params, index, seed=sd)
            bar.update()
            bar.set_postfix_str(f"seed {sd}, adversarial representation (friedrich)")
            reps += representation_rows(params, seed=sd)
            bar.update()
            bar.set_postfix_str(f"seed {sd}, shared layers (alawad)")
            shared += shared_layer_rows(params, seed=sd)
            bar.update()
        bar.set_postfix_str("ε audits")
        eps = epsilon_audits(first, params, seed=seed)
        bar.update()
    bar.close()
    out: AuditResults = {  # type: ignore[typeddict-item]
        "params": asdict(params), "profile": params.profile, "seed": seed, "seeds": seeds,
        "population": {"sentences": len(first.sentences), "patients": len(set(first.patients)),
                       "documents": len(first.docs), "test_documents": len(first.test_docs)},
        "membership": membership, "dssgd": dssgd, "surrogates": sur, "pseudonyms": pseudo,
        "representations": reps, "shared_layers": shared, "epsilon_audits": eps, "fingerprint": first.fingerprint,
    }
    out["frontier"] = frontier_table(out)
    out["statements"] = method_statements(out)
    out["membership_table"] = pd.DataFrame([
        {"method": m["method"], "setting": m["setting"], "seed": m["seed"], "epsilon": m["epsilon"], **r}
        for m in membership for r in m["membership"]])
    out["canary_table"] = pd.DataFrame([
        {"method": m["method"], "setting": m["setting"], "seed": m["seed"], "epsilon": m["epsilon"], **c}
        for m in membership for c in m["canaries"]])
    out["seconds"] = time.perf_counter() - t0
    return out
