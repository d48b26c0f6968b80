"""The compiled CRF log-partition (deidlib.models.fused_crf) against the CRF's Python
recursion: same log Z, same gradients (the Python one by autograd, the compiled one by the
forward–backward algorithm), float64 gradcheck, constrained and unconstrained label sets,
ragged lengths, and sums forced below the scaled product's range (the exact fallbacks)."""

from __future__ import annotations

import os

import pytest
import torch

from deidlib.corpus.labels import tag_set
from deidlib.models import fused_crf
from deidlib.models.crf import CRF

if not fused_crf.available():
    if os.environ.get("CI"):  # CI has a compiler: the extension must build there
        pytest.fail("the compiled CRF did not build", pytrace=False)
    pytest.skip("the compiled CRF cannot be built here (no C++ compiler?)", allow_module_level=True)


def _case(scheme, scale, dtype, seed=0):
    torch.manual_seed(seed)
    labels = tag_set("i2b2", scheme)
    crf = CRF(len(labels), labels).to(dtype)
    with torch.no_grad():  # learned-looking scores: some transitions far below the others
        crf.transitions.mul_(scale)
    lengths = torch.tensor([9, 1, 4, 9, 6, 2])
    em = torch.randn(len(lengths), 9, len(labels), dtype=dtype) * scale
    mask = torch.arange(9) < lengths.unsqueeze(1)
    return crf, em, mask


def _grads(crf, em, mask, weights):
    em = em.clone().requires_grad_(True)
    logz = crf.log_partition(em, mask)
    return (logz, *torch.autograd.grad((logz * weights).sum(), [em, crf.transitions, crf.start, crf.end]))


@pytest.mark.parametrize("scheme", ["BIOES", "BIO", "IO"])
@pytest.mark.parametrize("scale", [1.0, 60.0], ids=["plain", "underflow"])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_equals_the_python_recursion(scheme, scale, dtype):
    crf, em, mask = _case(scheme, scale, dtype)
    w = torch.randn(em.shape[0], dtype=dtype)
    fast = _grads(crf, em, mask, w)
    with fused_crf.disabled():
        ref = _grads(crf, em, mask, w)
    tol = dict(rtol=1e-9, atol=1e-9) if dtype == torch.float64 else dict(rtol=1e-4, atol=2e-4)
    for name, a, b in zip(["logZ", "emissions", "transitions", "start", "end"], fast, ref):
        torch.testing.assert_close(a, b, **tol, msg=lambda m, name=name: f"{name}: {m}")
    assert (fast[1][~mask] == 0).all()  # no gradient at padding


def test_underflow_case_reaches_the_exact_fallbacks():
    """The scale-60 case above is meant to exercise the exact paths: check that some scaled
    sum there is below 1e-20 (otherwise the test would not test them)."""
    crf, em, mask = _case("BIOES", 60.0, torch.float64)
    transitions, start, end = crf._scores()
    allowed = (crf.trans_bias >= 0).to(torch.uint8)
    _, _, s = fused_crf.KERNEL.module().forward(em, mask.long().sum(1), transitions, start, end, allowed)
    valid = mask.clone()
    valid[:, 0] = False
    assert ((s < 1e-20) & valid.unsqueeze(2)).any()


def test_gradcheck():
    torch.manual_seed(3)
    labels = tag_set("i2b2", "BIO")[:7]  # a small constrained set: O, B-/I- of three types
    crf = CRF(len(labels), labels).double()
    transitions, start, end = (t.detach().clone().requires_grad_(True) for t in crf._scores())
    em = torch.randn(3, 5, len(labels), dtype=torch.double, requires_grad=True)
    lengths = torch.tensor([5, 2, 1])
    allowed = (crf.trans_bias >= 0).to(torch.uint8)
    assert torch.autograd.gradcheck(lambda e, a, s, n: fused_crf.log_partition(e, lengths, a, s, n, allowed),
                                    (em, transitions, start, end))


