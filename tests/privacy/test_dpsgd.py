import math

import pytest
import torch

from deidlib.privacy.accounting import epsilon
from deidlib.privacy.dpsgd import patient_units, train_dp
from deidlib.privacy.gradients import clip_and_noise, dp_step, per_unit_gradients, sub_batch
from deidlib.privacy.ledger import PrivacyLedger
from deidlib.training.loop import make_optimizer, step

from .conftest import KINDS


def _named(tagger):
    return [(n, p) for n, p in tagger.named_parameters() if p.requires_grad]


def _lot(sents, k=6):
    # sentences that share tokens (so the char encoder's distinct-token rows are shared)
    return sorted(sents, key=lambda s: -len(s.tokens))[2 : 2 + k]


@pytest.mark.parametrize("kind", KINDS)
def test_per_sentence_gradients_equal_single_example_batches(kind, make_tagger):
    sents, tg = make_tagger(kind, recall_penalty=None)
    tg.eval()  # no dropout: the single-example passes must see the same function
    # float64: the check is exact up to rounding (in float32, gradients that sum ~70 token
    # terms with cancellation differ by up to ~4e-5 between batched and single passes)
    tg.double()
    lot = _lot(sents)
    fz = tg.featurizer
    batch = fz.encode([s.words for s in lot], [s.tags for s in lot])
    assert batch.char_ids is None or batch.char_ids.shape[0] < batch.num_tokens  # shared distinct tokens
    losses, grads = per_unit_gradients(tg, batch)
    named = _named(tg)
    modules = set()
    for i, s in enumerate(lot):
        single = fz.encode([s.words], [s.tags])
        tg.zero_grad(set_to_none=True)
        loss = tg.sentence_losses(single).sum()
        loss.backward()
        assert losses[i] == pytest.approx(float(loss.detach()), rel=1e-5, abs=1e-5)
        for (name, p), g in zip(named, grads):
            ref = p.grad if p.grad is not None else torch.zeros_like(p)
            torch.testing.assert_close(g[i], ref, rtol=1e-9, atol=1e-10, msg=f"{kind} {name} sentence {i}")
            if p.grad is not None and p.grad.abs().sum() > 0:
                modules.add(name.removeprefix("tokens.").split(".")[0])  # word/char/casing sit in tagger.tokens
    # every module with trainable parameters was checked with non-zero gradients
    expected = {
        "word",
        "rnn" if kind != "transformer" else "encoder",
        "out",
        "crf" if tg.crf is not None else "out",
    }
    if kind != "friedrich":
        expected.add("char")
    assert expected <= modules, (kind, modules)


@pytest.mark.parametrize("kind", ["gru", "festag"])
def test_per_patient_gradients_and_loop_method(kind, make_tagger):
    sents, tg = make_tagger(kind)
    tg.eval()
    lot = _lot(sents, 5)
    batch = tg.featurizer.encode([s.words for s in lot], [s.tags for s in lot])
    groups = [[0, 3], [1], [2, 4]]
    _, per_sent = per_unit_gradients(tg, batch)
    losses, per_pat = per_unit_gradients(tg, batch, groups)
    l_loop, per_loop = per_unit_gradients(tg, batch, groups, method="loop")
    torch.testing.assert_close(losses, l_loop)
    for a, b, s in zip(per_pat, per_loop, per_sent):
        # float32, two summation orders: up to ~2e-6 apart on gradients of order 1e-2
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)
        for g, idx in enumerate(groups):
            torch.testing.assert_close(a[g], s[idx].sum(0), rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="partition"):
        per_unit_gradients(tg, batch, [[0, 1], [1, 2, 3, 4]])


