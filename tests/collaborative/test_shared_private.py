"""Shared-private training (deidlib.collaborative.shared_private): gradient reversal on the
discriminator path, uploads hold only shared parameters, embedding rows stay private, the
centralized baseline learns, determinism."""

import logging
import random

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from deidlib.collaborative.registries import Registry
from deidlib.collaborative.registry_eval import f1_micro_macro
from deidlib.collaborative.shared_private import (
    SHARED_PREFIXES,
    CNNConfig,
    RegistryTraining,
    SharedPrivateCNN,
    _load_shared,
    encode,
    predict,
    shared_state,
    train_centralized,
    train_shared_private,
    train_single_registry,
)
from deidlib.models.cnn import pad_ids

CFG = CNNConfig(n_buckets=512, emb_dim=12, filters=8, dropout=0.0, max_len=40)
KEYWORDS = ("carcinoma", "melanoma", "adenoma", "lymphoma")
FILLER = "the specimen shows tissue with margin and section received in formalin from patient".split()


def _toy_registry(name, n, seed, style_word):
    """Label = which keyword occurs; each registry adds its own style word (a registry tell)."""
    rng = random.Random(seed)
    texts, labels = [], []
    for _ in range(n):
        y = rng.randrange(len(KEYWORDS))
        words = [rng.choice(FILLER) for _ in range(rng.randint(6, 14))]
        words.insert(rng.randrange(len(words)), KEYWORDS[y])
        words.insert(0, style_word)
        texts.append(" ".join(words))
        labels.append(y)
    cut = int(0.7 * n)
    return Registry(name, tuple(texts[:cut]), tuple(labels[:cut]), tuple(texts[cut:]), tuple(labels[cut:]),
                    KEYWORDS)


@pytest.fixture(scope="module")
def toy():
    return [_toy_registry(f"r{i}", 80, i, w) for i, w in enumerate(("final", "addendum", "report"))]


def test_discriminator_gradient_is_reversed_on_the_shared_encoder():
    torch.manual_seed(0)
    m = SharedPrivateCNN(CFG, 4, 3, adv_weight=0.7).eval()
    ids = pad_ids([[1, 2, 3, 4, 5], [6, 7, 8, 9, 10, 11]])
    target = torch.tensor([0, 2])
    _, reg_logits, _, _ = m(ids)
    F.cross_entropy(reg_logits, target).backward()
    through = {n: p.grad.clone() for n, p in m.named_parameters() if p.grad is not None}
    m.zero_grad()
    shared, _ = m.encode(ids)
    F.cross_entropy(m.discriminator(shared), target).backward()  # same loss without the reversal
    direct = {n: p.grad.clone() for n, p in m.named_parameters() if p.grad is not None}
    w = "shared_encoder.convs.0.weight"
    assert direct[w].abs().sum() > 0
    assert torch.allclose(through[w], -0.7 * direct[w], atol=1e-7)
    d = "discriminator.0.weight"  # the discriminator itself is trained normally
    assert torch.allclose(through[d], direct[d])
    assert not any(n.startswith(("private_encoder.", "head.")) for n in through)


def test_uploads_hold_exactly_the_shared_parameters(toy, caplog):
    with caplog.at_level(logging.INFO, logger="deidlib.collaborative.shared_private"):
        run = train_shared_private(toy, CFG, RegistryTraining(rounds=2, batch_size=16, seed=1))
    m = run.models[0]
    shared = {n for n, _ in m.named_parameters() if n.startswith(SHARED_PREFIXES)}
    private = {n for n, _ in m.named_parameters()} - shared
    assert {n.split(".")[0] for n in private} == {"embedding", "private_encoder", "head"}
    n_shared = sum(p.numel() for n, p in m.named_parameters() if n in shared)
    assert len(run.uploads) == 2 * len(toy)
    for rec in run.uploads:
        assert set(rec.names) == shared and not set(rec.names) & private
        assert rec.n_values == n_shared
    assert set(run.server_state) == shared
    assert sum("uploads" in r.message and "embedding" not in r.message for r in caplog.records) == 6
    # after the last round every registry holds the server's shared layers ...
    for model in run.models:
        for k, v in run.server_state.items():
            assert torch.equal(model.state_dict()[k], v)
    # ... while embedding rows, private encoders and heads differ between registries
    for k in ("embedding.weight", "private_encoder.convs.0.weight", "head.weight"):
        assert not torch.equal(run.models[0].state_dict()[k], run.models[1].state_dict()[k])


