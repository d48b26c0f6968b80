"""The seed statistics behind the ahmed verdicts: t intervals and paired effects."""

import math

import numpy as np
import pytest

from deidlib.studies.seed_stats import effect_verdict, paired_effect, t_interval


def test_t_interval_matches_the_textbook_formula_and_covers_the_mean_at_its_level():
    m, lo, hi = t_interval([1.0, 2.0, 3.0, 4.0, 5.0])
    half = 2.7764451051977987 * math.sqrt(2.5) / math.sqrt(5)  # t_{0.975, 4}
    assert m == 3.0 and lo == pytest.approx(3 - half) and hi == pytest.approx(3 + half)
    rng = np.random.default_rng(0)
    hits = 0
    for _ in range(2000):
        _, lo, hi = t_interval(rng.normal(1.0, 2.0, size=5))
        hits += lo <= 1.0 <= hi
    assert 0.93 <= hits / 2000 <= 0.97  # nominal 95 % coverage


def test_t_interval_of_one_value_has_no_width():
    m, lo, hi = t_interval([0.7, math.nan])
    assert m == 0.7 and math.isnan(lo) and math.isnan(hi)
    with pytest.raises(ValueError, match="level"):
        t_interval([1, 2], level=1.5)


def test_a_known_positive_paired_effect_is_found_despite_large_seed_spread():
    rng = np.random.default_rng(1)
    seed_effect = rng.normal(0, 10, size=5)  # shared by both configurations of a seed
    a, b = 80 + seed_effect + 2.0 + rng.normal(0, 0.3, 5), 80 + seed_effect
    e = paired_effect(a, b)
    assert e["n"] == 5 and e["lo"] > 0 and e["p"] < 0.05
    assert effect_verdict(e["lo"], e["hi"], +1) == "found"
    assert effect_verdict(e["lo"], e["hi"], -1) == "reversed"  # the opposite claim is contradicted
    # unpaired, the same numbers would not separate: the seed spread dwarfs the effect
    assert t_interval(a)[1] < t_interval(b)[2]


def test_a_zero_paired_effect_is_not_distinguishable_and_a_negative_one_is_reversed():
    rng = np.random.default_rng(2)
    b = rng.normal(80, 5, size=6)
    zero = paired_effect(b + rng.normal(0, 1, 6), b)
    assert zero["lo"] < 0 < zero["hi"]
    assert effect_verdict(zero["lo"], zero["hi"], +1) == "not distinguishable from zero"
    neg = paired_effect(b - 3 + rng.normal(0, 0.5, 6), b)
    assert effect_verdict(neg["lo"], neg["hi"], +1) == "reversed"
    assert effect_verdict(neg["lo"], neg["hi"], -1) == "found"


def test_paired_effect_drops_unpaired_nans_and_needs_two_pairs_for_a_verdict():
    e = paired_effect([1.0, math.nan, 3.0], [0.5, 1.0, math.nan])
    assert e["n"] == 1 and math.isnan(e["lo"])
    assert effect_verdict(e["lo"], e["hi"]) == "not measured"
    assert paired_effect([2.0, 2.0], [1.0, 1.0])["p"] == 0.0  # identical differences: no spread
    with pytest.raises(ValueError, match="equal lengths"):
        paired_effect([1, 2], [1])
    with pytest.raises(ValueError, match="sign"):
        effect_verdict(0.1, 0.2, 0)
