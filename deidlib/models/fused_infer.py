"""Compiled LSTM and GRU layers for CPU *inference* (:func:`rnn_direction`, :func:`run_rnn_infer`),
used by :func:`deidlib.models.layers.run_rnn` and :class:`~deidlib.models.layers.CharEncoder`
whenever autograd is off (prediction, evaluation, marginals).

Why write it: without a backward pass the taggers ran torch's packed RNN, a per-step loop of
about ten small operators (the padded oneDNN/compiled training path was measured 0.85-0.95x
of it in inference: the reversal gathers and, for oneDNN, the weight re-layout on every call
cost more than the loop); in a GRU-CRF tagger's prediction pass the RNN layers were about 70 %
of the time after the compiled Viterbi (``torch.profiler``, one thread). Here
(``csrc/rnn_infer.cpp``) a direction is one input product for all (row, step) pairs, then per
step one [n_s, H] × [H, G·H] product over the rows still running (longest first, as the packed
kernel's shrinking batch) and plain loops over the gates; the reverse direction walks each row
backwards from its own last step, so nothing is gathered or packed. Same equations and gate
order as ``nn.LSTM``/``nn.GRU``; equal to torch's packed RNN up to float rounding
(``tests/models/test_fused_infer.py``), not bit for bit.

Built on first use (:mod:`.compiled`); where it cannot be built, with ``DEIDLIB_COMPILED=0``,
inside :func:`disabled`, on other devices or under ``torch.func`` transforms, inference keeps
torch's packed RNN.
"""

from __future__ import annotations

import torch
from torch import nn

from . import flops as _flops
from .compiled import Kernel

__all__ = ["available", "enabled", "disabled", "usable", "rnn_direction", "run_rnn_infer"]

KERNEL = Kernel("deidlib_rnn_infer", "rnn_infer.cpp", "RNN inference kernel",
                "inference uses torch's packed RNN (slower on the CPU)")


def available() -> bool:
    """Whether the kernel can run here (builds the extension on the first call)."""
    return KERNEL.available()


def enabled() -> bool:
    return KERNEL.enabled()


def disabled():
    """Context manager: inside the block inference uses torch's packed RNN."""
    return KERNEL.disabled()


def usable(rnn: nn.Module, x: torch.Tensor) -> bool:
    """Whether ``rnn`` runs here in inference: a plain one-layer batch-first ``nn.LSTM`` or
    ``nn.GRU`` (not a subclass such as Opacus' DP layers; no projection), autograd off, CPU
    float tensors without transform wrappers, the kernel built and enabled."""
    if type(rnn) not in (nn.LSTM, nn.GRU) or rnn.num_layers != 1 or not rnn.batch_first:
        return False
    if getattr(rnn, "proj_size", 0) or torch.is_grad_enabled():
        return False
    return KERNEL.usable(x, rnn.weight_ih_l0)


def rnn_direction(x: torch.Tensor, lengths: torch.Tensor, weights, *, lstm: bool, reverse: bool,
                  out: torch.Tensor | None = None, col: int = 0) -> torch.Tensor:
    """One direction over batch-first ``x`` [B, T, D] whose rows have ``lengths`` [B] (1..T);
    returns each row's last state [B, H]. With ``out`` (a zero-filled contiguous [B, T, W]) the
    outputs are written into its columns ``[col, col + H)`` (padding left at 0).
    ``weights``: ``(w_ih, w_hh, b_ih, b_hh)``, or ``(w_ih, w_hh)`` for a layer without biases."""
    w_ih, w_hh = weights[0], weights[1]
    if len(weights) >= 4:
        b_ih, b_hh = weights[2], weights[3]
    else:
        b_ih = b_hh = w_ih.new_zeros(w_ih.shape[0])
    return KERNEL.module().rnn_infer(x.contiguous(), lengths.to(device="cpu", dtype=torch.long).contiguous(),
                                     w_ih.contiguous(), w_hh.contiguous(), b_ih.contiguous(), b_hh.contiguous(),
                                     lstm, reverse, out if out is not None else x.new_empty(0), col)


def run_rnn_infer(rnn: nn.RNNBase, x: torch.Tensor, lengths: torch.Tensor,
                  want_out: bool = True) -> tuple[torch.Tensor | None, torch.Tensor]:
    """The (bidirectional) layer ``rnn`` over ``x`` with true ``lengths``, as the packed RNN:
    ``(outputs [B, T, dirs·H]`` zero at padding, or None; ``final [dirs, B, H])`` (``h_n``).
    Both directions write into one output tensor (no concatenation). Call only where
    :func:`usable` holds."""
    w = rnn._flat_weights
    dirs = 2 if rnn.bidirectional else 1
    per_dir = len(w) // dirs
    lstm = isinstance(rnn, nn.LSTM)
    lengths = lengths.clamp(min=1)
    if _flops._ACTIVE:  # no module hook fires: report the valid steps, as run_rnn_padded does
        _flops.note_rnn_steps(rnn, int(lengths.sum()))
    H = rnn.hidden_size
    out = x.new_zeros(x.shape[0], x.shape[1], dirs * H) if want_out else None
    finals = [rnn_direction(x, lengths, w[d * per_dir:(d + 1) * per_dir], lstm=lstm, reverse=d == 1, out=out,
                            col=d * H) for d in range(dirs)]
    return out, torch.stack(finals)
