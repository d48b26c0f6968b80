import math
import random
from dataclasses import dataclass

import pytest

from deidlib.corpus import Document, Span
from deidlib.corpus.labels import (
    TaggedSentence,
    _decode_tags,
    _encode_tags,
    downsample_negatives,
    gold_tags,
    span_label,
    spans_from_predictions,
    tag_set,
    tagged_sentences,
    thin_negatives,
)
from deidlib.corpus.phi import FESTAG_TYPES
from deidlib.corpus.tokenize import tokenize

TEXT = "Dr. John Smith saw Smith on 12/02/2020 at Mass General; room 4B."


def spans():
    return [
        Span.of(TEXT, 4, 14, "DOCTOR"),
        Span.of(TEXT, 19, 24, "PATIENT"),
        Span.of(TEXT, 28, 38, "DATE"),
        Span.of(TEXT, 42, 54, "HOSPITAL"),
        Span.of(TEXT, 61, 63, "ROOM"),
    ]


def test_festag_scheme_has_29_classes():
    assert len(FESTAG_TYPES) == 28
    assert len(tag_set("i2b2", "IO")) == 29
    assert tag_set("binary", "BIOES") == ["O", "B-PHI", "I-PHI", "E-PHI", "S-PHI"]


def test_scheme_folding():
    room, date = spans()[4], spans()[2]
    assert span_label(room, "i2b2") == "LOCATION-OTHER"
    assert span_label(room, "category") == "LOCATION"
    assert span_label(date, "binary") == "PHI"
    other = Span.of("x", 0, 1, "OTHER")
    assert span_label(other, "i2b2") is None


def test_bio_and_bioes_by_hand():
    toks = tokenize(TEXT, spans=spans())
    bio = dict(zip([t.text for t in toks], _encode_tags(toks, spans(), "i2b2", "BIO")))
    assert bio["John"] == "B-DOCTOR" and bio["Smith"] in ("I-DOCTOR", "B-PATIENT")
    tags = _encode_tags(toks, spans(), "i2b2", "BIOES")
    words = [t.text for t in toks]
    assert tags[words.index("John")] == "B-DOCTOR"
    assert tags[words.index("John") + 1] == "E-DOCTOR"
    assert tags[words.index("saw") + 1] == "S-PATIENT"
    assert tags[words.index("Mass")] == "B-HOSPITAL" and tags[words.index("General")] == "E-HOSPITAL"


@pytest.mark.parametrize("encoding", ["BIO", "BIOES"])
def test_decode_is_exact_inverse(encoding):
    doc = Document("001-01", TEXT, spans()).validate()
    sents = tagged_sentences([doc], "i2b2", encoding)
    back = spans_from_predictions(doc, sents, [s.tags for s in sents], encoding)
    expected = [s for s in doc.spans]
    got = back.spans
    # ROOM is folded to LOCATION-OTHER by the i2b2 scheme
    assert [(s.start, s.end, s.text) for s in got] == [(s.start, s.end, s.text) for s in expected]
    assert [s.subtype for s in got] == ["DOCTOR", "PATIENT", "DATE", "HOSPITAL", "LOCATION-OTHER"]


def test_adjacent_spans_of_same_type_stay_apart_in_bio_but_merge_in_io():
    text = "Smith Jones"
    sp = [Span.of(text, 0, 5, "PATIENT"), Span.of(text, 6, 11, "PATIENT")]
    toks = tokenize(text, spans=sp)
    for enc, n in (("BIO", 2), ("BIOES", 2), ("IO", 1)):
        tags = _encode_tags(toks, sp, "i2b2", enc)
        assert len(_decode_tags(toks, tags, text, enc)) == n


def test_lenient_decoding_of_ill_formed_sequences():
    text = "a b c d"
    toks = tokenize(text)
    got = _decode_tags(toks, ["I-DATE", "I-DATE", "B-AGE", "E-DATE"], text, "BIOES")
    assert [(s.text, s.subtype) for s in got] == [("a b", "DATE"), ("c", "AGE"), ("d", "DATE")]
    with pytest.raises(ValueError):
        _decode_tags(toks, ["O"], text)


def test_binary_and_category_decoding_types():
    text = "Smith seen"
    toks = tokenize(text)
    (s,) = _decode_tags(toks, ["B-PHI", "O"], text, "BIO", scheme="binary")
    assert (s.category, s.subtype, s.text) == ("OTHER", "OTHER", "Smith")
    (s,) = _decode_tags(toks, ["B-NAME", "O"], text, "BIO", scheme="category")
    assert (s.category, s.subtype) == ("NAME", "PATIENT")


