"""Behavioural checks of DP-SGD's privacy mechanics, and a mutation test showing that each
check catches the privacy bug it is meant to catch.

The checks observe ``train_dp`` from the outside, never through its ledger alone:

* optimizer steps are counted with torch's global optimizer step hooks;
* lot sizes are counted as forward calls of the word embedding between two optimizer steps
  (the default ``micro`` method runs one forward pass per privacy unit of the lot);
* the noise is measured on a *probe* parameter that no loss reaches (its gradient is exactly
  zero), so its update is the Gaussian noise divided by the denominator and nothing else;
* per-unit clipping is measured with σ = 0 and every unit in every lot (q = 1), where the
  noise-free update times L must have norm <= (number of units) · C, and must equal the sum of
  every unit's gradient (embedding rows included) clipped on its own, the gradients taken
  independently of ``train_dp`` (:func:`per_unit_gradients`, one backward pass per unit);
* freshness of the noise across the steps of one run is a statistical test on the probe's
  updates (:func:`noise_dependence`): pairwise cosines of the steps' noise vectors against a
  bound derived from the dimension, with a stated false-alarm rate.

Each check compares what it observes with what the ledger claims (steps, σ, C, q, unit).
The mutation test patches a copy of :mod:`deidlib.privacy.dpsgd` or of the step it calls,
:mod:`deidlib.privacy.gradients` (source text replaced, executed as separate modules) with each of the bugs below and asserts that the
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
from statistics import NormalDist

import pytest
import torch
from torch.optim.optimizer import register_optimizer_step_pre_hook

import deidlib.privacy.dpsgd as real_dpsgd
import deidlib.privacy.gradients as real_gradients
from deidlib.privacy.accounting import epsilon
from deidlib.studies.audits.accountant import one_run_audit
from deidlib.studies.audits.data import prepare_data

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
    sigma, C, delta = 0.9, 2.5, 1e-5
    led, recs = _observe(dpsgd, tg, sents[:48], epochs=1.0, batch_size=6, noise_multiplier=sigma,
                         max_grad_norm=C, secure=secure, delta=delta)
    assert len(recs) == led.steps, f"{len(recs)} optimizer steps but the ledger records {led.steps}"
    assert led.expected_batch_size == pytest.approx(6.0)
    # (i) δ is the δ asked for (never 1/n, which allows releasing a whole unit's data), and
    # (j) ε is accounted over the optimizer steps observed, at q = 6 / 48, not per epoch
    assert led.delta == delta < 1 / led.n_units, f"ledger δ = {led.delta:g}, asked {delta:g} ({led.n_units} units)"
    spent = epsilon(sigma, 6 / 48, len(recs), delta, "rdp")
    assert led.epsilon == pytest.approx(spent, rel=1e-9), (
        f"ledger ε = {led.epsilon:.4g} but {len(recs)} steps of σ = {sigma}, q = 1/8 spend ε = {spent:.4g}"
    )
    _assert_noise_matches_ledger(led, recs)


#: false-alarm rate of :func:`noise_dependence`: the chance that fresh noise fails it
FRESH_ALPHA = 1e-6


def noise_dependence(noise: torch.Tensor, alpha: float = FRESH_ALPHA) -> dict[str, float]:
    """Test that the rows of ``noise`` [T, d] (the noise of T steps) are independent isotropic
    Gaussian draws, through the cosines r_ij of every pair of rows (P = T(T-1)/2 pairs).

    Under independence each r_ij is the cosine between a fixed direction and a uniform one on
    the sphere S^{d-1}: mean 0, variance 1/d, and P(|r| > t) <= 2·exp(-d·t²/2) (the measure of a
    spherical cap). Two statistics, each given half of ``alpha``:

    * ``max_r`` = max |r_ij| (one step repeating or echoing another): union bound over the
      pairs, ``max_bound`` = sqrt(2·ln(4P/alpha) / d) — a rigorous false-alarm rate;
    * ``mean_r`` = |mean r_ij| (a weak component shared by every step): the r_ij are pairwise
      uncorrelated under independence, so sqrt(d·P)·mean is N(0, 1) to a normal approximation
      (d of thousands, P of hundreds); ``mean_bound`` = z_{1-alpha/4} / sqrt(d·P).
    """
    T, d = noise.shape
    u = noise.double()
    u = u / u.norm(dim=1, keepdim=True)
    i, j = torch.triu_indices(T, T, 1)
    r = (u @ u.T)[i, j]
    P = r.numel()
    return {
        "max_r": float(r.abs().max()),
        "max_bound": math.sqrt(2 * math.log(4 * P / alpha) / d),
        "mean_r": float(r.mean().abs()),
        "mean_bound": NormalDist().inv_cdf(1 - alpha / 4) / math.sqrt(d * P),
    }


def assert_fresh(noise: torch.Tensor, what: str) -> None:
    """Fails (with probability ``FRESH_ALPHA`` for fresh noise) when the steps' noise is dependent."""
    s = noise_dependence(noise)
    assert s["max_r"] < s["max_bound"], (
        f"{what}: two steps' noise vectors have cosine {s['max_r']:.3g} (bound {s['max_bound']:.3g} "
        f"for independent draws in {noise.shape[1]} dimensions)"
    )
    assert s["mean_r"] < s["mean_bound"], (
        f"{what}: the steps' noise shares a component (mean cosine {s['mean_r']:.3g}, bound {s['mean_bound']:.3g})"
    )


