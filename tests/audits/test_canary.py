import math

import numpy as np
import pytest

from deidlib.audits import canary_exposure, canary_words, insert_canaries, make_canaries
from deidlib.audits.canary import exposure
from deidlib.studies.audits.data import _featurizer, fit, make_tagger


def test_exposure_is_log2_candidates_minus_log2_rank():
    others = np.arange(15.0)  # 16 candidates in all
    assert exposure(100.0, others) == (1.0, 4.0)
    assert exposure(-1.0, others) == (16.0, 0.0)
    rank, e = exposure(7.0, others)  # 7 above, one tie
    assert rank == 8.5 and e == pytest.approx(4 - math.log2(8.5))


def test_canaries_are_distinct_and_inserted_k_times():
    cs = make_canaries((1, 4, 16), 2, 8, seed=0)
    words = canary_words(cs)
    assert len(words) == len(set(words)) == 6 * 8
    assert [c.copies for c in cs] == [1, 1, 4, 4, 16, 16]
    out = insert_canaries([], cs, seed=0)
    assert len(out) == 42
    s = cs[0].sentence()
    assert s.tags[cs[0].slot] == "B-PHI" and s.words[cs[0].slot] == cs[0].secret


def _train(tiny, copies, noise, epochs):
    params, data = tiny
    cs = make_canaries(copies, 4, 64, seed=7)
    fz = _featurizer([s.words for s in data.sentences], canary_words(cs))
    tagger = make_tagger(fz, params, seed=0)
    fit(tagger, insert_canaries(data.sentences, cs, seed=0), params, noise, seed=0, epochs=epochs)
    return canary_exposure(tagger, cs)


def test_a_canary_inserted_many_times_is_exposed_and_an_absent_one_is_not(tiny):
    # 32 copies, 15 epochs: with 16 copies and 10 epochs a canary ranked third (4.4 bits) on some corpus
    # draws; with these, every canary ranked first or second on each of six corpus / canary draws tried
    rows = _train(tiny, (32, 0), None, 15)
    many = [r["exposure"] for r in rows if r["copies"] == 32]
    absent = [r["exposure"] for r in rows if r["copies"] == 0]
    assert min(many) >= 5.0, rows  # rank <= 2 of 64 for every canary
    # chance: about 1.4 bits; the median, since one of four absent canaries ranking first among 64 candidates
    # (6 bits) happens by chance (it did for one of them on the corpus with ICU nursing notes)
    assert np.median(absent) < 3.0, rows


def test_strong_dp_hides_the_canary(tiny):
    rows = _train(tiny, (16,), 50.0, 3)
    assert np.mean([r["exposure"] for r in rows]) < 3.5, rows
