"""ahmed chapter 4 (Ahmed 2020, §4.1–4.3): data preparation and the training/scoring of one
configuration or of the whole study (:func:`run_study` → :class:`AhmedResults`)."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from ...corpus.document import Document
from ...corpus.labels import downsample_negatives, tag_set, tagged_sentences
from ...corpus.phi import TYPE_TO_CATEGORY
from ...corpus.splits import subsample
from ...datasets import load_corpus
from ...evaluation import evaluate
from ...evaluation.diagnostics import grouped_token_counts
from ...evaluation.subsets import misspelled_token_counts
from ...models import PRESETS, build_featurizer, build_tagger, count_parameters
from ...models.features import UNK
from ...results import fingerprint_documents
from ...rng import derive_seed
from ...synthetic.misspell import misspell_documents
from ...threads import limited_threads
from ...training import predict_documents, train
from ...training.api import word_embeddings
from ..protocol import StudyResults
from .params import (
    ENCODING,
    SAT_KIND,
    SCHEME,
    TABLES,
    AhmedParams,
    RunConfig,
    claim_configs,
    config_grid,
    main_sat,
    params_for,
    table_configs,
    tagger_hparams,
)

__all__ = ["AhmedResults", "run_study"]

# ----------------------------------------------------------------------------- data


@dataclass
class AhmedData:
    train_sentences: list[Any]
    dev_docs: list[Any]
    test_docs: list[Any]
    featurizer: Any
    #: PHI mentions in the training sentences, per category and per TYPE
    train_instances: dict[str, dict[str, int]]
    info: dict[str, Any]
    #: the test documents with typing errors (:mod:`deidlib.synthetic.misspell`; empty when
    #: ``misspell_rate`` is 0) and, per document id, the ranges of the misspelled tokens
    misspelled_test: list[Any] = field(default_factory=list)
    misspelled_ranges: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    _vectors: dict[int, np.ndarray | None] = field(default_factory=dict, repr=False)
    _encoder_featurizer: Any = field(default=None, repr=False)

    def encoder_featurizer(self):
        """The self-attention tagger's featurizer (built once): the pre-trained encoder's public
        WordPiece pieces, no word vocabulary from the training text."""
        if self._encoder_featurizer is None:
            self._encoder_featurizer = build_featurizer(SAT_KIND, [], labels=tag_set(SCHEME, ENCODING))
        return self._encoder_featurizer


def _instances(sentences) -> dict[str, dict[str, int]]:
    by_type: dict[str, int] = {}
    for s in sentences:
        for t in s.tags:
            if t[:2] in ("B-", "S-"):
                by_type[t[2:]] = by_type.get(t[2:], 0) + 1
    by_cat: dict[str, int] = {}
    for t, n in by_type.items():
        c = TYPE_TO_CATEGORY.get(t, t)
        by_cat[c] = by_cat.get(c, 0) + n
    return {"category": dict(sorted(by_cat.items())), "type": dict(sorted(by_type.items()))}


def prepare_data(
    corpus: str = "synthetic",
    data_dir: str | None = None,
    profile: str = "cpu",
    data_seed: int = 0,
    params: AhmedParams | None = None,
    split: str | None = None,
) -> AhmedData:
    """Load and split the corpus, tag the training sentences (BIOES over TYPEs), apply the
    profile's caps and build the shared featurizer (vocabulary from training text only)."""
    params = params or params_for(profile)
    splits = load_corpus(corpus=corpus, data_dir=data_dir, profile=profile, seed=data_seed, split=split)
    if not splits.train or not splits.test:
        raise ValueError(f"corpus {corpus!r} gave an empty training or test split")
    sents = [s for s in tagged_sentences(splits.train, SCHEME, ENCODING) if s.tokens]
    if params.negatives_per_positive is not None:
        sents = downsample_negatives(sents, params.negatives_per_positive, derive_seed(data_seed, "ahmed-negatives"))
    sents = subsample(sents, params.max_train_sentences, derive_seed(data_seed, "ahmed-train-cap"))
    dev = subsample(list(splits.dev), params.max_dev_documents, derive_seed(data_seed, "ahmed-dev-cap"))
    test = subsample(list(splits.test), params.max_test_documents, derive_seed(data_seed, "ahmed-test-cap"))
    fz = build_featurizer("gru", [s.words for s in sents], labels=tag_set(SCHEME, ENCODING))
    bad: list[Document] = []
    ranges: dict[str, list[tuple[int, int]]] = {}
    if params.misspell_rate > 0:
        bad, ranges = misspell_documents(test, params.misspell_rate, derive_seed(data_seed, "ahmed-misspell"))
    info = {
        "corpus": corpus,
        "split": split or ("document" if corpus == "physionet" else "patient"),
        "data_seed": data_seed,
        "train_documents": len(splits.train),
        "train_sentences": len(sents),
        "train_tokens": int(sum(len(s.tokens) for s in sents)),
        "dev_documents": len(dev),
        "test_documents": len(test),
        "test_gold_spans": int(sum(len(d.spans) for d in test)),
        "vocabulary": fz.num_words,
        "fingerprint": fingerprint_documents(list(splits.train) + dev + test),
        "misspell_rate": params.misspell_rate,
        "misspelled_test_tokens": int(sum(len(r) for r in ranges.values())),
    }
    return AhmedData(sents, dev, test, fz, _instances(sents), info, bad, ranges)


