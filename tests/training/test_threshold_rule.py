"""The bagged threshold rule (:mod:`deidlib.training.threshold_rule`): stable where the plain rule
is knife-edge, a pure function of the documents (not of their order), and read off the same
counts that the tagger's predictions give."""

from __future__ import annotations

import math

import numpy as np
import pytest

from deidlib.training.threshold_rule import (
    RULE_GRID,
    bagged_threshold,
    highest_reaching,
    knife_edge_counts,
    plain_threshold,
    poisson_weights,
    rule_spread,
)

#: what the bagged rule promises under a small perturbation of the dev documents (one document
#: dropped, one token in 4,000; two tokens moved): the threshold moves by less than this factor,
#: where the plain rule jumps across the plateau below (0.17 to 0.3, a factor 1.77). The curve
#: is flat (recall 0.98-0.9905 over the whole grid, as the default model's synthetic dev curve),
#: so even the bagged average moves by up to a factor 1.46 here: smoother, not immune.
STABLE_FACTOR = 1.5


def knife_edge(seed: int = 0):
    """:func:`knife_edge_counts` (recall 0.9905 up to ~0.17, exactly 0.99 on (0.17, 0.3], 0.98
    above; one missed token per document) with its plateau's two ends."""
    tp, gold, keys = knife_edge_counts(seed=seed)
    nearest = lambda x: min(RULE_GRID, key=lambda g: abs(math.log(g / x)))  # noqa: E731
    return tp, gold, keys, nearest(0.17), nearest(0.3)


def _factor(a: float, b: float) -> float:
    return math.exp(abs(math.log(a / b)))


def test_the_constructed_curve_is_knife_edge_for_the_plain_rule():
    tp, gold, keys, lo, hi = knife_edge()
    recall = tp.sum(0) / gold.sum()
    assert recall[list(RULE_GRID).index(hi)] == 0.99 and recall[list(RULE_GRID).index(lo)] > 0.99
    assert (tp[:, 0] < gold).sum() == 80  # at the highest threshold: one miss in each of 80 documents
    assert plain_threshold(tp, gold, RULE_GRID, 0.99) == hi
    # dropping the one document that misses nothing takes the plain rule down the plateau
    assert plain_threshold(tp[1:], gold[1:], RULE_GRID, 0.99) == lo
    assert _factor(hi, lo) > STABLE_FACTOR  # so the plain rule fails the bound the bagged one keeps


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_dropping_one_document_moves_the_bagged_threshold_less_than_the_bound(seed):
    """On the knife-edge curve, dropping one document moves the plain rule's threshold by a
    factor hi/lo (about 1.8) for some document, the bagged rule's by less than STABLE_FACTOR for
    every document."""
    tp, gold, keys, lo, hi = knife_edge(seed=seed)
    plain, bagged = plain_threshold(tp, gold, RULE_GRID, 0.99), bagged_threshold(tp, gold, RULE_GRID, 0.99, keys)
    plain_moves, bagged_moves = [], []
    for i in range(len(gold)):
        keep = np.arange(len(gold)) != i
        ks = [k for j, k in enumerate(keys) if j != i]
        plain_moves.append(_factor(plain_threshold(tp[keep], gold[keep], RULE_GRID, 0.99), plain))
        bagged_moves.append(_factor(bagged_threshold(tp[keep], gold[keep], RULE_GRID, 0.99, ks), bagged))
    assert max(plain_moves) > STABLE_FACTOR
    assert max(bagged_moves) < STABLE_FACTOR


def test_a_shift_of_the_curve_by_a_few_tokens_moves_the_bagged_threshold_little():
    """Two builds whose dev curves differ by two tokens on the plateau (recall 0.990 against
    0.989): the plain rule jumps from one end of the plateau to the other, the bagged rule moves
    by less than STABLE_FACTOR."""
    tp, gold, keys, lo, hi = knife_edge()
    other = tp.copy()
    cols = np.array(RULE_GRID) > lo
    other[0, cols] -= 2  # the document that missed nothing now misses two tokens above ~0.17
    assert plain_threshold(tp, gold, RULE_GRID, 0.99) == hi and plain_threshold(other, gold, RULE_GRID, 0.99) == lo
    a, b = bagged_threshold(tp, gold, RULE_GRID, 0.99, keys), bagged_threshold(other, gold, RULE_GRID, 0.99, keys)
    assert _factor(a, b) < STABLE_FACTOR


