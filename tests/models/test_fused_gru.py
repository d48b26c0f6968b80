"""The compiled GRU layer (deidlib.models.fused_gru) against torch's GRU: same outputs, final
state and gradients; float64 gradcheck of the hand-written backward through time; the taggers
use it only where it is built and enabled, and fall back to torch.gru with a warning."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import pytest
import torch
from torch import nn

from deidlib.models import fused_gru
from deidlib.models.layers import CharEncoder, run_rnn_padded

if not fused_gru.available():
    if os.environ.get("CI"):  # CI has a compiler: the extension must build there
        pytest.fail("the compiled GRU did not build", pytrace=False)
    pytest.skip("the compiled GRU cannot be built here (no C++ compiler?)", allow_module_level=True)


@pytest.mark.parametrize("shape", [(4, 7, 5, 6), (1, 1, 3, 2), (9, 3, 1, 8)], ids=["4x7", "1x1", "9x3"])
def test_equals_torch_gru_values_and_gradients(shape):
    B, T, D, H = shape
    torch.manual_seed(0)
    gru = nn.GRU(D, H, batch_first=True)
    x = torch.randn(B, T, D)
    h0 = torch.randn(B, H)
    x1, x2 = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
    h1, h2 = h0.clone().requires_grad_(True), h0.clone().requires_grad_(True)
    ref, ref_h = gru(x1, h1.unsqueeze(0))
    out, h = fused_gru.gru_layer(x2, h2, *gru._flat_weights)
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(h, ref_h[0], rtol=1e-5, atol=1e-6)
    g, gh = torch.randn_like(out), torch.randn_like(h)
    a = torch.autograd.grad((ref * g).sum() + (ref_h[0] * gh).sum(), [x1, h1, *gru.parameters()])
    b = torch.autograd.grad((out * g).sum() + (h * gh).sum(), [x2, h2, *gru.parameters()])
    for u, v in zip(a, b):
        torch.testing.assert_close(v, u, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_direct_blas_and_mm_out_give_the_same_bits(dtype):
    """The per-step products through torch's own sgemm_/dgemm_ (where it exports them) and
    through at::mm_out: outputs and every gradient identical, bit for bit (hidden sizes 25 and
    150 as the ahmed taggers', batch 1 and 32)."""
    torch.manual_seed(4)
    for B, T, D, H in ((32, 9, 150, 150), (1, 5, 7, 25), (32, 14, 50, 25)):
        gru = nn.GRU(D, H, batch_first=True).to(dtype)
        x, h0 = torch.randn(B, T, D, dtype=dtype), torch.randn(B, H, dtype=dtype)
        g, gh = torch.randn(B, T, H, dtype=dtype), torch.randn(B, H, dtype=dtype)
        runs = []
        for allow in (True, False):
            try:
                fused_gru.direct_blas(allow)
                xi, hi = x.clone().requires_grad_(True), h0.clone().requires_grad_(True)
                out, h = fused_gru.gru_layer(xi, hi, *gru._flat_weights)
                grads = torch.autograd.grad((out * g).sum() + (h * gh).sum(), [xi, hi, *gru.parameters()])
                runs.append((out, h, *grads))
            finally:
                fused_gru.direct_blas(True)
        for a, b in zip(*runs):
            assert torch.equal(a, b)


def test_backward_through_time_passes_gradcheck():
    torch.manual_seed(1)
    B, T, D, H = 3, 5, 4, 3
    gru = nn.GRU(D, H, batch_first=True).double()
    args = [torch.randn(B, T, D, dtype=torch.double), torch.randn(B, H, dtype=torch.double),
            *[w.detach().clone() for w in gru._flat_weights]]
    args = [a.requires_grad_(True) for a in args]
    assert torch.autograd.gradcheck(fused_gru.gru_layer, args)  # outputs and final state together
    assert torch.autograd.gradcheck(lambda *a: fused_gru.gru_layer(*a)[0], args)  # final state unused
    assert torch.autograd.gradcheck(lambda *a: fused_gru.gru_layer(*a)[1], args)  # outputs unused


def test_taggers_use_it_only_while_enabled(monkeypatch):
    calls = []
    real = fused_gru.gru_layer
    monkeypatch.setattr(fused_gru, "gru_layer", lambda *a: calls.append(1) or real(*a))
    torch.manual_seed(0)
    gru = nn.GRU(3, 4, batch_first=True, bidirectional=True)
    x, lengths = torch.randn(2, 5, 3), torch.tensor([5, 3])
    fast = run_rnn_padded(gru, x, lengths)
    assert len(calls) == 2  # one per direction
    with fused_gru.disabled():
        assert not fused_gru.enabled()
        slow = run_rnn_padded(gru, x, lengths)
    assert len(calls) == 2 and fused_gru.enabled()
    for a, b in zip(fast, slow):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
    run_rnn_padded(nn.LSTM(3, 4, batch_first=True), x, lengths)  # LSTMs keep oneDNN
    run_rnn_padded(nn.GRU(3, 4, batch_first=True, bias=False), x, lengths)  # no biases: torch.gru
    assert len(calls) == 2
    enc = CharEncoder("gru", hidden=4, onehot=False, emb_dim=3)
    enc(torch.randint(1, 20, (6, 4)), torch.tensor([4, 1, 2, 4, 3, 1]))  # the char GRU runs padded on it
    assert len(calls) > 2


def test_falls_back_with_a_warning_when_it_cannot_be_built(monkeypatch):
    import torch.utils.cpp_extension as cpp

    def broken(*a, **k):
        raise OSError("no compiler")

    monkeypatch.setattr(cpp, "load", broken)
    fused_gru.KERNEL.reset()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert not fused_gru.available() and not fused_gru.enabled()
        assert any("could not be built" in str(w.message) for w in caught)
    finally:
        monkeypatch.undo()
        fused_gru.KERNEL.reset()
    assert fused_gru.available()


def test_environment_switch_turns_it_off():
    code = "from deidlib.models import fused_gru; print(fused_gru.available())"
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "DEIDLIB_COMPILED": "0"},
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