def test_marginals_and_training_loss_use_it_and_agree():
    crf, em, mask = _case("BIOES", 1.0, torch.float32)
    tags = torch.randint(0, crf.num_tags, mask.shape)
    m_fast = crf.marginals(em, mask)
    with fused_crf.disabled():
        m_ref = crf.marginals(em, mask)
        nll_ref = crf.nll(em, tags, mask, reduction="none")
    torch.testing.assert_close(m_fast, m_ref, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(m_fast.sum(-1)[mask], torch.ones(int(mask.sum())), rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(crf.nll(em, tags, mask, reduction="none"), nll_ref, rtol=1e-5, atol=1e-4)


def test_batched_gradients_are_refused_with_a_clear_message():
    crf, em, mask = _case("BIO", 1.0, torch.float32)
    em = em.requires_grad_(True)
    logz = crf.log_partition(em, mask)
    eye = torch.eye(logz.shape[0])
    with pytest.raises(RuntimeError, match="fused_crf.disabled"):
        torch.autograd.grad(logz, em, grad_outputs=eye, is_grads_batched=True)
    with fused_crf.disabled():
        logz = crf.log_partition(em, mask)
    rows = torch.autograd.grad(logz, em, grad_outputs=eye, is_grads_batched=True)[0]
    assert rows.shape == (logz.shape[0], *em.shape)


def _brute_force_path(crf, em, n):
    """The best path by enumerating every tag sequence (tiny label sets only), ties to the
    lexicographically first sequence as the Viterbi tie rule gives when scores are distinct."""
    import itertools

    transitions, start, end = crf._scores()
    best, arg = None, None
    for seq in itertools.product(range(em.shape[-1]), repeat=n):
        s = start[seq[0]] + em[0, seq[0]] + end[seq[-1]]
        for t in range(1, n):
            s = s + transitions[seq[t - 1], seq[t]] + em[t, seq[t]]
        if best is None or s > best:
            best, arg = s, list(seq)
    return arg


@pytest.mark.parametrize("scheme", ["BIOES", "BIO", "IO"])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("ties", [False, True], ids=["distinct", "ties"])
def test_viterbi_paths_equal_the_python_decode(scheme, dtype, ties):
    """Identical paths (not only equal scores), ragged lengths and a length-1 row included;
    with integer-valued scores many candidates tie and the first maximal predecessor must be
    taken, as torch's argmax does."""
    crf, em, mask = _case(scheme, 1.0, dtype, seed=3)
    if ties:
        with torch.no_grad():
            crf.transitions.copy_(torch.randint(-1, 2, crf.transitions.shape).to(dtype))
        em = torch.randint(-1, 2, em.shape).to(dtype)
    fast = crf.decode(em, mask)
    with fused_crf.disabled():
        ref = crf.decode(em, mask)
    assert fast == ref
    assert [len(p) for p in fast] == mask.sum(1).tolist()
    raw = fused_crf.viterbi(em, mask.long().sum(1), *crf._scores())
    assert (raw[~mask] == 0).all()


@pytest.mark.parametrize("scheme", ["BIOES", "BIO"])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("case", ["plain", "ties", "disallowed_wins", "non_finite"])
def test_constrained_viterbi_equals_the_full_maximum(scheme, dtype, case):
    """With the constraint mask the decode maximises over the allowed predecessors and falls
    back to all of them where a disallowed one could win: the paths must equal the decode
    without the mask in every case, including emissions large enough (1e5, against the
    disallowed moves' -1e4) that a disallowed move is the true best, and NaN/inf scores.
    (Both schemes take the grouped maximum here, as the mask is given; CRF.decode gives it
    only for BIOES, ``crf.viterbi_mask``.)"""
    crf, em, mask = _case(scheme, 1.0, dtype, seed=7)
    B, T, L = em.shape
    if case == "ties":
        with torch.no_grad():
            crf.transitions.copy_(torch.randint(-1, 2, crf.transitions.shape).to(dtype))
        em = torch.randint(-1, 2, em.shape).to(dtype)
    elif case == "disallowed_wins":  # spikes on I-/E- tags that no allowed path reaches cheaply
        labels = tag_set("i2b2", scheme)
        inside = [k for k, lab in enumerate(labels) if lab[:2] in ("I-", "E-")]
        em = em.clone()
        em[:, :, inside] += torch.where(torch.rand(B, T, len(inside)) < 0.3, 1e5, -1e5).to(dtype)
    elif case == "non_finite":
        em = em.clone()
        em[0, 3, 5] = float("nan")
        em[3, 2, :7] = float("inf")
        em[4, 1, 2] = -float("inf")
    lengths = mask.long().sum(1)
    transitions, start, end = crf._scores()
    allowed = crf.trans_bias >= 0
    assert crf.constrained and not bool(allowed.all())
    fast = fused_crf.viterbi(em, lengths, transitions, start, end, allowed)
    full = fused_crf.viterbi(em, lengths, transitions, start, end)
    assert torch.equal(fast, full)
    if case == "disallowed_wins":  # the check must have fired: the best path takes a disallowed move
        moves = [(a, b) for row, n in zip(full.tolist(), lengths.tolist()) for a, b in zip(row[:n - 1], row[1:n])]
        assert any(not bool(allowed[a, b]) for a, b in moves)
    if case in ("plain", "ties"):
        with fused_crf.disabled():
            assert crf.decode(em, mask) == [row[:n] for row, n in zip(fast.tolist(), lengths.tolist())]


def test_viterbi_finds_the_best_path_by_brute_force():
    torch.manual_seed(5)
    labels = tag_set("i2b2", "IO")[:4]
    crf = CRF(len(labels))
    with torch.no_grad():
        crf.transitions.normal_()
        crf.start.normal_()
        crf.end.normal_()
    for n in (1, 2, 5):
        em = torch.randn(1, n, len(labels), dtype=torch.float64).float()
        path = fused_crf.viterbi(em, torch.tensor([n]), *crf._scores())[0].tolist()
        assert path == _brute_force_path(crf, em[0], n)


def test_viterbi_rejects_bad_input():
    crf, em, mask = _case("BIO", 1.0, torch.float32)
    scores = crf._scores()
    with pytest.raises(RuntimeError, match="lengths"):
        fused_crf.viterbi(em, torch.zeros(em.shape[0], dtype=torch.long), *scores)
    with pytest.raises(RuntimeError, match="dtype"):
        fused_crf.viterbi(em.double(), mask.long().sum(1), *scores)
    with pytest.raises(RuntimeError, match="score shapes"):
        fused_crf.viterbi(em, mask.long().sum(1), scores[0][:-1], *scores[1:])
