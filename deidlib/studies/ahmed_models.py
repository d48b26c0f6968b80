"""Ahmed (PhD thesis, chapter 4 and appendix A): GRU, stacked-RNN and self-attention PHI
taggers compared with a Dernoncourt-style BiLSTM, at the profile's scale.

Notebook ``02_ahmed_models`` calls :func:`run_study` and turns its JSON-able result into

* :func:`table_4_2` — binary-token P/R/F1 of the Dernoncourt-style BiLSTM (``festag``
  kind, softmax and CRF), GRU, GRU-GRU, LSTM-GRU and self-attention (``transformer``)
  taggers (thesis Table 4.2; Khin et al. has no implementation here and is left out);
* :func:`table_4_3` — GRU without/with character embedding, dropout 0 / 0.25 / 0.5, CRF
  vs softmax, and the self-attention tagger at dropout 0.1 / 0.25 / 0.5 and with softmax
  (Table 4.3);
* :func:`table_4_4` — the recall penalty δ_p ∈ {1, 3, 5, 10, 15} on the self-attention
  tagger (Table 4.4; §4.1.5, eq. 4.7–4.9, implemented in :mod:`deidlib.models.taggers`);
* :func:`table_4_10` — training seconds per epoch, prediction seconds on the test split
  and trainable parameter count (Table 4.10);
* :func:`table_a1` — per-category P/R/F1 of the best Table 4.2 model (Table A.1);
* :func:`figure_a1_data` / :func:`figure_a1` — per-category (and per-TYPE) test F1
  against the number of PHI instances in the training data (Figure A.1);
* :func:`figure_4_2` — Table 4.2 as a bar chart with ± sd error bars.

Setup (thesis §4.1–4.3):

* labels: the PHI sub-categories (``i2b2`` scheme, festag's 28 TYPEs + O) in the
  **BIOES** encoding (§4.1.4 and §4.3: "We used the BIOES tagging scheme");
* every model trains with Adam, gradient-norm clipping 5.0 and early stopping on the dev
  split's binary-token F1 with patience 10 (§4.2.2); the paper profile keeps the thesis's
  initial learning rate 1e-5 and 100 epochs, the smoke/cpu profiles use a larger rate and
  few epochs so that small models learn something in minutes;
* the score is the binary token-level P/R/F1 of the i2b2 2014 scorer
  (:func:`deidlib.evaluation.evaluate`, measure ``binary_token``); the thesis calls its
  Table 4.2 measure "binary HIPAA token-based", which is also recorded
  (``hipaa_precision``/``hipaa_recall``/``hipaa_f1``, measure ``binary_hipaa_token``);
* data: :func:`deidlib.datasets.load_corpus` (PhysioNet nursing notes: the thesis's
  document-level 80/20 split, 1,948/486 notes, with 20 % of the training notes as dev;
  ``split="patient"`` for a patient-level split). The data split is fixed by
  ``data_seed``; the listed ``seeds`` vary initialisation, dropout and batch order, and
  tables report mean ± sd over them.

Deviations and choices (also visible in the returned ``params``):

* **Word vectors.** The thesis used GloVe 6B 100-d (RNNs) and BERT WordPiece (attention);
  neither can be downloaded here. All taggers get gensim Word2Vec vectors trained on the
  training sentences only (one set per ``word_dim``, seeded by ``data_seed``), fine-tuned
  during training as in §4.2.2 ("Fine Tuning"). ``word_vectors="random"`` disables them.
* **Self-attention.** The thesis fine-tunes a pre-trained BERT-base (12 blocks, 12 heads,
  768 hidden, ~110 M parameters). No pre-trained encoder is available, so the
  ``transformer`` kind is trained from scratch; the paper profile uses the thesis's
  sizes, smoke/cpu small ones. BERT sees sub-words; a word-level encoder trained from
  scratch would see no sub-word information at all, so the tagger keeps its character
  GRU (the thesis's SAT rows have no character embedding, "-" in Table 4.3).
* **Dropout knob.** For the ahmed RNNs, dropout ``d`` is applied to the token features
  and to the context layer output before the label decoding layer (§4.2.2), i.e.
  ``input_dropout = output_dropout = d`` and, for stacked models, ``between_dropout = d``.
  The thesis applies the attention model's dropout "only before the label decoding
  layer"; :class:`deidlib.models.TransformerTagger` has no dropout there, so ``d`` sets
  its ``input_dropout`` and ``attn_dropout`` (encoder dropout) instead.
* **Dernoncourt baseline.** The thesis ran Dernoncourt et al.'s NeuroNER implementation;
  here it is the ``festag`` kind (char BiLSTM + word embedding → BiLSTM → tanh FNN →
  softmax, or CRF), trained with the same optimiser and schedule as the ahmed models so
  that the comparison isolates the architecture (NeuroNER itself uses SGD). Its
  dropout stays the preset's (0.5 on the token features).
* **Khin et al.** (Table 4.2's second row) is not reimplemented.
* **Batch size** is not given in the thesis; 32 sentences (length-bucketed) is our choice
  (16 in the smoke/cpu profiles, for more steps on little data).
* **Threads.** smoke and cpu run torch on one intra-op thread (``num_threads=1``, restored
  afterwards): on the shared 2-core machine, the cpu-size GRU took 8.9 s per epoch on one
  thread and 76 s on two under load (busy-waiting threads). Table 4.10 timings are
  therefore single-thread CPU seconds (``results["torch_threads"]``), not GPU seconds.
* **Best model** for Table A.1 is the Table 4.2 configuration with the highest mean dev
  F1 (the thesis shows its self-attention model); with no dev split, the highest mean
  test F1.
* **Training instances** (Figure A.1) are PHI mentions (``B-``/``S-`` tags) in the
  training sentences actually used (after the profile's sentence cap).
* **Sparse PHI** (``negatives_per_positive``, off by default): only 4 % of the nursing
  notes' training sentences hold PHI, so a 1,000-sentence cap leaves about 40 of them;
  ``negatives_per_positive=k`` keeps every PHI sentence and ``k`` PHI-free ones per PHI
  sentence before the cap. Dev and test keep their natural distribution.
* **CRF** outputs are constrained to well-formed BIOES paths (``deidlib.models.crf``);
  without that, the char-GRU-CRF rows stayed at F1 0 for six cpu-profile epochs.
* Per-category scores use the typed ``token`` mode of the scorer (a token counts for a
  category only with the right TYPE), per-category for Table A.1 and per-TYPE for the
  second panel of Figure A.1.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

__all__ = [
    "SCHEME",
    "ENCODING",
    "TABLES",
    "AhmedParams",
    "PROFILE_PARAMS",
    "RunConfig",
    "params_for",
    "config_grid",
    "table_configs",
    "tagger_hparams",
    "StudyData",
    "prepare_data",
    "RunOutput",
    "run_config",
    "run_study",
    "runs_frame",
    "summarize",
    "table_4_2",
    "table_4_3",
    "table_4_4",
    "table_4_10",
    "best_config",
    "table_a1",
    "category_table",
    "figure_a1_data",
    "figure_4_2",
    "figure_a1",
    "to_markdown",
]

SCHEME, ENCODING = "i2b2", "BIOES"
TABLES = ("4.2", "4.3", "4.4")
RNN_KINDS = ("gru", "gru_gru", "lstm_gru")
METRICS = ("precision", "recall", "f1")
SHORT = {"precision": "P", "recall": "R", "f1": "F1"}


# ------------------------------------------------------------------------ parameters


def _paper_sizes() -> dict[str, dict[str, Any]]:
    rnn = {"word_dim": 100, "char_emb_dim": 50, "char_hidden": 25, "hidden": 150, "ff_dim": 150}
    return {
        # the festag/Dernoncourt preset: one-hot chars, char BiLSTM 128, word 300, BiLSTM 100, FNN 100
        "festag": {},
        "gru": dict(rnn),
        "gru_gru": dict(rnn),
        "lstm_gru": dict(rnn),
        # thesis Table 4.1: 12 blocks, 12 heads, hidden 768 (word 700 + char 2x25 + casing 7 = 757 -> d_model 768)
        "transformer": {
            "word_dim": 700,
            "char_emb_dim": 50,
            "char_hidden": 25,
            "layers": 12,
            "heads": 12,
            "ff_hidden": 3072,
        },
    }


@dataclass(frozen=True)
class AhmedParams:
    """All knobs of the study (defaults = the thesis; profiles override some)."""

    epochs: int = 100
    patience: int | None = 10
    optimizer: str = "adam"
    lr: float = 1e-5
    clip: float | None = 5.0
    batch_size: int = 32
    #: number of training seeds (mean ± sd over them)
    n_seeds: int = 3
    #: tagger sizes per kind, passed to build_tagger on top of its preset
    sizes: dict[str, dict[str, Any]] = field(default_factory=_paper_sizes)
    #: Table 4.3 dropout rates of the GRU model and of the self-attention model
    gru_dropouts: tuple[float, ...] = (0.0, 0.25, 0.5)
    sat_dropouts: tuple[float, ...] = (0.1, 0.25, 0.5)
    #: dropout of the main (Table 4.2) GRU-type models and self-attention model
    rnn_dropout: float = 0.5
    sat_dropout: float = 0.25
    #: Table 4.4 recall penalties δ_p
    deltas: tuple[float, ...] = (1.0, 3.0, 5.0, 10.0, 15.0)
    #: "word2vec": gensim vectors from the training sentences (GloVe stand-in); "random"
    word_vectors: str = "word2vec"
    word2vec_epochs: int = 5
    #: caps (None: all) on training sentences and on dev/test documents
    max_train_sentences: int | None = None
    #: keep every training sentence with PHI and this many PHI-free ones per PHI sentence
    #: (None: all), before the max_train_sentences cap; dev and test are never down-sampled
    negatives_per_positive: float | None = None
    max_dev_documents: int | None = None
    max_test_documents: int | None = None
    eval_batch_size: int = 64
    #: torch intra-op threads while the study runs (None: leave torch's setting); tiny models
    #: run faster on one thread, and a shared CPU does not stall on busy-waiting threads
    num_threads: int | None = None


_SMALL_RNN = {"word_dim": 16, "char_emb_dim": 8, "char_hidden": 8, "hidden": 16, "ff_dim": 16}
_CPU_RNN = {"word_dim": 50, "char_emb_dim": 16, "char_hidden": 16, "hidden": 48, "ff_dim": 48}

PROFILE_PARAMS: dict[str, AhmedParams] = {
    "smoke": AhmedParams(
        epochs=2,
        patience=None,
        lr=1e-2,
        batch_size=16,
        n_seeds=1,
        sizes={
            "festag": {**_SMALL_RNN, "char_onehot": False},
            "gru": dict(_SMALL_RNN),
            "gru_gru": dict(_SMALL_RNN),
            "lstm_gru": dict(_SMALL_RNN),
            "transformer": {
                "word_dim": 16,
                "char_emb_dim": 8,
                "char_hidden": 8,
                "layers": 1,
                "heads": 2,
                "ff_hidden": 32,
            },
        },
        word2vec_epochs=1,
        max_train_sentences=120,
        max_dev_documents=3,
        max_test_documents=6,
        num_threads=1,
    ),
    "cpu": AhmedParams(
        epochs=6,
        # no early stop within 6 epochs (the small RNNs predict only O for 2-4 epochs, and
        # patience 3 stopped them there); the best dev epoch's weights are restored
        patience=6,
        lr=8e-3,
        batch_size=16,
        n_seeds=2,
        sizes={
            "festag": {**_CPU_RNN, "char_onehot": False},
            "gru": dict(_CPU_RNN),
            "gru_gru": dict(_CPU_RNN),
            "lstm_gru": dict(_CPU_RNN),
            "transformer": {
                "word_dim": 64,
                "char_emb_dim": 16,
                "char_hidden": 16,
                "layers": 2,
                "heads": 4,
                "ff_hidden": 128,
            },
        },
        max_train_sentences=1000,
        max_dev_documents=30,
        max_test_documents=80,
        num_threads=1,
    ),
    "paper": AhmedParams(),
}


def params_for(profile: str, **overrides: Any) -> AhmedParams:
    """The profile's parameters with ``overrides`` (``None`` values are ignored; ``sizes``
    is merged per kind)."""
    try:
        base = PROFILE_PARAMS[profile]
    except KeyError:
        raise ValueError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILE_PARAMS)}") from None
    kw = {k: v for k, v in overrides.items() if v is not None}
    unknown = set(kw) - set(AhmedParams.__dataclass_fields__)
    if unknown:
        raise ValueError(f"unknown ahmed_models parameters: {sorted(unknown)}")
    if "sizes" in kw:
        bad = set(kw["sizes"]) - set(base.sizes)
        if bad:
            raise ValueError(f"sizes for unknown tagger kinds {sorted(bad)}")
        kw["sizes"] = {k: {**v, **kw["sizes"].get(k, {})} for k, v in base.sizes.items()}
    for name in ("gru_dropouts", "sat_dropouts", "deltas"):
        if name in kw:
            kw[name] = tuple(float(x) for x in kw[name])
    p = replace(base, **kw)
    if p.epochs < 1 or p.batch_size < 1 or p.n_seeds < 1:
        raise ValueError("epochs, batch_size and n_seeds must be >= 1")
    if any(d < 1 for d in p.deltas):
        raise ValueError(f"recall penalties δ_p must be >= 1, got {p.deltas}")
    if any(not 0 <= d < 1 for d in (*p.gru_dropouts, *p.sat_dropouts, p.rnn_dropout, p.sat_dropout)):
        raise ValueError("dropout rates must lie in [0, 1)")
    return p


# ------------------------------------------------------------------- configurations


@dataclass(frozen=True)
class RunConfig:
    """One trained model: a tagger kind and the study knobs the thesis varies."""

    name: str
    kind: str
    label: str
    crf: bool = True
    char: bool = True
    dropout: float | None = None  # None: the kind's preset (the festag baseline)
    delta_p: float = 1.0


def _fmt(x: float) -> str:
    return f"{x:g}"


def config_grid(params: AhmedParams, tables: Sequence[str] = TABLES) -> dict[str, RunConfig]:
    """Every distinct configuration the requested tables need (shared rows are trained once:
    Table 4.3's GRU/CE/CRF/0.5 row is Table 4.2's GRU, and Table 4.4's δ_p = 1 row and
    Table 4.3's SAT/CRF row at the main dropout are Table 4.2's self-attention model)."""
    bad = [t for t in tables if t not in TABLES]
    if bad:
        raise ValueError(f"unknown tables {bad}; choose from {TABLES}")
    rd, sd = params.rnn_dropout, params.sat_dropout

    def gru(crf=True, char=True, d=rd):
        return RunConfig(
            f"gru{'' if char else '-nochar'}-{'crf' if crf else 'softmax'}-d{_fmt(d)}",
            "gru",
            "GRU",
            crf,
            char,
            d,
        )

    def sat(crf=True, d=sd, delta=1.0):
        tail = f"-dp{_fmt(delta)}" if delta != 1 else ""
        return RunConfig(
            f"sat-{'crf' if crf else 'softmax'}-d{_fmt(d)}{tail}",
            "transformer",
            "Self-attention",
            crf,
            True,
            d,
            delta,
        )

    out: list[RunConfig] = []
    if "4.2" in tables:
        out += [
            RunConfig("festag-softmax", "festag", "BiLSTM (Dernoncourt)", crf=False),
            RunConfig("festag-crf", "festag", "BiLSTM-CRF (Dernoncourt)", crf=True),
            gru(),
            RunConfig(f"gru_gru-crf-d{_fmt(rd)}", "gru_gru", "GRU-GRU", True, True, rd),
            RunConfig(f"lstm_gru-crf-d{_fmt(rd)}", "lstm_gru", "LSTM-GRU", True, True, rd),
            sat(),
        ]
    if "4.3" in tables:
        out.append(gru(char=False))
        out += [gru(d=d) for d in params.gru_dropouts]
        out.append(gru(crf=False))
        out += [sat(d=d) for d in params.sat_dropouts]
        out.append(sat(crf=False))
    if "4.4" in tables:
        out += [sat(delta=dp) for dp in params.deltas]
    grid: dict[str, RunConfig] = {}
    for c in out:
        grid.setdefault(c.name, c)
    return grid


def table_configs(params: AhmedParams) -> dict[str, list[str]]:
    """Config names making up the rows of each table, in row order."""
    rd, sd = params.rnn_dropout, params.sat_dropout
    rows_43 = [f"gru-nochar-crf-d{_fmt(rd)}"] + [f"gru-crf-d{_fmt(d)}" for d in params.gru_dropouts]
    rows_43.append(f"gru-softmax-d{_fmt(rd)}")
    sat_rows = [f"sat-crf-d{_fmt(d)}" for d in params.sat_dropouts]
    soft = f"sat-softmax-d{_fmt(sd)}"
    main = f"sat-crf-d{_fmt(sd)}"
    # the thesis's order: the softmax row right after the CRF row at the main dropout
    sat_rows.insert(sat_rows.index(main) + 1 if main in sat_rows else len(sat_rows), soft)
    return {
        "4.2": [
            "festag-softmax",
            "festag-crf",
            f"gru-crf-d{_fmt(rd)}",
            f"gru_gru-crf-d{_fmt(rd)}",
            f"lstm_gru-crf-d{_fmt(rd)}",
            f"sat-crf-d{_fmt(sd)}",
        ],
        "4.3": rows_43 + sat_rows,
        "4.4": [f"sat-crf-d{_fmt(sd)}" + (f"-dp{_fmt(dp)}" if dp != 1 else "") for dp in params.deltas],
    }


def tagger_hparams(config: RunConfig, params: AhmedParams) -> dict[str, Any]:
    """``build_tagger`` keyword arguments for a configuration (see the module docstring
    for how the dropout knob maps onto each kind)."""
    hp: dict[str, Any] = dict(params.sizes.get(config.kind, {}))
    hp["crf"] = config.crf
    hp["recall_penalty"] = float(config.delta_p) if config.delta_p != 1 else None
    if not config.char:
        hp["char"] = None
    d = config.dropout
    if d is not None:
        if config.kind == "transformer":
            hp.update(input_dropout=d, attn_dropout=d)
        else:
            hp.update(input_dropout=d, output_dropout=d)
            if config.kind in ("gru_gru", "lstm_gru"):
                hp["between_dropout"] = d
    return hp


# ----------------------------------------------------------------------------- data


@dataclass
class StudyData:
    train_sentences: list[Any]
    dev_docs: list[Any]
    test_docs: list[Any]
    featurizer: Any
    #: PHI mentions in the training sentences, per category and per TYPE
    train_instances: dict[str, dict[str, int]]
    info: dict[str, Any]
    _vectors: dict[int, np.ndarray] = field(default_factory=dict, repr=False)


def _cap(items: list, n: int | None, seed: int) -> list:
    if n is None or len(items) <= n:
        return list(items)
    idx = np.sort(np.random.default_rng(seed).choice(len(items), n, replace=False))
    return [items[i] for i in idx]


def _instances(sentences) -> dict[str, dict[str, int]]:
    from ..corpus.phi import TYPE_TO_CATEGORY

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
) -> StudyData:
    """Load and split the corpus, tag the training sentences (BIOES over TYPEs), apply the
    profile's caps and build the shared featurizer (vocabulary from training text only)."""
    from ..corpus.labels import downsample_negatives, tag_set, tagged_sentences
    from ..datasets import load_corpus
    from ..models import build_featurizer
    from ..results import fingerprint_documents
    from ..rng import derive_seed

    params = params or params_for(profile)
    splits = load_corpus(corpus=corpus, data_dir=data_dir, profile=profile, seed=data_seed, split=split)
    if not splits.train or not splits.test:
        raise ValueError(f"corpus {corpus!r} gave an empty training or test split")
    sents = [s for s in tagged_sentences(splits.train, SCHEME, ENCODING) if s.tokens]
    if params.negatives_per_positive is not None:
        sents = downsample_negatives(sents, params.negatives_per_positive, derive_seed(data_seed, "ahmed-negatives"))
    sents = _cap(sents, params.max_train_sentences, derive_seed(data_seed, "ahmed-train-cap"))
    dev = _cap(list(splits.dev), params.max_dev_documents, derive_seed(data_seed, "ahmed-dev-cap"))
    test = _cap(list(splits.test), params.max_test_documents, derive_seed(data_seed, "ahmed-test-cap"))
    fz = build_featurizer("gru", [s.words for s in sents], labels=tag_set(SCHEME, ENCODING))
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
    }
    return StudyData(sents, dev, test, fz, _instances(sents), info)


