"""The compiled inference kernel (deidlib.models.fused_infer) against torch's packed RNN:
outputs and final states of LSTM and GRU layers, both directions, ragged lengths in any
order (length-1 rows and full-length rows), float64 to 1e-12 and float32 to rounding,
layers without biases, and where it must not run (autograd on, DP layers, disabled)."""

from __future__ import annotations

import os

import pytest
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from deidlib.models import fused_infer
from deidlib.models.layers import CharEncoder, RNNStack

if not fused_infer.available():
    if os.environ.get("CI"):  # CI has a compiler: the extension must build there
        pytest.fail("the compiled RNN inference kernel did not build", pytrace=False)
    pytest.skip("the compiled RNN inference kernel cannot be built here (no C++ compiler?)", allow_module_level=True)


def _packed(rnn, x, lengths):
    pk = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    out, h = rnn(pk)
    h = h[0] if isinstance(h, tuple) else h
    return pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])[0], h


@pytest.mark.parametrize("cell", [nn.LSTM, nn.GRU])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize("bias", [True, False])
def test_equals_the_packed_rnn(cell, dtype, bidirectional, bias):
    torch.manual_seed(0)
    rnn = cell(7, 5, batch_first=True, bidirectional=bidirectional, bias=bias).to(dtype)
    lengths = torch.tensor([9, 1, 4, 9, 6, 2, 1, 7])  # unsorted, ties, length 1
    x = torch.randn(len(lengths), 9, 7, dtype=dtype)
    with torch.no_grad():
        want_out, want_h = _packed(rnn, x, lengths)
        assert fused_infer.usable(rnn, x)
        out, h = fused_infer.run_rnn_infer(rnn, x, lengths)
        _, h_only = fused_infer.run_rnn_infer(rnn, x, lengths, want_out=False)
    tol = dict(rtol=1e-12, atol=1e-12) if dtype == torch.float64 else dict(rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(out, want_out, **tol)
    torch.testing.assert_close(h, want_h, **tol)
    assert torch.equal(h_only, h)
    mask = torch.arange(9) < lengths.unsqueeze(1)
    assert (out[~mask] == 0).all()


@pytest.mark.parametrize("cell", [nn.LSTM, nn.GRU])
def test_direct_blas_and_mm_out_agree(cell):
    """The per-step products through MKL's sgemm_ (where torch exports it) and through
    at::mm_out give the same bits (the kernel makes the call at::mm_out makes; hidden sizes
    with and without a vector remainder)."""
    torch.manual_seed(3)
    for hidden in (25, 32, 128):
        rnn = cell(9, hidden, batch_first=True, bidirectional=True)
        x, lengths = torch.randn(6, 11, 9), torch.tensor([11, 3, 7, 1, 11, 5])
        with torch.no_grad():
            fast = fused_infer.run_rnn_infer(rnn, x, lengths)
            try:
                assert not fused_infer.direct_blas(False)
                slow = fused_infer.run_rnn_infer(rnn, x, lengths)
            finally:
                fused_infer.direct_blas(True)
            want = _packed(rnn, x, lengths)
        assert torch.equal(fast[0], slow[0]) and torch.equal(fast[1], slow[1])
        torch.testing.assert_close(fast[0], want[0], rtol=1e-5, atol=1e-6)


def test_padding_values_do_not_leak_into_valid_steps():
    """Garbage after a row's length changes nothing (the reverse direction starts at the
    row's own last step, not at the batch's)."""
    torch.manual_seed(1)
    rnn = nn.LSTM(4, 3, batch_first=True, bidirectional=True)
    lengths = torch.tensor([2, 5, 3])
    x = torch.randn(3, 5, 4)
    y = x.clone()
    y[0, 2:] = 1e3
    y[2, 3:] = -1e3
    with torch.no_grad():
        a = fused_infer.run_rnn_infer(rnn, x, lengths)
        b = fused_infer.run_rnn_infer(rnn, y, lengths)
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])


