"""Tiny corpus and taggers of every kind for the DP tests (one intra-op thread: tests/conftest.py)."""

import pytest

from deidlib.datasets import load_corpus
from deidlib.training import prepare_tagger

KINDS = ("festag", "friedrich", "gru", "gru_gru", "lstm_gru", "transformer")

TINY = {
    "festag": dict(word_dim=12, char_hidden=6, hidden=8, ff_dim=8),
    "friedrich": dict(word_dim=12, hidden=8),
    "gru": dict(word_dim=12, char_emb_dim=6, char_hidden=6, hidden=8, ff_dim=8),
    "gru_gru": dict(word_dim=12, char_emb_dim=6, char_hidden=6, hidden=8, ff_dim=8),
    "lstm_gru": dict(word_dim=12, char_emb_dim=6, char_hidden=6, hidden=8, ff_dim=8),
    "transformer": dict(word_dim=12, char_emb_dim=6, char_hidden=6, layers=1, heads=2, ff_hidden=16),
}


@pytest.fixture(scope="session")
def dp_splits():
    sp = load_corpus("synthetic", profile="smoke", seed=5, patients=8, sites=2)
    assert sp.train and sp.dev
    return sp


@pytest.fixture(scope="session")
def make_tagger(dp_splits):
    def make(kind, seed=0, **extra):
        sents, tagger = prepare_tagger(
            kind, dp_splits.train, embeddings=None, seed=seed, **{**TINY[kind], **extra}
        )
        return sents, tagger

    return make
