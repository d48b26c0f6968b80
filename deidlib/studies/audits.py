"""Notebook ``09_privacy_frontier``: every privacy method of the package attacked the
same way on one corpus, and its utility next to the attack's success.

One synthetic corpus (``load_corpus("synthetic")``, split by patient); the training split's
sentences (capped at ``max_pool_sentences`` whole patients) are the *population*; the test
split scores utility (binary-token F1, :func:`deidlib.training.evaluate_tagger`).

* **Non-private and DP-SGD taggers** (:func:`membership_setting`): a target tagger is trained
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
* **Representations (friedrich) and shared layers (alawad)**: their adversaries come from
  their own studies (notebooks 05-07) and are not joined into this frontier yet; :data:`MISSING` rows say so.

One vocabulary per experiment (all population words and all canary candidates): the
vocabulary itself is not what is audited (see :mod:`deidlib.audits.canary`).
"""

from __future__ import annotations

import math
import time
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
from .festag import binary_token_evaluator
from .params import StudyParams, profiles

__all__ = [
    "AuditParams", "PROFILE_PARAMS", "params_for", "AuditData", "prepare_data", "make_tagger", "fit",
    "membership_setting", "dssgd_rows", "surrogate_rows", "epsilon_audits", "one_run_audit", "frontier_table",
    "plot_frontier", "run_study", "AuditResults", "MISSING",
]

SCHEME, ENCODING = "binary", "BIO"

#: methods whose attack is measured by another study and not yet joined into this frontier
#: (the notebook prints these)
MISSING = (
    {"method": "pseudonymization (friedrich §4/§8)", "setting": "N neighbours",
     "status": "not joined yet: measured by notebooks 05/06 (friedrich), not by this frontier's harness"},
    {"method": "adversarial representation (friedrich §5)", "setting": "N",
     "status": "not joined yet: measured by notebooks 05/06 (friedrich), not by this frontier's harness"},
    {"method": "shared layers (alawad)", "setting": "shared/private CNN",
     "status": "not joined yet: measured by notebook 07 (alawad), not by this frontier's harness"},
)


@dataclass(frozen=True)
class AuditParams(StudyParams):
    STUDY: ClassVar[str] = "audits"
    MERGED: ClassVar[tuple[str, ...]] = ("tagger",)

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
    dp_noises: tuple[float, ...] = (0.5, 1.0, 2.0)
    references: int = 4
    canary_copies: tuple[int, ...] = (1, 4, 16)
    canaries_per_setting: int = 2
    canary_candidates: int = 256
    dssgd_theta_us: tuple[float, ...] = (0.1, 1.0)
    dssgd_dp_epsilons: tuple[float, ...] = (1.0,)
    dssgd_epochs: int = 3
    dssgd_lr: float = 0.3
    surrogate_epsilons: tuple[float, ...] = (1.0, 10.0)
    step_audit_trials: int = 2000
    one_run_canaries: int = 2000
    one_run_steps: int = 2
    one_run_epsilons: tuple[float, ...] = (2.0, 4.0, 8.0)
    one_run_broken_epsilon: float = 2.0
    one_run_sentences: int = 20

    def check(self) -> None:
        if self.references < 1:
            raise ValueError("audits needs references >= 1")
        if any(s <= 0 for s in self.dp_noises):
            raise ValueError("noise multipliers must be > 0")
        if self.one_run_canaries < 20 or any(e <= 0 for e in (*self.one_run_epsilons, self.one_run_broken_epsilon)):
            raise ValueError("the one-run audit needs one_run_canaries >= 20 and ε > 0")