def check_noise_fresh_across_steps(dpsgd, make_tagger, *, secure=True):
    """(k) every step of one run adds fresh noise: the probe's updates of 24 steps (its noise,
    empty lots included) are pairwise independent by :func:`noise_dependence`."""
    sents, tg = _probed(make_tagger)
    led, recs = _observe(dpsgd, tg, sents[:48], epochs=3.0, batch_size=6, noise_multiplier=1.0,
                         max_grad_norm=1.0, secure=secure)
    assert len(recs) == 24
    assert_fresh(torch.stack([r["grads"]["probe"] for r in recs]), "train_dp's probe noise")


def check_per_unit_clipping(dpsgd, make_tagger):
    """(l) the update is Σ_u g_u·min(1, C/‖g_u‖) / L with g_u the unit's *whole* gradient
    (embedding rows included), clipped unit by unit: σ = 0, q = 1 (one step, every unit), C the
    median unit norm (half the units clipped); the unit gradients are taken independently of
    train_dp, one backward pass per sentence (``per_unit_gradients(method="loop")``), before
    the step. No dropout, so train mode equals the reference's forward pass; float64 throughout."""
    sents, tg = make_tagger("gru", input_dropout=0.0)
    tg = tg.double()  # float64: the two computations agree to ~1e-16, so a 1e-9 tolerance is far from both
    sents = sents[:12]
    names = [n for n, p in tg.named_parameters() if p.requires_grad]
    tg.train()
    batch = tg.featurizer.encode([s.words for s in sents], [s.tags for s in sents])
    _, grads = real_gradients.per_unit_gradients(tg, batch, method="loop")
    norms = torch.stack([g.flatten(1).pow(2).sum(1) for g in grads]).sum(0).sqrt()
    C = float(norms.median())
    factor = (C / (norms + 1e-6)).clamp(max=1.0)
    expected = {n: torch.einsum("g,g...->...", factor, g) / len(sents) for n, g in zip(names, grads)}
    led, recs = _observe(dpsgd, tg, sents, epochs=1, batch_size=len(sents), noise_multiplier=0.0,
                         max_grad_norm=C, secure=False)
    assert len(recs) == 1 and recs[0]["units"] == len(sents)
    got = torch.cat([recs[0]["grads"][n].reshape(-1) for n in names])
    want = torch.cat([expected[n].reshape(-1) for n in names])
    err = float((got - want).norm() / want.norm())
    # embedding rows are ~0.2 % of a unit's squared norm here: leaving them out moves the update by ~4e-4
    assert err < 1e-9, f"the update differs from the per-unit clipped sum by {err:.3g} (relative)"


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
    assert led.unit == "patient" and led.n_units == 2 and led.sample_rate == 1.0, (
        f"ledger: unit {led.unit}, {led.n_units} units, q = {led.sample_rate:.3g} (2 patients, lot 2: q = 1)"
    )
    # q = 1 over patients: every lot holds both patients (one forward pass per unit)
    assert len(recs) == 2 and all(r["units"] == 2 for r in recs), [r["units"] for r in recs]
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


def test_every_step_of_a_run_adds_fresh_noise(make_tagger):
    check_noise_fresh_across_steps(real_dpsgd, make_tagger)
    check_noise_fresh_across_steps(real_dpsgd, make_tagger, secure=False)


def test_each_unit_is_clipped_on_its_own_embedding_rows_included(make_tagger):
    check_per_unit_clipping(real_dpsgd, make_tagger)