def test_random_roundtrip_property():
    rng = random.Random(0)
    vocab = ["the", "pt", "Brown", "12/03/2001", "St.", "Boston", ",", "55", "yo", "MRN", "12345"]
    types = ["PATIENT", "DATE", "CITY", "AGE", "MEDICALRECORD"]
    for _ in range(100):
        words = [rng.choice(vocab) for _ in range(30)]
        text = " ".join(words)
        offs, pos = [], 0
        for w in words:
            offs.append((pos, pos + len(w)))
            pos += len(w) + 1
        sp, i = [], 0
        while i < len(words):
            if rng.random() < 0.2:
                k = min(len(words) - 1, i + rng.randrange(3))
                sp.append(Span.of(text, offs[i][0], offs[k][1], rng.choice(types)))
                i = k + 2
            else:
                i += 1
        doc = Document("p", text, sp).validate()
        for enc in ("BIO", "BIOES"):
            sents = tagged_sentences([doc], "i2b2", enc)
            back = spans_from_predictions(doc, sents, [s.tags for s in sents], enc)
            assert back.spans == doc.spans



def test_downsample_negatives_keeps_every_phi_sentence_and_k_per_positive():
    @dataclass(eq=False)  # identity: sentences with equal tags are still different sentences
    class S:
        tags: list

    sents = [S(["O", "I-DATE"]) if i % 10 == 0 else S(["O", "O"]) for i in range(100)]  # 10 PHI, 90 not
    out = downsample_negatives(sents, 2, seed=1)
    assert len(out) == 30 and sum(any(t != "O" for t in s.tags) for s in out) == 10
    assert [sents.index(s) for s in out] == sorted(sents.index(s) for s in out)  # original order kept
    assert out == downsample_negatives(sents, 2, seed=1)
    assert out != downsample_negatives(sents, 2, seed=2)
    assert len(downsample_negatives(sents, 0, seed=1)) == 10
    assert len(downsample_negatives(sents, 50, seed=1)) == 100  # fewer negatives than asked: all
    with pytest.raises(ValueError):
        downsample_negatives(sents, -1, seed=1)


def _sentences(n, phi_every=10):
    from deidlib.corpus.labels import TaggedSentence
    from deidlib.corpus.tokenize import Token

    return [
        TaggedSentence(f"d{i % 37}", [Token(f"w{i}", 0, 1), Token("x", 2, 3)], ["I-DATE" if i % phi_every == 0 else "O", "O"])
        for i in range(n)
    ]


def test_thin_negatives_keeps_positives_and_decides_each_negative_by_its_own_coin():
    sents = _sentences(2000)
    out = thin_negatives(sents, 0.25, seed=3)
    assert sum(s.tags[0] == "I-DATE" for s in out) == 200
    kept_neg = sum(s.tags[0] == "O" for s in out)
    assert abs(kept_neg - 450) < 8 * math.sqrt(1800 * 0.25 * 0.75)
    assert len(thin_negatives(sents, 0.0, seed=1)) == 200 and len(thin_negatives(sents, 1.0, seed=1)) == 2000
    with pytest.raises(ValueError):
        thin_negatives(sents, 1.5, seed=1)


@pytest.mark.parametrize("drop", [0, 1, 999, 1999])
def test_thin_negatives_removing_any_sentence_changes_no_other_decision(drop):
    # coins drawn by position flipped 160 other decisions when sentence 0 was removed
    sents = _sentences(2000)
    out = thin_negatives(sents, 0.25, seed=3)
    fewer = sents[:drop] + sents[drop + 1 :]
    assert thin_negatives(fewer, 0.25, seed=3) == [s for s in out if s is not sents[drop]]
    # adding a sentence at the front: every old decision stays
    new = _sentences(1)[0]
    new.doc_id = "new"
    assert [s for s in thin_negatives([new, *sents], 0.25, seed=3) if s is not new] == out
    # a different key gives different coins
    assert thin_negatives(sents, 0.25, seed=4) != out


def test_keyed_subsample_is_per_sentence_and_neighbour_preserving():
    from deidlib.corpus.labels import _sentence_coin, keyed_subsample

    sents = _sentences(3000)
    out = keyed_subsample(sents, 0.1, key=7)
    assert abs(len(out) - 300) < 8 * math.sqrt(3000 * 0.1 * 0.9)
    for drop in (0, 1500):
        fewer = sents[:drop] + sents[drop + 1 :]
        assert keyed_subsample(fewer, 0.1, key=7) == [s for s in out if s is not sents[drop]]
    assert keyed_subsample(list(reversed(sents)), 0.1, key=7) == list(reversed(out))  # order-free
    coins = [_sentence_coin(s, 7) for s in sents]
    assert all(0 <= c < 1 for c in coins) and len(set(coins)) == len(coins)
    with pytest.raises(ValueError):
        keyed_subsample(sents, -0.1, key=7)


def test_gold_tags_are_the_tags_and_an_untagged_sentence_is_a_clear_error():
    toks = tokenize("Seen by Dr Smith")
    tagged = TaggedSentence("d1", toks, ["O", "O", "O", "S-DOCTOR"])
    assert gold_tags(tagged) == ["O", "O", "O", "S-DOCTOR"]
    with pytest.raises(ValueError, match="document 'd1' has no gold tags"):
        gold_tags(TaggedSentence("d1", toks))
    with pytest.raises(ValueError, match="no gold tags"):  # negatives are counted on gold tags only
        downsample_negatives([TaggedSentence("d1", toks)], 1.0, seed=0)
