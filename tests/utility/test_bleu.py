import math

import pytest

from deidlib.utility.bleu import bleu_scores


def test_identical_text_scores_one():
    s = bleu_scores(["the patient was seen today ."], ["the patient was seen today ."])
    assert s == pytest.approx({"BLEU-1": 1.0, "BLEU-2": 1.0, "BLEU-3": 1.0})


def test_removal_matches_hand_computed_values():
    # ref: a b c d e f (6 tokens); hyp: a b c e f (5), one token removed.
    # p1 = 5/5; p2 = {ab, bc, ce, ef}: 3/4; p3 = {abc, bce, cef}: 1/3; BP = exp(1 - 6/5)
    s = bleu_scores(["a b c d e f"], ["a b c e f"])
    bp = math.exp(1 - 6 / 5)
    assert s["BLEU-1"] == pytest.approx(bp)
    assert s["BLEU-2"] == pytest.approx(bp * math.sqrt(3 / 4))
    assert s["BLEU-3"] == pytest.approx(bp * (3 / 4 * 1 / 3) ** (1 / 3))


def test_corpus_level_pools_counts_over_documents():
    # doc1 identical (4 tokens), doc2 hyp 'x y' vs ref 'x z': p1 = (4+1)/(4+2), r=6=c -> BP 1
    s = bleu_scores(["a b c d", "x z"], ["a b c d", "x y"], ns=(1,))
    assert s == {"BLEU-1": pytest.approx(5 / 6)}


def test_bad_input_is_a_clear_error():
    with pytest.raises(ValueError, match="originals but"):
        bleu_scores(["a"], [])
    with pytest.raises(ValueError, match="at least one"):
        bleu_scores([], [])
    with pytest.raises(ValueError, match="BLEU-n only"):
        bleu_scores(["a"], ["a"], ns=(4,))
