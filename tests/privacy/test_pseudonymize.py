"""Automatic pseudonymization (Friedrich et al. 2019, section 4) and the section 8 subword statistic."""

import random

import numpy as np
import pytest

from deidlib.corpus.labels import TaggedSentence
from deidlib.corpus.tokenize import Token
from deidlib.embeddings.neighbours import NeighbourIndex
from deidlib.embeddings.public import PublicEmbeddings
from deidlib.privacy.pseudonymize import _match_case, pseudonymize, replace_one_phi, subword_statistic


def _index(extra=()):
    rng = np.random.default_rng(0)
    words = [f"name{i}" for i in range(200)] + ["the", "patient", "saw", "dr", "in", "on"] + list(extra)
    return NeighbourIndex(PublicEmbeddings("toy", words, rng.normal(size=(len(words), 8)).astype(np.float32)))


def _sent(words, tags, doc="d1"):
    toks, p = [], 0
    for w in words:
        toks.append(Token(w, p, p + len(w)))
        p += len(w) + 1
    return TaggedSentence(doc, toks, tags)


SENTS = [
    _sent(["The", "patient", "saw", "Dr", "Name3", "on", "name7"], ["O", "O", "O", "O", "B-NAME", "O", "B-DATE"]),
    _sent(["Name12", "of", "/", "Name40"], ["B-LOC", "I-LOC", "I-LOC", "I-LOC"]),
    _sent(["saw", "the", "patient"], ["O", "O", "O"]),
    _sent(["Qqqunknown", "in"], ["B-NAME", "O"]),
]


def _by_tags(out):
    return sorted((tuple(s.tags), tuple(s.words)) for s in out)


def test_changes_only_phi_tokens_and_keeps_labels():
    index = _index()
    out, st = pseudonymize(SENTS, index, 20, seed=1)
    assert len(out) == len(SENTS)
    src = {tuple(s.tags): s for s in SENTS}
    changed = 0
    for s in out:
        orig = src[tuple(s.tags)]
        assert len(s.words) == len(orig.words)
        for w, w0, t in zip(s.words, orig.words, s.tags):
            if t == "O" or w0 in ("of", "/"):  # non-PHI, stop word, punctuation: untouched
                assert w == w0
            else:
                changed += w != w0
        assert s.doc_id.startswith("pseudo-")  # nothing points back to the document
    assert changed >= 3
    assert st.phi_tokens == 7 and st.skipped == 2 and st.oov == 1 and st.replaced == 4


def test_n1_is_the_identity_and_oov_keep_leaves_unknown_tokens():
    out, st = pseudonymize(SENTS, _index(), 1, seed=3, shuffle=False, oov="keep")
    assert [s.words for s in out] == [s.words for s in SENTS]
    assert st.unchanged_draws == st.replaced


def test_oov_random_replaces_unknown_tokens_from_the_vocabulary():
    index = _index()
    out, _ = pseudonymize(SENTS[3:], index, 1, seed=0, shuffle=False, oov="random")
    assert out[0].words[0] != "Qqqunknown"
    assert out[0].words[0].lower() in index.embeddings.index and out[0].words[0][0].isupper()


def test_replacements_are_among_the_n_candidates_and_cover_them():
    index = _index()
    cands = {w.lower() for w in index.candidates("Name3", 5)}
    seen = set()
    for seed in range(60):
        out, _ = pseudonymize(SENTS[:1], index, 5, seed=seed, shuffle=False)
        seen.add(out[0].words[4].lower())
    assert seen == cands  # uniform over all N = 5, itself included


def test_seeded_determinism_and_shuffle():
    index = _index()
    a, _ = pseudonymize(SENTS * 5, index, 10, seed=7)
    b, _ = pseudonymize(SENTS * 5, index, 10, seed=7)
    c, _ = pseudonymize(SENTS * 5, index, 10, seed=8)
    assert [s.words for s in a] == [s.words for s in b]
    assert [s.words for s in a] != [s.words for s in c]
    assert [s.tags for s in a] != [s.tags for s in SENTS * 5]  # order shuffled
    assert _by_tags(pseudonymize(SENTS, index, 1, seed=7, oov="keep")[0]) == _by_tags(SENTS)


def test_default_randomness_is_not_seeded():
    import secrets

    from deidlib.privacy.pseudonymize import _rng

    assert isinstance(_rng(None), secrets.SystemRandom)  # released text: OS CSPRNG by default
    index = _index()
    draws = {tuple(pseudonymize(SENTS * 4, index, 50)[0][0].words) for _ in range(5)}
    assert len(draws) > 1


def test_bad_arguments():
    with pytest.raises(ValueError, match="N must be >= 1"):
        pseudonymize(SENTS, _index(), 0)
    with pytest.raises(ValueError, match="oov must be"):
        pseudonymize(SENTS, _index(), 5, oov="drop")


def test_replace_one_phi_changes_exactly_one_phi_token():
    index = _index()
    rng = random.Random(0)
    for _ in range(20):
        words, pos = replace_one_phi(SENTS[0].words, SENTS[0].tags, index, 10, rng)
        diff = [i for i, (a, b) in enumerate(zip(words, SENTS[0].words)) if a != b]
        assert diff == [pos] and SENTS[0].tags[pos] != "O"
    assert replace_one_phi(SENTS[2].words, SENTS[2].tags, index, 10, rng) is None  # no PHI
    assert replace_one_phi(SENTS[0].words, SENTS[0].tags, index, 1, rng) is None  # N=1: no fake exists


def test_match_case():
    assert _match_case("jones", "Smith") == "Jones"
    assert _match_case("jones", "SMITH") == "JONES"
    assert _match_case("jones", "smith") == "jones"


def test_subword_statistic_counts_neighbours_containing_the_token():
    # "ann" is close to "anna", "joanne" and "zz"; only the first two contain it
    words = ["ann", "anna", "joanne", "zz", "far1", "far2"]
    vecs = np.array([[1, 0], [1, 0.05], [1, 0.1], [1, 0.15], [0, 1], [-1, 0.2]], dtype=np.float32)
    index = NeighbourIndex(PublicEmbeddings("toy", words, vecs))
    r = subword_statistic(["Ann", "ann", "nothere"], index, n=3)
    assert r["tokens"] == 1 and r["without_vector"] == 1
    assert r["mean"] == 2.0
    assert subword_statistic(["Ann"], index, n=1)["mean"] == 1.0