def _word_vectors(data: StudyData, dim: int, params: AhmedParams) -> np.ndarray | None:
    if params.word_vectors == "random":
        return None
    if params.word_vectors != "word2vec":
        raise ValueError(f"word_vectors must be 'word2vec' or 'random', got {params.word_vectors!r}")
    if dim not in data._vectors:
        from ..embeddings.vectors import embedding_matrix, train_word_vectors

        seed = int(data.info["data_seed"])
        words = [[data.featurizer.word_key(w) for w in s.words] for s in data.train_sentences]
        kv = train_word_vectors(
            words, dim=dim, epochs=params.word2vec_epochs, seed=seed, cache=data.info["corpus"] == "synthetic"
        )  # never cache vectors of real text
        data._vectors[dim], _ = embedding_matrix(data.featurizer.words, kv, seed=seed)
    return data._vectors[dim]


# ----------------------------------------------------------------------------- runs


@dataclass
class RunOutput:
    record: dict[str, Any]
    tagger: Any
    predictions: list[Any]
    report: Any


def _prf(p) -> dict[str, float]:
    return {"precision": p.precision, "recall": p.recall, "f1": p.f1}


def run_config(
    config: RunConfig,
    data: StudyData,
    params: AhmedParams,
    *,
    seed: int = 0,
    device: str = "cpu",
    progress: bool = False,
) -> RunOutput:
    """Build, train (early stopping on dev) and score one configuration for one seed.

    The returned record is JSON-able: binary-token test P/R/F1, the binary HIPAA token
    scores, per-category and per-TYPE typed token scores (``per_category``/``per_type``:
    name -> {precision, recall, f1, tp, fp, fn}), seconds per training epoch (mean over
    the epochs run), test prediction seconds, trainable parameters and epochs run.
    """
    from ..evaluation import evaluate
    from ..models import build_tagger, count_parameters
    from ..models.taggers import PRESETS
    from ..training import predict_documents, train

    hp = tagger_hparams(config, params)
    dim = int(hp.get("word_dim", PRESETS[config.kind]["word_dim"]))
    vectors = _word_vectors(data, dim, params)
    tagger = build_tagger(config.kind, data.featurizer, seed=seed, embeddings=vectors, **hp)
    tagger.task = {"scheme": SCHEME, "encoding": ENCODING, "mode": "default"}
    hist = train(
        tagger,
        data.train_sentences,
        data.dev_docs or None,
        None,
        epochs=params.epochs,
        batch_size=params.batch_size,
        optimizer=params.optimizer,
        lr=params.lr,
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
        "hparams": tagger.config()["hparams"],
        "history": hist.epochs,
        "per_category": _per(rep.per_category["token"]),
        "per_type": _per(rep.per_type["token"]),
    }
    return RunOutput(record, tagger, preds, rep)


