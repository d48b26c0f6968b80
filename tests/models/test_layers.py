"""run_rnn_padded (the fused-kernel path of every one-layer LSTM/GRU) against torch's packed
RNN: same outputs, same final states, same gradients; padding never leaks into valid steps."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from deidlib.models.layers import (
    CharEncoder,
    _padded_ok,
    _reversal_index,
    length_groups,
    packed_rnns,
    run_rnn,
    run_rnn_padded,
)


def packed_reference(rnn, x, lengths):
    out, h = rnn(pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False))
    if isinstance(h, tuple):
        h = h[0]
    return pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])[0], h


def test_reversal_index_reverses_within_length_and_is_an_involution():
    idx = _reversal_index(torch.tensor([3, 1, 4]), 4)
    assert idx.tolist() == [[2, 1, 0, 3], [0, 1, 2, 3], [3, 2, 1, 0]]
    assert torch.equal(idx.gather(1, idx), torch.arange(4).expand(3, 4))


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU])
@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("lengths", [[7, 2, 5, 1, 7, 4], [7] * 6], ids=["padded", "equal"])
def test_padded_equals_packed(cls, bidirectional, training, lengths):
    torch.manual_seed(0)
    rnn = cls(6, 5, batch_first=True, bidirectional=bidirectional).train(training)
    lengths = torch.tensor(lengths)
    x = torch.randn(6, 7, 6)
    pad = torch.arange(7) >= lengths.unsqueeze(1)
    x = x.masked_fill(pad.unsqueeze(2), 1e3)  # garbage at padding must not reach valid steps
    x1, x2 = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
    ref_out, ref_h = packed_reference(rnn, x1, lengths)
    out, h = run_rnn_padded(rnn, x2, lengths)
    assert out.shape == ref_out.shape and h.shape == ref_h.shape
    torch.testing.assert_close(out, ref_out, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(h, ref_h, rtol=1e-5, atol=1e-6)
    assert (out[pad] == 0).all()
    g = torch.randn_like(out)
    grads = torch.autograd.grad((ref_out * g).sum() + ref_h.square().sum(), [x1, *rnn.parameters()])
    mine = torch.autograd.grad((out * g).sum() + h.square().sum(), [x2, *rnn.parameters()])
    for a, b in zip(grads, mine):
        torch.testing.assert_close(b, a, rtol=1e-4, atol=1e-5)
    assert (mine[0][pad] == 0).all()  # no gradient flows into padding


def test_run_rnn_takes_the_padded_path_only_for_plain_one_layer_rnns():
    torch.manual_seed(0)
    lengths = torch.tensor([4, 2])
    x = torch.randn(2, 4, 3)
    deep = nn.GRU(3, 2, batch_first=True, bidirectional=True, num_layers=2)
    torch.testing.assert_close(run_rnn(deep, x, lengths), packed_reference(deep, x, lengths)[0])

    class Sub(nn.LSTM):  # e.g. a DP replacement layer: its own forward must be used
        calls = 0

        def forward(self, *a, **k):
            Sub.calls += 1
            return super().forward(*a, **k)

    sub = Sub(3, 2, batch_first=True, bidirectional=True)
    run_rnn(sub, x, lengths)
    assert Sub.calls == 1
    plain = nn.LSTM(3, 2, batch_first=True, bidirectional=True)
    torch.testing.assert_close(run_rnn(plain, x, lengths), packed_reference(plain, x, lengths)[0])
    assert _padded_ok(plain)
    with packed_rnns():
        assert not _padded_ok(plain)
    with torch.no_grad():  # inference keeps the packed path (measured faster there)
        assert not _padded_ok(plain)
    assert _padded_ok(plain)


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_char_encoder_equals_its_packed_form(cell):
    torch.manual_seed(0)
    enc = CharEncoder(cell, hidden=4, onehot=False, emb_dim=3)
    lengths = torch.tensor([5, 0, 2, 9, 1])
    ids = torch.randint(1, 50, (5, 11)) * (torch.arange(11) < lengths.unsqueeze(1))
    got = enc(ids, lengths)
    _, h = packed_reference(enc.rnn, enc.embed(ids), lengths.clamp(min=1))
    torch.testing.assert_close(got, torch.cat([h[-2], h[-1]], 1), rtol=1e-5, atol=1e-6)


def test_length_groups_bound_the_padding():
    lengths = sorted([1] * 40 + [3] * 40 + [4] * 10 + [12] * 35 + [30])
    groups = length_groups(lengths, max_waste=0.25, min_rows=8)
    assert groups[0][0] == 0 and groups[-1][1] == len(lengths)
    assert all(a < b and b == c for (a, b), (c, _) in zip(groups, groups[1:]))
    for a, b in groups:
        g = lengths[a:b]
        assert g[-1] * len(g) <= 1.25 * sum(g) or len(g) <= 8
    assert length_groups([]) == []
    assert length_groups([5] * 100) == [(0, 100)]
