"""Statistical tests of the privacy mechanisms: each ε·d bound holds empirically, and a
deliberately broken mechanism fails the same check."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import chisquare

from deidlib.surrogates import mechanisms as M
from deidlib.surrogates.audit import empirical_log_ratios, ratio_test
from deidlib.surrogates.locations import (
    candidate_set,
    fixed_mechanism,
    load_places,
    mechanism_distribution,
    paper_mechanism,
)
from deidlib.surrogates.randomness import SecureRNG, SeededRNG, _rational_at_most

N = 100_000


def test_discrete_laplace_pmf_sums_to_one_and_matches_samples():
    eps = 0.7
    k = np.arange(-60, 61)
    assert M.discrete_laplace_pmf(k, eps).sum() == pytest.approx(1.0, abs=1e-12)
    x = M._discrete_laplace_array(eps, N, np.random.default_rng(1))
    obs = np.array([(x == i).sum() for i in range(-6, 7)] + [(np.abs(x) > 6).sum()])
    p = np.concatenate([M.discrete_laplace_pmf(np.arange(-6, 7), eps), [0.0]])
    p[-1] = 1 - p[:-1].sum()
    assert chisquare(obs, p * N).pvalue > 1e-4


@pytest.mark.parametrize("eps,dist", [(0.5, 1), (0.25, 3), (1.0, 2)])
def test_ddp_laplace_satisfies_eps_d_bound(eps, dist):
    g = np.random.default_rng(2)
    a = M.ddp_laplace_array(np.full(N, 100), eps, g)
    b = M.ddp_laplace_array(np.full(N, 100 + dist), eps, g)
    t = ratio_test(a, b, eps * dist)
    assert t.passed, t
    # the bound is tight: outside [v1, v2] the log ratio is exactly ±eps*d
    keys, lr = empirical_log_ratios(a, b, min_count=3000)
    outside = (keys <= 100) | (keys >= 100 + dist)
    assert np.median(np.abs(lr[outside])) == pytest.approx(eps * dist, abs=0.1)


def test_broken_laplace_fails_the_check():
    """Noise calibrated to 2ε while claiming ε·d: the test must reject."""
    eps, dist = 0.5, 2
    g = np.random.default_rng(3)
    a = M.ddp_laplace_array(np.full(N, 0), 2 * eps, g)
    b = M.ddp_laplace_array(np.full(N, dist), 2 * eps, g)
    assert not ratio_test(a, b, eps * dist).passed


def test_ratio_test_tolerance_depends_on_sample_size():
    """A mild violation (true log ratio 1.25 x the bound) is invisible with few draws, caught with many."""
    eps = 0.4
    g = np.random.default_rng(4)
    small = ratio_test(M.ddp_laplace_array(np.zeros(300, int), 1.25 * eps, g),
                       M.ddp_laplace_array(np.ones(300, int), 1.25 * eps, g), eps)
    big = ratio_test(M.ddp_laplace_array(np.zeros(400_000, int), 1.25 * eps, g),
                     M.ddp_laplace_array(np.ones(400_000, int), 1.25 * eps, g), eps)
    assert small.passed and not big.passed
    assert small.threshold > 0 and big.bins > small.bins


def test_secure_sampler_exact_distribution_and_bound():
    rng = SecureRNG()
    eps = 0.5
    x = np.array([rng.discrete_laplace(eps) for _ in range(20_000)])
    obs = np.array([(x == i).sum() for i in range(-5, 6)] + [(np.abs(x) > 5).sum()])
    p = np.concatenate([M.discrete_laplace_pmf(np.arange(-5, 6), eps), [0.0]])
    p[-1] = 1 - p[:-1].sum()
    assert chisquare(obs, p * len(x)).pvalue > 1e-4
    y = np.array([1 + rng.discrete_laplace(eps) for _ in range(20_000)])
    assert ratio_test(x, y, eps).passed


def test_rational_epsilon_is_never_rounded_up():
    assert _rational_at_most(0.25) == Fraction(1, 4)
    r = _rational_at_most(0.1)
    assert r <= Fraction(0.1) and r.denominator <= 2**32 and float(r) == pytest.approx(0.1)
    with pytest.raises(ValueError):
        _rational_at_most(0.0)
    with pytest.raises(ValueError):
        SeededRNG(0).discrete_laplace(-1)


@pytest.mark.parametrize("lo,hi", M._TIME_CATEGORIES_DAYS)
def test_bounded_laplace_calibration_is_exact(lo, hi):
    eps = 0.8
    b = M.calibrate_bounded_scale(lo, hi, eps)
    assert M._bounded_laplace_epsilon(lo, hi, b) <= eps + 1e-9
    assert M._bounded_laplace_epsilon(lo, hi, b * 0.98) > eps  # the smallest such scale
    # brute force on a small domain agrees with the O(n) formula
    pmf = np.stack([M._bounded_laplace_pmf(v, 0, 12, 3.0) for v in range(13)])
    brute = np.log(pmf[:, None, :] / pmf[None, :, :]).max()
    assert M._bounded_laplace_epsilon(0, 12, 3.0) == pytest.approx(brute, rel=1e-9)


def test_bounded_laplace_ldp_bound_and_broken_variant():
    g = np.random.default_rng(5)
    eps = 1.0
    a = M._bounded_laplace_array(np.zeros(N, int), 0, 60, eps, g)
    b = M._bounded_laplace_array(np.full(N, 60, int), 0, 60, eps, g)
    assert a.min() >= 0 and b.max() <= 60
    assert ratio_test(a, b, eps).passed
    # broken: truncated Laplace with a third of the calibrated scale
    s = M.calibrate_bounded_scale(0, 60, eps) / 3
    a2 = np.clip(M._discrete_laplace_array(1 / s, N, g), 0, 60)
    b2 = np.clip(60 + M._discrete_laplace_array(1 / s, N, g), 0, 60)
    assert not ratio_test(a2, b2, eps).passed


def test_ldp_time_category_keeps_category_and_sign():
    r = SeededRNG(6)
    for v in (5, 300, 5000, -20, 40000):
        lo, hi = M._time_category(v)
        out = M.ldp_time_category(v, 0.5, r)
        assert lo <= abs(out) <= hi and (out <= 0 if v < 0 else out >= 0)


def test_exponential_probabilities():
    p = M.exponential_probabilities([0.0, 0.5, np.inf], 2.0)
    assert p[2] == 0 and p.sum() == pytest.approx(1)
    assert p[0] / p[1] == pytest.approx(math.exp(1.0))
    assert M.exponential_probabilities([0.0, 0.5], 2.0, factor=0.5)[0] / \
        M.exponential_probabilities([0.0, 0.5], 2.0, factor=0.5)[1] == pytest.approx(math.exp(0.5))
    with pytest.raises(ValueError):
        M.exponential_probabilities([], 1.0)


def test_planar_laplace_radius_is_gamma2():
    r = SeededRNG(7)
    eps = 0.2
    radii = np.array([math.hypot(*M.planar_laplace_offset(eps, r)) for _ in range(20_000)])
    assert radii.mean() == pytest.approx(2 / eps, rel=0.03)  # E[Gamma(2, 1/eps)] = 2/eps
    la, lo = M.offset_latlon(47.0, 5.0, 10.0, 0.0)
    assert M.haversine_km(47.0, 5.0, la, lo) == pytest.approx(10.0, rel=1e-3)


@pytest.fixture(scope="module")
def places():
    return load_places("FR")


def test_fixed_candidate_exponential_mechanism_is_eps_d_private(places):
    cand = candidate_set(places, anchor=(47.32, 5.04), radius_km=120)
    j1, j2 = places.lookup("Dijon"), places.lookup("Besançon")
    d12 = float(places.distances(j1, np.array([j2]))[0])
    eps = 30.0
    # exact distributions: the ratio is bounded for every candidate
    i1, p1 = mechanism_distribution(places, j1, eps, method="fixed", candidates=cand)
    _, p2 = mechanism_distribution(places, j2, eps, method="fixed", candidates=cand)
    assert np.max(np.abs(np.log(p1 / p2))) <= eps * d12 + 1e-9
    # ... and the sampler follows them
    r = SeededRNG(8)
    a = np.array([fixed_mechanism(places, j1, eps, r, cand) for _ in range(20_000)])
    b = np.array([fixed_mechanism(places, j2, eps, r, cand) for _ in range(20_000)])
    assert ratio_test(a, b, eps * d12).passed
    counts = np.array([(a == i).sum() for i in i1])
    assert chisquare(counts[p1 * len(a) > 20], (p1 * len(a))[p1 * len(a) > 20] * counts[p1 * len(a) > 20].sum()
                     / (p1 * len(a))[p1 * len(a) > 20].sum()).pvalue > 1e-4


def test_paper_algorithm1_violates_its_claim(places):
    """Secret-dependent candidates: an output of one neighbour is impossible for the other."""
    j1, j2 = places.lookup("Dijon"), places.lookup("Besançon")
    d12 = float(places.distances(j1, np.array([j2]))[0])
    i1, _ = mechanism_distribution(places, j1, 1.0, method="paper")
    i2, _ = mechanism_distribution(places, j2, 1.0, method="paper")
    assert set(i1) != set(i2)
    r = SeededRNG(9)
    a = np.array([paper_mechanism(places, j1, 1.0, r) for _ in range(5_000)])
    b = np.array([paper_mechanism(places, j2, 1.0, r) for _ in range(5_000)])
    assert not ratio_test(a, b, 1.0 * d12).passed
