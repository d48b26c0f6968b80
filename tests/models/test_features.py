"""Featurizer: vocabularies, unique-token char encoding, round trip, errors."""

from __future__ import annotations

import pytest
import torch

from deidlib.embeddings.chars import CASINGS, _char_id, casing
from deidlib.models.features import PAD, UNK, Featurizer

SENTS = [["Seen", "by", "Dr", "Smith", "on", "12/01/2010", "."], ["Smith", "seen", "again", "."]]
TAGS = [["O", "O", "O", "B-DOCTOR", "O", "B-DATE", "O"], ["B-DOCTOR", "O", "O", "O"]]
LABELS = ["O", "B-DOCTOR", "I-DOCTOR", "B-DATE", "I-DATE"]


def test_vocab_min_count_lowercase_digits():
    fz = Featurizer.build(SENTS, LABELS, min_count=2)
    assert fz.words[:2] == ["<pad>", "<unk>"]
    assert set(fz.words[2:]) == {"seen", "smith", "."}  # "Seen"+"seen" lowercase-merged
    fz2 = Featurizer.build([["12/01/2010", "03/04/2011"]], LABELS)
    assert fz2.words == ["<pad>", "<unk>", "00/00/0000"]
    fz3 = Featurizer.build(SENTS, LABELS, lowercase=False, normalize_digits=False)
    assert "Seen" in fz3.word_index and "12/01/2010" in fz3.word_index


def test_encode_shapes_unique_tokens_and_labels():
    fz = Featurizer.build(SENTS, LABELS)
    b = fz.encode(SENTS, TAGS)
    assert b.word_ids.shape == (2, 7) and b.mask.sum(1).tolist() == [7, 4]
    assert b.word_ids[1, 4:].eq(PAD).all() and b.labels[1, 4:].eq(-100).all()
    # distinct tokens: "Smith" and "." occur twice but are encoded once
    assert b.char_ids.shape[0] == len({t for s in SENTS for t in s}) == 9
    for bi, sent in enumerate(SENTS):
        for ti, tok in enumerate(sent):
            u = int(b.token_to_unique[bi, ti])
            n = int(b.char_lengths[u])
            assert b.char_ids[u, :n].tolist() == [_char_id(c) for c in tok]
            assert b.char_ids[u, n:].eq(0).all()
            assert CASINGS[int(b.casing_ids[bi, ti])] == casing(tok)
    assert [fz.labels[i] for i in b.labels[0, :7].tolist()] == TAGS[0]
    unk = fz.encode([["Zebra"]])
    assert unk.word_ids.tolist() == [[UNK]] and unk.labels is None


def test_char_ids_festag_ascii_onehot_index():
    assert _char_id("A") == ord("A") + 1 and _char_id("é") == 128 and _char_id("\x7f") == 128


def test_casing_classes():
    assert [casing(t) for t in ["123", "12a", "abc", "ABC", "Abc", "-1-", "aBc"]] == [
        "numeric", "mainly_numeric", "all_lower", "all_upper", "initial_upper", "contains_digit", "other"]


def test_config_round_trip():
    fz = Featurizer.build(SENTS, LABELS, min_count=1, lowercase=False)
    fz2 = Featurizer.from_config(fz.config())
    b1, b2 = fz.encode(SENTS, TAGS), fz2.encode(SENTS, TAGS)
    for name in ("word_ids", "mask", "labels", "casing_ids", "char_ids", "char_lengths", "token_to_unique"):
        assert torch.equal(getattr(b1, name), getattr(b2, name)), name


def test_errors():
    fz = Featurizer.build(SENTS, LABELS)
    with pytest.raises(ValueError, match="empty"):
        fz.encode([])
    with pytest.raises(ValueError, match="empty"):
        fz.encode([["a"], []])
    with pytest.raises(ValueError, match="tags"):
        fz.encode([["a", "b"]], [["O"]])
    with pytest.raises(ValueError, match="label set"):
        fz.encode([["a"]], [["B-NOPE"]])