def _word_vectors(data: AhmedData, dim: int, params: AhmedParams) -> np.ndarray | None:
    """Embedding matrix of ``dim`` (one per dimension, trained once): Word2Vec on the training
    sentences' normalised keys (:func:`deidlib.training.word_embeddings`)."""
    if params.word_vectors == "random":
        return None
    if dim not in data._vectors:
        data._vectors[dim] = word_embeddings(
            data.featurizer, [s.words for s in data.train_sentences], vectors="word2vec", dim=dim,
            keys="normalized", epochs=params.word2vec_epochs, seed=int(data.info["data_seed"]),
            cache=data.info["corpus"] == "synthetic",  # never cache vectors of real text
        )
    return data._vectors[dim]


# ----------------------------------------------------------------------------- runs


@dataclass
class _RunOutput:
    record: dict[str, Any]
    tagger: Any
    predictions: list[Any]
    report: Any


def _prf(p) -> dict[str, float]:
    return {"precision": p.precision, "recall": p.recall, "f1": p.f1}


def run_config(
    config: RunConfig,
    data: AhmedData,
    params: AhmedParams,
    *,
    seed: int = 0,
    device: str = "cpu",
    progress: bool = False,
) -> _RunOutput:
    """Build, train (early stopping on dev) and score one configuration for one seed.

    The returned record is JSON-able: binary-token test P/R/F1, the binary HIPAA token
    scores, per-category and per-TYPE typed token scores (``per_category``/``per_type``:
    name -> {precision, recall, f1, tp, fp, fn}), seconds per training epoch (mean over
    the epochs run), test prediction seconds, trainable parameters and epochs run.
    """
    hp = tagger_hparams(config, params)
    sat = config.kind == SAT_KIND
    if sat:  # the pre-trained encoder reads its own public WordPiece pieces: no word vocabulary, no vectors
        tagger = build_tagger(config.kind, data.encoder_featurizer(), seed=seed, **hp)
    else:
        dim = int(hp.get("word_dim", PRESETS[config.kind]["word_dim"]))
        vectors = _word_vectors(data, dim, params)
        tagger = build_tagger(config.kind, data.featurizer, seed=seed, embeddings=vectors, **hp)
    tagger.task = {"scheme": SCHEME, "encoding": ENCODING, "mode": "default"}
    epochs = (params.sat_epochs or params.epochs) if sat else params.epochs
    hist = train(
        tagger,
        data.train_sentences,
        data.dev_docs or None,
        None,
        epochs=epochs,
        batch_size=params.batch_size,
        optimizer=params.optimizer,
        lr=(params.sat_lr or params.lr) if sat else params.lr,
        clip=params.clip,
        patience=params.patience if data.dev_docs else None,
        seed=seed,
        device=device,
        progress=progress,
    )
    t0 = time.perf_counter()
    preds = predict_documents(tagger, data.test_docs, batch_size=params.eval_batch_size, device=device)
    predict_seconds = time.perf_counter() - t0
    rep = evaluate(data.test_docs, preds)
    secs = hist.column("train_seconds")
    test_tokens = int(sum(len(d.text.split()) for d in data.test_docs))
    record = {
        "config": config.name,
        "kind": config.kind,
        "model": config.label,
        "crf": config.crf,
        "char": config.char,
        "dropout": config.dropout,
        "delta_p": config.delta_p,
        "seed": seed,
        **_prf(rep.prf("binary_token")),
        **{f"hipaa_{k}": v for k, v in _prf(rep.prf("binary_hipaa_token")).items()},
        "typed_token_f1": rep.f1("token"),
        "epochs_run": len(hist.epochs),
        "best_epoch": hist.best_epoch,
        "best_dev_f1": hist.best_dev_f1,
        "stopped_early": hist.stopped_early,
        "train_seconds_per_epoch": float(np.mean(secs)) if secs else math.nan,
        "train_seconds_total": float(np.sum(secs)),
        "predict_seconds": predict_seconds,
        "test_whitespace_tokens": test_tokens,
        "n_parameters": count_parameters(tagger),
        "n_parameters_total": count_parameters(tagger, trainable_only=False),
        "hparams": tagger.config()["hparams"],
        "history": hist.epochs,
        "per_category": _per(rep.per_category["token"]),
        "per_type": _per(rep.per_type["token"]),
        "by_vocabulary": _vocabulary_counts(data.test_docs, preds, data.featurizer),
        "misspelled": _misspelled_scores(tagger, data, params, device) if not sat or params.sat_misspelled else {},
    }
    return _RunOutput(record, tagger, preds, rep)


