"""Shared-private training (deidlib.collaborative.shared_private): gradient reversal on the
discriminator path, the shared encoder reads only the public word vectors, hand-offs hold only
shared parameters, the discriminator steps once per cycle and learns the registry when nothing
fights it, the centralized baseline learns, determinism."""

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
    encode,
    predict,
    shared_features,
    train_centralized,
    train_shared_private,
    train_single_registry,
)
from deidlib.models.cnn import pad_ids

CFG = CNNConfig(n_buckets=512, emb_dim=12, filters=8, dropout=0.0, max_len=40)
KEYWORDS = ("carcinoma", "melanoma", "adenoma", "lymphoma")
FILLER = "the specimen shows tissue with margin and section received in formalin from patient".split()


def _toy_registry(name, n, seed, style_word=None, vocab=FILLER, length=(6, 14), train=0.7):
    """Label = which keyword occurs among ``length`` words of ``vocab``; a registry tell is its own
    ``style_word`` in front, or its own whole ``vocab``; the first ``train`` share is training data."""
    rng = random.Random(seed)
    texts, labels = [], []
    for _ in range(n):
        y = rng.randrange(len(KEYWORDS))
        words = [rng.choice(vocab) for _ in range(rng.randint(*length))]
        words.insert(rng.randrange(len(words)), KEYWORDS[y])
        if style_word is not None:
            words.insert(0, style_word)
        texts.append(" ".join(words))
        labels.append(y)
    cut = int(train * n)
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


def test_the_shared_encoder_reads_only_the_public_word_vectors():
    """The shared layers see one input space: no gradient of the shared features reaches the
    private embedding, and the public vectors are a buffer, never trained."""
    torch.manual_seed(0)
    m = SharedPrivateCNN(CFG, 4, 3)
    ids = pad_ids([[1, 2, 3, 4, 5], [6, 7, 8, 9, 10, 11]])
    shared, private = m.encode(ids)
    shared.sum().backward()
    assert m.embedding.weight.grad is None or not m.embedding.weight.grad.any()
    assert m.shared_encoder.convs[0].weight.grad.abs().sum() > 0
    assert "public_vectors" not in dict(m.named_parameters())
    m.zero_grad()
    private.sum().backward()
    assert m.embedding.weight.grad.abs().sum() > 0 and m.shared_encoder.convs[0].weight.grad is None


def test_hand_offs_hold_exactly_the_shared_parameters(toy):
    run = train_shared_private(toy, CFG, RegistryTraining(epochs=1, batch_size=16, seed=1))
    m = run.models[0]
    shared = {n for n, _ in m.named_parameters() if n.startswith(SHARED_PREFIXES)}
    private = {n for n, _ in m.named_parameters()} - shared
    assert {n.split(".")[0] for n in private} == {"embedding", "private_encoder", "head"}
    n_shared = sum(p.numel() for n, p in m.named_parameters() if n in shared)
    cycles = -(-56 // 16)  # 56 training reports per registry, batches of 16, one batch per visit
    assert len(run.uploads) == cycles * len(toy)
    for rec in run.uploads:
        assert set(rec.names) == shared and not set(rec.names) & private
        assert rec.n_values == n_shared
    assert set(run.server_state) == shared
    # after the last cycle every registry holds the same shared layers and the same public vectors ...
    for model in run.models:
        for k, v in run.server_state.items():
            assert torch.equal(model.state_dict()[k], v)
        assert torch.equal(model.public_vectors, run.models[0].public_vectors)
    # ... while embedding rows, private encoders and heads differ between registries
    for k in ("embedding.weight", "private_encoder.convs.0.weight", "head.weight"):
        assert not torch.equal(run.models[0].state_dict()[k], run.models[1].state_dict()[k])


def test_the_discriminator_steps_once_per_cycle_and_the_encoder_at_every_visit(toy, monkeypatch):
    """The discriminator's objective covers every registry's label: it does not move while the
    shared layers travel through one cycle (its gradient accumulates) and moves between cycles;
    the shared encoder changes at every visit."""
    import deidlib.collaborative.shared_private as sp

    handed = []
    real = sp.shared_state

    def spy(model):
        state = real(model)
        handed.append(state)
        return state

    monkeypatch.setattr(sp, "shared_state", spy)
    run = train_shared_private(toy, CFG, RegistryTraining(epochs=1, batch_size=16, seed=4))
    n = len(toy)
    handed = handed[: len(run.uploads)]
    disc = [{k: v for k, v in s.items() if k.startswith("discriminator.")} for s in handed]
    enc = [s["shared_encoder.convs.0.weight"] for s in handed]
    for c in range(len(handed) // n):
        cycle = disc[c * n: (c + 1) * n]
        assert all(torch.equal(cycle[0][k], d[k]) for d in cycle for k in d)  # no step inside a cycle
        if c:
            assert not torch.equal(disc[(c - 1) * n]["discriminator.0.weight"], cycle[0]["discriminator.0.weight"])
    assert all(not torch.equal(a, b) for a, b in zip(enc, enc[1:]))


VOCABS = ("alpha beta gamma delta epsilon zeta".split(), "north south east west up down".split(),
          "red green blue cyan magenta yellow".split())


@pytest.fixture(scope="module")
def distinct():
    return [_toy_registry(f"d{i}", n, i, vocab=v, length=(8, 14), train=0.6) for i, (n, v) in enumerate(zip((90, 70, 60), VOCABS))]


def test_the_discriminator_learns_the_registry_without_the_adversary(distinct):
    """With the adversary off nothing fights the discriminator: on registries that differ it
    must find the registry far above the majority rate (stuck at the majority rate = broken game)."""
    run = train_shared_private(distinct, CFG, RegistryTraining(epochs=8, batch_size=16, lr=1e-2, adv_weight=0.0,
                                                               seed=0))
    feats, reg = shared_features(run, distinct, CFG)
    with torch.no_grad():
        pred = run.models[0].discriminator.eval()(torch.from_numpy(feats)).argmax(-1).numpy()
    majority = np.bincount(reg).max() / len(reg)
    assert np.mean(pred == reg) > majority + 0.25


def test_centralized_learns_a_toy_task_and_is_deterministic(toy):
    tr = RegistryTraining(epochs=6, batch_size=16, lr=1e-2, seed=0)
    model = train_centralized(toy, CFG, tr)
    y = np.concatenate([r.test_labels for r in toy])
    pred = np.concatenate([predict(model, encode(r.test_texts, CFG)) for r in toy])
    assert f1_micro_macro(y, pred)["macro"] > 0.8  # chance is about 0.25
    again = train_centralized(toy, CFG, tr)
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), again.state_dict().values()))