@pytest.mark.parametrize("with_grad_h", [True, False])
def test_torch_ops_backward_equals_the_compiled_one(with_grad_h):
    """The fallback used under batching transforms (DP-SGD's ``vmap`` method) computes the
    compiled backward's numbers."""
    torch.manual_seed(2)
    B, T, D, H = 3, 6, 4, 5
    gru = nn.GRU(D, H, batch_first=True).double()
    x, h0 = torch.randn(B, T, D, dtype=torch.double), torch.randn(B, H, dtype=torch.double)
    w = [p.detach() for p in gru._flat_weights]
    ext = fused_gru._extension()
    out, hs, rz, n, gh = ext.forward(x, h0, *w)
    go = torch.randn_like(out)
    gh_T = torch.randn(B, H, dtype=torch.double) if with_grad_h else None
    compiled = ext.backward(go, gh_T if with_grad_h else torch.zeros(B, H, dtype=torch.double), x, w[0], w[1], w[3],
                            hs, rz, n, gh)
    ops = fused_gru._backward_ops(go, gh_T, x, w[0], w[1], w[3], hs, rz, n, gh)
    for a, b in zip(compiled, ops):
        torch.testing.assert_close(b, a, rtol=1e-10, atol=1e-12)
    with pytest.raises(RuntimeError, match="gradient shapes"):
        ext.backward(go, torch.zeros(0, dtype=torch.double), x, w[0], w[1], w[3], hs, rz, n, gh)


def test_bad_shapes_and_dtypes_are_refused():
    gru = nn.GRU(3, 4, batch_first=True)
    w = list(gru._flat_weights)
    with pytest.raises(RuntimeError, match="x \\[B, T, D\\]"):
        fused_gru.gru_layer(torch.randn(2, 5, 3), torch.zeros(3, 4), *w)
    with pytest.raises(RuntimeError, match="weight shapes"):
        fused_gru.gru_layer(torch.randn(2, 5, 2), torch.zeros(2, 4), *w)
    with pytest.raises(RuntimeError, match="dtype"):
        fused_gru.gru_layer(torch.randn(2, 5, 3), torch.zeros(2, 4, dtype=torch.double), *w)