def test_a_download_with_a_private_parameter_is_refused():
    m = SharedPrivateCNN(CFG, 4, 3)
    state = shared_state(m)
    assert all(k.startswith(SHARED_PREFIXES) for k in state)
    with pytest.raises(ValueError, match="only hold shared"):
        _load_shared(m, {**state, "embedding.weight": m.embedding.weight.detach()})


def test_centralized_learns_a_toy_task_and_is_deterministic(toy):
    tr = RegistryTraining(epochs=6, batch_size=16, lr=1e-2, seed=0)
    model = train_centralized(toy, CFG, tr)
    y = np.concatenate([r.test_labels for r in toy])
    pred = np.concatenate([predict(model, encode(r.test_texts, CFG)) for r in toy])
    assert f1_micro_macro(y, pred)["macro"] > 0.8  # chance is about 0.25
    again = train_centralized(toy, CFG, tr)
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), again.state_dict().values()))


def test_shared_private_and_single_registry_beat_chance(toy):
    tr = RegistryTraining(epochs=6, rounds=6, batch_size=16, lr=1e-2, seed=0)
    y = np.concatenate([r.test_labels for r in toy])
    run = train_shared_private(toy, CFG, tr)
    sp = np.concatenate([predict(m, encode(r.test_texts, CFG)) for m, r in zip(run.models, toy)])
    singles = train_single_registry(toy, CFG, tr)
    si = np.concatenate([predict(m, encode(r.test_texts, CFG)) for m, r in zip(singles, toy)])
    assert f1_micro_macro(y, sp)["micro"] > 0.6
    assert f1_micro_macro(y, si)["micro"] > 0.6


def test_bad_configuration_is_a_one_line_error(toy):
    with pytest.raises(ValueError):
        RegistryTraining(rounds=0)
    with pytest.raises(ValueError, match="at least 2 registries"):
        train_shared_private(toy[:1], CFG, RegistryTraining())


def test_difference_loss_is_zero_for_orthogonal_features_and_positive_otherwise():
    from deidlib.collaborative.shared_private import difference_loss

    # columns (features over the batch) of S orthogonal to those of P: SᵀP = 0
    s = torch.tensor([[1.0, 2.0], [0.0, 0.0]])
    p = torch.tensor([[0.0, 0.0], [0.0, 3.0]])
    assert difference_loss(s, p).item() == 0.0
    eye = torch.eye(2)
    assert difference_loss(eye, eye).item() == pytest.approx(1.0)  # ‖I‖²_F = 2 over a batch of 2


def test_shared_private_same_seed_same_models_with_difference_loss(toy):
    tr = RegistryTraining(rounds=1, batch_size=16, orth_weight=0.1, seed=3)
    a, b = train_shared_private(toy, CFG, tr), train_shared_private(toy, CFG, tr)
    for ma, mb in zip(a.models, b.models):
        assert all(torch.equal(x, y) for x, y in zip(ma.state_dict().values(), mb.state_dict().values()))
    assert a.uploads == b.uploads


def test_the_server_receives_only_shared_tensors_and_never_a_private_value(toy, monkeypatch):
    """What the server's averaging actually receives (not just the log): only shared names, and
    no received tensor equals any registry's embedding, private encoder or head tensor."""
    import deidlib.collaborative.shared_private as sp

    received = []
    real = sp.average_states

    def spy(states, weights):
        received.append([{k: v.clone() for k, v in s.items()} for s in states])
        return real(states, weights)

    monkeypatch.setattr(sp, "average_states", spy)
    run = train_shared_private(toy, CFG, RegistryTraining(rounds=2, batch_size=16, seed=2))
    assert len(received) == 2 and all(len(r) == len(toy) for r in received)
    private = [(k, v) for m in run.models for k, v in m.state_dict().items() if not k.startswith(SHARED_PREFIXES)]
    assert {k.split(".")[0] for k, _ in private} == {"embedding", "private_encoder", "head"}
    for states in received:
        for state in states:
            assert state and all(k.startswith(SHARED_PREFIXES) for k in state)
            for v in state.values():
                assert not any(v.shape == p.shape and torch.equal(v, p) for _, p in private)
    # a registry's private layers are its own: the server's state cannot overwrite them
    m = run.models[0]
    before = {k: v.clone() for k, v in m.state_dict().items() if not k.startswith(SHARED_PREFIXES)}
    _load_shared(m, {k: torch.zeros_like(v) for k, v in run.server_state.items()})
    assert all(torch.equal(before[k], v) for k, v in m.state_dict().items() if k in before)
