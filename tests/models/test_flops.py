"""The analytic matmul-FLOP count of models/flops.py against hand counts and against torch's
own FlopCounterMode where that one sees the RNN kernels (packed, unequal lengths)."""

from __future__ import annotations

import torch
from torch.nn.utils.rnn import pack_padded_sequence
from torch.utils.flop_counter import FlopCounterMode

from deidlib.models import build_tagger
from deidlib.models.features import Featurizer
from deidlib.models.flops import FlopCount, linear_flops, rnn_flops


def test_rnn_count_matches_torch_flop_counter_on_packed_input():
    x = torch.randn(4, 10, 12)
    lengths = torch.tensor([10, 9, 8, 3])
    for cls, gates in ((torch.nn.LSTM, 4), (torch.nn.GRU, 3)):
        rnn = cls(12, 7, batch_first=True, bidirectional=True, num_layers=2)
        with FlopCount(rnn) as fc, FlopCounterMode(display=False) as ref:
            rnn(pack_padded_sequence(x, lengths, batch_first=True))
        hand = rnn_flops(gates, 12, 7, 30, 2) + rnn_flops(gates, 14, 7, 30, 2)
        assert fc.total == hand == 2 * gates * 7 * ((12 + 7) + (14 + 7)) * 30 * 2
        assert ref.get_total_flops() == hand  # torch's counter sees the decomposed kernels on this path


def test_tagger_count_is_the_sum_of_its_layers():
    sents = [["Seen", "by", "Dr", "Smith"], ["Call", "555"]]
    fz = Featurizer.build(sents, ["O", "B-DOCTOR"])
    t = build_tagger("gru", fz, seed=0, word_dim=8, char_emb_dim=5, char_hidden=4, hidden=6, ff_dim=5).eval()
    b = fz.encode(sents)
    with torch.no_grad(), FlopCount(t) as fc:
        t.emissions(b)
    chars = int(b.char_lengths.sum())  # each distinct token's characters once
    tokens = 6
    padded = b.mask.numel()  # the linear layers run on padded [B, T]
    hand = (rnn_flops(3, 5, 4, chars, 2) + rnn_flops(3, 8 + 8, 6, tokens, 2)
            + linear_flops(12, 5, padded) + linear_flops(5, fz.num_labels, padded))
    assert fc.total == hand
    with torch.no_grad():
        t.emissions(b)
    assert fc.total == hand and not fc._handles  # hooks removed on exit
