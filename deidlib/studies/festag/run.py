"""Festag & Spreckelsen (JMIR Form Res 2020;4(5):e14064): a PHI tagger trained
centralized (A), round robin (B), with DSSGD (C_0.1, C_0.5) and locally only (D).

Notebook ``01_festag_dssgd`` calls :func:`run_study` and plots :func:`figure6` (F1 on the
test set per epoch; left panel with C_0.1, right with C_0.5) and :func:`table3` (min / mean /
max F1 at the final and at the dev-selected epoch); :func:`heterogeneity_study` repeats A and D
at other site-heterogeneity levels of the synthetic corpus. All training goes through
:mod:`deidlib.collaborative`.

Setup (paper section "Experiments", Table 2):

* the tagger is the festag / Dernoncourt character-enhanced BiLSTM
  (``deidlib.models.build_tagger("festag", ...)``) with 29 labels — the 28 PHI
  subtypes of Table 1 and non-PHI, i.e. the ``i2b2`` label scheme with ``IO`` encoding
  (the paper's label set has no B-/I- prefixes);
* the sites are institutions: when the documents carry more than one ``site`` (the
  synthetic corpus' five), each site is the non-test documents of one ``site``
  (:func:`site_groups`); a one-site corpus is partitioned by patient into ``n_sites`` (5)
  seeded parts instead (``site_split="random"``, also available on any corpus). Each site
  holds out ``dev_fraction`` of its patients as its own dev split; the test set is global
  and never split;
* plain SGD with learning rate 0.9 and batch size 1 in the paper profile; DSSGD with
  θ_d = 0.1 (C_0.1) or 0.5 (C_0.5), θ_u = 0.5, γ = 10, τ = 1e-4;
* the score is the binary token-level F1 (a token predicted as any PHI class is a true
  positive iff it is PHI; Dernoncourt et al.'s scoring, paper section "Results"),
  computed after every global epoch for A and B and after every local epoch of every
  worker for C and D.

Deviations and choices, all visible in the returned parameters:

* **One stopping rule for every strategy** (the paper trains 200 epochs without one). The
  evaluator scores every evaluated model on dev too (:func:`binary_token_evaluator`); a run
  unit — the global model of A and B on the pooled dev split, each worker of C and D on its
  own site's dev split (:func:`dev_key`) — stops ``patience`` epochs after its best dev F1
  (:func:`select_epoch`), and a run ends when all its units have stopped (:func:`stop_rule`,
  passed to :func:`deidlib.collaborative.simulate`; it changes no update). A DSSGD worker whose
  rule has fired keeps its selected checkpoint but goes on taking part until the run ends, so
  the others' downloads are those of the uninterrupted algorithm. Scores are reported at each
  unit's final epoch and at its dev-selected epoch (:func:`selection`); the test split never
  chooses an epoch. cpu: patience 4, not before epoch 8 (``min_epochs``), at most 20 epochs; paper: no stopping, 200 epochs (the
  dev-selected epoch is still reported). Flower runs (``engine="flower"``) train all epochs;
  the same rule then selects the epochs afterwards.
* **Stability** (:func:`stability`): the standard deviation of a unit's test F1 over its last
  5 epochs up to its final epoch, and over seeds of the seed's mean final F1.

* **Profiles** scale the data, the epochs (paper: 200) and the tagger size; ``cpu`` keeps
  the paper's optimisation (batch 1, lr 0.9, no clipping), at most 20 epochs with early
  stopping and 3 seeds; ``smoke`` uses mini-batches.
* **Loss** (``loss="token_mean"``, all profiles): NeuroNER (``entity_lstm.py``), whose
  hyperparameters the paper uses, averages the softmax cross-entropy over the tokens of the
  one sentence of a step. Our taggers' own loss sums it over the tokens, which at lr 0.9
  makes every step about a sentence length (~15x) larger than the paper's: measured at the
  cpu profile (seed 0, 15 epochs, batch 1, no clipping), A's test F1 then jumped between
  0.01 and 0.54 from epoch to epoch, against 0.84-0.90 from epoch 9 on with the token mean.
  With the summed loss at batch 4 and a gradient-norm clip of 5 instead, the cpu profile's
  curves were still rising at epoch 15.
* **Word vectors.** The paper used Word2Vec trained on English Wikipedia; no such
  vectors can be downloaded here, so the vocabulary and gensim Word2Vec vectors are
  trained on the union of the training sentences (a shared, agreed input of the
  simulation — in a real deployment they would come from public text). As in the
  paper, the word embeddings are frozen and not part of the exchanged vector ``p``.
* **Characters.** The paper one-hot encodes characters (128 dims); the paper profile
  keeps that (the tagger preset), smoke and cpu use small learned character embeddings
  (``char_dim``) to save time.
* **Test tokenization** does not look at the gold spans (``use_spans=False``); gold
  tags come from overlap with the spans; training sentences are split at span edges.
* ``grad_clip`` is off (paper) unless a profile sets it; any value used is recorded.
  (NeuroNER clips each gradient entry to ±5, ``clip_by_value``; ours is a norm clip.)
* **θ_d sweep** (``theta_d_sweep``): DSSGD at further download fractions on the first seed
  (:func:`theta_sweep`, :func:`figure_theta_sweep`), for the paper's C_0.1 > C_0.5 ordering.
* **Sparse PHI** (``negatives_per_positive``, default off). In the PhysioNet nursing notes
  only 4 % of training sentences (875 of 21,228) hold PHI, 0.4 % of tokens; a cpu-profile
  site of 300 random sentences then holds about a dozen PHI sentences and no experiment
  learns (CHANGELOG.md has the measured scores). With
  ``negatives_per_positive=k`` each site keeps all of its sentences with PHI and a seeded
  random ``k`` per such sentence of those without, before the ``max_site_sentences`` cap.
  The global test set is never down-sampled (only capped), so the precision cost of
  training on a PHI-richer distribution is measured, not hidden.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, ClassVar, TypedDict

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from matplotlib.ticker import MaxNLocator
from torch import nn

from ..collaborative import (
    DSSGD,
    TAGGER_LOSSES,
    Centralized,
    DSSGDConfig,
    LocalOnly,
    RoundRobin,
    simulate,
    tagger_trainer,
)
from ..corpus.labels import downsample_negatives, tag_set, tagged_sentences
from ..corpus.splits import partition_by_patient, split_by_patient, subsample
from ..datasets import load_corpus
from ..evaluation import prf
from ..models import build_tagger
from ..plotting import COLORS, style
from ..results import fingerprint_documents
from ..rng import derive_seed
from ..training.api import build_inputs
from .params import StudyParams, profiles

__all__ = [
    "PROFILE_PARAMS",
    "EXPERIMENTS",
    "FestagParams",
    "FestagResults",
    "params_for",
    "prepare_data",
    "binary_token_evaluator",
    "run_study",
    "curves",
    "table3",
    "figure6",
    "theta_sweep",
    "theta_table",
    "figure_theta_sweep",
    "shape_checks",
    "benchmark_setup",
    "site_groups",
    "select_epoch",
    "stop_rule",
    "dev_key",
    "selection",
    "stability",
    "heterogeneity_study",
    "heterogeneity_table",
    "figure_heterogeneity",
]

EXPERIMENTS = ("A", "B", "C_0.1", "C_0.5", "D")
SITE_SPLITS = ("auto", "documents", "random")
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
        if self.site_split not in SITE_SPLITS:
            raise ValueError(f"site_split must be one of {SITE_SPLITS}, got {self.site_split!r}")
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
        # smaller data and tagger; at most 20 epochs with early stopping on dev, patience 4 (with random
        # patient sites A and B peaked near epoch 9 and then overfit, C and D were still rising at 20)
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


# ----------------------------------------------------------------------------- data


@dataclass
class FestagData:
    sites: list[list[Any]]  # TaggedSentence lists, one per site
    test: list[Any]  # TaggedSentence list (global test set)
    test_docs: list[Any]
    site_docs: list[int]  # documents per site (counts only)
    site_patients: list[int]
    fingerprint: str
    site_names: list[str] = field(default_factory=list)
    dev: list[list[Any]] = field(default_factory=list)  # each site's dev sentences
    site_split: str = "random"  # how the sites were formed: "documents" or "random"


def site_groups(docs: Sequence[Any], params: FestagParams, seed: int) -> tuple[str, list[str], list[list[Any]]]:
    """``(mode, names, groups)``: the non-test documents grouped into sites.

    ``site_split="documents"`` (or ``"auto"`` when the documents carry more than one ``site``)
    groups them by their own ``site`` (the institutions, sorted by name); ``"random"`` (or
    ``"auto"`` with a single site) partitions them by patient into ``n_sites`` seeded parts
    (:func:`deidlib.corpus.splits.partition_by_patient`), named ``site1``, ``site2``, ...
    """
    names_seen = sorted({str(getattr(d, "site", "") or "") for d in docs})
    mode = params.site_split
    if mode == "auto":
        mode = "documents" if len(names_seen) > 1 else "random"
    if mode == "documents":
        groups = [[d for d in docs if str(getattr(d, "site", "") or "") == n] for n in names_seen]
        return mode, names_seen, groups
    parts = [list(p) for p in partition_by_patient(list(docs), params.n_sites, seed=seed)]
    return mode, [f"site{i + 1}" for i in range(len(parts))], parts


def prepare_data(
    corpus: str = "synthetic", data_dir: str | None = None, profile: str = "cpu", seed: int = 0,
    params: FestagParams | None = None,
) -> FestagData:
    """Load the corpus, form the sites (:func:`site_groups`), split each site by patient into
    its own train and dev part (``dev_fraction``), tag sentences; the test set stays global."""
    params = params or params_for(profile)
    splits = load_corpus(corpus=corpus, data_dir=data_dir, profile=profile, seed=seed, split="patient",
                         heterogeneity=params.heterogeneity)
    mode, names, groups = site_groups(list(splits.train) + list(splits.dev), params, seed)
    parts, devs = [], []
    for i, g in enumerate(groups):
        inner = split_by_patient(g, (1 - params.dev_fraction, params.dev_fraction),
                                 seed=derive_seed(seed, "site-dev", i))
        parts.append(list(inner.train))
        devs.append(list(inner.test))  # the held-out part of a (train, held-out) split
    if len(parts) < 2 or any(not p for p in parts) or any(not d for d in devs):
        sizes = [f"{n}: {len(p)} train / {len(d)} dev" for n, p, d in zip(names, parts, devs)]
        raise ValueError(f"could not form at least 2 sites with training and dev documents ({mode} sites: "
                         f"{', '.join(sizes) or 'none'})")
    sites, dev = [], []
    for i, (p, dv) in enumerate(zip(parts, devs)):
        sents = [s for s in tagged_sentences(p, SCHEME, ENCODING) if s.tokens]
        if params.negatives_per_positive is not None:
            sents = downsample_negatives(sents, params.negatives_per_positive, derive_seed(seed, "site-negatives", i))
        sites.append(subsample(sents, params.max_site_sentences, derive_seed(seed, "site-cap", i)))
        dsents = [s for s in tagged_sentences(dv, SCHEME, ENCODING, use_spans=False) if s.tokens]
        dev.append(subsample(dsents, params.max_dev_sentences, derive_seed(seed, "site-dev-cap", i)))
    test_docs = list(splits.test)
    test = [s for s in tagged_sentences(test_docs, SCHEME, ENCODING, use_spans=False) if s.tokens]
    test = subsample(test, params.max_test_sentences, derive_seed(seed, "test-cap"))
    return FestagData(
        sites=sites,
        test=test,
        test_docs=test_docs,
        site_docs=[len(p) for p in parts],
        site_patients=[len({d.patient_id for d in p}) for p in parts],
        fingerprint=fingerprint_documents(list(splits.train) + list(splits.dev) + test_docs),
        site_names=names,
        dev=dev,
        site_split=mode,
    )


# ------------------------------------------------------------------------- tagger


def tagger_factory(sentences: Sequence[Any], params: FestagParams, *, seed: int = 0,
                   cache_vectors: bool = True) -> Callable[[int], nn.Module]:
    """``factory(init_seed) -> festag tagger``; all models share one featurizer and word vectors.

    The featurizer's vocabulary and (``params.word_vectors == "word2vec"``) gensim
    Word2Vec vectors are built from the union of the training ``sentences`` — the
    stand-in for the paper's Wikipedia Word2Vec, an input all parties agree on before
    training. The word embeddings are frozen (``freeze_embeddings``, default True): the
    paper's parameter vector ``p`` holds only the LSTM and feed-forward weights, so only
    those are trained and exchanged. ``word_vectors="random"`` uses seeded random vectors.
    Word2Vec is trained on the raw words (``keys="raw"`` of :func:`deidlib.training.build_inputs`;
    the other studies train on the featurizer's normalised keys).
    """
    hp = dict(params.tagger)
    feat_kw = {k: hp.pop(k) for k in list(hp) if k in ("lowercase", "max_vocab", "min_count")}
    hp.setdefault("freeze_embeddings", True)
    inputs = build_inputs(
        "festag", [s.words for s in sentences], tag_set(SCHEME, ENCODING), word_dim=int(hp.get("word_dim", 300)),
        vectors="word2vec" if params.word_vectors == "word2vec" else None, keys="raw",
        vector_epochs=params.word2vec_epochs, seed=seed, cache=cache_vectors, **feat_kw,
    )
    featurizer, embeddings = inputs.featurizer, inputs.embeddings

    def factory(init_seed: int) -> nn.Module:
        return build_tagger("festag", featurizer, seed=int(init_seed) & 0x7FFF_FFFF, embeddings=embeddings, **hp)

    return factory


# --------------------------------------------------------------------- evaluation


def _binary_predictor(sentences: Sequence[Any], batch_size: int, device: str):
    """``(gold, predict)``: gold PHI flags per sentence (length-sorted order) and
    ``predict(model)`` giving the predicted PHI flags in that order; batches are encoded
    once per featurizer."""
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i].tokens))
    chunks = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    gold = [np.array([t != "O" for t in sentences[i].tags], dtype=bool) for i in order]
    cache: dict[int, tuple[Any, list]] = {}

    def encoded(model):
        feat = model.featurizer
        hit = cache.get(id(feat))
        if hit is None or hit[0] is not feat:
            batches = [feat.encode([sentences[i].words for i in c]).to(device) for c in chunks]
            hit = (feat, batches)
            cache[id(feat)] = hit
        return hit[1]

    def predict(model) -> list[np.ndarray]:
        labels = model.featurizer.labels
        is_phi = np.array([lab != "O" for lab in labels], dtype=bool)
        preds = []
        model.eval()
        with torch.no_grad():
            for b in encoded(model):
                for seq in model.predict(b):
                    preds.append(is_phi[np.asarray(seq, dtype=np.int64)] if len(seq) else np.zeros(0, bool))
        return preds

    return order, gold, predict


def _counts(gold: np.ndarray, pred: np.ndarray) -> tuple[int, int, int]:
    if pred.shape != gold.shape:
        raise RuntimeError(f"tagger returned {pred.size} labels for {gold.size} tokens")
    return int((pred & gold).sum()), int((pred & ~gold).sum()), int((~pred & gold).sum())


def _cat(arrays: Sequence[np.ndarray]) -> np.ndarray:
    return np.concatenate(arrays) if len(arrays) else np.zeros(0, bool)


def binary_token_evaluator(test: Sequence[Any], *, batch_size: int = 64, device: str = "cpu",
                           dev: Mapping[str, Sequence[Any]] | None = None):
    """``evaluate(model) -> {"precision", "recall", "f1", ...}``: binary token-level scores on ``test``.

    A token counts as predicted PHI when its predicted label is not ``"O"``, as gold PHI
    when its gold tag is not ``"O"`` (Dernoncourt et al.'s binary token scoring, used in
    Festag & Spreckelsen's Results); P/R/F1 of the counts come from the scorer's
    :func:`deidlib.evaluation.prf`. Test batches are encoded once per featurizer.

    ``dev`` (site name → that site's dev sentences) adds the dev scores the stopping rule
    reads: ``"dev_f1@<site>"`` for every site and ``"dev_f1"`` on their union (the pooled dev
    split). They are recorded next to the test scores; the selection never reads the test keys.
    """
    _, gold_t, predict_t = _binary_predictor(test, batch_size, device)
    gold_all = _cat(gold_t)
    dev = dict(dev or {})
    names = list(dev)
    dev_sents = [s for n in names for s in dev[n]]
    owner = np.array([i for i, n in enumerate(names) for _ in dev[n]], dtype=np.int64)
    d_order, d_gold, d_predict = _binary_predictor(dev_sents, batch_size, device) if dev_sents else ([], [], None)

    def evaluate(model) -> dict[str, float]:
        preds = predict_t(model)
        if len(preds) != len(gold_t):
            raise RuntimeError(f"tagger returned {len(preds)} sentences for {len(gold_t)} test sentences")
        score = prf(*_counts(gold_all, _cat(preds)))
        out = {"precision": score.precision, "recall": score.recall, "f1": score.f1}
        if d_predict is not None:
            dp = d_predict(model)
            tot = np.zeros(3, dtype=np.int64)
            for i, n in enumerate(names):
                idx = [k for k, j in enumerate(d_order) if owner[j] == i]
                c = np.array(_counts(_cat([d_gold[k] for k in idx]), _cat([dp[k] for k in idx])))
                tot += c
                out[f"dev_f1@{n}"] = prf(*map(int, c)).f1
            out["dev_f1"] = prf(*map(int, tot)).f1
        return out

    return evaluate


# --------------------------------------------------------------------------- study


class FestagResults(TypedDict):
    """What :func:`run_study` returns (JSON-able; the input of :func:`curves`, :func:`table3`,
    :func:`figure6` and :func:`shape_checks`)."""

    study: str
    profile: str
    corpus: str
    params: dict[str, Any]  #: asdict(FestagParams)
    seeds: list[int]
    experiments: list[str]
    runs: list[dict[str, Any]]  #: experiment, seed, seconds and the simulation history
    data: list[dict[str, Any]]  #: per seed: sentences/documents/patients per site, test size, fingerprint


def _strategy(name: str, params: FestagParams):
    cfg = DSSGDConfig(theta_d=params.theta_d, theta_u=params.theta_u, gamma=params.gamma, tau=params.tau)
    return {
        "A": lambda: Centralized(),
        "B": lambda: RoundRobin(),
        "C_0.1": lambda: DSSGD(cfg),
        "C_0.5": lambda: DSSGD(replace(cfg, theta_d=params.theta_d_high)),
        "D": lambda: LocalOnly(),
    }[name]()


def run_study(
    params: FestagParams,
    *,
    corpus: str = "synthetic",
    data_dir: str | None = None,
    seeds: Sequence[int] = (0,),
    experiments: Sequence[str] = EXPERIMENTS,
    device: str = "cpu",
    progress: bool = True,
    engine: str = "simulator",
) -> FestagResults:
    """Run the experiments for every seed; returns a JSON-able dict of histories and parameters.

    ``params`` come from :func:`params_for` / :meth:`FestagParams.resolve` (resolved once,
    by the caller). Each seed re-splits the data into sites and re-initialises the shared network.
    ``engine="flower"`` runs B and C as Flower apps (:mod:`deidlib.collaborative.flower`,
    bit-identical to the simulator); A and D exchange no messages and stay in-process.
    """
    if not isinstance(params, FestagParams):
        raise TypeError("run_study takes resolved FestagParams (festag.params_for(profile, ...))")
    if engine not in ("simulator", "flower"):
        raise ValueError(f"unknown engine {engine!r}; choose 'simulator' or 'flower'")
    profile = params.profile
    bad = [e for e in experiments if e not in EXPERIMENTS]
    if bad:
        raise ValueError(f"unknown experiments {bad}; choose from {EXPERIMENTS}")
    out: FestagResults = {
        "study": "festag",
        "profile": profile,
        "corpus": corpus,
        "params": asdict(params),
        "seeds": list(seeds),
        "experiments": list(experiments),
        "runs": [],
        "data": [],
    }
    for seed in seeds:
        data = prepare_data(corpus, data_dir, profile, seed, params)
        out["data"].append(
            {
                "seed": seed,
                "site_split": data.site_split,
                "site_names": data.site_names,
                "dev_sentences": [len(d) for d in data.dev],
                "site_sentences": [len(s) for s in data.sites],
                "site_documents": data.site_docs,
                "site_patients": data.site_patients,
                "test_sentences": len(data.test),
                "test_tokens": int(sum(len(s.tokens) for s in data.test)),
                "fingerprint": data.fingerprint,
            }
        )
        factory = tagger_factory([s for site in data.sites for s in site], params, seed=seed,
                                 cache_vectors=corpus == "synthetic")  # never cache vectors of real text
        trainer = tagger_trainer(lr=params.lr, batch_size=params.batch_size, device=device,
                                 grad_clip=params.grad_clip, loss=params.loss)
        evaluate = binary_token_evaluator(data.test, batch_size=params.eval_batch_size, device=device,
                                          dev=dict(zip(data.site_names, data.dev)))
        for name in experiments:
            t0 = time.perf_counter()
            on_flower = engine == "flower" and name not in ("A", "D")
            stop = {} if on_flower else {"stop": stop_rule(params.patience, params.min_epochs)}  # Flower runs all epochs
            hist = _engine(on_flower)(
                _strategy(name, params), data.sites, model_factory=_on_device(factory, device), trainer=trainer,
                evaluate=evaluate, epochs=params.epochs, seed=seed, progress=progress,
                names=list(data.site_names), **stop,
            )
            out["runs"].append({"experiment": name, "seed": seed, "seconds": time.perf_counter() - t0,
                                "engine": "flower" if on_flower else "simulator",
                                **hist.to_dict()})
    return out


def dev_key(site: str) -> str:
    """The record key of a run unit's own dev score: the pooled dev split for the one global
    model of A and B (``site == "global"``), the worker's own site's dev split for C and D."""
    return "dev_f1" if site == "global" else f"dev_f1@{site}"


def select_epoch(dev: Sequence[float], patience: int | None, min_epochs: int = 1) -> tuple[int, int]:
    """``(selected, stopped)`` positions in a run unit's per-epoch ``dev`` scores.

    Early stopping: the unit stops at the first epoch, not before the ``min_epochs``-th, that is
    ``patience`` epochs past its best dev score so far (``None``: never; then it stops at the last
    epoch); ``selected`` is the epoch of the best dev score up to the stop (the first of ties).
    Reads dev scores only.
    """
    if not len(dev):
        raise ValueError("no dev scores to select an epoch on")
    best, stop = 0, len(dev) - 1
    for i, v in enumerate(dev):
        if v > dev[best]:
            best = i
        if patience is not None and i + 1 >= min_epochs and i - best >= patience:
            stop = i
            break
    return best, stop


def _fired(dev: Sequence[float], patience: int | None, min_epochs: int = 1) -> bool:
    best, stop = select_epoch(dev, patience, min_epochs)
    return patience is not None and stop - best >= patience and stop + 1 >= min_epochs


def stop_rule(patience: int | None, min_epochs: int = 1) -> Callable[[Any], bool]:
    """``stop(history) -> bool`` for :func:`deidlib.collaborative.simulate`: the run ends once
    every run unit (A/B: the global model on the pooled dev split; C/D: each worker on its own
    site's dev split) has met :func:`select_epoch`'s stopping condition. ``None``: never stops."""

    def stop(hist) -> bool:
        if patience is None:
            return False
        series: dict[str, list[float]] = {}
        for r in hist.records:
            series.setdefault(r["site"], []).append(float(r[dev_key(r["site"])]))
        return bool(series) and all(_fired(v, patience, min_epochs) for v in series.values())

    return stop


def _engine(flower: bool):
    if not flower:
        return simulate
    try:
        from ..collaborative.flower import flower_simulate
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] != "flwr":
            raise
        raise ImportError("engine='flower' needs Flower: pip install 'deidlib[flower]'") from None

    return flower_simulate


def _on_device(factory, device):
    if device == "cpu":
        return factory
    return lambda s: factory(s).to(device)


# ---------------------------------------------------------------------- analysis


def curves(results: dict[str, Any]):
    """Long table: experiment, seed, epoch, site, f1 (+ precision, recall, dev scores, train_loss)."""
    rows = []
    for run in results["runs"]:
        for r in run["records"]:
            rows.append({"experiment": run["experiment"], "seed": run["seed"], **r})
    return pd.DataFrame.from_records(rows)


def _unit_frames(run: dict[str, Any]):
    d = pd.DataFrame.from_records(run["records"])
    for site, g in d.groupby("site", sort=False):
        yield site, g.sort_values("epoch").reset_index(drop=True)


def selection(results: dict[str, Any], metric: str = "f1") -> pd.DataFrame:
    """One row per run unit (experiment, seed, site; A/B: ``site == "global"``): the epoch its
    stopping rule stopped at (``stop_epoch``; the last epoch when it never fired), the
    dev-selected epoch (``selected_epoch``, :func:`select_epoch` on the unit's own dev scores,
    :func:`dev_key`), and the test ``metric`` at both (``final``, ``best``). The test scores are
    read only at epochs chosen on dev. Runs without dev scores give NaN selections."""
    patience = results.get("params", {}).get("patience")
    min_epochs = results.get("params", {}).get("min_epochs", 1)
    rows = []
    for run in results["runs"]:
        for site, g in _unit_frames(run):
            key = dev_key(site)
            if key in g and g[key].notna().all():
                sel, stop = select_epoch(g[key].tolist(), patience, min_epochs)
                best, sel_epoch, dev_best = float(g[metric][sel]), int(g.epoch[sel]), float(g[key][sel])
            else:
                stop, best, sel_epoch, dev_best = len(g) - 1, math.nan, math.nan, math.nan
            rows.append({"experiment": run["experiment"], "seed": run["seed"], "site": site,
                         "selected_epoch": sel_epoch, "stop_epoch": int(g.epoch[stop]), "dev_selected": dev_best,
                         "final": float(g[metric][stop]), "best": best})
    return pd.DataFrame(rows)


def table3(results: dict[str, Any], metric: str = "f1", at: str = "final"):
    """Table 3 analog: min / mean / max of the test score per experiment, at each run unit's
    final epoch (``at="final"``: where its stopping rule stopped it, or the last epoch) or at
    its dev-selected epoch (``at="best"``: :func:`selection`; chosen on dev, never on test).
    ``epoch`` is the mean epoch the scores were taken at.

    For C and D the spread is over the workers and seeds; for A and B over seeds
    (the paper has one run, so its table shows only the mean for A and B).
    """
    if at not in ("final", "best"):
        raise ValueError(f"at must be 'final' or 'best', got {at!r}")
    sel = selection(results, metric)
    if at == "best" and sel.best.isna().any():
        raise ValueError("table3(at='best') needs dev scores in every run (run_study records them)")
    rows = []
    for name in results["experiments"]:
        d = sel[sel.experiment == name]
        vals = d[at]
        ep = d["stop_epoch" if at == "final" else "selected_epoch"]
        rows.append({"experiment": name, "min": vals.min(), "mean": vals.mean(), "max": vals.max(), "n": len(vals),
                     "epoch": ep.mean()})
    return pd.DataFrame(rows).set_index("experiment")


def stability(results: dict[str, Any], metric: str = "f1", last: int = 5) -> pd.DataFrame:
    """How much each experiment's test score still moves: per run unit the standard deviation
    of ``metric`` over its last ``last`` epochs up to its final epoch (``std_last``, mean over
    units), and the standard deviation over seeds of the seed's mean final score (``std_seeds``)."""
    sel = selection(results, metric).set_index(["experiment", "seed", "site"])
    rows = []
    for name in results["experiments"]:
        stds, finals = [], {}
        for run in results["runs"]:
            if run["experiment"] != name:
                continue
            for site, g in _unit_frames(run):
                stop = int(sel.loc[(name, run["seed"], site), "stop_epoch"])
                tail = g[g.epoch <= stop][metric].tail(last)
                stds.append(float(tail.std(ddof=0)) if len(tail) else math.nan)
                finals.setdefault(run["seed"], []).append(float(g[g.epoch == stop][metric].iloc[0]))
        seed_means = [float(np.mean(v)) for v in finals.values()]
        rows.append({"experiment": name, "std_last": float(np.nanmean(stds)) if stds else math.nan,
                     "std_seeds": float(np.std(seed_means)) if len(seed_means) > 1 else math.nan,
                     "last": last})
    return pd.DataFrame(rows).set_index("experiment")


def _scale(results: dict[str, Any]) -> str:
    """The run's scale for figure titles: epochs, sites × sentences, test sentences, seeds."""
    p = results.get("params", {})
    data = results.get("data", [])
    per_site = sorted({n for d in data for n in d.get("site_sentences", [])})
    site_txt = f"{per_site[0]}-{per_site[-1]}" if len(per_site) > 1 else (str(per_site[0]) if per_site else "?")
    test = sorted({d.get("test_sentences") for d in data})
    return (f"{results.get('corpus')}, profile {results.get('profile')}: {p.get('epochs')} epochs, batch "
            f"{p.get('batch_size')}, lr {p.get('lr')}, {p.get('n_sites')} sites × {site_txt} sentences, "
            f"test {'/'.join(map(str, test))} sentences, seeds {results.get('seeds')}")


def _until_stop(results: dict[str, Any]) -> pd.DataFrame:
    """:func:`curves` without a unit's records after its final (stopping) epoch."""
    df = curves(results)
    sel = selection(results)[["experiment", "seed", "site", "stop_epoch", "selected_epoch"]]
    df = df.merge(sel, on=["experiment", "seed", "site"])
    return df[df.epoch <= df.stop_epoch]


@style()
def figure6(results: dict[str, Any], metric: str = "f1"):
    """Figure 6 analog: two panels (C_0.1, C_0.5). Every series is the mean over seeds of the
    seed's score (A, B: the global model; C, D: the mean over the workers) with a min–max band
    over seeds (D hatched, so that overlapping bands stay apart), up to each run unit's final
    (stopping) epoch; a marker on each series at the mean dev-selected epoch."""
    df = _until_stop(results)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.3), sharey=True)
    styles = {
        "A": dict(color=COLORS["A"], linestyle="-", linewidth=1.6, hatch=None, alpha=0.12),
        "B": dict(color=COLORS["B"], linestyle="--", linewidth=1.1, hatch=None, alpha=0.10),
        "C": dict(color=COLORS["C"], linestyle="-", linewidth=1.4, hatch=None, alpha=0.22),
        "D": dict(color=COLORS["D"], linestyle="-", linewidth=1.4, hatch="///", alpha=0.0),
    }
    n_seeds = len(results.get("seeds", [])) or 1
    for ax, c_name in zip(axes, ("C_0.1", "C_0.5")):
        for name in ("D", c_name, "B", "A"):
            d = df[df.experiment == name]
            if d.empty:
                continue
            st = styles[name[0]]
            per_seed = d.groupby(["seed", "epoch"])[metric].mean()
            g = per_seed.groupby(level="epoch")
            lo, hi, mean = g.min(), g.max(), g.mean()
            if st["hatch"]:
                ax.fill_between(lo.index, lo, hi, facecolor="none", edgecolor=st["color"], hatch=st["hatch"],
                                linewidth=0.0, alpha=0.5)
            else:
                ax.fill_between(lo.index, lo, hi, color=st["color"], alpha=st["alpha"], linewidth=0)
            what = "mean over workers" if name[0] in "CD" else "global model"
            ax.plot(mean.index, mean.values, color=st["color"], linestyle=st["linestyle"], linewidth=st["linewidth"],
                    label=f"{name} ({what}; mean, min–max over {n_seeds} seeds)")
            sel_ep = d.groupby(["seed", "site"]).selected_epoch.first().mean()
            if math.isfinite(sel_ep):
                near = int(mean.index[np.argmin(np.abs(mean.index - sel_ep))])
                ax.plot([near], [mean[near]], marker="v", color=st["color"], markersize=6, linestyle="none")
        ax.set_xlabel("epoch (▼: mean dev-selected epoch)")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # epochs are whole numbers
        ax.set_title(f"A, B, {c_name}, D")
        ax.set_ylim(0, 1)
        ax.legend(loc="lower right", fontsize=7)
    axes[0].set_ylabel(f"binary token {metric.upper()} (test)")
    fig.suptitle(f"festag Figure 6 analog — {_scale(results)}", fontsize=8.5)
    fig.tight_layout()
    return fig


def theta_sweep(
    params: FestagParams,
    *,
    corpus: str = "synthetic",
    data_dir: str | None = None,
    seed: int = 0,
    thetas: Sequence[float] | None = None,
    device: str = "cpu",
    progress: bool = True,
) -> dict[str, Any]:
    """DSSGD (experiment C) at further download fractions θ_d on one seed (the paper has
    only θ_d = 0.1 and 0.5): ``{"seed", "thetas", "runs"}``, each run a C run of
    :func:`run_study` (same sites, initialisation and order as that seed's C_0.1) with its
    ``theta_d``. ``thetas`` default to ``params.theta_d_sweep``."""
    thetas = list(params.theta_d_sweep if thetas is None else thetas)
    runs = []
    for th in thetas:
        r = run_study(replace(params, theta_d=float(th)), corpus=corpus, data_dir=data_dir, seeds=[seed],
                      experiments=["C_0.1"], device=device, progress=progress)
        run = dict(r["runs"][0], experiment=f"C_{th:g}", theta_d=float(th))
        runs.append(run)
    return {"seed": seed, "thetas": thetas, "runs": runs}


def theta_table(results: dict[str, Any], sweep: dict[str, Any], metric: str = "f1"):
    """Final-epoch score (min / mean / max over the workers) of C at every θ_d of the sweep
    and of the study's C_0.1 / C_0.5 on the sweep's seed, with A and D of that seed as
    references (``theta_d`` NaN); the mean at the dev-selected epoch next to it (:func:`selection`)."""
    seed = sweep["seed"]
    p = results["params"]
    named = {"C_0.1": p["theta_d"], "C_0.5": p["theta_d_high"]}
    runs = [dict(r, theta_d=named.get(r["experiment"], math.nan)) for r in results["runs"]
            if r["seed"] == seed] + list(sweep["runs"])
    rows = []
    for run in runs:
        sel = selection({"params": p, "runs": [run]}, metric)
        final = sel.final
        rows.append({"experiment": run["experiment"], "theta_d": run.get("theta_d", math.nan),
                     "final_min": final.min(), "final_mean": final.mean(), "final_max": final.max(),
                     "best_mean": sel.best.mean()})
    t = pd.DataFrame(rows).drop_duplicates("experiment")
    return t.sort_values("theta_d", na_position="last").reset_index(drop=True)


@style()
def figure_theta_sweep(results: dict[str, Any], sweep: dict[str, Any], metric: str = "f1"):
    """Final-epoch F1 of DSSGD against θ_d (mean over workers, min–max bars), with the
    same seed's A and D as horizontal references."""
    t = theta_table(results, sweep, metric)
    c = t[t.theta_d.notna()]
    fig, ax = plt.subplots(figsize=(6, 3.8))
    ax.errorbar(c.theta_d, c.final_mean, yerr=[c.final_mean - c.final_min, c.final_max - c.final_mean],
                fmt="o-", color=COLORS["C"], capsize=3, label="C (DSSGD): final F1, mean and min–max over workers")
    # A and D: distinct line styles, each labelled at the right end of its line (they can be close)
    ref_styles = {"A": dict(linestyle="--", linewidth=1.4), "D": dict(linestyle=(0, (1, 1.5)), linewidth=1.8)}
    ref_y = {}
    for key in ("A", "D"):
        row = t[t.experiment == key]
        if len(row):
            ref_y[key] = float(row.final_mean.iloc[0])
            ax.axhline(ref_y[key], color=COLORS[key], **ref_styles[key],
                       label=f"{key} (final, {'mean over workers' if key == 'D' else 'one model'})")
    ax.set_xscale("log")
    true_y = dict(ref_y)
    if len(ref_y) == 2 and abs(ref_y["A"] - ref_y["D"]) < 0.04:  # keep the two direct labels apart
        lo, hi = sorted(ref_y, key=ref_y.get)
        mid = (ref_y["A"] + ref_y["D"]) / 2
        ref_y = {lo: mid - 0.025, hi: mid + 0.025}
    for key, y in ref_y.items():
        ax.annotate(f"{key} ({'centralized' if key == 'A' else 'local only'}) {true_y[key]:.3f}", xy=(1.0, y),
                    xycoords=("axes fraction", "data"), xytext=(3, 0), textcoords="offset points",
                    va="center", fontsize=7, color=COLORS[key])
    ax.set_xlabel("download fraction θ_d (log scale)")
    ax.set_ylabel(f"binary token {metric.upper()} (test), final epoch")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title(f"DSSGD θ_d sweep — seed {sweep['seed']}, {results['params'].get('epochs')} epochs", fontsize=9)
    fig.tight_layout()
    return fig


def shape_checks(results: dict[str, Any], metric: str = "f1") -> dict[str, Any]:
    """The paper's qualitative findings, measured (not enforced) on these results.

    * ``A_minus_B``: final mean A − B (paper: 0.962 − 0.961);
    * ``C01_minus_D``: final mean C_0.1 − D (paper: +0.050);
    * ``A_minus_C01``: final mean A − C_0.1 (paper: +0.007);
    * ``fluctuation_C05`` / ``fluctuation_C01``: mean absolute epoch-to-epoch change of a
      worker's score over the second half of training (paper: C_0.5 fluctuates more).
    """
    df = _until_stop(results)
    t = table3(results, metric)
    out: dict[str, Any] = {}

    def mean(n):
        return float(t.loc[n, "mean"]) if n in t.index else math.nan

    out["A_minus_B"] = mean("A") - mean("B")
    out["C01_minus_D"] = mean("C_0.1") - mean("D")
    out["A_minus_C01"] = mean("A") - mean("C_0.1")
    for n, key in (("C_0.1", "fluctuation_C01"), ("C_0.5", "fluctuation_C05"), ("D", "fluctuation_D")):
        d = df[(df.experiment == n) & (df.epoch >= df.epoch.max() / 2)]
        if d.empty:
            out[key] = math.nan
            continue
        diffs = d.sort_values("epoch").groupby(["seed", "site"])[metric].apply(lambda s: s.diff().abs().mean())
        out[key] = float(diffs.mean())
    return out


# ------------------------------------------------------------- site heterogeneity


def heterogeneity_of(params: FestagParams | dict[str, Any]) -> float:
    """The corpus heterogeneity a run used (``None`` resolves to the generator's default)."""
    h = params.heterogeneity if isinstance(params, FestagParams) else params.get("heterogeneity")
    if h is None:
        from ..synthetic import DEFAULT_HETEROGENEITY

        return float(DEFAULT_HETEROGENEITY)
    return float(h)


def heterogeneity_study(
    params: FestagParams,
    *,
    corpus: str = "synthetic",
    data_dir: str | None = None,
    seeds: Sequence[int] = (0,),
    device: str = "cpu",
    progress: bool = True,
) -> dict[str, Any]:
    """The study's ``heterogeneity_experiments`` (default A and D) on its first
    ``heterogeneity_seeds`` seeds at every extra level of ``heterogeneity_levels``, with the
    same stopping rule: ``{"levels", "seeds", "runs": [run_study results, one per level]}``.
    The study's own level comes from the main results (:func:`heterogeneity_table`)."""
    seeds = list(seeds)[: params.heterogeneity_seeds]
    runs = [run_study(replace(params, heterogeneity=float(h)), corpus=corpus, data_dir=data_dir, seeds=seeds,
                      experiments=list(params.heterogeneity_experiments), device=device, progress=progress)
            for h in params.heterogeneity_levels]
    return {"levels": [float(h) for h in params.heterogeneity_levels], "seeds": seeds, "runs": runs}


def _cross_site(results: dict[str, Any], experiment: str = "D") -> float:
    """Mean over ``experiment``'s workers (at their dev-selected epoch) of the dev F1 on their
    own site minus the mean dev F1 on the other sites: how much a site's model loses elsewhere."""
    sel = selection(results).set_index(["experiment", "seed", "site"])
    gaps = []
    for run in results["runs"]:
        if run["experiment"] != experiment:
            continue
        for site, g in _unit_frames(run):
            ep = sel.loc[(experiment, run["seed"], site), "selected_epoch"]
            if not math.isfinite(ep):
                continue
            r = g[g.epoch == ep].iloc[0]
            others = [float(r[k]) for k in g.columns if k.startswith("dev_f1@") and k != f"dev_f1@{site}"]
            if others:
                gaps.append(float(r[f"dev_f1@{site}"]) - float(np.mean(others)))
    return float(np.mean(gaps)) if gaps else math.nan


def heterogeneity_table(results: dict[str, Any], het: dict[str, Any], metric: str = "f1") -> pd.DataFrame:
    """Per heterogeneity level and experiment: test ``metric`` at the final and the
    dev-selected epoch (mean, and min–max of the latter) on the heterogeneity study's seeds,
    the main study supplying its own level; ``cross_site_gap``: D's own-site minus other-site
    dev F1 (:func:`_cross_site`, the measured difference between the sites) on that level."""
    seeds = set(het["seeds"])
    exps = [e for e in het["runs"][0]["experiments"]] if het["runs"] else []
    main = dict(results, runs=[r for r in results["runs"] if r["seed"] in seeds and r["experiment"] in exps],
                experiments=[e for e in results["experiments"] if e in exps])
    rows = []
    for level, res in [(heterogeneity_of(results["params"]), main),
                       *((heterogeneity_of(r["params"]), r) for r in het["runs"])]:
        sel = selection(res, metric)
        gap = _cross_site(res)
        for name in res["experiments"]:
            d = sel[sel.experiment == name]
            rows.append({"heterogeneity": level, "experiment": name, "final_mean": d.final.mean(),
                         "best_mean": d.best.mean(), "best_min": d.best.min(), "best_max": d.best.max(),
                         "selected_epoch": d.selected_epoch.mean(), "cross_site_gap": gap})
    t = pd.DataFrame(rows).drop_duplicates(["heterogeneity", "experiment"])
    return t.sort_values(["heterogeneity", "experiment"]).reset_index(drop=True)


@style()
def figure_heterogeneity(results: dict[str, Any], het: dict[str, Any], metric: str = "f1"):
    """Left: test F1 at the dev-selected epoch (mean, min–max bars over workers and seeds)
    against the corpus heterogeneity, per experiment. Right: D's own-site minus other-site
    dev F1 (how different the sites are, measured)."""
    t = heterogeneity_table(results, het, metric)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 3.8), gridspec_kw={"width_ratios": [2, 1]})
    for name, d in t.groupby("experiment", sort=False):
        color = COLORS.get(name[0], "grey")
        ax.errorbar(d.heterogeneity, d.best_mean, yerr=[d.best_mean - d.best_min, d.best_max - d.best_mean],
                    fmt="o-", color=color, capsize=3, label=f"{name} (dev-selected epoch)")
    ax.set_xlabel("site heterogeneity of the synthetic corpus")
    ax.set_ylabel(f"binary token {metric.upper()} (test)")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7, loc="lower left")
    g = t.drop_duplicates("heterogeneity")
    ax2.plot(g.heterogeneity, g.cross_site_gap, "o-", color=COLORS.get("D", "red"))
    ax2.axhline(0, color="grey", linewidth=0.8)
    ax2.set_xlabel("site heterogeneity")
    ax2.set_ylabel("D: own-site − other-site dev F1")
    fig.suptitle(f"festag: site heterogeneity — seeds {het['seeds']}, {_scale(results)}", fontsize=8)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------- benchmark


def benchmark_setup(n_sentences: int, seed: int, profile: str = "cpu", corpus: str = "synthetic"):
    """``(model_factory, site_sentences, trainer)`` for ``benchmarks/collaborative.py --model festag``."""
    params = params_for(profile)
    data = prepare_data(corpus, None, profile, seed, params)
    sents = [s for site in data.sites for s in site][:n_sentences]
    factory = tagger_factory(sents, params, seed=seed)
    return factory, sents, tagger_trainer(lr=params.lr, batch_size=params.batch_size, grad_clip=params.grad_clip,
                                          loss=params.loss)