def _misspelled_scores(tagger, data: AhmedData, params: AhmedParams, device: str = "cpu") -> dict[str, Any]:
    """Scores on the misspelled test split (empty without one): binary-token P/R/F1 of the whole
    split (``binary``), split by misspelled vs intact tokens (``by_token``) and by vocabulary
    (``by_vocabulary``; a misspelled word is mostly out of the vocabulary)."""
    if not data.misspelled_test:
        return {}
    preds = predict_documents(tagger, data.misspelled_test, batch_size=params.eval_batch_size, device=device)
    return {
        "binary": _prf(evaluate(data.misspelled_test, preds).prf("binary_token")),
        "by_token": misspelled_token_counts(data.misspelled_test, preds, data.misspelled_ranges),
        "by_vocabulary": _vocabulary_counts(data.misspelled_test, preds, data.featurizer),
    }


def seeds_for(config: str, params: AhmedParams, seeds: Sequence[int]) -> list[int]:
    """The seeds ``config`` trains on: all of them for a configuration a claim reads
    (:func:`claim_configs`), the first ``n_seeds_other`` for the others; a self-attention
    configuration other than the Table 4.2 row (:func:`main_sat`) on at most the first ``n_seeds_sat``."""
    seeds = list(seeds)
    if params.n_seeds_other is not None and config not in claim_configs(params):
        seeds = seeds[: params.n_seeds_other]
    if params.n_seeds_sat is not None and config.startswith("sat-") and config != main_sat(params):
        seeds = seeds[: params.n_seeds_sat]
    return seeds


def _vocabulary_counts(gold_docs, system_docs, featurizer) -> dict[str, dict[str, float]]:
    """Binary-token counts and P/R/F1 of test tokens in and out of the training vocabulary
    (``"in-vocabulary"`` / ``"oov"``: the token's normalised key has no word id, so only
    character features can tell it apart: the character features' effect where it should
    matter). :func:`deidlib.evaluation.diagnostics.grouped_token_counts`."""

    def group(token: str) -> str:
        return "oov" if featurizer.word_index.get(featurizer.word_key(token), UNK) == UNK else "in-vocabulary"

    return grouped_token_counts(gold_docs, system_docs, group)


def _per(table) -> dict[str, dict[str, float]]:
    return {k: {**_prf(p), "tp": n[0], "fp": n[1], "fn": n[2]} for k, (p, n) in table.items()}


@dataclass
class AhmedResults(StudyResults):
    """What :func:`run_study` returns (JSON-able; the input of the table and figure functions)."""

    study: str
    profile: str
    corpus: str
    tables: list[str]
    params: dict[str, Any]  #: asdict(AhmedParams)
    seeds: list[int]
    data: dict[str, Any]  #: counts, split and fingerprint of the data (no text)
    train_instances: dict[str, dict[str, int]]
    configs: dict[str, dict[str, Any]]
    table_rows: dict[str, list[str]]
    runs: list[dict[str, Any]] = field(default_factory=list)  #: one record per (configuration, seed), see run_config
    torch_threads: int = 0


def run_study(
    params: AhmedParams,
    *,
    corpus: str = "synthetic",
    data_dir: str | None = None,
    seeds: Sequence[int] | None = None,
    data_seed: int | None = None,
    split: str | None = None,
    tables: Sequence[str] = TABLES,
    device: str = "cpu",
    progress: bool = True,
) -> AhmedResults:
    """Train every configuration the ``tables`` need for every seed (:class:`AhmedResults`, JSON-able).

    ``params`` come from :func:`params_for` / :meth:`AhmedParams.resolve` (resolved once,
    by the caller). ``seeds`` default to ``0 .. n_seeds-1`` of the profile; ``data_seed``
    (default: the first seed) fixes the corpus split, caps, word vectors and misspellings.
    Configurations no claim reads train on the first ``n_seeds_other`` seeds only
    (:func:`seeds_for`).
    """
    if not isinstance(params, AhmedParams):
        raise TypeError("run_study takes resolved AhmedParams (ahmed_models.params_for(profile, ...))")
    profile = params.profile
    seeds = list(range(params.n_seeds)) if seeds is None else [int(s) for s in seeds]
    if not seeds:
        raise ValueError("give at least one seed")
    data_seed = seeds[0] if data_seed is None else int(data_seed)
    grid = config_grid(params, tables)
    data = prepare_data(corpus, data_dir, profile, data_seed, params, split)
    out = AhmedResults(
        study="ahmed",
        profile=profile,
        corpus=corpus,
        tables=list(tables),
        params=asdict(params),
        seeds=seeds,
        data=data.info,
        train_instances=data.train_instances,
        configs={k: asdict(v) for k, v in grid.items()},
        table_rows={k: v for k, v in table_configs(params).items() if k in tables},
    )
    jobs = [(c, s) for s in seeds for c in grid.values() if s in seeds_for(c.name, params, seeds)]
    bar = tqdm(jobs, desc="ahmed models", unit="model", disable=not progress)
    with limited_threads(params.num_threads or None) as n_threads:
        out.torch_threads = n_threads
        for c, s in bar:
            bar.set_postfix_str(f"{c.name} seed {s}")
            out.runs.append(run_config(c, data, params, seed=s, device=device).record)
    return out