@pytest.mark.parametrize("secure", [True, False])
def test_clip_and_noise_draws_fresh_noise_at_every_call(secure):
    """The library's noise path itself, 64 calls on zero gradients of 4,000 coordinates: the
    noise of the calls passes :func:`noise_dependence` (false alarm 1e-6)."""
    from deidlib.privacy.secure import SecureRandom

    gen = SecureRandom() if secure else torch.Generator().manual_seed(3)
    grads = [torch.zeros(3, 1000), torch.zeros(3, 50, 60)]
    noise = [torch.cat([g.reshape(-1) for g in real_gradients.clip_and_noise(grads, 1.0, 1.0, 1.0, gen)[0]])
             for _ in range(64)]
    assert_fresh(torch.stack(noise), "clip_and_noise")


def test_the_freshness_test_fails_on_repeated_and_correlated_noise():
    """Controls: noise repeated from one step to the next, or with an AR(1) correlation of 0.1,
    or sharing a component of weight 0.1 across all steps, fails :func:`assert_fresh`."""
    g = torch.Generator().manual_seed(0)
    z = torch.randn(64, 4000, generator=g)
    repeated = z.clone()
    repeated[10] = repeated[9]
    ar = z.clone()
    for t in range(1, 64):
        ar[t] = 0.1 * ar[t - 1] + math.sqrt(1 - 0.01) * z[t]
    shared = z + 0.1 * torch.randn(4000, generator=g)
    for bad in (repeated, ar, shared):
        with pytest.raises(AssertionError):
            assert_fresh(bad, "control")
    assert_fresh(z, "independent draws")


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
    # the noise of the first step added again at every later step (a cached draw)
    "h_noise_drawn_once_reused_every_step": (
        "        noise_gen = SecureRandom()\n        sampler = noise_gen.lots(n, q, steps)",
        "        class _DrawnOnce(SecureRandom):\n"
        "            def normal(self, std, shape, **kw):\n"
        "                cache = self.__dict__.setdefault('cache', {})\n"
        "                if (std, tuple(shape)) not in cache:\n"
        "                    cache[std, tuple(shape)] = super().normal(std, shape, **kw)\n"
        "                return cache[std, tuple(shape)]\n\n"
        "        noise_gen = _DrawnOnce()\n        sampler = noise_gen.lots(n, q, steps)",
        "fresh_steps",
    ),
    # the lot's sum of unclipped gradients clipped to C, instead of every unit's gradient
    "i_clipping_of_the_lot_sum": (
        (
            ("            f = _clip_factor(norm, max_grad_norm)\n            for j, g in zip(dense_idx, dense):",
             "            f = 1.0\n            for j, g in zip(dense_idx, dense):"),
            ("    return torch.stack(losses), acc, torch.stack(norms)\n\n\n#: per-unit",
             "    f = _clip_factor(torch.stack([a.pow(2).sum() for a in acc]).sum().sqrt(), max_grad_norm)\n"
             "    acc = [a * f for a in acc]\n"
             "    return torch.stack(losses), acc, torch.stack(norms)\n\n\n#: per-unit"),
        ),
        None,
        "clipping",
    ),
    # q from the number of sentences while the unit is the patient
    "j_sample_rate_from_the_sentence_count": (
        "    q = batch_size / n\n",
        "    q = batch_size / len(train_sentences)\n",
        "patient",
    ),
    # ε of as many steps as epochs
    "k_epsilon_counted_per_epoch": (
        "    ledger.epsilon = ledger.spent()\n    return hist, ledger",
        "    ledger.epsilon = ledger.spent(len(hist.epochs))\n    return hist, ledger",
        "steps",
    ),
    # the sparse embedding rows scaled by the clip factor but left out of the unit's norm
    "l_embedding_rows_outside_the_clip_norm": (
        "                    sq = sq + vals.pow(2).sum()\n",
        "                    pass  # rows not counted in the norm\n",
        "clipping",
    ),
    # δ = 1/n whatever the caller asked for
    "m_delta_one_over_n": (
        "    n = len(members)\n",
        "    n = len(members)\n    delta = 1.0 / n\n",
        "steps",
    ),
}

#: the mutants that the freshness and per-unit clipping checks were added for
NEW_MUTATIONS = ("h_noise_drawn_once_reused_every_step", "i_clipping_of_the_lot_sum",
                 "j_sample_rate_from_the_sentence_count", "k_epsilon_counted_per_epoch",
                 "l_embedding_rows_outside_the_clip_norm", "m_delta_one_over_n")

