"""Tiny corpus and tiny taggers for the trainer tests (one intra-op thread: the machine
has 2 shared cores)."""

import pytest
import torch

from deidlib.corpus.datasets import load_corpus


@pytest.fixture(autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="session")
def splits():
    """A small synthetic corpus split by patient (train/dev/test)."""
    sp = load_corpus("synthetic", profile="smoke", seed=3, patients=10, sites=2)
    assert sp.train and sp.dev and sp.test
    return sp


#: a small GRU-CRF tagger (ahmed chapter 4 shape at toy sizes)
TINY = dict(word_dim=16, char_emb_dim=8, char_hidden=8, hidden=16, ff_dim=16)
