"""Registry evaluation (deidlib.collaborative.registry_eval): F1, extreme classes, paired
bootstrap, McNemar, and the registry-identification attack (near 100 % on a representation
that encodes the registry, near chance on one that does not)."""

import numpy as np
import pytest

from deidlib.collaborative.registry_eval import (
    _f1_counts,
    extreme_classes,
    f1_micro_macro,
    mcnemar,
    paired_bootstrap,
    per_class_f1,
    registry_attack,
)


def test_f1_micro_macro_matches_hand_computation():
    y = [0, 0, 0, 1]
    p = [0, 0, 1, 1]
    out = f1_micro_macro(y, p)
    assert out["micro"] == pytest.approx(0.75)
    assert out["macro"] == pytest.approx((0.8 + 2 / 3) / 2)
    assert per_class_f1(y, p, [1]) == {1: pytest.approx(2 / 3)}


def test_bootstrap_f1_agrees_with_scikit_learn():
    rng = np.random.default_rng(2)
    y, p = rng.integers(0, 6, 200), rng.integers(0, 7, 200)
    for metric in ("micro", "macro"):
        assert _f1_counts(y, p, metric) == pytest.approx(f1_micro_macro(y, p)[metric])


def test_extreme_classes_respect_min_support():
    assert extreme_classes([500, 99, 150, 120], min_support=100) == (0, 3)
    assert extreme_classes([5, 6], min_support=100) is None


def test_paired_bootstrap_separates_a_real_difference_from_none():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 400)
    good = np.where(rng.random(400) < 0.9, y, (y + 1) % 3)
    bad = np.where(rng.random(400) < 0.5, y, (y + 1) % 3)
    delta, p = paired_bootstrap(y, bad, good, metric="micro", n_resamples=300)
    assert delta > 0.3 and p < 0.01
    delta0, p0 = paired_bootstrap(y, good, good.copy(), n_resamples=300)
    assert delta0 == 0 and p0 == 1.0


def test_mcnemar_counts_discordant_pairs():
    y = np.zeros(40, dtype=int)
    a = np.zeros(40, dtype=int)
    b = np.zeros(40, dtype=int)
    b[:15] = 1  # B wrong on 15 that A gets right
    a_only, b_only, p = mcnemar(y, a, b)
    assert (a_only, b_only) == (15, 0) and p < 0.001
    assert mcnemar(y, a, a)[2] == 1.0


def test_attack_finds_an_explicit_registry_and_not_an_independent_one():
    rng = np.random.default_rng(1)
    reg = rng.integers(0, 3, 600)
    noise = rng.normal(size=(600, 10)).astype(np.float32)
    explicit = noise.copy()
    explicit[:, :3] += 6 * np.eye(3)[reg]  # the registry written into the features
    hit = registry_attack(explicit, reg, epochs=20, seed=0)
    miss = registry_attack(noise, reg, epochs=20, seed=0)
    assert hit.chance == pytest.approx(1 / 3)
    assert hit.accuracy > 0.95
    assert abs(miss.accuracy - miss.chance) < 0.1
    assert hit.n_train + hit.n_test == 600


def test_attack_rejects_a_single_registry():
    with pytest.raises(ValueError):
        registry_attack(np.zeros((10, 2)), np.zeros(10, dtype=int))