CHECKS = {
    "steps": check_steps_and_noise,
    "fresh": check_secure_noise_is_fresh,
    "patient": check_patient_clipping,
    "poisson": check_poisson_lots,
    "calibrated": check_calibrated_noise,
    "fresh_steps": check_noise_fresh_across_steps,
    "clipping": check_per_unit_clipping,
}


def _mutant(old: str | tuple[tuple[str, str], ...], new: str | None, monkeypatch) -> types.ModuleType:
    """A copy of dpsgd.py, stepping with a copy of gradients.py, with ``old`` replaced by ``new``
    in whichever of the two holds it (or, when ``old`` is a tuple of (old, new) pairs and ``new``
    is None, every pair applied in turn), both executed as modules."""
    sources = {real_dpsgd: Path(real_dpsgd.__file__).read_text(),
               real_gradients: Path(real_gradients.__file__).read_text()}
    for o, n in (old if new is None else ((old, new),)):
        hits = [m for m, src in sources.items() if o in src]
        assert len(hits) == 1 and sources[hits[0]].count(o) == 1, \
            f"mutation target not found once in dpsgd.py and gradients.py (update the mutation): {o!r}"
        sources[hits[0]] = sources[hits[0]].replace(o, n)
    gradients = _copy(real_gradients, sources[real_gradients], monkeypatch)
    mod = _copy(real_dpsgd, sources[real_dpsgd], monkeypatch)
    mod.dp_step, mod._params = gradients.dp_step, gradients._params  # the copy's train_dp steps with the copy
    return mod


def _copy(real: types.ModuleType, src: str, monkeypatch) -> types.ModuleType:
    """``src`` executed as a sibling module of ``real`` (registered while the test runs)."""
    name = f"deidlib.privacy._mutant_{real.__name__.rsplit('.', 1)[1]}"
    mod = types.ModuleType(name)
    mod.__file__ = real.__file__
    mod.__package__ = "deidlib.privacy"
    monkeypatch.setitem(sys.modules, name, mod)  # dataclasses look their module up
    exec(compile(src, f"<mutant {name}>", "exec"), mod.__dict__)
    return mod


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_each_privacy_mutation_of_train_dp_is_caught(mutation, make_tagger, monkeypatch):
    old, new, check = MUTATIONS[mutation]
    mutant = _mutant(old, new, monkeypatch)
    with pytest.raises(AssertionError):
        CHECKS[check](mutant, make_tagger)


def mutation_report(make_tagger, names=None) -> list[tuple[str, str, str]]:
    """(mutant, check, outcome) for every mutant: ``caught: <the check's message>`` or ``MISSED``."""
    rows = []
    for name in names or sorted(MUTATIONS):
        old, new, check = MUTATIONS[name]
        with pytest.MonkeyPatch.context() as mp:
            mutant = _mutant(old, new, mp)
            try:
                CHECKS[check](mutant, make_tagger)
                outcome = "MISSED"
            except AssertionError as e:
                outcome = "caught: " + (str(e).splitlines() or ["assertion"])[0][:90]
        rows.append((name, check, outcome))
    return rows


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
    data = prepare_data(params)
    return [one_run_audit(data, params, target_epsilon, train_dp_fn=f) for f in train_dp_fns]


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


if __name__ == "__main__":  # the harness's report: python tests/privacy/test_dp_mutations.py [--new]
    torch.set_num_threads(1)
    from deidlib.datasets import load_corpus
    from deidlib.training import prepare_tagger

    sys.path.insert(0, str(Path(__file__).parent))
    from conftest import TINY

    splits = load_corpus("synthetic", profile="smoke", seed=5, patients=8, sites=2)

    def _make(kind, seed=0, **extra):
        return prepare_tagger(kind, splits.train, embeddings=None, seed=seed, **{**TINY[kind], **extra})

    names = NEW_MUTATIONS if "--new" in sys.argv else sorted(MUTATIONS)
    rows = mutation_report(_make, names)
    for name, check, outcome in rows:
        print(f"{name:42s} {check:11s} {outcome}", flush=True)
    caught = sum(o.startswith("caught") for _, _, o in rows)
    new = [o for n, _, o in rows if n in NEW_MUTATIONS]
    print(f"caught {caught}/{len(rows)} mutants ({sum(o.startswith('caught') for o in new)}/{len(new)} of the new ones)")
    sys.exit(0 if caught == len(rows) else 1)
