"""Behavioural checks of DP-SGD's privacy mechanics, and a mutation test showing that each
check catches the privacy bug it is meant to catch.

The checks observe ``train_dp`` from the outside, never through its ledger alone:

* optimizer steps are counted with torch's global optimizer step hooks;
* lot sizes are counted as forward calls of the word embedding between two optimizer steps
  (the default ``micro`` method runs one forward pass per privacy unit of the lot);
* the noise is measured on a *probe* parameter that no loss reaches (its gradient is exactly
  zero), so its update is the Gaussian noise divided by the denominator and nothing else;
* per-unit clipping is measured with σ = 0 and every unit in every lot (q = 1), where the
  noise-free update times L must have norm <= (number of units) · C.

Each check compares what it observes with what the ledger claims (steps, σ, C, q, unit).
The mutation test patches a copy of :mod:`deidlib.privacy.dpsgd` (source text replaced,
executed as a separate module) with each of the bugs below and asserts that the
matching check fails on the mutant while it passes on the real module.

The one-run ε audit (:mod:`deidlib.audits.one_run`) attacks the same copies from the outside
too: with a tenth of the noise, one training run proves an ε above the run's own ledger, which
is a privacy-bug error (:func:`deidlib.audits.raise_if_violated`).
"""

from __future__ import annotations

import math
import sys
import types
import warnings
from pathlib import Path

import pytest
import torch
from torch.optim.optimizer import register_optimizer_step_pre_hook

import deidlib.privacy.dpsgd as real_dpsgd
from deidlib.privacy.accounting import epsilon

PROBE = 20_000  # probe coordinates: the per-step noise std is measured to ~0.5 % (1 s.e.)


def _observe(dpsgd, tagger, sents, **kw):
    """Run ``dpsgd.train_dp`` with hooks; returns (ledger, per-step records). A record holds
    the number of units in the lot (forward passes) and every parameter's gradient as the
    optimizer sees it."""
    records, calls = [], [0]

    def count(*_):
        calls[0] += 1

    def pre_step(opt, args, kwargs):
        records.append({
            "units": calls[0],
            "grads": {n: p.grad.detach().clone() for n, p in tagger.named_parameters() if p.grad is not None},
        })
        calls[0] = 0

    h1 = register_optimizer_step_pre_hook(pre_step)
    h2 = tagger.word.register_forward_hook(count)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # σ = 0 warns (no privacy): used on purpose below
            _, ledger = dpsgd.train_dp(tagger, sents, progress=False, accountant="rdp", optimizer="sgd",
                                       lr=1e-3, **kw)
    finally:
        h1.remove()
        h2.remove()
    return ledger, records


def _probed(make_tagger):
    sents, tg = make_tagger("gru")
    tg.probe = torch.nn.Parameter(torch.zeros(PROBE))  # reached by no loss: zero gradient
    return sents, tg


# ------------------------------------------------------------------------------- the checks


def _assert_noise_matches_ledger(led, recs):
    """The probe's update in every step is N(0, (σ·C / (q·n))²): σ·C from the ledger, divided by
    the *expected* lot size."""
    expected = led.noise_multiplier * led.max_grad_norm / led.expected_batch_size
    for t, r in enumerate(recs):
        sd = float(r["grads"]["probe"].std())
        assert abs(float(r["grads"]["probe"].mean())) < 6 * expected / math.sqrt(PROBE)
        # relative s.e. of a sample sd is 1/sqrt(2·PROBE) = 0.5 %: 3 % is 6 s.e.
        assert sd == pytest.approx(expected, rel=0.03), (
            f"step {t}: noise sd {sd:.5g} but σ·C/L = {expected:.5g} (lot of {r['units']} units)"
        )


def check_steps_and_noise(dpsgd, make_tagger, *, secure=True):
    """(a) optimizer steps = ledger steps; (b)/(f) the probe's noise matches the ledger's σ·C/L."""
    sents, tg = _probed(make_tagger)
    sigma, C = 0.9, 2.5
    led, recs = _observe(dpsgd, tg, sents[:48], epochs=1.0, batch_size=6, noise_multiplier=sigma,
                         max_grad_norm=C, secure=secure)
    assert len(recs) == led.steps, f"{len(recs)} optimizer steps but the ledger records {led.steps}"
    assert led.expected_batch_size == pytest.approx(6.0)
    _assert_noise_matches_ledger(led, recs)


def check_calibrated_noise(dpsgd, make_tagger):
    """(g) the same noise check on the ``target_epsilon`` path (``train --dp-epsilon``): σ is
    calibrated there, and the ledger's σ must be the σ of the noise; (h) the ledger's σ, re-accounted
    independently, spends at most the target."""
    sents, tg = _probed(make_tagger)
    target, C = 3.0, 2.5
    led, recs = _observe(dpsgd, tg, sents[:48], epochs=1.0, batch_size=6, target_epsilon=target,
                         max_grad_norm=C, secure=True)
    assert len(recs) == led.steps and led.target_epsilon == target
    _assert_noise_matches_ledger(led, recs)
    spent = epsilon(led.noise_multiplier, led.sample_rate, led.steps, led.delta, led.accountant)
    assert spent <= target and led.epsilon <= target, f"σ = {led.noise_multiplier:.4g} spends ε = {spent:.4g}"