PROFILE_PARAMS: dict[str, AuditParams] = profiles(AuditParams, {
    "smoke": AuditParams(
        tagger=dict(char=None, word_dim=8, hidden=8, ff_dim=8, input_dropout=0.0, freeze_embeddings=False),
        patients=24, max_pool_sentences=60, max_patient_sentences=6, max_eval_documents=4, epochs=3, dp_noises=(1.0,), references=1,
        canary_copies=(1, 16), canaries_per_setting=1, canary_candidates=16, dssgd_theta_us=(1.0,),
        dssgd_dp_epsilons=(1.0,), dssgd_epochs=1, surrogate_epsilons=(1.0,), step_audit_trials=1000,
        one_run_canaries=200, one_run_steps=1, one_run_epsilons=(8.0,), one_run_sentences=6,
    ),
    "cpu": AuditParams(patients=150, max_pool_sentences=300, epochs=10, references=2),
    "paper": AuditParams(patients=None, max_pool_sentences=2000, max_eval_documents=200, references=8,
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


def membership_setting(data: AuditData, params: AuditParams, noise: float | None, *, seed: int = 0
                       ) -> dict[str, Any]:
    """One setting (σ = ``noise``; None: non-private): target + references, membership attacks
    per sentence and per patient, canary exposure, utility. Returns rows and summary."""
    t0 = time.perf_counter()
    canaries = make_canaries(params.canary_copies, params.canaries_per_setting, params.canary_candidates,
                             derive_seed(seed, "audits-canaries"))
    fz = _featurizer([s.words for s in data.sentences], canary_words(canaries))
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
        tagger = make_tagger(fz, params, derive_seed(seed, "audits-init", r))
        led = fit(tagger, train_set, params, noise, derive_seed(seed, "audits-train", r))
        losses.append(sentence_losses(tagger, data.sentences))
        ins.append(member)
        if r == 0:
            target, ledger = tagger, led
    L, IN = np.stack(losses), np.stack(ins)
    scores = {"loss": loss_scores(L[0]), "lira": lira_offline_scores(L[0], L[1:], IN[1:])}
    rows = []
    for attack, s in scores.items():
        rows.append({"level": "sentence", "attack": attack, **attack_scores(s[IN[0]], s[~IN[0]])})
        g = group_scores(s, data.patients)
        coin0 = _half(data.patients, seed, "model-0")
        gi = [v for p, v in g.items() if coin0[p]]
        go = [v for p, v in g.items() if not coin0[p]]
        rows.append({"level": "patient", "attack": attack, **attack_scores(gi, go)})
    p, rcl, f = evaluate_tagger(target, data.test_docs)
    return {
        "noise_multiplier": noise,
        "epsilon": ledger.epsilon if ledger else math.inf,
        "ledger": ledger.to_dict() if ledger else None,
        "utility": {"precision": p, "recall": rcl, "f1": f},
        "membership": rows,
        "canaries": canary_exposure(target, canaries),
        "population": n,
        "seconds": time.perf_counter() - t0,
    }


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
def frontier_table(res: dict[str, Any]) -> pd.DataFrame:
    """One row per method and setting: utility (binary-token F1) and attack success, plus the
    rows that are missing (utility and attack NaN, ``status`` says why)."""
    rows = []
    for m in res["membership"]:
        best = max((r for r in m["membership"] if r["level"] == "sentence"), key=lambda r: r["tpr@1%"])
        pat = max((r for r in m["membership"] if r["level"] == "patient"), key=lambda r: r["auc"])
        exp16 = [c["exposure"] for c in m["canaries"] if c["copies"] == max(c2["copies"] for c2 in m["canaries"])]
        name = "non-private" if m["noise_multiplier"] is None else "DP-SGD"
        setting = "" if m["noise_multiplier"] is None else f"σ={m['noise_multiplier']:g}, ε={m['epsilon']:.2f}"
        rows.append({"method": name, "setting": setting, "epsilon": m["epsilon"], "utility_f1": m["utility"]["f1"],
                     "attack": f"membership (sentence, {best['attack']})", "attack_metric": "TPR@1%FPR",
                     "attack_success": best["tpr@1%"], "auc": best["auc"], "patient_auc": pat["auc"],
                     "canary_exposure_max_k": float(np.mean(exp16)), "status": "measured"})
    for d in res["dssgd"]:
        dp = math.isfinite(d["dp_epsilon_per_upload"])
        rows.append({"method": "DSSGD + DP upload" if dp else "DSSGD",
                     "setting": f"θ_u={d['theta_u']:g}" + (f", ε/upload={d['dp_epsilon_per_upload']:g}" if dp else ""),
                     "epsilon": d["dp_epsilon_per_upload"] if dp else math.inf, "utility_f1": d["f1"],
                     "attack": "word reconstruction (site 1, first upload)", "attack_metric": "F1 of recovered words",
                     "attack_success": d["reconstruction_f1"], "status": "measured"})
    for s in res["surrogates"]:
        if s["memo_scope"].startswith("none"):
            continue
        rows.append({"method": "surrogates", "setting": f"ε={s['epsilon']:g}, memo={s['memo_scope']}",
                     "epsilon": s["epsilon"], "utility_f1": s["f1"], "attack": "note linkage (names/places)",
                     "attack_metric": "F1 of same-patient note pairs", "attack_success": s["linkage_f1"],
                     "status": "measured"})
    for m in MISSING:
        rows.append({**m, "epsilon": math.nan, "utility_f1": math.nan, "attack_success": math.nan})
    return pd.DataFrame(rows)


@style()
def plot_frontier(frontier: pd.DataFrame, title: str = "utility vs attack success", seed: int | None = None):
    """The frontier: binary-token F1 against attack success, one panel per attack family (the
    families' success metrics are not comparable, so they never share an axis), one marker
    per method, each point labelled with its setting; ``seed`` is stated under the title."""
    from .labels import place_labels

    f = frontier[frontier.status == "measured"]
    families = list(dict.fromkeys(f.attack_metric)) or ["attack success"]
    fig, axes = plt.subplots(1, len(families), figsize=(4.2 * len(families) + 0.6, 4.4), sharey=True, squeeze=False)
    axes = axes[0]
    markers = {"non-private": "*", "DP-SGD": "o", "DSSGD": "s", "DSSGD + DP upload": "D", "surrogates": "^"}
    labels = []
    for ax, metric in zip(axes, families):
        d_fam = f[f.attack_metric == metric]
        for method, d in d_fam.groupby("method", sort=False):
            ax.scatter(d.attack_success, d.utility_f1, marker=markers.get(method, "x"), s=60, label=method)
        names = [r.setting if isinstance(r.setting, str) and r.setting else "" for r in d_fam.itertuples()]
        labels.append((ax, d_fam.attack_success.to_numpy(float), d_fam.utility_f1.to_numpy(float), names))
        attack = d_fam.attack.iloc[0] if len(d_fam) else ""
        ax.set_title(attack, fontsize=8)
        ax.set_xlabel(f"{metric} (attack success)", fontsize=8)
        ax.set_xlim(-0.03, 1.03)
        ax.legend(fontsize=7, loc="lower right")
    axes[0].set_ylabel("binary-token F1 (test)")
    fig.suptitle(title + ("" if seed is None else f"; seed {seed}"), fontsize=8)
    fig.tight_layout()
    for ax, x, y, names in labels:  # once the layout is final, so that no label sits on another
        keep = [i for i, n in enumerate(names) if n]
        place_labels(ax, x[keep], y[keep], [names[i] for i in keep], fontsize=7)
    return fig


class AuditResults(TypedDict):
    params: dict[str, Any]
    profile: str
    seed: int
    population: dict[str, int]
    membership: list[dict[str, Any]]
    dssgd: list[dict[str, Any]]
    surrogates: list[dict[str, Any]]
    epsilon_audits: pd.DataFrame
    frontier: pd.DataFrame
    membership_table: pd.DataFrame
    canary_table: pd.DataFrame
    missing: list[dict[str, str]]
    fingerprint: str
    seconds: float


def run_study(params: AuditParams, *, seed: int = 0, progress: bool = True) -> AuditResults:
    """Everything of notebook 09 (synthetic corpus only: the attacks need to train many models
    and to know the ground truth of membership)."""
    if not isinstance(params, AuditParams):
        raise TypeError("run_study takes resolved AuditParams (audits.params_for(profile, ...))")
    from tqdm.auto import tqdm

    t0 = time.perf_counter()
    data = prepare_data(params, seed)
    settings = [None, *params.dp_noises]
    bar = tqdm(total=len(settings) + 3, desc="audits", disable=not progress)
    membership = []
    with torch.random.fork_rng(devices=[]):
        for s in settings:
            bar.set_postfix_str("non-private" if s is None else f"σ={s:g}")
            membership.append(membership_setting(data, params, s, seed=seed))
            bar.update()
        bar.set_postfix_str("dssgd")
        dssgd = dssgd_rows(data, params, seed=seed)
        bar.update()
        bar.set_postfix_str("surrogates")
        sur = surrogate_rows(data, params, seed=seed)
        bar.update()
        bar.set_postfix_str("ε audits")
        eps = epsilon_audits(data, params, seed=seed)
        bar.update()
    bar.close()
    out: AuditResults = {  # type: ignore[typeddict-item]
        "params": asdict(params), "profile": params.profile, "seed": seed,
        "population": {"sentences": len(data.sentences), "patients": len(set(data.patients)),
                       "documents": len(data.docs), "test_documents": len(data.test_docs)},
        "membership": membership, "dssgd": dssgd, "surrogates": sur, "epsilon_audits": eps,
        "missing": list(MISSING), "fingerprint": data.fingerprint,
    }
    out["frontier"] = frontier_table(out)
    out["membership_table"] = pd.DataFrame([
        {"noise_multiplier": m["noise_multiplier"] or 0.0, "epsilon": m["epsilon"], **r}
        for m in membership for r in m["membership"]])
    out["canary_table"] = pd.DataFrame([
        {"noise_multiplier": m["noise_multiplier"] or 0.0, "epsilon": m["epsilon"], **c}
        for m in membership for c in m["canaries"]])
    out["seconds"] = time.perf_counter() - t0
    return out
