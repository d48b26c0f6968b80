"""Analytic count of the matrix-multiply FLOPs a tagger *executes* (for roofline ratios).

:class:`FlopCount` hooks the forward of every ``nn.LSTM``, ``nn.GRU`` and ``nn.Linear`` of
a model and adds, per call, the multiply–add work of its
matrix products (one multiply–add = 2 FLOPs):

* RNN layer (per direction, per executed time step of one sequence):
  ``2 · G · H · (D + H)`` with G = 4 gates (LSTM) or 3 (GRU), input size D, hidden H.
  Packed inputs execute ``sum(batch_sizes)`` steps (padding is skipped); padded inputs
  execute ``B · T``.
* Linear: ``2 · in · out`` per row.
* RNNs run on the padded tensor (:func:`deidlib.models.layers.run_rnn_padded`, which calls
  the fused kernel directly, so no module hook fires) report to the active counters
  themselves (:func:`note_rnn_steps`), with only their *valid* steps (``sum(lengths)``):
  the padding steps the fused kernel runs as well are not counted, so a roofline ratio
  is one of useful work.

Attention is not counted (``nn.TransformerEncoderLayer``'s inference fast path bypasses
the module hooks), so the count is meant for the recurrent taggers.

Not counted: element-wise work (gate non-linearities, CRF log-sum-exp and Viterbi max over
L² transitions per token, dropout, embedding look-ups); they cost time but no matrix
products, so a roofline against the matmul peak treats them as overhead. Why analytic:
``torch.utils.flop_counter.FlopCounterMode`` does not see the CPU RNN kernels in every
case (it reported 0 FLOPs for an un-packed and an equal-length packed LSTM on torch 2.13),
so it cannot be trusted for these models.

A backward pass is counted as twice the forward (gradient with respect to inputs and to
weights, each one product of the forward's size): training = 3 × forward, the usual
convention (Kaplan et al. 2020, §2.1).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import PackedSequence

__all__ = ["FlopCount", "rnn_flops", "linear_flops", "matmul_gflops", "note_rnn_steps", "TRAIN_FACTOR"]

#: forward + backward = 3 × forward
TRAIN_FACTOR = 3

_GATES = {nn.LSTM: 4, nn.GRU: 3, nn.RNN: 1}

#: the counters whose ``with`` block is open (innermost last)
_ACTIVE: list[FlopCount] = []


def note_rnn_steps(rnn: nn.RNNBase, steps: int) -> None:
    """Called by RNN code that bypasses the module's forward: ``steps`` valid (sequence,
    time) steps of ``rnn`` were run; every open :class:`FlopCount` of a model holding
    ``rnn`` adds their FLOPs."""
    for fc in _ACTIVE:
        if any(m is rnn for m in fc.model.modules()):
            fc._add_rnn(rnn, steps)


def rnn_flops(gates: int, input_size: int, hidden: int, steps: int, directions: int = 1) -> int:
    """Matmul FLOPs of one RNN layer over ``steps`` executed (sequence, time) steps."""
    return 2 * gates * hidden * (input_size + hidden) * steps * directions


def linear_flops(in_features: int, out_features: int, rows: int) -> int:
    return 2 * in_features * out_features * rows


class FlopCount:
    """Context manager: ``with FlopCount(model) as fc: model(...)``; ``fc.total`` is the
    forward matmul FLOPs executed inside the block (see module docstring)."""

    def __init__(self, model: nn.Module) -> None:
        self.model = model
        self.total = 0
        self._handles: list = []

    def _rnn(self, mod: nn.RNNBase, args, _out) -> None:
        x = args[0]
        if isinstance(x, PackedSequence):
            steps = int(x.batch_sizes.sum())
        else:
            steps = x.shape[0] * x.shape[1] if x.dim() == 3 else x.shape[0]
        self._add_rnn(mod, steps)

    def _add_rnn(self, mod: nn.RNNBase, steps: int) -> None:
        gates = next(g for cls, g in _GATES.items() if isinstance(mod, cls))
        d = 2 if mod.bidirectional else 1
        size = mod.input_size
        for _layer in range(mod.num_layers):
            self.total += rnn_flops(gates, size, mod.hidden_size, steps, d)
            size = mod.hidden_size * d

    def _linear(self, mod: nn.Linear, args, _out) -> None:
        self.total += linear_flops(mod.in_features, mod.out_features, args[0].numel() // mod.in_features)

    def __enter__(self) -> FlopCount:
        for m in self.model.modules():
            if isinstance(m, nn.RNNBase):
                self._handles.append(m.register_forward_hook(self._rnn))
            elif isinstance(m, nn.Linear):
                self._handles.append(m.register_forward_hook(self._linear))
        _ACTIVE.append(self)
        return self

    def __exit__(self, *exc) -> None:
        if self in _ACTIVE:
            _ACTIVE.remove(self)
        for h in self._handles:
            h.remove()
        self._handles.clear()


def matmul_gflops(m: int, k: int, n: int, seconds: float = 0.3) -> float:
    """Achieved GFLOP/s of ``torch.mm`` of [m, k] × [k, n] float32 (best of repeated runs
    for about ``seconds``), on torch's current thread setting."""
    import time

    a, b = torch.randn(m, k), torch.randn(k, n)
    out = torch.empty(m, n)
    torch.mm(a, b, out=out)
    best = float("inf")
    t_end = time.perf_counter() + seconds
    reps = max(1, int(2e7 // max(1, m * k * n // 1000)))
    while True:
        t0 = time.perf_counter()
        for _ in range(reps):
            torch.mm(a, b, out=out)
        best = min(best, (time.perf_counter() - t0) / reps)
        if time.perf_counter() > t_end:
            break
    return 2 * m * k * n / best / 1e9