def check_secure_noise_is_fresh(dpsgd, make_tagger):
    """(c) with secure=True two runs with the same seed must not draw the same noise."""
    probes = []
    for _ in range(2):
        sents, tg = _probed(make_tagger)
        _, recs = _observe(dpsgd, tg, sents[:24], epochs=0.25, batch_size=6, noise_multiplier=1.0,
                           seed=11, secure=True)
        probes.append(recs[0]["grads"]["probe"])
    # independent N(0, s²) draws: equal coordinates have probability 0
    assert (probes[0] == probes[1]).float().mean() < 0.01, "secure noise repeats under the same seed"


def check_patient_clipping(dpsgd, make_tagger):
    """(d) with unit='patient' each patient's *summed* gradient is clipped to C: with σ = 0 and
    q = 1 (every patient in every lot) ‖update·L‖ <= n_patients·C, whatever the number of
    sentences per patient."""
    sents, tg = make_tagger("gru")
    sents = sents[:24]
    units = [i // 12 for i in range(24)]  # two patients of 12 sentences each
    C = 1e-3  # far below every sentence's gradient norm: everything is clipped
    led, recs = _observe(dpsgd, tg, sents, unit="patient", units=units, epochs=2, batch_size=2,
                         noise_multiplier=0.0, max_grad_norm=C, secure=False)
    assert led.unit == "patient" and led.n_units == 2 and led.sample_rate == 1.0
    for r in recs:
        flat = torch.cat([g.reshape(-1) for g in r["grads"].values()])
        norm = float(flat.norm()) * led.expected_batch_size
        assert norm <= led.n_units * led.max_grad_norm * (1 + 1e-4), (
            f"summed clipped update {norm:.3g} exceeds {led.n_units} patients × C = {led.n_units * C:.3g}"
        )


def check_poisson_lots(dpsgd, make_tagger):
    """(e) lots are Poisson: sizes ~ Binomial(n, q), not fixed. 80 steps, n = 32, q = 1/8:
    mean 4, variance 3.5; a sample variance below 1 has probability < 1e-9 (χ²₇₉ < 22.6)."""
    sents, tg = make_tagger("gru")
    led, recs = _observe(dpsgd, tg, sents[:32], epochs=10, batch_size=4, noise_multiplier=1.0)
    sizes = torch.tensor([float(r["units"]) for r in recs])
    n, q, T = led.n_units, led.sample_rate, len(recs)
    assert T == 80
    assert abs(float(sizes.mean()) - n * q) < 6 * math.sqrt(n * q * (1 - q) / T)
    assert float(sizes.var()) > 1.0, f"lot sizes {sorted(set(sizes.tolist()))}: not Binomial({n}, {q})"
    assert float(sizes.var()) < 3 * n * q * (1 - q)


# ----------------------------------------------------------------- the real module passes


def test_steps_and_noise_scale_match_the_ledger(make_tagger):
    check_steps_and_noise(real_dpsgd, make_tagger)
    check_steps_and_noise(real_dpsgd, make_tagger, secure=False)


def test_calibrated_noise_scale_matches_the_ledger_and_the_target(make_tagger):
    check_calibrated_noise(real_dpsgd, make_tagger)


def test_secure_noise_is_fresh_under_the_same_seed(make_tagger):
    check_secure_noise_is_fresh(real_dpsgd, make_tagger)


def test_patient_unit_clips_each_patients_summed_gradient(make_tagger):
    check_patient_clipping(real_dpsgd, make_tagger)


def test_lots_are_poisson_sampled(make_tagger):
    check_poisson_lots(real_dpsgd, make_tagger)


# ----------------------------------------------------------------------- the mutation test

#: name -> (text of dpsgd.py, its replacement, the check that must catch it)
MUTATIONS = {
    "a_twice_the_steps": (
        "            dp_step(\n                tagger,",
        "            for _twice in range(2):\n              dp_step(\n                tagger,",
        "steps",
    ),
    "b_actual_lot_size": (
        "                denominator=q * n,",
        "                denominator=max(1, len(lot)),",
        "steps",
    ),
    "c_seeded_noise_when_secure": (
        "        noise_gen = SecureRandom()\n        sampler = noise_gen.lots(n, q, steps)",
        "        sampler = SecureRandom().lots(n, q, steps)\n"
        "        noise_gen = torch.Generator().manual_seed(derive_seed(seed, 'dp-noise') % 2**63)",
        "fresh",
    ),
    "d_sentence_clipping_under_patient_unit": (
        "                    groups.append(list(range(len(sent_idx), len(sent_idx) + len(members[u]))))",
        "                    groups.extend([[len(sent_idx) + j] for j in range(len(members[u]))])",
        "patient",
    ),
    "e_fixed_size_shuffled_lots": (
        "    per_epoch = max(1, round(1 / q))",
        "    sampler = [torch.randperm(n)[:batch_size].tolist() for _ in range(steps)]\n"
        "    per_epoch = max(1, round(1 / q))",
        "poisson",
    ),
    "f_noise_sigma_not_sigma_c": (
        "            std = noise_multiplier * max_grad_norm",
        "            std = noise_multiplier",
        "steps",
    ),
    # σ halved only where --dp-epsilon calibrates it: the ledger (and so ε) keeps the calibrated σ;
    # check_steps_and_noise (fixed σ) passes on this mutant, check_calibrated_noise does not
    "g_calibrated_sigma_halved_in_the_noise": (
        "                noise_multiplier=noise_multiplier,\n                denominator=q * n,",
        "                noise_multiplier=noise_multiplier / 2 if target_epsilon is not None else noise_multiplier,\n"
        "                denominator=q * n,",
        "calibrated",
    ),
}

CHECKS = {
    "steps": check_steps_and_noise,
    "fresh": check_secure_noise_is_fresh,
    "patient": check_patient_clipping,
    "poisson": check_poisson_lots,
    "calibrated": check_calibrated_noise,
}


def _mutant(old: str, new: str, monkeypatch) -> types.ModuleType:
    src = Path(real_dpsgd.__file__).read_text()
    assert src.count(old) == 1, f"mutation target not found once in dpsgd.py (update the mutation): {old!r}"
    name = "deidlib.privacy._mutant_dpsgd"
    mod = types.ModuleType(name)
    mod.__file__ = real_dpsgd.__file__
    mod.__package__ = "deidlib.privacy"
    monkeypatch.setitem(sys.modules, name, mod)  # dataclasses look their module up
    exec(compile(src.replace(old, new), f"<mutant {name}>", "exec"), mod.__dict__)
    return mod


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_each_privacy_mutation_of_train_dp_is_caught(mutation, make_tagger, monkeypatch):
    old, new, check = MUTATIONS[mutation]
    mutant = _mutant(old, new, monkeypatch)
    with pytest.raises(AssertionError):
        CHECKS[check](mutant, make_tagger)


def test_a_calibration_that_returns_half_the_sigma_is_caught(make_tagger, monkeypatch):
    # (h) noise_for_epsilon itself halved: noise and ledger agree, but the run spends more than the target
    real = real_dpsgd.noise_for_epsilon
    monkeypatch.setattr(real_dpsgd, "noise_for_epsilon", lambda *a, **kw: real(*a, **kw) / 2)
    with pytest.raises(AssertionError, match="spends"):
        check_calibrated_noise(real_dpsgd, make_tagger)


def test_an_unmutated_copy_passes_the_checks(make_tagger, monkeypatch):
    # the copy mechanism itself changes nothing: the same checks pass on an identity "mutant"
    copy = _mutant("    per_epoch = max(1, round(1 / q))", "    per_epoch = max(1, round(1 / q))", monkeypatch)
    check_patient_clipping(copy, make_tagger)
    check_secure_noise_is_fresh(copy, make_tagger)
    check_calibrated_noise(copy, make_tagger)


# ------------------------------------------------------- the one-run audit (Steinke et al. 2023)

#: train_dp's σ divided by 10 where it reaches the noise; the ledger keeps the claimed σ
TENTH_OF_THE_NOISE = (
    "                noise_multiplier=noise_multiplier,\n                denominator=q * n,",
    "                noise_multiplier=noise_multiplier / 10,\n                denominator=q * n,",
)


def _one_run(train_dp_fns, target_epsilon=2.0):
    from deidlib.studies import audits as au

    params = au.params_for("smoke", one_run_canaries=200, one_run_steps=1)
    data = au.prepare_data(params)
    return [au.one_run_audit(data, params, target_epsilon, train_dp_fn=f) for f in train_dp_fns]


def test_one_run_audit_catches_a_tenth_of_the_noise_in_one_run(monkeypatch):
    """One training run with 200 gradient canaries: the /10-noise mutant of train_dp proves a
    larger ε than its own ledger claims, and that is a privacy-bug error; an unmutated copy
    (the same code path) passes."""
    from deidlib.audits import raise_if_violated

    copy = _mutant(TENTH_OF_THE_NOISE[0], TENTH_OF_THE_NOISE[0], monkeypatch).train_dp
    mutant = _mutant(*TENTH_OF_THE_NOISE, monkeypatch).train_dp
    ok, bad = _one_run([copy, mutant])
    raise_if_violated([ok])
    assert bad["claimed_noise_multiplier"] == pytest.approx(ok["claimed_noise_multiplier"])
    assert bad["accountant_epsilon"] == pytest.approx(ok["accountant_epsilon"]) and bad["violated"], bad
    with pytest.raises(RuntimeError, match="privacy bug"):
        raise_if_violated([bad])
