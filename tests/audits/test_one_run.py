"""The one-run audit of ``train_dp`` (Steinke, Nasr & Jagielski 2023): the ε-from-guesses bound
against closed forms, a brute-force sum and the exactly ε-DP randomised response; the Dirac
gradient canaries against the clipping bound; and one real run of the correct mechanism, whose
lower bound must stay at or below the run's accountant ε while reaching ≥ 1 at ε = 8. That the
audit catches a train_dp with a tenth of the noise is guarded in tests/privacy/test_dp_mutations.py."""

import math
import warnings

import numpy as np
import pytest
import torch

from deidlib.audits.one_run import (
    GradientCanaryTagger,
    _canary_sentence,
    _canary_word,
    _epsilon_one_run,
    _p_value,
)
from deidlib.privacy.dpsgd import train_dp
from deidlib.studies import audits as au
from deidlib.studies.audits.accountant import one_run_audit
from deidlib.studies.audits.data import _featurizer, make_tagger


def test_bound_without_delta_with_every_guess_right_is_the_closed_form():
    # δ = 0, v = r: the p-value is q^r, so the bound solves q^r = α, ε = ln(q / (1 − q))
    for r in (10, 100, 1000):
        q = 0.05 ** (1 / r)
        assert _epsilon_one_run(r, r, r, 0.0, 0.05) == pytest.approx(math.log(q / (1 - q)), abs=1e-6)


def test_p_value_matches_a_brute_force_binomial_sum():
    m, r, v, eps, delta = 60, 30, 24, 1.3, 1e-3
    q = math.exp(eps) / (1 + math.exp(eps))
    pmf = [math.comb(r, j) * q**j * (1 - q) ** (r - j) for j in range(r + 1)]
    beta = sum(pmf[v:])
    alpha = max(sum(pmf[v - i:v]) / i for i in range(1, v + 1))
    assert _p_value(m, r, v, eps, delta) == pytest.approx(beta + 2 * m * delta * alpha, rel=1e-9)
    assert _p_value(m, r, 0, eps, delta) == 1.0
    with pytest.raises(ValueError):
        _p_value(10, 20, 5, 1.0, 1e-5)


def test_bound_grows_with_correct_guesses_and_falls_with_delta():
    b = [_epsilon_one_run(1000, 200, v, 1e-5) for v in (100, 140, 170, 200)]
    assert b[0] == 0.0 and b == sorted(b) and b[-1] > 3
    assert _epsilon_one_run(10**5, 200, 200, 1e-5) < _epsilon_one_run(1000, 200, 200, 1e-5)


def test_bound_is_a_valid_95pct_lower_bound_for_randomised_response():
    """ε-randomised response is exactly ε-DP per canary: the bound exceeds ε in at most 5 % of
    runs (2000 runs: 5 % + 3 s.e. ≈ 6.5 %), and it detects a mechanism at 3ε against a claim of ε."""
    rng = np.random.default_rng(0)
    r, eps = 100, 1.0
    q = math.exp(eps) / (1 + math.exp(eps))
    v = rng.binomial(r, q, size=2000)
    # ε_LB > ε  ⇔  p_value(ε) < α (the p-value rises with ε)
    over = np.mean([_p_value(r, r, int(k), eps, 0.0) < 0.05 for k in v])
    assert over <= 0.065, over
    q3 = math.exp(3 * eps) / (1 + math.exp(3 * eps))
    caught = np.mean([_epsilon_one_run(r, r, int(k), 0.0) > eps for k in rng.binomial(r, q3, size=50)])
    assert caught > 0.9, caught


def test_dirac_canaries_are_clipped_to_c_on_their_own_coordinate(tiny):
    """σ = 0, one full-batch SGD step with lr = 1: an included canary's coordinate moves by
    exactly C / L (its gradient −B·e_i clipped to −C·e_i), an excluded one's not at all."""
    params, data = tiny
    base_sents = data.sentences[:5]
    words = [_canary_word(i) for i in range(6)]
    assert len(set(words)) == 6
    fz = _featurizer([s.words for s in base_sents], words)
    ids = [int(fz.encode([[w]], [["O"]]).word_ids[0, 0]) for w in words]
    tagger = GradientCanaryTagger(make_tagger(fz, params, 0), ids)
    included = [0, 2, 3]
    sents = [*base_sents, *(_canary_sentence(i) for i in included)]
    C = 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # σ = 0 warns (no privacy): on purpose
        train_dp(tagger, sents, epochs=1, batch_size=len(sents), noise_multiplier=0.0, max_grad_norm=C,
                 optimizer="sgd", lr=1.0, progress=False, secure=False, accountant="rdp")
    expected = torch.zeros(6)
    expected[included] = C / len(sents)
    assert torch.allclose(tagger.canary.detach(), expected, rtol=1e-4, atol=1e-9), tagger.canary


def test_one_run_audit_of_the_correct_train_dp_stays_below_the_accountant(tiny):
    params, data = tiny
    p = au.params_for("smoke", tagger=params.tagger, one_run_canaries=200, one_run_steps=1)
    for eps in (2.0, 4.0):
        a = one_run_audit(data, p, eps, seed=1)
        assert a["accountant_epsilon"] <= eps + 1e-6 and a["steps"] == 1 and a["sample_rate"] == 1.0
        assert 0 <= a["epsilon_lower_bound"] <= a["accountant_epsilon"] and not a["violated"], a


def test_one_run_audit_proves_at_least_one_at_accountant_epsilon_eight(tiny):
    """The audit can prove something: 1000 canaries, one run, accountant ε = 8 ⇒ bound ≥ 1."""
    params, data = tiny
    p = au.params_for("smoke", tagger=params.tagger, one_run_canaries=1000, one_run_steps=1)
    a = one_run_audit(data, p, 8.0, seed=0)
    assert a["accountant_epsilon"] == pytest.approx(8.0, abs=0.01)
    assert 1.0 <= a["epsilon_lower_bound"] <= a["accountant_epsilon"], a