def test_the_bagged_rule_depends_on_the_documents_not_their_order_and_repeats_with_its_seed():
    tp, gold, keys, *_ = knife_edge()
    a = bagged_threshold(tp, gold, RULE_GRID, 0.99, keys, seed=5)
    assert bagged_threshold(tp, gold, RULE_GRID, 0.99, keys, seed=5) == a
    perm = np.random.default_rng(1).permutation(len(gold))
    assert bagged_threshold(tp[perm], gold[perm], RULE_GRID, 0.99, [keys[i] for i in perm], seed=5) == pytest.approx(a)
    # a document's resampling counts depend on its key and the seed only
    w = poisson_weights(keys, 50, 5)
    assert np.array_equal(poisson_weights(keys[3:7], 50, 5), w[:, 3:7])
    assert abs(w.mean() - 1.0) < 0.05  # Poisson(1) counts: a resample is as large as the split on average


def test_no_threshold_reaching_the_target_gives_none_and_resamples_fall_back_to_the_lowest():
    tp, gold, keys, *_ = knife_edge()
    assert plain_threshold(tp, gold, RULE_GRID, 0.999) is None
    assert bagged_threshold(tp, gold, RULE_GRID, 0.999, keys) is None
    assert np.isnan(highest_reaching(np.array([[1, 2]]), np.array([10]), [0.5, 0.1], 0.9))[0]
    assert highest_reaching(np.array([[9, 10]]), np.array([10]), [0.5, 0.1], 0.9)[0] == 0.5


def test_rule_spread_reports_the_plain_rule_moving_more_than_the_bagged_one():
    tp, gold, keys, *_ = knife_edge()
    s = rule_spread(tp, gold, RULE_GRID, 0.99, keys, outer=20, resamples=200)
    assert s["plain"]["max_drop_one_factor"] > s["bagged"]["max_drop_one_factor"]
    for name in ("plain", "bagged"):
        assert s[name]["p5"] <= s[name]["p50"] <= s[name]["p95"]
    assert s["plain"]["p95_over_p5"] > s["bagged"]["p95_over_p5"]


def test_threshold_doc_counts_add_up_to_the_operating_points(splits, fitted):
    """The per-document counts the rule resamples are the tagger's predictions: summed over
    documents they give operating_points' precision and recall at every threshold."""
    from deidlib.training import operating_points
    from deidlib.training.predict import threshold_doc_counts
    from deidlib.training.threshold_rule import curve_from_counts

    grid = (0.9, 0.5, 0.1, 0.01)
    counts = threshold_doc_counts(fitted, splits.dev, grid)
    assert counts["tp"].shape == (len(splits.dev), len(grid)) and counts["gold"].sum() > 0
    for got, want in zip(curve_from_counts(counts), operating_points(fitted, splits.dev, grid, own=False)):
        assert got["threshold"] == want["threshold"]
        assert got["recall"] == pytest.approx(want["recall"]) and got["precision"] == pytest.approx(want["precision"])


def test_choose_threshold_bagged_on_a_tagger_reports_its_curve_and_the_plain_rule(splits, fitted):
    from deidlib.training import operating_points
    from deidlib.training.threshold_rule import choose_threshold_bagged

    grid = (0.9, 0.5, 0.1, 0.01, 0.001)
    rec = [p["recall"] for p in operating_points(fitted, splits.dev, grid, own=False)]
    target = min(rec) - 1e-9  # reachable everywhere on the full split
    th, info = choose_threshold_bagged(fitted, splits.dev, target, grid=grid, resamples=100)
    assert th is not None and min(grid) <= th <= max(grid)
    assert info["plain_threshold_on_grid"] == max(grid)
    assert any(p["threshold"] == th for p in info["curve"])
    ths = [p["threshold"] for p in info["curve"]]
    assert ths == sorted(ths, reverse=True)