def _per(table) -> dict[str, dict[str, float]]:
    return {k: {**_prf(p), "tp": n[0], "fp": n[1], "fn": n[2]} for k, (p, n) in table.items()}


def run_study(
    profile: str = "cpu",
    corpus: str = "synthetic",
    data_dir: str | None = None,
    seeds: Sequence[int] | None = None,
    *,
    data_seed: int | None = None,
    split: str | None = None,
    tables: Sequence[str] = TABLES,
    device: str = "cpu",
    progress: bool = True,
    **overrides: Any,
) -> dict[str, Any]:
    """Train every configuration the ``tables`` need for every seed; a JSON-able dict.

    ``seeds`` default to ``0 .. n_seeds-1`` of the profile; ``data_seed`` (default: the
    first seed) fixes the corpus split, caps and word vectors. ``overrides`` are
    :class:`AhmedParams` fields.
    """
    import torch
    from tqdm.auto import tqdm

    params = params_for(profile, **overrides)
    seeds = list(range(params.n_seeds)) if seeds is None else [int(s) for s in seeds]
    if not seeds:
        raise ValueError("give at least one seed")
    data_seed = seeds[0] if data_seed is None else int(data_seed)
    grid = config_grid(params, tables)
    data = prepare_data(corpus, data_dir, profile, data_seed, params, split)
    out: dict[str, Any] = {
        "study": "ahmed",
        "profile": profile,
        "corpus": corpus,
        "tables": list(tables),
        "params": asdict(params),
        "seeds": seeds,
        "data": data.info,
        "train_instances": data.train_instances,
        "configs": {k: asdict(v) for k, v in grid.items()},
        "table_rows": {k: v for k, v in table_configs(params).items() if k in tables},
        "runs": [],
    }
    jobs = [(c, s) for s in seeds for c in grid.values()]
    bar = tqdm(jobs, desc="ahmed models", unit="model", disable=not progress)
    threads = torch.get_num_threads()
    if params.num_threads:
        torch.set_num_threads(params.num_threads)
    out["torch_threads"] = torch.get_num_threads()
    try:
        for c, s in bar:
            bar.set_postfix_str(f"{c.name} seed {s}")
            out["runs"].append(run_config(c, data, params, seed=s, device=device).record)
    finally:
        torch.set_num_threads(threads)
    return out


