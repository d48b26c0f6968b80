"""A tiny population (smoke-sized synthetic corpus) and word-only taggers for the attack tests."""

import pytest

from deidlib.studies import audits as au
from deidlib.studies.audits.data import prepare_data


@pytest.fixture(scope="session")
def tiny():
    """(params, data): 60 sentences of 10 patients, a word-only festag tagger of width 16."""
    params = au.params_for("smoke", tagger=dict(word_dim=16, hidden=16, ff_dim=16), lr=3e-2)
    return params, prepare_data(params, seed=0)
