"""Extreme privacy parameters end in bounded time with a one-line error, never in a hang:
σ = ∞ (Opacus' PRV accountant does not return for it), targets ε so large that the calibration
slides towards σ → 0, and targets below the accountant's floor (σ would grow without end)."""

import math
import subprocess
import sys
import time

import pytest

import deidlib.privacy.accounting as A
from deidlib.cli import main
from deidlib.privacy.accounting import (
    _MAX_CALIBRATION_STEPS,
    _MIN_CALIBRATED_NOISE,
    MAX_NOISE_MULTIPLIER,
    MAX_TARGET_EPSILON,
    epsilon,
    noise_for_epsilon,
)
from deidlib.privacy.dpsgd import train_dp

Q, T = 0.02, 50  # small enough that every RDP call takes milliseconds


@pytest.fixture(autouse=True, scope="module")
def _opacus_imported():
    epsilon(1.0, Q, T, 1e-5, "rdp")  # the timings below exclude the one-off import of Opacus


@pytest.mark.parametrize("accountant", ["prv", "rdp", "gdp"])
@pytest.mark.parametrize("sigma", [math.inf, math.nan, 10 * MAX_NOISE_MULTIPLIER])
def test_epsilon_refuses_infinite_or_excessive_noise_at_once(sigma, accountant):
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="noise_multiplier"):
        epsilon(sigma, Q, T, 1e-5, accountant)
    assert time.perf_counter() - t0 < 0.5


@pytest.mark.parametrize("target", [1000.0, 1e300, math.inf, math.nan, 0.0, -1.0])
def test_noise_for_epsilon_refuses_targets_outside_the_documented_range(target):
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"target ε must lie in \(0, 100\]"):
        noise_for_epsilon(target, Q, T, 1e-5, "prv")
    assert time.perf_counter() - t0 < 0.5


def test_a_target_below_the_accountants_floor_is_unreachable_not_a_loop():
    # RDP's floor at δ = 1e-5 is about 0.1: σ would be doubled for ever
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="unreachable"):
        noise_for_epsilon(0.05, Q, T, 1e-5, "rdp")
    assert time.perf_counter() - t0 < 1.0


def test_earlier_phases_that_spend_the_target_are_a_clear_error():
    with pytest.raises(ValueError, match="unreachable.*earlier phases alone"):
        noise_for_epsilon(0.5, Q, T, 1e-5, "rdp", history=[(0.3, 1.0, 20)])


@pytest.mark.parametrize("target", [MAX_TARGET_EPSILON, 1.0, 0.2])
def test_calibration_makes_a_bounded_number_of_accountant_calls_and_meets_the_target(target, monkeypatch):
    calls = []
    real = A.epsilon

    def counted(*a, **kw):
        calls.append(a[0])
        return real(*a, **kw)

    monkeypatch.setattr(A, "epsilon", counted)
    sigma = noise_for_epsilon(target, Q, T, 1e-5, "rdp")
    assert len(calls) <= _MAX_CALIBRATION_STEPS
    assert all(_MIN_CALIBRATED_NOISE <= s <= MAX_NOISE_MULTIPLIER for s in calls)
    assert real(sigma, Q, T, 1e-5, "rdp") <= target


def test_the_smallest_calibrated_noise_is_returned_when_it_already_meets_the_target():
    # one step at q = 1e-6: even σ = _MIN_CALIBRATED_NOISE spends ε < 1 (PRV)
    assert epsilon(_MIN_CALIBRATED_NOISE, 1e-6, 1, 1e-5, "prv") < 1.0
    assert noise_for_epsilon(1.0, 1e-6, 1, 1e-5, "prv") == _MIN_CALIBRATED_NOISE


def test_train_dp_refuses_infinite_noise(make_tagger):
    sents, tg = make_tagger("gru")
    with pytest.raises(ValueError, match="noise_multiplier must lie in"):
        train_dp(tg, sents[:8], noise_multiplier=math.inf, batch_size=2, progress=False)


@pytest.mark.parametrize(("flag", "value"), [("--dp-noise", "inf"), ("--dp-noise", "1e4"),
                                             ("--dp-epsilon", "1000"), ("--dp-epsilon", "1e300")])
def test_train_cli_refuses_extreme_privacy_parameters_with_one_line(flag, value, tmp_path, capsys):
    assert main(["train", str(tmp_path / "m"), flag, value, "--epochs", "0.03"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith(f"deidlib train: {flag} must")


def test_train_cli_with_infinite_noise_exits_2_within_a_subprocess_timeout(tmp_path):
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "deidlib", "train", str(tmp_path / "m"), "--dp-noise", "inf"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    assert "--dp-noise must be at most" in r.stderr and "Traceback" not in r.stderr
    assert time.perf_counter() - t0 < 60
