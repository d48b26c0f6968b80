"""Tagger presets: the papers' hyperparameters and optimiser hints per tagger kind.

Kept apart from :mod:`.taggers` and :mod:`.features` so that both can read the list of
kinds without importing each other (see :mod:`deidlib.models.taggers` for what each kind is
and which paper section its numbers come from).
"""

from __future__ import annotations

from typing import Any

__all__ = ["PRESETS", "encoder_of"]

PRESETS: dict[str, dict[str, Any]] = {
    "festag": dict(char="lstm", char_onehot=True, char_hidden=128, word_dim=300, casing=False, input_dropout=0.5,
                   cells=("lstm",), hidden=100, between_dropout=0.0, output_dropout=0.0, ff_dim=100, crf=False),
    "friedrich": dict(char=None, word_dim=300, casing=True, input_dropout=0.1, cells=("lstm", "lstm"), hidden=128,
                      between_dropout=0.25, output_dropout=0.5, ff_dim=0, crf=True),
    "gru": dict(char="gru", char_onehot=False, char_emb_dim=25, char_hidden=25, word_dim=100, casing=False,
                input_dropout=0.5, cells=("gru",), hidden=150, output_dropout=0.0, ff_dim=150, crf=True),
    "gru_gru": dict(char="gru", char_onehot=False, char_emb_dim=25, char_hidden=25, word_dim=100, casing=False,
                    input_dropout=0.5, cells=("gru", "gru"), hidden=150, between_dropout=0.5, ff_dim=150, crf=True),
    "lstm_gru": dict(char="gru", char_onehot=False, char_emb_dim=25, char_hidden=25, word_dim=100, casing=False,
                     input_dropout=0.5, cells=("lstm", "gru"), hidden=150, between_dropout=0.5, ff_dim=150, crf=True),
    "transformer": dict(char="gru", char_onehot=False, char_emb_dim=25, char_hidden=25, word_dim=128, casing=True,
                        layers=2, heads=4, ff_hidden=256, input_dropout=0.1, attn_dropout=0.1, crf=True),
    # the pre-trained all-MiniLM-L6-v2 encoder, fine-tuned, + casing -> linear -> CRF
    # (deidlib.models.encoder_tagger; word_dim 0: no word embedding, the encoder reads sub-words)
    "minilm": dict(encoder="minilm", finetune_layers=None, casing=True, input_dropout=0.1, hidden=0, word_dim=0,
                   crf=True),
}

#: accepted alternative hyperparameter names of the RNN taggers (the festag study's vocabulary) -> canonical name;
#: ``dropout`` is the dropout on the token features (festag's single dropout 0.5)
ALIASES: dict[str, str] = {"char_dim": "char_emb_dim", "token_hidden": "hidden", "ff_hidden": "ff_dim",
                           "dropout": "input_dropout"}

#: optimiser hints the trainer applies unless told otherwise. festag: the paper's plain SGD
#: with learning rate 0.9; our loss sums token losses per sentence (NeuroNER's is a per-token
#: mean), so without a bound the first steps diverge (CHANGELOG.md, "Measurements behind design
#: choices") -- we add a gradient-norm clip of 5.0 (NeuroNER clips each entry to ±5). The
#: festag study itself trains with NeuroNER's token-mean loss and no clip
#: (``deidlib.collaborative.tagger_trainer(loss="token_mean")``).
DEFAULT_TRAINING: dict[str, dict[str, Any]] = {
    "festag": {"optimizer": "sgd", "lr": 0.9, "clip": 5.0},
    "friedrich": {"optimizer": "nadam", "lr": 2e-3, "clip": 1.0},
    "gru": {"optimizer": "adam", "lr": 1e-3, "clip": 5.0},
    "gru_gru": {"optimizer": "adam", "lr": 1e-3, "clip": 5.0},
    "lstm_gru": {"optimizer": "adam", "lr": 1e-3, "clip": 5.0},
    "transformer": {"optimizer": "adam", "lr": 1e-3, "clip": 1.0},
    # fine-tuning a pre-trained encoder wants a small step (EncoderTagger sets 3e-3 when frozen)
    "minilm": {"optimizer": "adam", "lr": 1e-4, "clip": 1.0},
}

#: the tagger kinds, in preset order
_KINDS: tuple[str, ...] = tuple(PRESETS)


def check_kind(kind: str) -> str:
    """``kind`` if it is a known tagger kind; otherwise a one-line ``ValueError``."""
    if kind not in PRESETS:
        raise ValueError(f"unknown tagger kind {kind!r}; choose one of {', '.join(PRESETS)}")
    return kind


def encoder_of(kind: str, hparams: dict[str, Any] | None = None) -> str | None:
    """The public encoder a tagger of ``kind`` reads (``hparams["encoder"]`` overrides the
    preset's), or ``None`` for a word-level kind."""
    if hparams is not None and "encoder" in hparams:
        return hparams["encoder"]
    return PRESETS[check_kind(kind)].get("encoder")
