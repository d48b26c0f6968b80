"""Tiny corpus and tiny taggers for the trainer tests (one intra-op thread: see
tests/conftest.py)."""

import pytest

from deidlib.datasets import load_corpus


@pytest.fixture(scope="session")
def splits():
    """A small synthetic corpus split by patient (train/dev/test)."""
    sp = load_corpus("synthetic", profile="smoke", seed=3, patients=10, sites=2)
    assert sp.train and sp.dev and sp.test
    return sp


#: a small GRU-CRF tagger (ahmed chapter 4 shape at toy sizes)
TINY = dict(word_dim=16, char_emb_dim=8, char_hidden=8, hidden=16, ff_dim=16)


@pytest.fixture(scope="module")
def fitted(splits):
    """A tiny binary GRU-CRF fitted on the tiny corpus (5 epochs), for the prediction and threshold tests."""
    from deidlib.training import fit_tagger

    tagger, hist = fit_tagger(
        "gru",
        splits,
        scheme="binary",
        encoding="BIOES",
        embeddings=None,
        hparams=TINY,
        epochs=5,
        batch_size=8,
        lr=0.03,
        progress=False,
        evaluate_test=False,
    )
    assert hist.epochs[-1]["dev_f1"] > 0.3  # it has learned to find PHI
    return tagger