# -------------------------------------------------------------------------- tables


def runs_frame(results: dict[str, Any]):
    """One row per (config, seed) with the scalar fields of the run records."""
    import pandas as pd

    skip = {"hparams", "history", "per_category", "per_type"}
    return pd.DataFrame.from_records([{k: v for k, v in r.items() if k not in skip} for r in results["runs"]])


def summarize(df, by: Sequence[str] | str, metrics: Sequence[str] = METRICS, scale: float = 100.0):
    """Mean and sample sd (ddof=1; NaN for one seed) of ``metrics`` per group, times ``scale``;
    columns ``<M>_mean``, ``<M>_sd`` (M = P, R, F1 for precision/recall/f1) and ``n``."""
    import pandas as pd

    by = [by] if isinstance(by, str) else list(by)
    g = df.groupby(by, sort=False)
    cols: dict[str, Any] = {}
    for m in metrics:
        s = SHORT.get(m, m)
        cols[f"{s}_mean"] = g[m].mean() * scale
        cols[f"{s}_sd"] = g[m].std(ddof=1) * scale
    cols["n"] = g[metrics[0]].count()
    return pd.DataFrame(cols)


def _rows(results: dict[str, Any], table: str):
    rows = results.get("table_rows", {}).get(table)
    if rows is None:
        raise ValueError(f"these results have no Table {table} (ran tables {results.get('tables')})")
    return rows


