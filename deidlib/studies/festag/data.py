"""Data of the festag study: the sites, their dev splits and the global test set; the
tagger factory all sites share; the binary token evaluator every epoch is scored by
(Festag & Spreckelsen 2020, sections "Data" and "Experiments"; ``docs/studies/festag.md``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from ...corpus.labels import downsample_negatives, tag_set, tagged_sentences
from ...corpus.splits import partition_by_patient, split_by_patient, subsample
from ...datasets import load_corpus
from ...evaluation import binary_counts, phi_flags, prf
from ...models import build_tagger
from ...results import fingerprint_documents
from ...rng import derive_seed
from ...training.api import build_inputs
from .params import ENCODING, SCHEME, FestagParams, params_for

__all__ = ["binary_token_evaluator"]

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
    gold = [phi_flags(sentences[i].tags) for i in order]
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


def _cat(arrays: Sequence[np.ndarray]) -> np.ndarray:
    return np.concatenate(arrays) if len(arrays) else np.zeros(0, bool)

def binary_token_evaluator(test: Sequence[Any], *, batch_size: int = 64, device: str = "cpu",
                           dev: Mapping[str, Sequence[Any]] | None = None):
    """``evaluate(model) -> {"precision", "recall", "f1", ...}``: binary token-level scores on ``test``.

    A token counts as predicted PHI when its predicted label is not ``"O"``, as gold PHI
    when its gold tag is not ``"O"`` (Dernoncourt et al.'s binary token scoring, used in
    Festag & Spreckelsen's Results), counted by :func:`deidlib.evaluation.binary_counts`. Test
    batches are encoded once per featurizer.

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
        score = prf(*binary_counts(gold_all, _cat(preds)))
        out = {"precision": score.precision, "recall": score.recall, "f1": score.f1}
        if d_predict is not None:
            dp = d_predict(model)
            tot = np.zeros(3, dtype=np.int64)
            for i, n in enumerate(names):
                idx = [k for k, j in enumerate(d_order) if owner[j] == i]
                c = np.array(binary_counts(_cat([d_gold[k] for k in idx]), _cat([dp[k] for k in idx])))
                tot += c
                out[f"dev_f1@{n}"] = prf(*map(int, c)).f1
            out["dev_f1"] = prf(*map(int, tot)).f1
        return out

    return evaluate


def dev_key(site: str) -> str:
    """The record key of a run unit's own dev score: the pooled dev split for the one global
    model of A and B (``site == "global"``), the worker's own site's dev split for C and D."""
    return "dev_f1" if site == "global" else f"dev_f1@{site}"
