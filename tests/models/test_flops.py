"""models/flops.py (torch's FlopCounterMode plus the oneDNN LSTM operator) against analytic
matmul counts: 2 · G · H · (D + H) per executed (sequence, step) pair and direction for an RNN
layer, 2 · in · out per row for a linear layer."""

from __future__ import annotations

import pytest
import torch
from torch.nn.utils.rnn import pack_padded_sequence

from deidlib.models import build_tagger
from deidlib.models.features import Featurizer
from deidlib.models.flops import count_flops
from deidlib.models.layers import CharEncoder, packed_rnns, run_rnn_padded


def rnn_flops(gates: int, input_size: int, hidden: int, steps: int, directions: int = 1) -> int:
    return 2 * gates * hidden * (input_size + hidden) * steps * directions


def linear_flops(in_features: int, out_features: int, rows: int) -> int:
    return 2 * in_features * out_features * rows


@pytest.mark.parametrize("cls,gates", [(torch.nn.LSTM, 4), (torch.nn.GRU, 3)])
def test_packed_rnn_counts_its_valid_steps(cls, gates):
    x = torch.randn(4, 10, 12)
    lengths = torch.tensor([10, 9, 8, 3])
    rnn = cls(12, 7, batch_first=True, bidirectional=True, num_layers=2)
    got = count_flops(lambda: rnn(pack_padded_sequence(x, lengths, batch_first=True)))
    assert got == rnn_flops(gates, 12, 7, 30, 2) + rnn_flops(gates, 14, 7, 30, 2)


def test_onednn_lstm_counts_its_executed_steps_and_twice_that_backward():
    """The padded path's oneDNN operator is invisible to torch's own formulas; the custom
    one counts every executed step (padding included: B · T per direction)."""
    x = torch.randn(4, 10, 12, requires_grad=True)
    lengths = torch.tensor([10, 9, 8, 3])
    rnn = torch.nn.LSTM(12, 7, batch_first=True, bidirectional=True)
    fwd = rnn_flops(4, 12, 7, 4 * 10, 2)
    assert count_flops(lambda: run_rnn_padded(rnn, x, lengths)) == fwd
    assert count_flops(lambda: run_rnn_padded(rnn, x, lengths)[0].sum().backward()) == 3 * fwd


def _tiny(kind, **sizes):
    sents = [["Seen", "by", "Dr", "Smith"], ["Call", "555"]]
    fz = Featurizer.build(sents, ["O", "B-DOCTOR"])
    return build_tagger(kind, fz, seed=0, **sizes).eval(), fz.encode(sents), fz.num_labels


def test_gru_tagger_count_is_the_sum_of_its_layers():
    t, b, n_labels = _tiny("gru", word_dim=8, char_emb_dim=5, char_hidden=4, hidden=6, ff_dim=5)
    with torch.no_grad():
        got = count_flops(lambda: t.emissions(b))
    chars = int(b.char_lengths.sum())  # each distinct token's characters once
    padded = b.mask.numel()  # the linear layers run on padded [B, T]
    assert got == (rnn_flops(3, 5, 4, chars, 2) + rnn_flops(3, 8 + 8, 6, 6, 2)
                   + linear_flops(12, 5, padded) + linear_flops(5, n_labels, padded))


def test_lstm_tagger_count_is_the_sum_of_its_layers():
    """festag's layout (char LSTM over one-hot characters, word LSTM, feed-forward), packed:
    the valid steps only, as the analytic count."""
    t, b, n_labels = _tiny("festag", word_dim=8, char_hidden=4, hidden=6, ff_dim=5)
    with torch.no_grad(), packed_rnns():
        got = count_flops(lambda: t.emissions(b))
    chars = int(b.char_lengths.sum())
    padded = b.mask.numel()
    d_char = next(m for m in t.modules() if isinstance(m, CharEncoder)).rnn.input_size
    assert got == (rnn_flops(4, d_char, 4, chars, 2) + rnn_flops(4, 8 + 8, 6, 6, 2)
                   + linear_flops(12, 5, padded) + linear_flops(5, n_labels, padded))
