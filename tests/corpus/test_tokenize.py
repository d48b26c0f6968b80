import random

import pytest

from deidlib.corpus import Document, Span
from deidlib.corpus.tokenize import Token, document_sentences, split_sentences, tokenize


def texts(toks):
    return [t.text for t in toks]


def test_offsets_are_exact_and_cover_all_non_space():
    text = "Pt. seen 12/02/2020 by Dr.Brown (tel 555-1234, j.doe@x.org).\n25yo M\tBP 120/80"
    for mode in ("default", "aggressive"):
        toks = tokenize(text, mode)
        assert all(text[t.start : t.end] == t.text for t in toks)
        covered = "".join(t.text for t in toks)
        assert covered == "".join(text.split())


def test_default_keeps_clinical_units_whole():
    toks = texts(tokenize("Seen 12/02/2020, BP 120/80, call 555-1234 or j.doe@x.org; O'Brien x-ray"))
    for unit in ("12/02/2020", "120/80", "555-1234", "j.doe@x.org", "O'Brien", "x-ray"):
        assert unit in toks
    assert "," in toks and ";" in toks


def test_aggressive_splits_punctuation_and_digit_letter_boundaries():
    # friedrich et al. 2019 section 4: "25yo" -> "25", "yo"
    assert texts(tokenize("25yo 12/02/2020 x-ray", "aggressive")) == [
        "25", "yo", "12", "/", "02", "/", "2020", "x", "-", "ray",
    ]


def test_tokens_split_at_span_edges_inside_a_token():
    text = "seen by MWilliams today"
    span = Span.of(text, 9, 17, "DOCTOR")  # "Williams" inside the token "MWilliams"
    toks = tokenize(text, spans=[span])
    assert Token("M", 8, 9) in toks and Token("Williams", 9, 17) in toks


def test_unknown_mode_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown tokenizer mode"):
        tokenize("x", "spacy")


def test_sentence_splitting_rules():
    text = "Seen by Dr. Brown today. Pt stable!\n\nPlan:\n- Lasix 40 mg\n- f/u 2 wks\n1. Call Mr. X. Smith"
    sents = [text[a:b] for a, b in split_sentences(text)]
    assert sents == [
        "Seen by Dr. Brown today.",
        "Pt stable!",
        "Plan:",
        "- Lasix 40 mg",
        "- f/u 2 wks",
        "1. Call Mr. X. Smith",
    ]


def test_sentence_ranges_cover_every_non_space_character_once():
    rng = random.Random(3)
    words = ["Pt", "Dr.", "Brown", ".", "!", "\n", "\n\n", "- item", "12/02/2020", "A.", "ok", "1."]
    for _ in range(50):
        text = " ".join(rng.choice(words) for _ in range(60))
        ranges = split_sentences(text)
        assert all(a < b for a, b in ranges)
        assert all(b1 <= a2 for (_, b1), (a2, _) in zip(ranges, ranges[1:]))
        assert "".join("".join(text[a:b].split()) for a, b in ranges) == "".join(text.split())


def test_document_sentences_never_cut_a_span():
    text = "Lives at 12 Main St.\nBoston MA. Seen today."
    span = Span.of(text, 9, 30, "STREET")  # crosses the sentence boundary after "St."
    doc = Document("001-01", text, [span]).validate()
    sents = document_sentences(doc)
    inside = [s for s in sents if any(t.start == 9 for t in s)]
    assert len(inside) == 1 and inside[0][-1].end >= 30
