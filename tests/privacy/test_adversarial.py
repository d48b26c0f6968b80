"""Adversarial representation (Friedrich et al. 2019, section 5): trainable noise, phases that
update only what they should, and adversaries that can (identity) and cannot (pure noise) win."""

import inspect
import math

import numpy as np
import pytest
import torch
from torch import nn

from deidlib.corpus.labels import TaggedSentence
from deidlib.corpus.tokenize import Token
from deidlib.embeddings.neighbours import NeighbourIndex
from deidlib.embeddings.public import PublicEmbeddings
from deidlib.privacy.adversarial import (
    _FROZEN_EPOCHS,
    AdversarialModel,
    AdversarialTrainer,
    Adversaries,
    DeidHead,
    PairAdversary,
    attack_sentences,
    encode_sentences,
    frozen_adversary_accuracy,
    train_dann,
    train_three_phase,
)
from deidlib.privacy.adversarial_models import (
    L_RANDOM,
    PHASES,
    RepresentationModel,
    adversary_loss,
    representation_loss,
)

LABELS = ["O", "B-PHI", "I-PHI"]
EMB = 8


def _embeddings():
    rng = np.random.default_rng(0)
    words = [f"name{i}" for i in range(60)] + [f"word{i}" for i in range(40)]
    return PublicEmbeddings("toy", words, rng.normal(size=(len(words), EMB)).astype(np.float32))


def _sentences(n, seed):
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n):
        T = int(rng.integers(4, 8))
        words = [f"word{rng.integers(40)}" for _ in range(T)]
        tags = ["O"] * T
        for _ in range(int(rng.integers(1, 3))):
            i = int(rng.integers(T))
            words[i], tags[i] = f"name{rng.integers(60)}", "B-PHI"
        out.append(TaggedSentence(f"d{k}", [Token(w, 0, len(w)) for w in words], tags))
    return out


@pytest.fixture(scope="module")
def data():
    emb = _embeddings()
    index = NeighbourIndex(emb)
    train = encode_sentences(_sentences(160, 1), emb, LABELS)
    test = encode_sentences(_sentences(200, 2), emb, LABELS)
    return emb, index, train, test


def _trainer(data, model, **kw):
    emb, index, train, test = data
    kw.setdefault("n_neighbours", 10)
    kw.setdefault("batch_size", 16)
    kw.setdefault("lr", 1e-2)
    return AdversarialTrainer(model, emb, index, train, test[:40], seed=0, **kw)


def _small(seed=0, d=6):
    return AdversarialModel.build(EMB, LABELS, d=d, deid_hidden=6, deid_layers=1, adv_hidden=6, seed=seed)


def test_loss_functions():
    p = torch.tensor([0.5, 0.5])
    assert adversary_loss(p, torch.tensor([1.0, 0.0])).item() == pytest.approx(L_RANDOM)
    assert L_RANDOM == pytest.approx(-math.log(0.5))
    ld = torch.tensor(2.0)
    assert representation_loss(ld, torch.tensor(L_RANDOM)).item() == pytest.approx(2.0)
    assert representation_loss(ld, torch.tensor(0.1), lam=1.0).item() == pytest.approx(2.0 + L_RANDOM - 0.1)
    assert representation_loss(ld, torch.tensor(1.5), lam=0.5).item() == pytest.approx(2.0 + 0.5 * (1.5 - L_RANDOM))


def test_noise_standard_deviations_are_trainable_per_dimension():
    rep = RepresentationModel(EMB, d=6, init_std=0.3)
    assert rep.noise_in.std.shape == (EMB,) and rep.noise_out.std.shape == (6,)
    torch.testing.assert_close(rep.noise_in.std, torch.full((EMB,), 0.3))
    x = torch.randn(3, 5, EMB)
    out = rep(x, torch.tensor([5, 4, 2]))
    assert out.shape == (3, 5, 6)
    (out**2).sum().backward()
    for layer in (rep.noise_in, rep.noise_out):
        assert layer.rho.grad is not None and layer.rho.grad.shape == layer.rho.shape
        assert (layer.rho.grad.abs() > 0).all()  # every dimension's std gets a gradient
    # the noise is random at use too (attack A2): two passes differ
    assert not torch.equal(rep(x, torch.tensor([5, 4, 2])), rep(x, torch.tensor([5, 4, 2])))


