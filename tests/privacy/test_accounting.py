import pytest

from deidlib.privacy.accounting import (
    epsilon,
    noise_for_epsilon,
    steps_for,
)

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def test_opacus_published_rdp_regression_value():
    # Opacus' RDP accountant test: sigma=1.5, q=0.04, delta=1e-5, 2250 steps -> eps ~= 7.3291
    assert epsilon(1.5, 0.04, 2250, 1e-5, "rdp") == pytest.approx(7.3291, abs=1e-3)


def test_prv_is_tighter_than_rdp_and_close():
    rdp = epsilon(1.5, 0.04, 2250, 1e-5, "rdp")
    prv = epsilon(1.5, 0.04, 2250, 1e-5, "prv")
    assert prv < rdp
    assert prv > 0.6 * rdp  # both bound the same mechanism


@pytest.mark.parametrize("acc", ["rdp", "gdp"])
def test_monotonicity(acc):
    base = epsilon(1.0, 0.01, 1000, 1e-5, acc)
    assert epsilon(1.2, 0.01, 1000, 1e-5, acc) < base  # more noise, less epsilon
    assert epsilon(1.0, 0.02, 1000, 1e-5, acc) > base  # higher sampling rate
    assert epsilon(1.0, 0.01, 2000, 1e-5, acc) > base  # more steps
    assert epsilon(1.0, 0.01, 1000, 1e-3, acc) < base  # looser delta
    # fixed epochs: a larger data set gives a smaller epsilon (thesis §5.4)
    eps_n = [epsilon(0.55, *steps_for(n, 16, 100), 1e-5, acc) for n in (2000, 8000, 32000)]
    assert eps_n[0] > eps_n[1] > eps_n[2]


def test_noise_for_epsilon_round_trip():
    s = noise_for_epsilon(3.0, 0.01, 5000, 1e-5, "rdp")
    e = epsilon(s, 0.01, 5000, 1e-5, "rdp")
    assert e <= 3.0 and e > 3.0 - 0.05


def test_history_composes():
    one = epsilon(1.0, 0.01, 2000, 1e-5, "rdp")
    two = epsilon(1.0, 0.01, 1000, 1e-5, "rdp", history=[(1.0, 0.01, 1000)])
    assert two == pytest.approx(one, rel=1e-9)


def test_bad_input():
    with pytest.raises(ValueError, match="accountant"):
        epsilon(1.0, 0.1, 10, 1e-5, "moments")
    with pytest.raises(ValueError, match="noise_multiplier"):
        epsilon(0.0, 0.1, 10)
    with pytest.raises(ValueError, match="sample_rate"):
        epsilon(1.0, 1.5, 10)
    with pytest.raises(ValueError, match="delta"):
        epsilon(1.0, 0.1, 10, 0.0)
    with pytest.raises(ValueError, match="batch_size"):
        steps_for(10, 16, 1)


def test_prv_on_a_nursing_size_composition_stays_small_and_below_rdp():
    """Table 5.3's nursing row (~19.5k sequences, lot 16, 100 epochs = 122k steps) at σ = 0.25:
    with Opacus' absolute eps_error the PRV grid needed > 20 GB (OOM-killed notebook 04)."""
    import tracemalloc

    from deidlib.privacy.accounting import epsilon

    tracemalloc.start()
    prv = epsilon(0.25, 16 / 19548, 122175, 1e-5, "prv")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    rdp = epsilon(0.25, 16 / 19548, 122175, 1e-5, "rdp")
    assert peak < 2 * 2**30
    assert 0.85 * rdp < prv < rdp  # PRV is tighter than RDP, and not by much at this ε


def test_noise_for_epsilon_composes_earlier_phases():
    # a DP vocabulary's Gaussian phase (σ = 4, q = 1, one step) before DP-SGD: the calibrated σ
    # must meet the target for the composition, not for DP-SGD alone
    from deidlib.privacy.accounting import noise_for_epsilon

    h = [(4.0, 1.0, 1)]
    s = noise_for_epsilon(3.0, 0.01, 500, 1e-5, "rdp", history=h)
    e = epsilon(s, 0.01, 500, 1e-5, "rdp", history=h)
    assert 3.0 - 0.01 <= e <= 3.0
    assert s > noise_for_epsilon(3.0, 0.01, 500, 1e-5, "rdp")  # more noise than without the phase
    with pytest.raises(ValueError, match="earlier phases alone"):
        noise_for_epsilon(0.5, 0.01, 500, 1e-5, "rdp", history=h)
