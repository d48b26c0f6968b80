"""Shokri & Shmatikov's DP upload: Laplace sampler, SVT selection, ledger (statistical tests)."""

from __future__ import annotations

import math

import pytest
import torch

from deidlib.collaborative import UploadLedger, make_generator
from deidlib.collaborative.dp_upload import _SELECTION_SHARE, dp_select_upload, laplace
from deidlib.collaborative.dssgd import fraction_count


def test_laplace_moments():
    x = laplace((200_000,), 2.0, make_generator(0))
    assert abs(float(x.mean())) < 0.03
    assert float(x.abs().mean()) == pytest.approx(2.0, rel=0.02)  # E|X| = b
    assert float(x.var()) == pytest.approx(8.0, rel=0.03)  # Var = 2 b^2
    with pytest.raises(ValueError):
        laplace((3,), 0.0, make_generator(0))


def test_upload_size_and_bounds():
    u = torch.randn(1000, generator=make_generator(1))
    up = dp_select_upload(u, theta_u=0.05, gamma=0.5, tau=0.1, epsilon=1.0, generator=make_generator(2))
    assert up.indices.numel() <= fraction_count(0.05, 1000)
    assert bool((up.values.abs() <= 0.5).all())
    assert up.indices.unique().numel() == up.indices.numel()
    assert up.epsilon == 1.0 and up.epsilon_selection == pytest.approx(_SELECTION_SHARE)


def test_large_epsilon_selects_above_threshold_and_keeps_values():
    u = torch.zeros(100)
    u[10:30] = torch.linspace(0.2, 0.4, 20)  # 20 entries above τ = 0.1
    up = dp_select_upload(u, theta_u=0.1, gamma=1.0, tau=0.1, epsilon=1e9, generator=make_generator(3))
    assert up.indices.numel() == 10
    assert bool(((up.indices >= 10) & (up.indices < 30)).all())
    assert torch.allclose(up.values, u[up.indices], atol=1e-5)


def test_value_noise_scale():
    """Released values carry Lap(2cΔ/ε₂) noise (large γ so that clamping is inactive)."""
    u = torch.full((1,), 5.0)
    eps, delta = 1.0, 0.01
    scale = 2 * 1 * delta / (eps * (1 - _SELECTION_SHARE))
    noise = []
    for s in range(3000):
        up = dp_select_upload(u, theta_u=1.0, gamma=100.0, tau=0.0, epsilon=eps, sensitivity=delta,
                              generator=make_generator(s))
        if up.indices.numel():
            noise.append(float(up.values[0]) - 5.0)
    assert len(noise) > 2500
    mean_abs = sum(abs(x) for x in noise) / len(noise)
    assert mean_abs == pytest.approx(scale, rel=0.08)


def test_selection_probability_ratio_bounded_by_epsilon():
    """Neighbouring updates (one coordinate moved by Δ): P(coordinate 0 selected) ratio ≤ e^ε₁."""
    eps, gamma = 1.0, 1.0
    u0 = torch.zeros(4)
    u1 = torch.tensor([1.0, 0.0, 0.0, 0.0])  # |change| = 1 ≤ Δ = 2γ
    trials = 6000

    def p_sel(u):
        hits = 0
        for s in range(trials):
            up = dp_select_upload(u, theta_u=0.25, gamma=gamma, tau=0.5, epsilon=eps, generator=make_generator(s))
            hits += int(0 in up.indices.tolist())
        return hits / trials

    p0, p1 = p_sel(u0), p_sel(u1)
    assert 0.05 < p0 < 0.95 and 0.05 < p1 < 0.95
    bound = math.exp(eps * _SELECTION_SHARE)
    slack = 1.15  # sampling error of ~6000 Bernoulli trials
    assert p1 / p0 <= bound * slack and p0 / p1 <= bound * slack
    assert p1 > p0  # the larger update is (slightly) more likely to be chosen


def test_small_epsilon_selection_is_nearly_uniform():
    u = torch.zeros(10)
    u[0] = 1.0
    hits = torch.zeros(10)
    for s in range(2000):
        up = dp_select_upload(u, theta_u=0.1, gamma=1.0, tau=0.5, epsilon=0.01, generator=make_generator(s))
        hits[up.indices] += 1
    rate = hits / hits.sum()
    assert float((rate - 0.1).abs().max()) < 0.03


def test_ledger_composition_and_budget():
    led = UploadLedger("w", budget=1.0)
    led.spend(0.4, epoch=1)
    led.spend(0.6, epoch=2)
    assert led.total_epsilon == pytest.approx(1.0)
    assert not led.can_spend(0.01)
    with pytest.raises(RuntimeError, match="budget"):
        led.spend(0.1)
    d = led.to_dict()
    assert d["uploads"] == 2 and d["total_epsilon"] == pytest.approx(1.0)


def test_bad_arguments():
    u = torch.zeros(5)
    with pytest.raises(ValueError):
        dp_select_upload(u, theta_u=0.2, gamma=math.inf, tau=0, epsilon=1, generator=make_generator(0))
    with pytest.raises(ValueError):
        dp_select_upload(u, theta_u=0.2, gamma=1, tau=0, epsilon=0, generator=make_generator(0))
