"""The pseudonym-recovery attack (deidlib.audits.recovery) finds the original PHI word when the
pseudonymization leaves it guessable, and not when it moves it out of reach."""

import numpy as np
import pytest

from deidlib.audits import neighbour_recovery
from deidlib.corpus.labels import TaggedSentence
from deidlib.corpus.tokenize import Token
from deidlib.embeddings.neighbours import NeighbourIndex
from deidlib.embeddings.public import PublicEmbeddings
from deidlib.privacy.pseudonymize import pseudonymize


def _sentence(words, tags):
    toks, pos = [], 0
    for w in words:
        toks.append(Token(w, pos, pos + len(w)))
        pos += len(w) + 1
    return TaggedSentence("d", toks, tags)


@pytest.fixture
def index():
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(200)]
    return NeighbourIndex(PublicEmbeddings("toy", words, rng.normal(size=(200, 8)).astype(np.float32)))


def _original():
    return [_sentence([f"w{i}", "was", "seen"], ["B-PHI", "O", "O"]) for i in range(60)]


def test_an_unchanged_release_is_fully_recovered_and_n_equal_one_is_no_protection(index):
    orig = _original()
    assert neighbour_recovery(orig, orig, index, guesses=1) == {"tokens": 60, "recovered": 1.0, "unchanged": 1.0}
    released, _ = pseudonymize(orig, index, 1, seed=0, shuffle=False)
    assert neighbour_recovery(orig, released, index, guesses=1)["recovered"] == 1.0


def test_neighbour_pseudonyms_are_recovered_by_their_neighbours_and_random_words_are_not(index):
    orig = _original()
    released, _ = pseudonymize(orig, index, 3, seed=0, shuffle=False)
    one = neighbour_recovery(orig, released, index, guesses=1)
    many = neighbour_recovery(orig, released, index, guesses=20)
    assert one["recovered"] < 0.7 and many["recovered"] > one["recovered"] + 0.2  # neighbours lead back
    rng = np.random.default_rng(1)
    scrambled = [_sentence([f"w{rng.integers(60, 200)}", "was", "seen"], s.tags) for s in orig]
    assert neighbour_recovery(orig, scrambled, index, guesses=5)["recovered"] < 0.1
    with pytest.raises(ValueError, match="same order"):
        neighbour_recovery(orig, released[:-1], index)
