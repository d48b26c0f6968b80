"""ahmed chapter 4: the study's parameters (profiles) and the configurations each table trains."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ...models.taggers import FF_ACTIVATIONS
from ..params import StudyParams, profiles

__all__ = ["AhmedParams", "params_for", "SAT_KIND", "TABLES", "config_grid", "main_sat"]

SCHEME, ENCODING = "i2b2", "BIOES"
TABLES = ("4.2", "4.3", "4.4")
_RNN_KINDS = ("gru", "gru_gru", "lstm_gru")
METRICS = ("precision", "recall", "f1")
SHORT = {"precision": "P", "recall": "R", "f1": "F1"}
#: the self-attention tagger (SAT) of the thesis: a pre-trained encoder fine-tuned with a CRF
#: (:class:`deidlib.models.encoder_tagger.EncoderTagger`, all-MiniLM-L6-v2 standing in for BERT-base)
SAT_KIND, SAT_LABEL = "minilm", "Self-attention (pre-trained MiniLM)"
#: the extra Table 4.2 row: a small transformer tagger trained from scratch on word2vec vectors
SCRATCH_KIND, _SCRATCH_LABEL = "transformer", "transformer (from scratch)"


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
        # the self-attention tagger (SAT): pre-trained all-MiniLM-L6-v2 fine-tuned end to end + CRF
        "minilm": {"finetune_layers": None},
    }


@dataclass(frozen=True)
class AhmedParams(StudyParams):
    """All knobs of the study (defaults = the thesis; profiles override some)."""

    STUDY: ClassVar[str] = "ahmed_models"
    MERGED: ClassVar[tuple[str, ...]] = ("sizes",)

    epochs: int = 100
    patience: int | None = 10
    optimizer: str = "adam"
    lr: float = 1e-5
    clip: float | None = 5.0
    batch_size: int = 32
    #: number of training seeds (mean, sd and 95 % t interval over them; paired tests across them)
    n_seeds: int = 3
    #: seeds of the configurations that carry no claim (Table 4.3's self-attention rows at
    #: dropouts other than the main one): the first ``n_seeds_other`` seeds (None: all)
    n_seeds_other: int | None = None
    #: fraction of the test split's 3+ letter tokens given one typing error for the
    #: misspelled-test scores (:mod:`deidlib.synthetic.misspell`; 0: not scored)
    misspell_rate: float = 0.15
    #: tagger sizes per kind, passed to build_tagger on top of its preset
    sizes: dict[str, dict[str, Any]] = field(default_factory=_paper_sizes)
    #: Table 4.3 dropout rates of the GRU model and of the self-attention model
    gru_dropouts: tuple[float, ...] = (0.0, 0.25, 0.5)
    sat_dropouts: tuple[float, ...] = (0.1, 0.25, 0.5)
    #: activation of the feed-forward (FNN) layer of every RNN tagger of the study, the
    #: Dernoncourt baseline included: "relu" (our choice; the thesis names none) or "tanh"
    #: (NeuroNER's; with it the cpu-profile taggers stay in the all-O phase, see the package docstring)
    ff_activation: str = "relu"
    #: dropout of the main (Table 4.2) GRU-type models and self-attention model
    rnn_dropout: float = 0.5
    sat_dropout: float = 0.25
    #: Table 4.4 recall penalties δ_p
    deltas: tuple[float, ...] = (1.0, 3.0, 5.0, 10.0, 15.0)
    #: the self-attention tagger's (pre-trained MiniLM) learning rate and epochs (None: ``lr`` /
    #: ``epochs``, as the thesis trains every model alike)
    sat_lr: float | None = None
    sat_epochs: int | None = None
    #: seeds of the self-attention configurations other than the Table 4.2 row (Table 4.3's softmax
    #: row, Table 4.4's δ_p rows; the first ``n_seeds_sat`` seeds, None: all): the pre-trained encoder
    #: costs tens of times a small RNN's epoch on a CPU
    n_seeds_sat: int | None = None
    #: also train the from-scratch transformer tagger as an extra Table 4.2 row
    scratch_transformer: bool = True
    #: score the self-attention tagger on the misspelled test split too (it has no character
    #: features; the misspelled-split claims read the GRU rows only)
    sat_misspelled: bool = True
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

    def _merge(self, name: str, value: dict) -> dict:
        bad = set(value) - set(self.sizes)
        if bad:
            raise ValueError(f"sizes for unknown tagger kinds {sorted(bad)}")
        return {k: {**v, **value.get(k, {})} for k, v in self.sizes.items()}

    def check(self) -> None:
        if self.epochs < 1 or self.batch_size < 1 or self.n_seeds < 1:
            raise ValueError("epochs, batch_size and n_seeds must be >= 1")
        if self.n_seeds_other is not None and self.n_seeds_other < 1:
            raise ValueError(f"n_seeds_other must be >= 1 or None, got {self.n_seeds_other}")
        if self.n_seeds_sat is not None and self.n_seeds_sat < 1:
            raise ValueError(f"n_seeds_sat must be >= 1 or None, got {self.n_seeds_sat}")
        if (self.sat_epochs is not None and self.sat_epochs < 1) or (self.sat_lr is not None and not self.sat_lr > 0):
            raise ValueError("sat_epochs must be >= 1 and sat_lr > 0 (or None)")
        if not 0 <= self.misspell_rate <= 1:
            raise ValueError(f"misspell_rate must lie in [0, 1], got {self.misspell_rate}")
        if any(d < 1 for d in self.deltas):
            raise ValueError(f"recall penalties δ_p must be >= 1, got {self.deltas}")
        if any(not 0 <= d < 1 for d in (*self.gru_dropouts, *self.sat_dropouts, self.rnn_dropout, self.sat_dropout)):
            raise ValueError("dropout rates must lie in [0, 1)")
        if self.ff_activation not in FF_ACTIVATIONS:
            raise ValueError(f"ff_activation must be one of {sorted(FF_ACTIVATIONS)}, got {self.ff_activation!r}")
        if self.word_vectors not in ("word2vec", "random"):
            raise ValueError(f"word_vectors must be 'word2vec' or 'random', got {self.word_vectors!r}")


_SMALL_RNN = {"word_dim": 16, "char_emb_dim": 8, "char_hidden": 8, "hidden": 16, "ff_dim": 16}
_CPU_RNN = {"word_dim": 50, "char_emb_dim": 16, "char_hidden": 16, "hidden": 48, "ff_dim": 48}

PROFILE_PARAMS: dict[str, AhmedParams] = profiles(AhmedParams, {
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
            # the encoder frozen and cut to its first layer: a smoke run only checks the plumbing
            "minilm": {"finetune_layers": 0, "layers": [1]},
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
        # 5 seeds for every row that carries a claim (paired tests) but the SAT rows other than
        # Table 4.2's (n_seeds_sat); 3 for the rows no claim reads
        n_seeds=5,
        n_seeds_other=3,
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
            # the top 2 of MiniLM's 6 layers fine-tuned (embeddings and layers 1-4 frozen): on one
            # CPU thread an epoch of 1,000 sentences took 44 s end to end and 23 s with the top 2
            "minilm": {"finetune_layers": 2},
        },
        # measured at this profile (one thread, shared 2-core machine): a SAT run took 181 s
        # (3 epochs of 28 s, test prediction 22 s, the misspelled split 22 s) against 11 s for
        # the GRU. What fits 35 minutes: the Table 4.2 SAT row on every seed, the SAT softmax
        # and δ_p rows on 2, no SAT dropout rows (paper profile: all of them), δ_p ∈ {1, 10}
        sat_lr=3e-4,
        sat_epochs=3,
        n_seeds_sat=2,
        sat_dropouts=(0.25,),
        deltas=(1.0, 10.0),
        sat_misspelled=False,
        max_train_sentences=1000,
        max_dev_documents=30,
        max_test_documents=80,
        num_threads=1,
    ),
    "paper": AhmedParams(),
})


def params_for(profile: str, **overrides: Any) -> AhmedParams:
    """The profile's parameters with ``overrides`` (:meth:`StudyParams.resolve`; ``sizes``
    is merged per kind)."""
    return AhmedParams.resolve(profile, **overrides)


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
            SAT_KIND,
            SAT_LABEL,
            crf,
            False,  # no character embedding: the encoder reads WordPiece sub-words (thesis: "-")
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
        if params.scratch_transformer:
            out.append(RunConfig(f"transformer-crf-d{_fmt(sd)}", SCRATCH_KIND, _SCRATCH_LABEL, True, True, sd))
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
            *([f"transformer-crf-d{_fmt(sd)}"] if params.scratch_transformer else []),
        ],
        "4.3": rows_43 + sat_rows,
        "4.4": [f"sat-crf-d{_fmt(sd)}" + (f"-dp{_fmt(dp)}" if dp != 1 else "") for dp in params.deltas],
    }


def main_sat(params: AhmedParams) -> str:
    """The self-attention tagger's Table 4.2 configuration (CRF, main dropout, δ_p = 1)."""
    return f"sat-crf-d{_fmt(params.sat_dropout)}"


