"""The matrix-multiply FLOPs a tagger *executes* (for roofline ratios), counted by torch's
:class:`torch.utils.flop_counter.FlopCounterMode`.

:func:`count_flops` runs a function under that mode and returns every FLOP torch's counter
attributes to the operators that ran (matrix products: ``mm``, ``addmm``, ``bmm``, attention,
convolutions; one multiply–add = 2 FLOPs), forward and, where the function calls
``backward``, backward. What that means for the taggers:

* Linear layers and the decomposed RNNs (packed sequences: every GRU, and any LSTM inside
  :func:`deidlib.models.layers.packed_rnns`) run as ``addmm``/``mm`` calls torch counts as
  they are: a packed RNN executes only the valid (sequence, step) pairs, so it counts
  ``2 · G · H · (D + H)`` per valid step and direction (G = 4 gates for an LSTM, 3 for a
  GRU), the analytic count (``tests/models/test_flops.py``); a backward counts twice its
  forward (gradients with respect to inputs and weights), except where an input needs no
  gradient.
* The fused oneDNN LSTM (a plain one-layer LSTM on a padded batch,
  :func:`deidlib.models.layers.run_rnn_padded`) is one ``mkldnn_rnn_layer`` operator that
  torch's counter does not know; :data:`_CUSTOM` adds it with the same formula per executed
  step, padding steps included (the kernel runs them), and its backward at twice that.
  A count is therefore one of executed work: for a length-bucketed batch the padding is a
  few percent of the steps.

* The CRF's forward algorithm is one [B, L] × [L, L] product per step
  (:meth:`deidlib.models.crf.CRF.log_partition`), so a training pass counts it too (with 113
  tags about 2.6e4 FLOPs per token forward); the Viterbi decode has no products.

Not counted: element-wise work (gate non-linearities, the CRF's exponentials and Viterbi
maxima, dropout, embedding look-ups); it costs time but no matrix products, so a roofline
against the matmul peak treats it as overhead. (The hand count this replaced counted RNN and
linear layers only, valid steps only, and a training pass as 3 × its forward.)
"""

from __future__ import annotations

import time
from collections.abc import Callable

import torch
from torch.utils.flop_counter import FlopCounterMode

__all__ = ["count_flops"]


def _lstm_layer(input_shape, w_ih_shape, w_hh_shape, *args, out_shape=None, **kwargs) -> int:
    """One direction of a oneDNN LSTM layer over ``input`` [T, B, D] (the operator's layout):
    ``2 · 4H · (D + H)`` per (step, row)."""
    steps, rows = input_shape[0], input_shape[1]
    return 2 * w_ih_shape[0] * (w_ih_shape[1] + w_hh_shape[1]) * steps * rows


def _lstm_layer_backward(input_shape, w_ih_shape, w_hh_shape, *args, out_shape=None, **kwargs) -> int:
    return 2 * _lstm_layer(input_shape, w_ih_shape, w_hh_shape)


#: formulas for the operators torch's counter does not know (``FlopCounterMode(custom_mapping=...)``)
_CUSTOM = {torch.ops.aten.mkldnn_rnn_layer: _lstm_layer,
          torch.ops.aten.mkldnn_rnn_layer_backward: _lstm_layer_backward}


def count_flops(fn: Callable[[], object]) -> int:
    """Matmul FLOPs executed by ``fn()`` (see the module docstring)."""
    with FlopCounterMode(display=False, custom_mapping=_CUSTOM) as mode:
        fn()
    return mode.get_total_flops()


def matmul_gflops(m: int, k: int, n: int, seconds: float = 0.3) -> float:
    """Achieved GFLOP/s of ``torch.mm`` of [m, k] × [k, n] float32 (best of repeated runs
    for about ``seconds``), on torch's current thread setting."""
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