def test_representation_size_must_be_even():
    with pytest.raises(ValueError, match="even"):
        RepresentationModel(EMB, d=7)


def _params(model, comp):
    return {n: p.detach().clone() for n, p in model.component(comp).named_parameters()}


@pytest.mark.parametrize("phase", list(PHASES))
def test_each_phase_updates_only_its_components(data, phase):
    model = _small()
    t = _trainer(data, model)
    before = {c: _params(model, c) for c in ("representation", "deid", "adversary")}
    t.run_epoch(phase)
    for c, ps in before.items():
        after = dict(model.component(c).named_parameters())
        changed = [n for n, p in ps.items() if not torch.equal(p, after[n])]
        if c in PHASES[phase]:
            assert changed, f"{phase}: {c} should have been trained"
            if c == "representation":
                assert "noise_in.rho" in changed and "noise_out.rho" in changed
        else:
            assert not changed, f"{phase}: frozen {c} changed: {changed}"
    assert all(p.requires_grad for p in model.parameters())  # freezing is undone after the phase


class Identity(nn.Module):
    out_dim = EMB

    def forward(self, emb, lengths):
        return emb


class PureNoise(nn.Module):
    out_dim = EMB

    def forward(self, emb, lengths):
        return torch.randn_like(emb)


def _adversary_accuracy(data, rep, epochs):
    torch.manual_seed(0)
    model = AdversarialModel(rep, DeidHead(EMB, LABELS, hidden=4, layers=1), Adversaries(EMB, EMB, hidden=16))
    t = _trainer(data, model)
    res = frozen_adversary_accuracy(t, data[3], epochs=epochs)
    return res


def test_adversary_wins_on_the_identity_representation(data):
    res = _adversary_accuracy(data, Identity(), epochs=40)
    assert res["pairs"] >= 300
    assert res["accuracy"] > 0.9, res["accuracy"]


def test_adversary_is_at_chance_on_pure_noise(data):
    res = _adversary_accuracy(data, PureNoise(), epochs=40)
    n = res["pairs"]
    bound = 4 * math.sqrt(0.25 / n)  # 4 binomial standard deviations around 1/2 (n >= 300: 0.115)
    assert n >= 300
    assert abs(res["accuracy"] - 0.5) < bound, (res["accuracy"], bound)


