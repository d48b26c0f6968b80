"""Festag & Spreckelsen (JMIR Form Res 2020;4(5):e14064): a PHI tagger trained
centralized (A), round robin (B), with DSSGD (C_0.1, C_0.5) and locally only (D).

Notebook ``01_festag_dssgd`` calls :func:`run_study` and plots :func:`figure6` (F1 on the
test set per epoch; left panel with C_0.1, right with C_0.5) and :func:`table3` (final
min / mean / max F1). All training goes through :mod:`deidlib.collaborative`.

Setup (paper section "Experiments", Table 2):

* the tagger is the festag / Dernoncourt character-enhanced BiLSTM
  (``deidlib.models.build_tagger("festag", ...)``) with 29 labels — the 28 PHI
  subtypes of Table 1 and non-PHI, i.e. the ``i2b2`` label scheme with ``IO`` encoding
  (the paper's label set has no B-/I- prefixes);
* the training documents are split by patient into ``n_sites`` (5) disjoint sites
  (:func:`deidlib.corpus.splits.partition_by_patient`); the test set is global and never
  split; the dev split is not used (the paper has no early stopping);
* plain SGD with learning rate 0.9 and batch size 1 in the paper profile; DSSGD with
  θ_d = 0.1 (C_0.1) or 0.5 (C_0.5), θ_u = 0.5, γ = 10, τ = 1e-4;
* the score is the binary token-level F1 (a token predicted as any PHI class is a true
  positive iff it is PHI; Dernoncourt et al.'s scoring, paper section "Results"),
  computed after every global epoch for A and B and after every local epoch of every
  worker for C and D.

Deviations and choices, all visible in the returned parameters:

* **Profiles** scale the data, the epochs (paper: 200) and the tagger size; ``smoke``
  and ``cpu`` use mini-batches (``batch_size``) to fit a 2-core CPU; ``paper`` is 1.
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
* **Sparse PHI** (``negatives_per_positive``, default off). In the PhysioNet nursing notes
  only 4 % of training sentences (875 of 21,228) hold PHI, 0.4 % of tokens; a cpu-profile
  site of 300 random sentences then holds about a dozen PHI sentences and no experiment
  learns (measured, 2 seeds: final F1 A 0.23, B 0.35, C/D means 0.05-0.11). With
  ``negatives_per_positive=k`` each site keeps all of its sentences with PHI and a seeded
  random ``k`` per such sentence of those without, before the ``max_site_sentences`` cap.
  The global test set is never down-sampled (only capped), so the precision cost of
  training on a PHI-richer distribution is measured, not hidden.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
import torch
from torch import nn

from ..collaborative import (
    DSSGD,
    Centralized,
    DSSGDConfig,
    LocalOnly,
    RoundRobin,
    simulate,
    tagger_trainer,
)

__all__ = [
    "PROFILE_PARAMS",
    "EXPERIMENTS",
    "FestagParams",
    "params_for",
    "prepare_data",
    "binary_token_evaluator",
    "run_study",
    "curves",
    "table3",
    "figure6",
    "shape_checks",
    "benchmark_setup",
]

EXPERIMENTS = ("A", "B", "C_0.1", "C_0.5", "D")
SCHEME, ENCODING = "i2b2", "IO"


@dataclass(frozen=True)
class FestagParams:
    """All knobs of the study (defaults = the paper; profiles override some)."""

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


PROFILE_PARAMS: dict[str, FestagParams] = {
    "smoke": FestagParams(
        epochs=2,
        batch_size=8,
        lr=0.5,
        tagger={"word_dim": 16, "char_dim": 8, "char_hidden": 8, "token_hidden": 8, "ff_hidden": 8, "dropout": 0.5},
        max_site_sentences=24,
        max_test_sentences=60,
    ),
    "cpu": FestagParams(
        epochs=15,
        batch_size=4,
        lr=0.9,
        grad_clip=5.0,
        tagger={"word_dim": 50, "char_dim": 16, "char_hidden": 25, "token_hidden": 50, "ff_hidden": 50, "dropout": 0.5},
        max_site_sentences=300,
        max_test_sentences=1500,
    ),
    "paper": FestagParams(),
}


def params_for(profile: str, **overrides: Any) -> FestagParams:
    """The profile's parameters with ``overrides`` (``None`` values are ignored)."""
    try:
        base = PROFILE_PARAMS[profile]
    except KeyError:
        raise ValueError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILE_PARAMS)}") from None
    kw = {k: v for k, v in overrides.items() if v is not None}
    if "tagger" in kw:
        kw["tagger"] = {**base.tagger, **kw["tagger"]}
    unknown = set(kw) - set(FestagParams.__dataclass_fields__)
    if unknown:
        raise ValueError(f"unknown festag parameters: {sorted(unknown)}")
    return replace(base, **kw)


# ----------------------------------------------------------------------------- data


@dataclass
class StudyData:
    sites: list[list[Any]]  # TaggedSentence lists, one per site
    test: list[Any]  # TaggedSentence list (global test set)
    test_docs: list[Any]
    site_docs: list[int]  # documents per site (counts only)
    site_patients: list[int]
    fingerprint: str


