import gc
import random
import re
import time

import pytest
import regex

from deidlib.corpus import Document, Span
from deidlib.corpus import tokenize as T
from deidlib.corpus.tokenize import Token, _split_sentences, document_sentences, tokenize
from deidlib.synthetic import generate


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
    sents = [text[a:b] for a, b in _split_sentences(text)]
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
        ranges = _split_sentences(text)
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


# ------------------------------------------------------- linear cost, boundaries unchanged

#: the ``default`` tokenizer as one expression matched left to right (the reference: the e-mail
#: alternative rescans a run of [\w.+-] from every position in it, quadratic on "a.a.a.")
_REFERENCE = regex.compile(T._DEFAULT_PATTERN, T._FLAGS)
_PIECES = ["a", "b", "Z", "1", "9", ".", "@", "-", "+", "_", "'", "’", "/", ":", " ", "\n", "www.", "http://",
           "https://", "<", ")", "]", "?", ",", "x@y.com", "é", "e\u0301", "j.doe", "@a.b", "..", "a.", "-1"]


def _reference_spans(text):
    return [m.span() for m in _REFERENCE.finditer(text)]


def test_default_tokens_equal_the_single_expression_on_adversarial_text():
    rng = random.Random(1)
    for _ in range(3000):
        text = "".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 60)))
        assert T._default_spans(text) == _reference_spans(text), repr(text)


def test_default_tokens_equal_the_single_expression_on_generated_notes():
    docs = generate(patients=6, sites=1, seed=3)
    for d in docs:
        assert T._default_spans(d.text) == _reference_spans(d.text)
    one_line = " ".join(" ".join(d.text.split()) for d in docs)  # one long line, as a pasted note
    assert T._default_spans(one_line) == _reference_spans(one_line)
    assert "@" in one_line or "x@y.com" in _PIECES  # e-mail runs are exercised above either way


def _old_sentence_cuts(text, start, end):
    """The sentence-end rules as first written: every end mark tried, the line start found by rfind."""
    sent_end = re.compile(r"[.!?]+[\"')\]]*(?=\s+[\"'(\[]?[A-Z0-9])")
    enumerator = re.compile(r"[ \t]*\d{1,2}\.")
    cuts = []
    for m in sent_end.finditer(text, start, end):
        w = T._WORD_BEFORE.search(text[max(start, m.start() - 20) : m.start() + 1])
        if m.group().startswith(".") and w and (w.group(1).lower() in T._ABBREVIATIONS or len(w.group(1)) == 1):
            continue
        line_start = text.rfind("\n", start, m.start()) + 1 or start
        if enumerator.fullmatch(text, max(line_start, start), m.end()):
            continue
        cuts.append(m.end())
    return cuts


def test_sentence_cuts_equal_the_rules_as_first_written():
    rng = random.Random(2)
    pieces = [".", "!", "?", '"', ")", " ", "\n", "\t", "1", "12", "123", "A", "a", "Dr", "Mr.", "x", "9.", "  ",
              "..", '."', "(", "٣"]
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 40)))
        a = rng.randint(0, len(text))
        b = rng.randint(a, len(text))
        assert T._sentence_cuts(text, a, b) == _old_sentence_cuts(text, a, b), (repr(text), a, b)


def test_sentences_merge_where_a_span_crosses_exactly_as_the_pairwise_rule():
    rng = random.Random(4)
    for _ in range(500):
        cuts = sorted(rng.sample(range(1, 200), 12))
        ranges = [(a + 1, b) for a, b in zip([0, *cuts], [*cuts, 200]) if b > a + 1]
        spans = [Span(s, s + rng.randint(1, 30), "NAME", "PATIENT") for s in rng.sample(range(0, 190), 6)]
        merged = [ranges[0]]
        for a, b in ranges[1:]:  # the rule as first written: any span starting before pb and ending after a
            pa, pb = merged[-1]
            if any(s.start < pb and s.end > a for s in spans if s.start < a):
                merged[-1] = (pa, b)
            else:
                merged.append((a, b))
        assert T._merge_for_spans(ranges, spans) == merged


def _best_time(fn, repeats=5):
    """The least CPU time of this process over ``repeats`` calls (other jobs on the machine barely move it)."""
    times = []
    for _ in range(repeats):
        gc.collect()
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return min(times)


@pytest.mark.parametrize("unit", ["a.", "x@", "1:2x@a.com", "....",
                                  "Pt seen 12/02/2020 by Dr. Brown, j.doe@x.org. 1. Call 555-1234! "])
def test_tokenizing_and_splitting_cost_grows_linearly(unit):
    # 20 times the text: a linear cost grows about 20 times (up to ~80 measured on a loaded machine,
    # where caches and the allocator favour the small input), a quadratic one 400 times
    small, large = ((unit * (n // len(unit) + 1))[:n] for n in (20_000, 400_000))

    def work(text):
        return lambda: document_sentences(Document("t", text, []), use_spans=False)

    t_small = _best_time(work(small), repeats=3)
    assert t_small < 1.0, f"{t_small:.1f} s for 20 KB of {unit!r}"  # quadratic: the large size would take minutes
    t_large = _best_time(work(large), repeats=3)
    assert t_large < 200 * t_small, f"{t_large / t_small:.0f}× the time for 20× the text"
