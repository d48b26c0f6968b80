"""The DP vocabulary mechanism (Gaussian partition selection with bounded contributions)."""

import math

import numpy as np
import pytest
from scipy.stats import norm

from deidlib.privacy.accounting import epsilon
from deidlib.privacy.vocabulary import _threshold_for, dp_vocabulary, total_guarantee


def _word(*ids):  # a distinct alphabetic word (digits would be normalised away)
    return "z" + "q".join("".join(chr(97 + int(c)) for c in str(i)) for i in ids)


def test_a_word_of_one_unit_passes_the_threshold_with_probability_delta_over_k():
    # δτ = 0.4 and k = 4 make the probability measurable: 0.1 per word of a single unit
    units = [[_word(i, j) for j in range(4)] for i in range(5000)]  # 20,000 words, each in one unit
    rel = dp_vocabulary(units, noise_multiplier=1.0, max_words_per_unit=4, delta_threshold=0.4,
                        rng=np.random.default_rng(0))
    p = len(rel.words) / 20_000
    assert p == pytest.approx(0.1, abs=6 * math.sqrt(0.1 * 0.9 / 20_000))
    assert rel.threshold == pytest.approx(1 + 2.0 * norm.isf(0.1)) and rel.noise_std == 2.0


def test_a_unit_contributes_at_most_k_words():
    # 1,000 units of 40 distinct words of their own, k = 4: at most 4 per unit are counted, so
    # about 1000·4·0.1 = 400 pass (about 4,000 would if all 40 counted)
    units = [[_word(i, j) for j in range(40)] for i in range(1000)]
    rel = dp_vocabulary(units, noise_multiplier=1.0, max_words_per_unit=4, delta_threshold=0.4,
                        rng=np.random.default_rng(1))
    assert abs(len(rel.words) - 400) < 6 * math.sqrt(400)


def test_frequent_words_are_released_in_order_and_normalised():
    units = [["The", "pt", "Stable", "Z" + _word(i)] for i in range(400)] + [["pt"]] * 100
    rel = dp_vocabulary(units, rng=np.random.default_rng(2))
    assert rel.words[0] == "pt" and set(rel.words) == {"pt", "the", "stable"}  # no name of one unit
    assert rel.unit == "sentence" and rel.n_units == 500 and rel.accountant_phase() == (4.0, 1.0, 1)
    with pytest.raises(ValueError):
        dp_vocabulary(units, noise_multiplier=0)
    with pytest.raises(ValueError):
        dp_vocabulary(units, max_words_per_unit=0)


def test_total_guarantee_and_threshold():
    e, d = total_guarantee(2.0, 9e-6, 1e-6)
    assert e == pytest.approx(2.0 + 1e-6, rel=1e-9) and d == pytest.approx(1e-5)
    assert _threshold_for(4.0 * math.sqrt(8), 8, 1e-6) == pytest.approx(1 + 4 * math.sqrt(8) * norm.isf(1.25e-7))
    # the vocabulary's Gaussian part alone at σ = 4: ε just under 1 at δ = 9e-6 (RDP)
    assert 0.5 < epsilon(4.0, 1.0, 1, 9e-6, "rdp") < 1.1