def _table(results: dict[str, Any], table: str, columns: Sequence[str], metrics: Sequence[str] = METRICS):
    df = runs_frame(results)
    rows = _rows(results, table)
    df = df[df.config.isin(rows)]
    s = summarize(df, "config", metrics).reindex(rows)
    first = df.drop_duplicates("config").set_index("config").reindex(rows)
    t = first[list(columns)].join(s)
    return t.reset_index()


def table_4_2(results: dict[str, Any]):
    """Table 4.2 analog: binary-token P/R/F1 (%) mean ± sd over seeds per model."""
    return _table(results, "4.2", ["model", "kind", "crf"])


def table_4_3(results: dict[str, Any]):
    """Table 4.3 analog: GRU with/without character embedding (CE), CRF vs softmax,
    dropout; self-attention (SAT) dropout and CRF vs softmax."""
    t = _table(results, "4.3", ["model", "char", "crf", "dropout"])
    t.insert(1, "CE", t.pop("char"))
    t.insert(3, "softmax", ~t["crf"].astype(bool))
    t["model"] = t["model"].replace({"Self-attention": "SAT"})
    return t


def table_4_4(results: dict[str, Any]):
    """Table 4.4 analog: the recall penalty δ_p on the self-attention model."""
    return _table(results, "4.4", ["delta_p"])


