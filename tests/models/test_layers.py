"""run_rnn_padded (the fused oneDNN path of every plain one-layer LSTM) against torch's packed
RNN: same outputs, same final states, same gradients; padding never leaks into valid steps."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from deidlib.models.layers import (
    CharEncoder,
    Dropout,
    LockedDropout,
    _char_group_costs,
    _length_groups,
    _padded_ok,
    _reversal_index,
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


def test_run_rnn_takes_the_padded_path_only_for_plain_one_layer_lstms():
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
    with torch.no_grad():  # inference too (the fused kernel measured faster there as well)
        assert _padded_ok(plain)
    with packed_rnns():
        assert not _padded_ok(plain)
    assert _padded_ok(plain)
    gru = nn.GRU(3, 2, batch_first=True, bidirectional=True)  # no fused CPU kernel: packed
    assert not _padded_ok(gru)
    torch.testing.assert_close(run_rnn(gru, x, lengths), packed_reference(gru, x, lengths)[0])


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_char_encoder_equals_its_packed_form(cell):
    torch.manual_seed(0)
    enc = CharEncoder(cell, hidden=4, onehot=False, emb_dim=3)
    lengths = torch.tensor([5, 0, 2, 9, 1])
    ids = torch.randint(1, 50, (5, 11)) * (torch.arange(11) < lengths.unsqueeze(1))
    got = enc(ids, lengths)
    _, h = packed_reference(enc.rnn, enc.embed(ids), lengths.clamp(min=1))
    torch.testing.assert_close(got, torch.cat([h[-2], h[-1]], 1), rtol=1e-5, atol=1e-6)


def _brute_force_groups(lengths, call_cost, step_rows):
    """Minimum cost over every way of cutting ``lengths`` into contiguous groups."""
    from itertools import combinations

    n, best = len(lengths), float("inf")
    for k in range(n):
        for cuts in combinations(range(1, n), k):
            bounds = [0, *cuts, n]
            best = min(best, sum(call_cost + (b - a + step_rows) * lengths[b - 1] for a, b in zip(bounds, bounds[1:])))
    return best


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("call_cost", [0.0, 3.0, 20.0, 1e6])
@pytest.mark.parametrize("step_rows", [0.0, 2.5])
def test_length_groups_minimise_padding_plus_calls(seed, call_cost, step_rows):
    lengths = sorted(torch.randint(1, 9, (9,), generator=torch.Generator().manual_seed(seed)).tolist())
    groups = _length_groups(lengths, call_cost, step_rows)
    assert groups[0][0] == 0 and groups[-1][1] == len(lengths)
    assert all(a < b and b == c for (a, b), (c, _) in zip(groups, groups[1:]))
    assert all(lengths[b - 1] < lengths[b] for _, b in groups[:-1])  # cut only where the length changes
    cost = sum(call_cost + (b - a + step_rows) * lengths[b - 1] for a, b in groups)
    assert cost == pytest.approx(_brute_force_groups(lengths, call_cost, step_rows))


def test_length_groups_extremes():
    assert _length_groups([]) == []
    assert _length_groups([5] * 100) == [(0, 100)]
    lengths = [1] * 40 + [3] * 40 + [12] * 35 + [30]
    assert _length_groups(lengths, 0.0) == [(0, 40), (40, 80), (80, 115), (115, 116)]  # no call cost: no padding
    assert _length_groups(lengths, 1e9) == [(0, 116)]  # calls dear: one padded call
    assert _length_groups([1, 1, 2], 0.0, 0.0) == [(0, 2), (2, 3)]
    assert _length_groups([1, 1, 2], 0.0, 10.0) == [(0, 3)]  # steps dear: 13 · 2 < 12 · 1 + 11 · 2
    assert _char_group_costs(nn.LSTM(128, 128)) == pytest.approx((87 + 4.5e5 / (128 * 256), 0.0))


def test_dropout_masks_have_the_right_law():
    """Dropout and LockedDropout keep each entry with probability 1 - p, scaled by 1 / (1 - p)
    (so the mean is kept), are the identity in eval mode, and LockedDropout shares its mask over time."""
    torch.manual_seed(0)
    x = torch.ones(64, 50, 40)
    for p in (0.1, 0.5, 0.8):
        y = Dropout(p).train()(x)
        kept = (y != 0).double().mean().item()
        n = x.numel()
        assert abs(kept - (1 - p)) < 5 * (p * (1 - p) / n) ** 0.5  # 5-sigma binomial band
        assert torch.allclose(y[y != 0], torch.tensor(1 / (1 - p)))
        z = LockedDropout(p).train()(x)
        assert torch.equal(z, z[:, :1].expand_as(z))  # one mask per sentence and feature, over all steps
        kept = (z[:, 0] != 0).double().mean().item()
        assert abs(kept - (1 - p)) < 5 * (p * (1 - p) / (64 * 40)) ** 0.5
        assert torch.equal(Dropout(p).eval()(x), x) and torch.equal(LockedDropout(p).eval()(x), x)
    g = torch.ones(3, 4, requires_grad=True)
    d = Dropout(0.5).train()
    y = d(g)
    y.sum().backward()
    assert torch.equal(g.grad, y.detach())  # gradient flows through the kept entries, scaled alike
    assert torch.equal(Dropout(1.0).train()(x), torch.zeros_like(x))