def test_shared_private_and_single_registry_beat_chance(toy):
    tr = RegistryTraining(epochs=6, batch_size=16, lr=1e-2, seed=0)
    y = np.concatenate([r.test_labels for r in toy])
    run = train_shared_private(toy, CFG, tr)
    sp = np.concatenate([predict(m, encode(r.test_texts, CFG)) for m, r in zip(run.models, toy)])
    singles = train_single_registry(toy, CFG, tr)
    si = np.concatenate([predict(m, encode(r.test_texts, CFG)) for m, r in zip(singles, toy)])
    assert f1_micro_macro(y, sp)["micro"] > 0.6
    assert f1_micro_macro(y, si)["micro"] > 0.6


def test_bad_configuration_is_a_one_line_error(toy):
    with pytest.raises(ValueError):
        RegistryTraining(visit_batches=0)
    with pytest.raises(ValueError, match="at least 2 registries"):
        train_shared_private(toy[:1], CFG, RegistryTraining())


def test_difference_loss_is_zero_for_orthogonal_features_and_positive_otherwise():
    from deidlib.collaborative.shared_private import _difference_loss

    # columns (features over the batch) of S orthogonal to those of P: SᵀP = 0
    s = torch.tensor([[1.0, 2.0], [0.0, 0.0]])
    p = torch.tensor([[0.0, 0.0], [0.0, 3.0]])
    assert _difference_loss(s, p).item() == 0.0
    eye = torch.eye(2)
    assert _difference_loss(eye, eye).item() == pytest.approx(1.0)  # ‖I‖²_F = 2 over a batch of 2


def test_shared_private_same_seed_same_models_with_difference_loss(toy):
    tr = RegistryTraining(epochs=1, batch_size=16, orth_weight=0.1, seed=3)
    a, b = train_shared_private(toy, CFG, tr), train_shared_private(toy, CFG, tr)
    for ma, mb in zip(a.models, b.models):
        assert all(torch.equal(x, y) for x, y in zip(ma.state_dict().values(), mb.state_dict().values()))
    assert a.uploads == b.uploads


def test_the_confusion_term_trains_only_the_encoder_and_vanishes_at_a_uniform_discriminator():
    """Deterministic property of the default adversary: the discriminator learns from detached
    features only (its gradient is that of its registry cross-entropy alone), the encoder gets
    λ · ∇ CE(D(shared), uniform), which is zero when D's output is uniform whatever the features."""
    from deidlib.collaborative.shared_private import _adversarial_loss

    torch.manual_seed(0)
    m = SharedPrivateCNN(CFG, 4, 3)
    ids = pad_ids([[1, 2, 3, 4, 5], [6, 7, 8, 9, 10, 11]])
    target = torch.tensor([0, 2])
    tr = RegistryTraining(adv_weight=0.5)
    _, reg_logits, shared, _ = m(ids)
    _adversarial_loss(m, shared, reg_logits, target, tr).backward()
    both = {n: p.grad.clone() for n, p in m.named_parameters() if p.grad is not None}
    m.zero_grad()
    shared, _ = m.encode(ids)
    F.cross_entropy(m.discriminator(shared.detach()), target).backward()
    assert torch.allclose(both["discriminator.0.weight"], m.discriminator[0].weight.grad)
    m.zero_grad()
    shared, _ = m.encode(ids)
    (0.5 * -F.log_softmax(m.discriminator(shared), -1).mean()).backward()
    w = "shared_encoder.convs.0.weight"
    assert both[w].abs().sum() > 0 and torch.allclose(both[w], m.shared_encoder.convs[0].weight.grad, atol=1e-7)
    m.zero_grad()
    with torch.no_grad():
        m.discriminator[2].weight.zero_()  # uniform output for every input
    _, reg_logits, shared, _ = m(ids)
    _adversarial_loss(m, shared, reg_logits, target, tr).backward()
    assert m.shared_encoder.convs[0].weight.grad.abs().max() < 1e-7
