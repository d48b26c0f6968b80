"""The ε audits: Clopper–Pearson bounds, and the audit of DP-SGD's noise against the accountant.
A correct mechanism's lower bound must never exceed the accountant's ε; a broken one (noise 10×
smaller than claimed, or a mutation of the library's noise) must be caught."""

import math

import numpy as np
import pytest

import deidlib.privacy.gradients as gradients
from deidlib.audits import audit_dp_step
from deidlib.audits.epsilon import (
    _audit_epsilon,
    _clopper_pearson_upper,
    _epsilon_from_rates,
    epsilon_lower_bound,
)


def test_clopper_pearson_closed_forms():
    # k = 0: the upper bound solves (1 - p)^n = alpha
    assert _clopper_pearson_upper(0, 100, 0.05) == pytest.approx(1 - 0.05 ** (1 / 100))
    assert _clopper_pearson_upper(10, 10, 0.05) == 1.0
    assert 0.1 < _clopper_pearson_upper(10, 100, 0.05) < 0.2
    with pytest.raises(ValueError):
        _clopper_pearson_upper(3, 2, 0.05)


def test_epsilon_from_rates_inverts_the_dp_inequalities():
    eps, delta = 1.5, 1e-5
    fnr = 0.2
    fpr = (1 - delta - fnr) / math.exp(eps)  # a rule exactly on the (ε, δ) boundary
    assert _epsilon_from_rates(fpr, fnr, delta) == pytest.approx(eps)
    assert _epsilon_from_rates(0.5, 0.5, delta) == 0.0


def test_random_guessing_proves_nothing():
    rng = np.random.default_rng(0)
    lb, _ = _audit_epsilon(rng.normal(size=2000), rng.normal(size=2000), delta=1e-5)
    assert lb < 0.3
    assert epsilon_lower_bound([1.0] * 50, [0.0] * 50, 0.5, delta=1e-5) > 2  # perfectly separated


@pytest.mark.parametrize("sigma", [0.5, 1.0, 2.0])
def test_correct_dp_step_audit_stays_below_the_accountant(sigma):
    a = audit_dp_step(sigma, trials=1000, seed=1)
    assert a.accountant_epsilon > 0
    assert not a.violated, a.to_dict()


def test_noise_ten_times_too_small_is_caught():
    a = audit_dp_step(2.0, actual_noise_multiplier=0.2, trials=1000, seed=2)
    assert a.violated and a.epsilon_lower_bound > a.accountant_epsilon, a.to_dict()


def test_a_noise_bug_in_dpsgd_is_caught(monkeypatch):
    """Mutation of the library: dpsgd's noise drawn 10× too small. The audit (which runs the
    library's clip_and_noise) must prove more than the accountant's ε."""
    real = gradients._add_noise

    def weak(summed, max_grad_norm, noise_multiplier, denominator, generator):
        return real(summed, max_grad_norm, noise_multiplier / 10, denominator, generator)

    monkeypatch.setattr(gradients, "_add_noise", weak)
    a = audit_dp_step(2.0, trials=1000, seed=3)
    assert a.violated, a.to_dict()


def test_a_clipping_bug_in_dpsgd_is_caught(monkeypatch):
    """Mutation: clipping disabled (the canary's gradient 10·C passes unclipped)."""
    real = gradients.clip_and_noise

    def unclipped(grads, max_grad_norm, noise_multiplier, denominator, generator=None):
        summed = [g.sum(0) for g in grads]
        return gradients._add_noise(summed, max_grad_norm, noise_multiplier, denominator, generator), None

    monkeypatch.setattr("deidlib.audits.epsilon.clip_and_noise", unclipped)
    a = audit_dp_step(2.0, trials=1000, seed=4)
    assert a.violated, a.to_dict()
    monkeypatch.setattr("deidlib.audits.epsilon.clip_and_noise", real)