def table_4_10(results: dict[str, Any]):
    """Table 4.10 analog: seconds per training epoch, prediction seconds on the test split
    (mean ± sd over seeds), trainable parameters and prediction throughput, for the
    Table 4.2 models (all configurations when Table 4.2 was not run)."""
    import pandas as pd

    df = runs_frame(results)
    rows = results.get("table_rows", {}).get("4.2") or list(dict.fromkeys(df.config))
    df = df[df.config.isin(rows)].copy()
    df["predict_tokens_per_s"] = df["test_whitespace_tokens"] / df["predict_seconds"]
    g = df.groupby("config", sort=False)
    t = pd.DataFrame(
        {
            "model": g["model"].first(),
            "crf": g["crf"].first(),
            "train_s_per_epoch_mean": g["train_seconds_per_epoch"].mean(),
            "train_s_per_epoch_sd": g["train_seconds_per_epoch"].std(ddof=1),
            "predict_s_mean": g["predict_seconds"].mean(),
            "predict_s_sd": g["predict_seconds"].std(ddof=1),
            "predict_tokens_per_s": g["predict_tokens_per_s"].mean(),
            "n_parameters": g["n_parameters"].first(),
            "epochs_run_mean": g["epochs_run"].mean(),
        }
    ).reindex(rows)
    return t.reset_index()