def test_the_layers_use_it_only_without_autograd():
    """run_rnn and CharEncoder take the kernel in inference, and the same values as the
    packed path inside fused_infer.disabled(); with autograd on they never call it."""
    torch.manual_seed(2)
    stack = RNNStack(6, ("lstm", "gru"), 4)
    x, lengths = torch.randn(5, 7, 6), torch.tensor([7, 3, 1, 5, 7])
    calls = []
    real = fused_infer.run_rnn_infer

    def spy(*a, **k):
        calls.append(1)
        return real(*a, **k)

    fused_infer.run_rnn_infer = spy
    try:
        with torch.no_grad():
            fast = stack(x, lengths)
            assert len(calls) == 2
            with fused_infer.disabled():
                ref = stack(x, lengths)
            assert len(calls) == 2
        stack(x, lengths).sum().backward()  # training: the padded path, not this kernel
        assert len(calls) == 2
        enc = CharEncoder("gru", 5, onehot=False, emb_dim=4)
        ids = torch.randint(1, 20, (6, 8))
        clen = torch.tensor([8, 1, 3, 0, 5, 2])  # 0: clamped to 1 as the encoder does
        with torch.no_grad():
            h = enc(ids, clen)
            assert len(calls) == 3
            with fused_infer.disabled():
                h_ref = enc(ids, clen)
    finally:
        fused_infer.run_rnn_infer = real
    torch.testing.assert_close(fast, ref, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(h, h_ref, rtol=1e-5, atol=1e-6)


def test_not_for_other_layers():
    x = torch.randn(2, 3, 4)
    with torch.no_grad():
        assert not fused_infer.usable(nn.LSTM(4, 3, num_layers=2, batch_first=True), x)
        assert not fused_infer.usable(nn.LSTM(4, 3, batch_first=False), x)
        assert not fused_infer.usable(nn.RNN(4, 3, batch_first=True), x)

        class Sub(nn.LSTM):  # e.g. Opacus' DP layers
            pass

        assert not fused_infer.usable(Sub(4, 3, batch_first=True), x)
        with fused_infer.disabled():
            assert not fused_infer.usable(nn.GRU(4, 3, batch_first=True), x)
    assert not fused_infer.usable(nn.GRU(4, 3, batch_first=True), x)  # autograd on


def test_rejects_bad_input():
    rnn = nn.GRU(4, 3, batch_first=True)
    x = torch.randn(2, 3, 4)
    w = rnn._flat_weights
    with torch.no_grad():
        with pytest.raises(RuntimeError, match="lengths"):
            fused_infer.rnn_direction(x, torch.tensor([4, 1]), w, lstm=False, reverse=False)
        with pytest.raises(RuntimeError, match="weight shapes"):
            fused_infer.rnn_direction(x, torch.tensor([3, 1]), w, lstm=True, reverse=False)
        with pytest.raises(RuntimeError, match="dtype"):
            fused_infer.rnn_direction(x.double(), torch.tensor([3, 1]), w, lstm=False, reverse=False)
        with pytest.raises(RuntimeError, match="4 weights per direction"):
            fused_infer.KERNEL.module().rnn_infer(x, torch.tensor([3, 1]), list(w), [False, True], False, True)


def test_float32_gate_math_is_within_a_few_ulps():
    """The kernel's own float32 sigmoid and tanh (vectorisable polynomial exp) against float64
    references, on a dense grid over [-100, 100] and at the special points: at most 3 float32
    ulps relative (1e-7 absolute near 0), NaN kept, saturation exact at ±1 / 0 < σ."""
    x = torch.cat([torch.linspace(-100, 100, 400_001), torch.linspace(-0.1, 0.1, 200_001),
                   torch.tensor([0.0, -0.0, 1e-30, -1e-30, 0.0625, -0.0625, 87.0, -87.0, 88.0, -88.0, 1e4, -1e4])])
    s, t = fused_infer.gate_math(x)
    xd = x.double()
    for got, want in ((s, torch.sigmoid(xd)), (t, torch.tanh(xd))):
        err = (got.double() - want).abs()
        assert (err <= 3 * 2.0 ** -23 * want.abs() + 1e-7).all(), float((err / want.abs().clamp_min(1e-30)).max())
    assert torch.equal(t[x.abs() > 10], torch.sign(x[x.abs() > 10]))
    assert (s > 0).all() and (s <= 1).all()
    assert torch.equal(t[x == 0], x[x == 0])
    sn, tn = fused_infer.gate_math(torch.tensor([float("nan")]))
    assert sn.isnan().all() and tn.isnan().all()
