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