def best_config(results: dict[str, Any]) -> str:
    """The Table 4.2 configuration with the highest mean dev F1 (test F1 without dev)."""
    df = runs_frame(results)
    rows = results.get("table_rows", {}).get("4.2") or list(dict.fromkeys(df.config))
    df = df[df.config.isin(rows)]
    key = "best_dev_f1" if df["best_dev_f1"].notna().all() else "f1"
    means = df.groupby("config", sort=False)[key].mean()
    return str(means.idxmax())


def _predictable(level: str) -> set[str]:
    """TYPEs (or categories) the ``i2b2`` label scheme can predict (not ROOM, DEPARTMENT,
    OTHER: they are folded into LOCATION-OTHER or treated as non-PHI)."""
    from ..corpus.labels import scheme_labels
    from ..corpus.phi import TYPE_TO_CATEGORY

    types = {t for t in scheme_labels(SCHEME) if t in TYPE_TO_CATEGORY}
    return types if level == "type" else {TYPE_TO_CATEGORY[t] for t in types}


def category_table(records: Sequence[dict[str, Any]], level: str = "category", predictable_only: bool = True):
    """Per-category (``level="category"``) or per-TYPE (``"type"``) typed token P/R/F1 (%)
    mean ± sd over the given run records (one configuration, several seeds), with the
    gold test counts (TP + FN) of the first record. ``predictable_only`` drops the
    categories/TYPEs the label scheme has no label for (OTHER; ROOM, DEPARTMENT)."""
    import pandas as pd

    key = {"category": "per_category", "type": "per_type"}.get(level)
    if key is None:
        raise ValueError(f"level must be 'category' or 'type', got {level!r}")
    if not records:
        raise ValueError("no run records")
    keep = _predictable(level) if predictable_only else None
    rows = [
        {level: name, "seed": r["seed"], **v}
        for r in records
        for name, v in r[key].items()
        if keep is None or name in keep
    ]
    df = pd.DataFrame.from_records(rows)
    s = summarize(df, level)
    gold = {name: v["tp"] + v["fn"] for name, v in records[0][key].items()}
    s.insert(0, "test_gold", [gold.get(n, 0) for n in s.index])
    return s.reset_index()


def table_a1(results: dict[str, Any], config: str | None = None, level: str = "category"):
    """Table A.1 analog: per-category P/R/F1 (%) of ``config`` (default :func:`best_config`)."""
    config = config or best_config(results)
    recs = [r for r in results["runs"] if r["config"] == config]
    if not recs:
        raise ValueError(f"no runs of configuration {config!r}")
    t = category_table(recs, level)
    t.insert(0, "config", config)
    return t


