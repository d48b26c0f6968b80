import pytest

import deidlib.privacy.dpsgd as dpsgd
from deidlib.studies import audits as au


def test_params_resolve_and_reject_bad_values():
    p = au.params_for("smoke", references=2)
    assert p.references == 2 and p.profile == "smoke"
    with pytest.raises(ValueError, match="references"):
        au.params_for("smoke", references=0)
    with pytest.raises(ValueError, match="unknown audits parameters"):
        au.params_for("smoke", bogus=1)


def test_halves_are_balanced_and_seeded():
    pats = [str(i) for i in range(7) for _ in range(3)]
    h = au._half(pats, 0, "x")
    assert sum(h.values()) == 4 and h == au._half(pats, 0, "x") and h != au._half(pats, 0, "y")
    with pytest.raises(ValueError, match="at least 2 patients"):
        au._half(["a", "a"], 0, "x")


def test_frontier_lists_the_missing_rows_without_numbers():
    res = {"membership": [], "dssgd": [], "surrogates": []}
    fr = au.frontier_table(res)
    assert len(fr) == len(au.MISSING) and fr.status.str.startswith("not joined yet").all()
    assert fr.utility_f1.isna().all() and fr.attack_success.isna().all()


def test_the_study_raises_when_an_audit_beats_the_accountant(monkeypatch):
    """A noise bug in dpsgd (10x too small) makes the one-step audit exceed the accountant's ε:
    the study must refuse to report it as a result."""
    params = au.params_for("smoke", step_audit_trials=1000)
    data = au.prepare_data(params)
    real = dpsgd._add_noise
    monkeypatch.setattr(dpsgd, "_add_noise", lambda s, c, z, d, g: real(s, c, z / 10, d, g))
    with pytest.raises(RuntimeError, match="privacy bug"):
        au.epsilon_audits(data, params)
