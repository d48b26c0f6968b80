"""One function sets up a tagger's inputs (featurizer + word vectors + embedding matrix)."""

from __future__ import annotations

import numpy as np
import pytest

from deidlib.embeddings import embedding_matrix, train_word_vectors
from deidlib.models import build_featurizer
from deidlib.training import build_inputs, word_embeddings

SENTS = [["Mr.", "Durand", "seen", "on", "12/02/2020"], ["Seen", "by", "Dr.", "Smith", "at", "Dijon"]] * 6
LABELS = ["O", "B-NAME", "I-NAME"]


@pytest.mark.parametrize("keys", ["raw", "normalized"])
def test_build_inputs_is_the_former_per_study_code(keys):
    """keys="raw" is festag's former set-up (Word2Vec on the words as written), "normalized"
    the former prepare_tagger/ahmed set-up (Word2Vec on the featurizer's keys)."""
    got = build_inputs("festag", SENTS, LABELS, word_dim=8, keys=keys, vector_epochs=2, seed=3, cache=False)
    fz = build_featurizer("festag", SENTS, labels=LABELS)
    assert got.featurizer.words == fz.words and got.word_dim == 8
    train = SENTS if keys == "raw" else [[fz.word_key(w) for w in s] for s in SENTS]
    kv = train_word_vectors(train, dim=8, epochs=2, seed=3, cache=False)
    want, _ = embedding_matrix(fz.words, kv, seed=3)
    np.testing.assert_array_equal(got.embeddings, want)


def test_the_two_key_choices_differ_and_bad_input_is_refused():
    fz = build_featurizer("gru", SENTS, labels=LABELS, min_count=1)
    raw = word_embeddings(fz, SENTS, dim=8, keys="raw", epochs=2, cache=False)
    norm = word_embeddings(fz, SENTS, dim=8, keys="normalized", epochs=2, cache=False)
    assert raw.shape == norm.shape == (len(fz.words), 8) and not np.array_equal(raw, norm)
    assert word_embeddings(fz, SENTS, vectors=None, dim=8) is None
    inputs = build_inputs("gru", SENTS, LABELS, vectors=None)
    assert inputs.embeddings is None and inputs.word_dim == 100  # the gru preset
    with pytest.raises(ValueError, match="keys must be one of"):
        word_embeddings(fz, SENTS, dim=8, keys="lower")