def figure_a1_data(results: dict[str, Any], config: str | None = None, level: str = "category"):
    """Figure A.1 analog data: per category (or TYPE), the PHI instances in the training
    sentences and the mean ± sd test F1 (%) of ``config`` (default :func:`best_config`).
    Categories absent from the test gold standard are left out (their F1 is undefined)."""
    t = table_a1(results, config, level)
    t = t[t["test_gold"] > 0].copy()
    inst = results["train_instances"][level]
    t.insert(2, "train_instances", [int(inst.get(n, 0)) for n in t[level]])
    return t.reset_index(drop=True)


# ------------------------------------------------------------------------- figures


def figure_4_2(results: dict[str, Any]):
    """Table 4.2 as grouped bars (P, R, F1 per model) with ± sd error bars over seeds."""
    import matplotlib.pyplot as plt

    from ..plotting import apply_style

    apply_style()
    t = table_4_2(results)
    fig, ax = plt.subplots(figsize=(9, 4))
    x = np.arange(len(t))
    w = 0.27
    for i, (m, color) in enumerate((("P", "#4C72B0"), ("R", "#DD8452"), ("F1", "#55A868"))):
        sd = t[f"{m}_sd"].fillna(0).to_numpy()
        ax.bar(x + (i - 1) * w, t[f"{m}_mean"], w, yerr=sd, capsize=3, color=color, label=m)
    ax.set_xticks(x)
    ax.set_xticklabels(t["model"], rotation=20, ha="right")
    ax.set_ylabel("binary token score (%)")
    lo = np.nanmin(t[["P_mean", "R_mean", "F1_mean"]].to_numpy())
    ax.set_ylim(max(0.0, math.floor(lo / 10) * 10 - 10), 100)
    ax.legend(loc="lower right", ncol=3, fontsize=8)
    seeds = results.get("seeds", [])
    ax.set_title(
        f"ahmed Table 4.2 analog — {results.get('corpus')}, profile {results.get('profile')}, "
        f"{len(seeds)} seed(s)",
        fontsize=10,
    )
    fig.tight_layout()
    return fig


def figure_a1(results: dict[str, Any], config: str | None = None):
    """Figure A.1 analog: test F1 vs PHI instances in training, per category (left) and
    per TYPE (right), for ``config`` (default :func:`best_config`); ± sd error bars."""
    import matplotlib.pyplot as plt

    from ..plotting import apply_style

    apply_style()
    config = config or best_config(results)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, level in zip(axes, ("category", "type")):
        d = figure_a1_data(results, config, level)
        x = np.maximum(d["train_instances"].to_numpy(), 0.8)  # 0 instances shown at the left edge
        ax.errorbar(x, d["F1_mean"], yerr=d["F1_sd"].fillna(0), fmt="o", capsize=3)
        for xi, yi, name in zip(x, d["F1_mean"], d[level]):
            ax.annotate(name, (xi, yi), textcoords="offset points", xytext=(4, 3), fontsize=7)
        ax.set_xscale("log")
        ax.set_xlabel(f"PHI instances in training ({level})")
        ax.set_title(f"per {'TYPE' if level == 'type' else 'category'}")
    axes[0].set_ylabel("test F1 (%, typed token)")
    axes[0].set_ylim(-2, 102)
    fig.suptitle(
        f"ahmed Figure A.1 analog — {config}, {results.get('corpus')}, profile {results.get('profile')}",
        fontsize=10,
    )
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------ markdown


def to_markdown(df, digits: int = 2) -> str:
    """A GitHub markdown table; ``X_mean``/``X_sd`` column pairs become ``mean ± sd``."""
    cols = list(df.columns)
    out_cols: list[str] = []
    cells: list[list[str]] = [[] for _ in range(len(df))]

    def fmt(v) -> str:
        if isinstance(v, (bool, np.bool_)):
            return "✓" if v else "×"
        if isinstance(v, (int, np.integer)):
            return str(int(v))
        if isinstance(v, (float, np.floating)):
            return "–" if math.isnan(v) else f"{v:.{digits}f}"
        return "–" if v is None else str(v)

    for c in cols:
        if c.endswith("_sd") and c[:-3] + "_mean" in cols:
            continue
        if c.endswith("_mean") and c[:-5] + "_sd" in cols:
            out_cols.append(c[:-5])
            for i, (m, s) in enumerate(zip(df[c], df[c[:-5] + "_sd"])):
                cells[i].append(
                    fmt(m)
                    if s is None or (isinstance(s, float) and math.isnan(s))
                    else f"{fmt(m)} ± {fmt(s)}"
                )
        else:
            out_cols.append(str(c))
            for i, v in enumerate(df[c]):
                cells[i].append(fmt(v))
    lines = ["| " + " | ".join(out_cols) + " |", "|" + "|".join("---" for _ in out_cols) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in cells]
    return "\n".join(lines)