def _cap(items: list, n: int | None, seed: int) -> list:
    if n is None or len(items) <= n:
        return items
    idx = np.sort(np.random.default_rng(seed).choice(len(items), n, replace=False))
    return [items[i] for i in idx]


def prepare_data(
    corpus: str = "synthetic", data_dir: str | None = None, profile: str = "cpu", seed: int = 0,
    params: FestagParams | None = None,
) -> StudyData:
    """Load the corpus, split training documents by patient into sites, tag sentences."""
    from ..corpus.labels import downsample_negatives, tagged_sentences
    from ..corpus.splits import partition_by_patient
    from ..datasets import load_corpus
    from ..results import fingerprint_documents
    from ..rng import derive_seed

    params = params or params_for(profile)
    splits = load_corpus(corpus=corpus, data_dir=data_dir, profile=profile, seed=seed, split="patient")
    parts = partition_by_patient(list(splits.train), params.n_sites, seed=seed)
    parts = [list(p) for p in parts]
    if len(parts) != params.n_sites or any(not p for p in parts):
        raise ValueError(f"could not split {len(splits.train)} training documents into {params.n_sites} non-empty sites")
    sites = []
    for i, p in enumerate(parts):
        sents = [s for s in tagged_sentences(p, SCHEME, ENCODING) if s.tokens]
        if params.negatives_per_positive is not None:
            sents = downsample_negatives(sents, params.negatives_per_positive, derive_seed(seed, "site-negatives", i))
        sites.append(_cap(sents, params.max_site_sentences, derive_seed(seed, "site-cap", i)))
    test_docs = list(splits.test)
    test = [s for s in tagged_sentences(test_docs, SCHEME, ENCODING, use_spans=False) if s.tokens]
    test = _cap(test, params.max_test_sentences, derive_seed(seed, "test-cap"))
    return StudyData(
        sites=sites,
        test=test,
        test_docs=test_docs,
        site_docs=[len(p) for p in parts],
        site_patients=[len({d.patient_id for d in p}) for p in parts],
        fingerprint=fingerprint_documents(list(splits.train) + test_docs),
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
    """
    from ..corpus.labels import tag_set
    from ..models import build_featurizer, build_tagger

    hp = dict(params.tagger)
    feat_kw = {k: hp.pop(k) for k in list(hp) if k in ("lowercase", "max_vocab", "min_count")}
    words = [s.words for s in sentences]
    featurizer = build_featurizer("festag", words, labels=tag_set(SCHEME, ENCODING), **feat_kw)
    hp.setdefault("freeze_embeddings", True)
    embeddings = None
    if params.word_vectors == "word2vec":
        from ..embeddings.vectors import embedding_matrix, train_word_vectors

        dim = int(hp.get("word_dim", 300))
        kv = train_word_vectors(words, dim=dim, epochs=params.word2vec_epochs, seed=seed, cache=cache_vectors)
        embeddings, _ = embedding_matrix(featurizer.words, kv, seed=seed)
    elif params.word_vectors != "random":
        raise ValueError(f"word_vectors must be 'word2vec' or 'random', got {params.word_vectors!r}")

    def factory(init_seed: int) -> nn.Module:
        return build_tagger("festag", featurizer, seed=int(init_seed) & 0x7FFF_FFFF, embeddings=embeddings, **hp)

    return factory


# --------------------------------------------------------------------- evaluation


def binary_token_evaluator(test: Sequence[Any], *, batch_size: int = 64, device: str = "cpu"):
    """``evaluate(model) -> {"precision", "recall", "f1"}``: binary token-level scores on ``test``.

    A token counts as predicted PHI when its predicted label is not ``"O"``, as gold PHI
    when its gold tag is not ``"O"`` (Dernoncourt et al.'s binary token scoring, used in
    Festag & Spreckelsen's Results). Test batches are encoded once per featurizer.
    """
    order = sorted(range(len(test)), key=lambda i: len(test[i].tokens))
    chunks = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    gold = [np.array([t != "O" for t in test[i].tags], dtype=bool) for i in order]
    gold_all = np.concatenate(gold) if gold else np.zeros(0, bool)
    cache: dict[int, tuple[Any, list]] = {}

    def encoded(model):
        feat = model.featurizer
        hit = cache.get(id(feat))
        if hit is None or hit[0] is not feat:
            batches = [feat.encode([test[i].words for i in c]).to(device) for c in chunks]
            hit = (feat, batches)
            cache[id(feat)] = hit
        return hit[1]

    def evaluate(model) -> dict[str, float]:
        labels = model.featurizer.labels
        is_phi = np.array([lab != "O" for lab in labels], dtype=bool)
        preds = []
        model.eval()
        with torch.no_grad():
            for b in encoded(model):
                for seq in model.predict(b):
                    preds.append(is_phi[np.asarray(seq, dtype=np.int64)] if len(seq) else np.zeros(0, bool))
        pred_all = np.concatenate(preds) if preds else np.zeros(0, bool)
        if pred_all.shape != gold_all.shape:
            raise RuntimeError(f"tagger returned {pred_all.size} labels for {gold_all.size} test tokens")
        tp = int((pred_all & gold_all).sum())
        fp = int((pred_all & ~gold_all).sum())
        fn = int((~pred_all & gold_all).sum())
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        return {"precision": p, "recall": r, "f1": f}

    return evaluate


# --------------------------------------------------------------------------- study


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
    profile: str = "cpu",
    corpus: str = "synthetic",
    data_dir: str | None = None,
    seeds: Sequence[int] = (0,),
    experiments: Sequence[str] = EXPERIMENTS,
    device: str = "cpu",
    progress: bool = True,
    **overrides: Any,
) -> dict[str, Any]:
    """Run the experiments for every seed; returns a JSON-able dict of histories and parameters.

    ``overrides`` are :class:`FestagParams` fields (``epochs``, ``lr``, ``theta_d``, ...).
    Each seed re-splits the data into sites and re-initialises the shared network.
    """
    params = params_for(profile, **overrides)
    bad = [e for e in experiments if e not in EXPERIMENTS]
    if bad:
        raise ValueError(f"unknown experiments {bad}; choose from {EXPERIMENTS}")
    out: dict[str, Any] = {
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
                                 grad_clip=params.grad_clip)
        evaluate = binary_token_evaluator(data.test, batch_size=params.eval_batch_size, device=device)
        for name in experiments:
            t0 = time.perf_counter()
            hist = simulate(
                _strategy(name, params), data.sites, model_factory=_on_device(factory, device), trainer=trainer,
                evaluate=evaluate, epochs=params.epochs, seed=seed, progress=progress,
                names=[f"site{i + 1}" for i in range(len(data.sites))],
            )
            out["runs"].append({"experiment": name, "seed": seed, "seconds": time.perf_counter() - t0,
                                **hist.to_dict()})
    return out


def _on_device(factory, device):
    if device == "cpu":
        return factory
    return lambda s: factory(s).to(device)


# ---------------------------------------------------------------------- analysis


def curves(results: dict[str, Any]):
    """Long table: experiment, seed, epoch, site, f1 (+ precision, recall, train_loss)."""
    import pandas as pd

    rows = []
    for run in results["runs"]:
        for r in run["records"]:
            rows.append({"experiment": run["experiment"], "seed": run["seed"], **r})
    return pd.DataFrame.from_records(rows)


def table3(results: dict[str, Any], metric: str = "f1"):
    """Table 3 analog: min / mean / max of the final-epoch score per experiment.

    For C and D the spread is over the 5 workers (and seeds); for A and B over seeds
    (the paper has one run, so its table shows only the mean for A and B).
    """
    import pandas as pd

    df = curves(results)
    rows = []
    for name in results["experiments"]:
        d = df[df.experiment == name]
        last = d[d.epoch == d.epoch.max()][metric]
        rows.append({"experiment": name, "min": last.min(), "mean": last.mean(), "max": last.max(), "n": len(last)})
    return pd.DataFrame(rows).set_index("experiment")


def figure6(results: dict[str, Any], metric: str = "f1"):
    """Figure 6 analog: two panels; A black, B magenta, C green band, D red band."""
    import matplotlib.pyplot as plt

    from ..plotting import COLORS, apply_style

    apply_style()
    df = curves(results)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, c_name in zip(axes, ("C_0.1", "C_0.5")):
        for name, color in (("D", COLORS["D"]), (c_name, COLORS["C"])):
            d = df[df.experiment == name]
            if d.empty:
                continue
            g = d.groupby("epoch")[metric]
            ax.fill_between(g.min().index, g.min(), g.max(), color=color, alpha=0.25, linewidth=0)
            ax.plot(g.mean().index, g.mean(), color=color, label=f"{name} (mean, min–max)")
        for name, color in (("A", COLORS["A"]), ("B", COLORS["B"])):
            d = df[df.experiment == name]
            if d.empty:
                continue
            g = d.groupby("epoch")[metric].mean()
            ax.plot(g.index, g.values, color=color, label=name, linewidth=1.5 if name == "A" else 1.0,
                    linestyle="-" if name == "A" else "--")
        ax.set_xlabel("epoch")
        ax.set_title(f"A, B, {c_name}, D")
        ax.legend(loc="lower right", fontsize=8)
    axes[0].set_ylabel(f"binary token {metric.upper()} (test)")
    seeds = results.get("seeds", [])
    fig.suptitle(f"festag Figure 6 analog — {results.get('corpus')}, profile {results.get('profile')}, "
                 f"seeds {seeds}", fontsize=10)
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
    df = curves(results)
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


# ---------------------------------------------------------------------- benchmark


def benchmark_setup(n_sentences: int, seed: int, profile: str = "cpu", corpus: str = "synthetic"):
    """``(model_factory, site_sentences, trainer)`` for ``benchmarks/collaborative.py --model festag``."""
    params = params_for(profile)
    data = prepare_data(corpus, None, profile, seed, params)
    sents = [s for site in data.sites for s in site][:n_sentences]
    factory = tagger_factory(sents, params, seed=seed)
    return factory, sents, tagger_trainer(lr=params.lr, batch_size=params.batch_size, grad_clip=params.grad_clip)