def claim_configs(params: AhmedParams) -> set[str]:
    """Configurations some claim reads (every Table 4.2 row, for "self-attention beats the
    best RNN"; the CE, CRF/softmax and GRU dropout rows of Table 4.3; every Table 4.4 row):
    they train on all seeds, the others on ``n_seeds_other``."""
    rows = table_configs(params)
    sd = params.sat_dropout
    return set(rows["4.2"]) | set(rows["4.4"]) | {r for r in rows["4.3"] if not r.startswith("sat-crf-")} | {
        f"sat-crf-d{_fmt(sd)}"}


def tagger_hparams(config: RunConfig, params: AhmedParams) -> dict[str, Any]:
    """``build_tagger`` keyword arguments for a configuration (see the module docstring
    for how the dropout knob maps onto each kind)."""
    hp: dict[str, Any] = dict(params.sizes.get(config.kind, {}))
    hp["crf"] = config.crf
    hp["recall_penalty"] = float(config.delta_p) if config.delta_p != 1 else None
    d = config.dropout
    if config.kind == SAT_KIND:  # the thesis's one dropout, "only before the label decoding layer"
        if d is not None:
            hp["input_dropout"] = d
        return hp
    if not config.char:
        hp["char"] = None
    if config.kind != "transformer":
        hp["ff_activation"] = params.ff_activation
    if d is not None:
        if config.kind == "transformer":
            hp.update(input_dropout=d, attn_dropout=d)
        else:
            hp.update(input_dropout=d, output_dropout=d)
            if config.kind in ("gru_gru", "lstm_gru"):
                hp["between_dropout"] = d
    return hp
