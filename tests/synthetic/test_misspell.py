"""Misspellings injected into a test split keep every PHI span exact."""

import numpy as np
import pytest

from deidlib.corpus.document import Document, Span
from deidlib.evaluation.subsets import misspelled_token_counts
from deidlib.synthetic.misspell import (
    _KEYBOARD_NEIGHBOURS,
    _OPERATIONS,
    _misspell_document,
    _misspell_word,
    misspell_documents,
)


def _doc():
    text = "Patient Jonathan Smith seen by Dr. Okafor at Riverside Clinic on Monday; stable overnight."
    spans = [Span.of(text, text.index(w), text.index(w) + len(w), t) for w, t in
             (("Jonathan Smith", "PATIENT"), ("Okafor", "DOCTOR"), ("Riverside Clinic", "HOSPITAL"))]
    return Document("d1", text, spans)


@pytest.mark.parametrize("op", _OPERATIONS)
def test_each_typing_error_changes_the_word_as_named(op):
    rng = np.random.default_rng(0)
    for w in ("Jonathan", "clinic", "stable"):
        new = _misspell_word(w, rng, op)
        assert new != w
        if op == "substitute":
            assert len(new) == len(w)
            i = next(k for k in range(len(w)) if new[k] != w[k])
            assert new[i].lower() in _KEYBOARD_NEIGHBOURS[w[i].lower()]
        elif op == "transpose":
            assert sorted(new) == sorted(w) and len(new) == len(w)
        elif op == "drop":
            assert len(new) == len(w) - 1
        else:
            assert len(new) == len(w) + 1


def test_every_span_still_matches_the_misspelled_text_and_keeps_its_type():
    doc = _doc()
    for seed in range(20):
        new, ranges = _misspell_document(doc, 0.6, np.random.default_rng(seed))
        new.validate()
        assert [(s.category, s.subtype) for s in new.spans] == [(s.category, s.subtype) for s in doc.spans]
        assert all(new.text[s.start:s.end] == s.text for s in new.spans)
        assert all(new.text[a:b].isalpha() for a, b in ranges)
    new, ranges = _misspell_document(doc, 1.0, np.random.default_rng(0))
    assert len(ranges) == 10 and new.text != doc.text  # every 3+ letter word, PHI and non-PHI
    assert all(s.text != o.text for s, o in zip(new.spans, doc.spans))


def test_rate_zero_changes_nothing_and_a_seed_repeats_itself():
    doc = _doc()
    same, ranges = _misspell_document(doc, 0.0, np.random.default_rng(0))
    assert same.text == doc.text and same.spans == doc.spans and ranges == []
    a, ra = misspell_documents([doc], 0.5, seed=3)
    b, rb = misspell_documents([doc], 0.5, seed=3)
    assert a[0].text == b[0].text and ra == rb
    with pytest.raises(ValueError, match="rate"):
        _misspell_document(doc, 1.5, np.random.default_rng(0))


def test_misspelled_token_counts_split_the_binary_counts_by_the_misspelled_ranges():
    doc = _doc()
    new, ranges = _misspell_document(doc, 1.0, np.random.default_rng(1))
    found = Document(new.id, new.text, [s for s in new.spans if s.subtype != "DOCTOR"])  # Okafor missed
    c = misspelled_token_counts([new], [found], {new.id: ranges})
    assert c["misspelled"]["fn"] == 1 and c["misspelled"]["tp"] == 4 and c["misspelled"]["recall"] == pytest.approx(0.8)
    assert c["intact"]["tp"] + c["intact"]["fn"] == 0
    c0 = misspelled_token_counts([new], [found], {})
    assert c0["intact"]["fn"] == 1 and c0["misspelled"]["tp"] == 0