class Leaky(nn.Module):
    """Half the channels carry the embedding in the clear, the other half pure noise: a PHI token
    swapped for a neighbour shows only in the clear half."""

    out_dim = EMB

    def forward(self, emb, lengths):
        return torch.cat([emb[..., : EMB // 2], torch.randn_like(emb[..., EMB // 2 :])], dim=-1)


def _protocol_attack(data, rep, bucket):
    """The frozen adversary as notebook 06 runs it: its own training pool (not the trainer's
    sentences), held-out pairs from other sentences, K/5 checkpoints, length buckets."""
    emb, index, train, test = data
    torch.manual_seed(0)
    model = AdversarialModel(rep, DeidHead(EMB, LABELS, hidden=4, layers=1), Adversaries(EMB, EMB, hidden=16))
    t = _trainer(data, model, bucket=bucket)
    pool = encode_sentences(_sentences(160, 7), emb, LABELS)
    return frozen_adversary_accuracy(t, test, epochs=40, train_items=pool, eval_every=8)


@pytest.mark.parametrize("bucket", [False, True])
def test_protocol_adversary_wins_on_a_leaky_representation_and_not_on_noise(data, bucket):
    leak = _protocol_attack(data, Leaky(), bucket)
    assert leak["accuracy"] > 0.8, leak["accuracy"]
    assert [c["epoch"] for c in leak["curve"]] == [8, 16, 24, 32, 40]
    assert leak["curve"][-1]["pairs_seen"] == 40 * leak["train_pairs"] and leak["train_pairs"] >= 300
    noise = _protocol_attack(data, PureNoise(), bucket)
    assert abs(noise["accuracy"] - 0.5) < 4 * math.sqrt(0.25 / noise["pairs"]), noise["accuracy"]


def test_the_frozen_adversary_trains_k_epochs_paper_default_50(data):
    assert _FROZEN_EPOCHS == 50  # Figure 5 and section 8: "an additional 50 epochs"
    assert inspect.signature(frozen_adversary_accuracy).parameters["epochs"].default == 50
    t = _trainer(data, _small(seed=3))
    res = frozen_adversary_accuracy(t, data[3][:40], epochs=3)
    assert len(res["history"]) == 3 and all(h["phase"] == "adv" for h in res["history"])


def test_attack_sentences_hold_out_pairs_disjoint_from_training(data):
    emb, _, train, test = data
    dup = encode_sentences(_sentences(160, 1)[:30], emb, LABELS)  # the first 30 training sentences again
    no_phi = encode_sentences(_sentences(20, 9), emb, LABELS)
    for s in no_phi:
        s.tags, s.has_phi = ["O"] * len(s.words), False
    tr, ho = attack_sentences(train, dup + test + no_phi)
    seen = {tuple(s.words) for s in tr}
    assert tr and ho and not any(tuple(s.words) in seen for s in ho)
    assert len(ho) == len([s for s in test if tuple(s.words) not in seen])  # the duplicates and PHI-free go
    assert all(s.has_phi for s in tr + ho)
    a, b = attack_sentences(train, test, n_train=50, n_heldout=60, seed=4)
    assert (len(a), len(b)) == (50, 60) and not {tuple(s.words) for s in a} & {tuple(s.words) for s in b}
    assert [s.words for s in a] == [s.words for s in attack_sentences(train, test, n_train=50, seed=4)[0]]
    # the frozen adversary scores only held-out sentences: its own training pool as evaluation set leaves none
    with pytest.raises(ValueError, match="held-out"):
        frozen_adversary_accuracy(_trainer(data, _small(seed=3)), train, epochs=1)


def test_length_buckets_cover_every_sentence_once_in_length_runs(data):
    import random

    t = _trainer(data, _small(seed=3), bucket=True)
    items = data[2]
    batches = t._batches(items, random.Random(0))
    assert sorted(id(s) for b in batches for s in b) == sorted(id(s) for s in items)
    spans = sorted((min(len(s.words) for s in b), max(len(s.words) for s in b)) for b in batches)
    assert all(hi <= lo2 for (_, hi), (lo2, _) in zip(spans, spans[1:]))  # batches do not interleave lengths


def test_procedures_run_and_frozen_evaluation_leaves_the_model_unchanged(data):
    model = _small(seed=1)
    t = _trainer(data, model)
    hist = train_three_phase(t, p1_epochs=2, p2_epochs=2, p3_epochs=2, patience=1)
    stages = [h["stage"] for h in hist]
    assert stages[0] == "P1" and "P2" in stages and "P3a" in stages and stages[-1] == "P3b"
    snap = {n: p.detach().clone() for n, p in model.named_parameters()}
    res = frozen_adversary_accuracy(t, data[3][:60], epochs=1)
    assert 0 <= res["accuracy"] <= 1 and res["pairs"] > 0
    assert all(torch.equal(p, snap[n]) for n, p in model.named_parameters())
    tags = t.predict(data[3][:5])
    assert [len(x) for x in tags] == [len(s.words) for s in data[3][:5]]
    d = _trainer(data, _small(seed=2))
    hd = train_dann(d, epochs=2, patience=1)
    assert [h["stage"] for h in hd] == ["DANN"] * len(hd) and len(hd) >= 1


def test_seeded_determinism(data):
    a = _trainer(data, _small(seed=3))
    b = _trainer(data, _small(seed=3))
    assert a.run_epoch("dann") == b.run_epoch("dann")
    assert a.evaluate() == b.evaluate()


def test_pair_adversary_fused_kernel_matches_packed_sequences():
    """The adversaries run the fused LSTM kernel on the padded batch: the same logits as packed
    sequences, and nothing after a row's length reaches its output."""
    from deidlib.models.layers import packed_rnns

    torch.manual_seed(0)
    adv = PairAdversary(5, 7)
    x, lengths = torch.randn(4, 9, 5), torch.tensor([9, 3, 6, 1])
    fast = adv(x, lengths)
    with packed_rnns():
        slow = adv(x, lengths)
    assert torch.allclose(fast, slow, atol=1e-5), (fast, slow)
    y = x.clone()
    y[1, 3:] = 100.0  # padding of row 1
    assert torch.allclose(adv(y, lengths), fast, atol=1e-6)


def test_the_attack_learning_rate_reaches_the_frozen_adversary(data):
    """``lr`` sets the frozen adversaries' learning rate: on the identity representation they win
    at the given rate and stay near chance at a negligible one."""
    emb, index, train, test = data

    def attack(lr):
        torch.manual_seed(0)
        model = AdversarialModel(Identity(), DeidHead(EMB, LABELS, hidden=4, layers=1), Adversaries(EMB, EMB, hidden=16))
        return frozen_adversary_accuracy(_trainer(data, model, lr=1e-9), test[:100], epochs=15, lr=lr)["accuracy"]

    assert attack(2e-2) > 0.8
    assert attack(1e-9) < 0.65


def test_an_overflowing_gradient_skips_the_step_and_keeps_the_weights(data, monkeypatch):
    """A non-finite gradient norm (an overflowing LSTM gradient at a large learning rate) makes no
    step: the adversaries' weights stay finite and unchanged, and the epoch counts the skipped steps."""
    from deidlib.privacy import adversarial_trainer as adv_mod

    t = _trainer(data, _small(seed=2))
    before = [p.detach().clone() for p in t.model.adversary.parameters()]
    loss = adv_mod.adversary_loss
    monkeypatch.setattr(adv_mod, "adversary_loss", lambda prob, target: loss(prob, target) * float("inf"))
    out = t.run_epoch("adv")
    assert out["skipped_steps"] == math.ceil(sum(s.has_phi for s in t.train) / t.batch_size) > 0
    assert all(torch.equal(a, b) for a, b in zip(before, t.model.adversary.parameters()))
    monkeypatch.setattr(adv_mod, "adversary_loss", loss)
    assert t.run_epoch("adv")["skipped_steps"] == 0
    assert any(not torch.equal(a, b) for a, b in zip(before, t.model.adversary.parameters()))


def test_a_fake_whose_neighbour_has_no_vector_is_encoded_as_zeros(data, monkeypatch):
    """A case-matched neighbour can lack a vector (its cased form has no row): the fake sentence is
    encoded as any sentence (zeros for that token), never with NaN."""
    import random

    t = _trainer(data, _small(seed=2))
    monkeypatch.setattr(t.embeddings, "vector", lambda token: None)
    pairs = t.fakes(t.train[:40], random.Random(0))
    assert pairs and all(np.isfinite(f).all() for _, f in pairs)
    assert all((f != s.emb).any(axis=1).sum() == 1 and (f == 0).all(axis=1).any() for s, f in pairs)


def test_a_non_finite_adversary_output_makes_no_step_and_is_counted(data, monkeypatch):
    """A non-finite probability never reaches the loss: the batch makes no step (counted), and in
    evaluation it scores as a guess (counted), so a run reports it instead of dying or learning NaN."""
    t = _trainer(data, _small(seed=2))
    before = [p.detach().clone() for p in t.model.adversary.parameters()]
    real = AdversarialTrainer.adversary_outputs

    def nan_outputs(self, pairs, reverse=False):
        prob, target = real(self, pairs, reverse)
        return prob * float("nan"), target

    monkeypatch.setattr(AdversarialTrainer, "adversary_outputs", nan_outputs)
    out = t.run_epoch("adv")
    assert out["nonfinite_batches"] == math.ceil(sum(s.has_phi for s in t.train) / t.batch_size) > 0
    assert all(torch.equal(a, b) for a, b in zip(before, t.model.adversary.parameters()))
    ev = t.evaluate()
    assert ev["nonfinite"] == ev["pairs"] > 0 and ev["adv_acc"] == 0.5