def test_recall_penalty_is_per_unit(make_tagger):
    # under DP the weight rho of a sentence must not depend on the other sentences of the lot
    sents, tg = make_tagger("gru", recall_penalty=5.0)
    tg.eval()
    lot = _lot(sents, 4)
    fz = tg.featurizer
    _, g_all = per_unit_gradients(tg, fz.encode([s.words for s in lot], [s.tags for s in lot]))
    _, g_two = per_unit_gradients(tg, fz.encode([s.words for s in lot[:2]], [s.tags for s in lot[:2]]))
    for a, b in zip(g_all, g_two):
        torch.testing.assert_close(a[:2], b, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("kind", ["gru", "friedrich", "transformer"])
def test_zero_noise_infinite_clip_reproduces_ordinary_sgd(kind, make_tagger):
    # float64: the two paths sum in different orders; in float32 the rounding grows to ~1e-4
    sents, ref = make_tagger(kind, seed=1)
    _, dp = make_tagger(kind, seed=1)
    ref.double()
    dp.double()
    fz = ref.featurizer
    lots = [sents[i : i + 4] for i in range(0, 20, 4)]
    batches = [fz.encode([s.words for s in lot], [s.tags for s in lot]) for lot in lots]
    o_ref = make_optimizer(ref.parameters(), "sgd", 0.02)
    o_dp = make_optimizer(dp.parameters(), "sgd", 0.02)
    ref.train()
    dp.train()  # dropout on: both draw the same masks from the same seeded stream
    for b in batches:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(7)
            l_ref = step(ref, b, o_ref)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(7)
            l_dp = dp_step(
                dp,
                b,
                o_dp,
                max_grad_norm=math.inf,
                noise_multiplier=0.0,
                denominator=b.batch_size,
                method="vmap",
            )
        assert l_dp == pytest.approx(l_ref, rel=1e-10)
        for (n, p), (_, q) in zip(ref.named_parameters(), dp.named_parameters()):
            torch.testing.assert_close(p, q, rtol=1e-9, atol=1e-11, msg=n)
    # and it trained: the weights moved
    _, fresh = make_tagger(kind, seed=1)
    assert any((p.double() - q).abs().max() > 1e-4 for p, q in zip(fresh.parameters(), dp.parameters()))


def test_clipping_bounds_every_unit():
    g = [torch.randn(5, 3, 4) * 10, torch.randn(5, 7) * 10]
    g[0][2] = 0.0
    g[1][2] = 0.0
    out, norms = clip_and_noise(g, 1.0, 0.0, 1.0)
    flat = torch.cat([x.reshape(5, -1) for x in g], 1)
    torch.testing.assert_close(norms, flat.norm(dim=1))
    scale = (1.0 / (norms + 1e-6)).clamp(max=1)
    torch.testing.assert_close(out[0], (g[0] * scale[:, None, None]).sum(0))
    # each unit contributes at most C to the sum: replacing one unit moves the sum by <= 2C
    g2 = [x.clone() for x in g]
    g2[0][0], g2[1][0] = g2[0][0] * -50, g2[1][0] * -50
    out2, _ = clip_and_noise(g2, 1.0, 0.0, 1.0)
    diff = torch.cat([(a - b).reshape(-1) for a, b in zip(out, out2)]).norm()
    assert diff <= 2.0 + 1e-5
    with pytest.raises(ValueError, match="finite"):
        clip_and_noise(g, math.inf, 1.0, 1.0)
    with pytest.raises(ValueError, match="max_grad_norm"):
        clip_and_noise(g, 0.0, 1.0, 1.0)


def test_noise_distribution():
    # an empty lot: the update is pure noise N(0, (sigma*C/L)^2) per coordinate
    gen = torch.Generator().manual_seed(0)
    sigma, C, L = 0.8, 2.0, 4.0
    out, _ = clip_and_noise([torch.zeros(0, 200_000)], C, sigma, L, gen)
    x = out[0]
    sd = sigma * C / L
    n = x.numel()
    assert abs(float(x.mean())) < 5 * sd / math.sqrt(n)
    # sample variance of a Gaussian: relative s.e. sqrt(2/n) ~ 0.3 %; allow 5 s.e.
    assert abs(float(x.var()) / sd**2 - 1) < 5 * math.sqrt(2 / n)
    # kurtosis of a Gaussian is 3
    k = float(((x - x.mean()) ** 4).mean() / x.var() ** 2)
    assert abs(k - 3) < 5 * math.sqrt(24 / n)
    # the same seed gives the same noise
    again, _ = clip_and_noise([torch.zeros(0, 200_000)], C, sigma, L, torch.Generator().manual_seed(0))
    assert torch.equal(again[0], x)


def test_empty_lot_step_is_noise_only(make_tagger):
    _, tg = make_tagger("gru")
    opt = make_optimizer(tg.parameters(), "sgd", 1.0)
    before = [p.detach().clone() for p in tg.parameters() if p.requires_grad]
    loss = dp_step(
        tg,
        None,
        opt,
        max_grad_norm=1.0,
        noise_multiplier=1.0,
        denominator=4.0,
        generator=torch.Generator().manual_seed(1),
    )
    assert math.isnan(loss)
    after = [p.detach() for p in tg.parameters() if p.requires_grad]
    assert all(not torch.equal(a, b) for a, b in zip(before, after))


def test_train_dp_sentence_unit_and_ledger(make_tagger, dp_splits):
    sents, tg = make_tagger("gru")
    sents = sents[:120]
    hist, led = train_dp(
        tg,
        sents,
        dp_splits.dev[:2],
        epochs=0.4,
        batch_size=8,
        noise_multiplier=1.0,
        max_grad_norm=1.0,
        accountant="rdp",
        lr=0.5,
        progress=False,
        seed=3,
        secure=False,
    )
    q = 8 / len(sents)
    assert led.unit == "sentence" and led.n_units == len(sents) and led.sample_rate == pytest.approx(q)
    assert led.steps == round(0.4 / q)
    assert led.epsilon == pytest.approx(epsilon(1.0, q, led.steps, 1e-5, "rdp"))
    assert hist.epochs[-1]["epsilon"] == pytest.approx(led.epsilon)
    assert 0 <= hist.epochs[-1]["dev_f1"] <= 1
    d = led.to_dict()
    assert d["accountant"] == "rdp" and d["delta"] == 1e-5
    assert not d["secure_rng"] and "does NOT hold against anyone who holds the seed" in d["rng_note"]
    # same seed, same weights
    _, tg2 = make_tagger("gru")
    train_dp(
        tg2,
        sents,
        None,
        epochs=0.4,
        batch_size=8,
        noise_multiplier=1.0,
        accountant="rdp",
        lr=0.5,
        progress=False,
        seed=3,
        secure=False,
    )
    assert all(torch.equal(a, b) for a, b in zip(tg.parameters(), tg2.parameters()))


def test_train_dp_target_epsilon_and_patient_unit(make_tagger, dp_splits):
    sents, tg = make_tagger("gru")
    units = patient_units(sents, dp_splits.train)
    n_pat = len(set(units))
    assert 1 < n_pat < len(sents)
    hist, led = train_dp(
        tg,
        sents,
        None,
        unit="patient",
        units=units,
        epochs=2,
        batch_size=2,
        target_epsilon=5.0,
        accountant="rdp",
        lr=0.2,
        progress=False,
    )
    assert led.unit == "patient" and led.n_units == n_pat
    assert led.epsilon <= 5.0 and led.epsilon > 4.5
    assert led.noise_multiplier > 0 and len(hist.epochs) >= 1
    with pytest.raises(ValueError, match="units"):
        train_dp(tg, sents, unit="patient", noise_multiplier=1.0, progress=False)
    with pytest.raises(ValueError, match="exactly one"):
        train_dp(tg, sents, noise_multiplier=1.0, target_epsilon=2.0, progress=False)
    with pytest.raises(ValueError, match="privacy unit"):
        train_dp(tg, sents, unit="document", noise_multiplier=1.0, progress=False)


def test_ledger_spent_composes_history():
    led = PrivacyLedger("sentence", 1.0, 0.01, 1000, "rdp", 1e-5, 1.0, 100, 1.0, history=[(1.0, 0.01, 1000)])
    assert led.spent() == pytest.approx(epsilon(1.0, 0.01, 2000, 1e-5, "rdp"))
    assert PrivacyLedger("sentence", 0.0, 0.01, 10, "rdp", 1e-5, 1.0, 100, 1.0).spent() == math.inf


@pytest.mark.parametrize("kind", KINDS)
def test_sub_batch_losses_equal_joint_rows(kind, make_tagger):
    sents, tg = make_tagger(kind)
    tg.eval()
    lot = _lot(sents, 5)
    fz = tg.featurizer
    batch = fz.encode([s.words for s in lot], [s.tags for s in lot])
    with torch.no_grad():
        joint = tg.sentence_losses(batch)
        for idx in ([3], [0, 4], [1, 2, 3]):
            sb = sub_batch(batch, idx)
            assert sb.word_ids.shape[1] == max(len(lot[i].tokens) for i in idx)
            if sb.char_ids is not None:
                assert sb.char_ids.shape[0] == len({w for i in idx for w in lot[i].words})
            torch.testing.assert_close(tg.sentence_losses(sb), joint[idx], rtol=1e-5, atol=1e-4)
            ref = fz.encode([lot[i].words for i in idx], [lot[i].tags for i in idx])
            torch.testing.assert_close(tg.sentence_losses(sb), tg.sentence_losses(ref), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("kind", KINDS)
def test_micro_equals_vmap_with_clipping_and_noise(kind, make_tagger):
    # the default (microbatch) method and the Jacobian method give the same clipped noisy step
    sents, a = make_tagger(kind, seed=2)
    _, b = make_tagger(kind, seed=2)
    a.double().eval()
    b.double().eval()
    lot = _lot(sents, 6)
    batch = a.featurizer.encode([s.words for s in lot], [s.tags for s in lot])
    groups = [[0, 5], [1], [2, 3, 4]]
    oa, ob = make_optimizer(a.parameters(), "sgd", 0.05), make_optimizer(b.parameters(), "sgd", 0.05)
    kw = dict(max_grad_norm=0.5, noise_multiplier=0.7, denominator=3.0, groups=groups)
    la = dp_step(a, batch, oa, method="micro", generator=torch.Generator().manual_seed(4), **kw)
    lb = dp_step(b, batch, ob, method="vmap", generator=torch.Generator().manual_seed(4), **kw)
    assert la == pytest.approx(lb, rel=1e-9)
    for (n, p), (_, q) in zip(a.named_parameters(), b.named_parameters()):
        torch.testing.assert_close(p, q, rtol=1e-8, atol=1e-10, msg=n)


@pytest.mark.parametrize("kind", ["friedrich", "transformer"])
def test_micro_zero_noise_reproduces_ordinary_sgd_in_eval_mode(kind, make_tagger):
    sents, ref = make_tagger(kind, seed=1)
    _, dp = make_tagger(kind, seed=1)
    ref.double().eval()
    dp.double().eval()
    fz = ref.featurizer
    batches = [
        fz.encode([s.words for s in sents[i : i + 4]], [s.tags for s in sents[i : i + 4]]) for i in (0, 4, 8)
    ]
    o_ref, o_dp = make_optimizer(ref.parameters(), "sgd", 0.02), make_optimizer(dp.parameters(), "sgd", 0.02)
    for b in batches:
        l_ref = step(ref, b, o_ref)
        l_dp = dp_step(
            dp, b, o_dp, max_grad_norm=math.inf, noise_multiplier=0.0, denominator=b.batch_size, method="vmap"
        )
        assert l_dp == pytest.approx(l_ref, rel=1e-10)
        for (n, p), (_, q) in zip(ref.named_parameters(), dp.named_parameters()):
            torch.testing.assert_close(p, q, rtol=1e-9, atol=1e-11, msg=n)
