"""Compiled LSTM and GRU layers for CPU *inference* (:func:`rnn_direction`, :func:`run_rnn_infer`),
used by :func:`deidlib.models.layers.run_rnn` and :class:`~deidlib.models.layers.CharEncoder`
whenever autograd is off (prediction, evaluation, marginals).

Why write it: without a backward pass the taggers ran torch's packed RNN, a per-step loop of
about ten small operators (the padded oneDNN/compiled training path was measured 0.85-0.95x
of it in inference: the reversal gathers and, for oneDNN, the weight re-layout on every call
cost more than the loop); in a GRU-CRF tagger's prediction pass the RNN layers were about 70 %
of the time after the compiled Viterbi (``torch.profiler``, one thread). Here
(``csrc/rnn_infer.cpp``) a layer is one kernel call: the valid (row, step) pairs are gathered
once for both directions, each direction's input projection is one product over them, then per
step one [n_s, H] × [H, G·H] product over the rows still running (longest first, as the packed
kernel's shrinking batch; torch's own MKL ``sgemm_`` called directly where it is exported,
else ``at::mm_out``) and one fused loop over all running rows' units for the gates and the new
state; the reverse direction walks each row backwards from its own last step, so nothing is
packed. Same equations and gate order as ``nn.LSTM``/``nn.GRU``.

float32 non-linearities are the kernel's own (stop 24): sigmoid and tanh from a Cephes-style
polynomial ``exp`` the compiler vectorises, built for AVX-512, AVX2 and baseline x86-64 and
picked when the extension loads, with floating-point contraction off so the three give the same
bits (by construction: only IEEE single-precision operations; not tested across machines);
within 3 float32 ulps of the exact functions (:func:`gate_math`, tested on a dense grid).
This replaced stop 23's per-step ``sigmoid_``/``tanh_`` operators on tensor views (measured in
``benchmarks/taggers.py``; numbers in the README, "Status", stop 24). float64
uses ``std::exp``/``std::tanh``. Equal to torch's packed RNN up to float rounding
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

__all__ = ["available", "enabled", "disabled", "usable", "rnn_direction", "run_rnn_infer", "gate_math", "direct_blas"]

#: contraction off: the AVX-512, AVX2 and baseline variants of the gate loop give the same bits
KERNEL = Kernel("deidlib_rnn_infer", "rnn_infer.cpp", "RNN inference kernel",
                "inference uses torch's packed RNN (slower on the CPU)", cflags=("-ffp-contract=off",))


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


def _weights(w, per_dir: int, dirs: int) -> list[torch.Tensor]:
    """``(w_ih, w_hh, b_ih, b_hh)`` per direction, contiguous (zero biases for a layer without)."""
    out = []
    for d in range(dirs):
        wd = w[d * per_dir:(d + 1) * per_dir]
        zero = wd[0].new_zeros(wd[0].shape[0])
        out += [wd[0].contiguous(), wd[1].contiguous(),
                wd[2].contiguous() if len(wd) >= 4 else zero, wd[3].contiguous() if len(wd) >= 4 else zero]
    return out


def rnn_direction(x: torch.Tensor, lengths: torch.Tensor, weights, *, lstm: bool,
                  reverse: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """One direction over batch-first ``x`` [B, T, D] whose rows have ``lengths`` [B] (1..T):
    ``(outputs [B, T, H]`` zero at padding, ``last state [B, H])``.
    ``weights``: ``(w_ih, w_hh, b_ih, b_hh)``, or ``(w_ih, w_hh)`` for a layer without biases."""
    out, last = KERNEL.module().rnn_infer(x.contiguous(), lengths.to(device="cpu", dtype=torch.long).contiguous(),
                                          _weights(weights, len(weights), 1), [reverse], lstm, True)
    return out, last[0]


def run_rnn_infer(rnn: nn.RNNBase, x: torch.Tensor, lengths: torch.Tensor,
                  want_out: bool = True) -> tuple[torch.Tensor | None, torch.Tensor]:
    """The (bidirectional) layer ``rnn`` over ``x`` with true ``lengths``, as the packed RNN:
    ``(outputs [B, T, dirs·H]`` zero at padding, or None; ``final [dirs, B, H])`` (``h_n``).
    One kernel call per layer: the valid steps are gathered once for both directions, and
    both write into one output tensor (no concatenation). Call only where :func:`usable` holds."""
    w = rnn._flat_weights
    dirs = 2 if rnn.bidirectional else 1
    lengths = lengths.clamp(min=1)
    if _flops._ACTIVE:  # no module hook fires: report the valid steps, as run_rnn_padded does
        _flops.note_rnn_steps(rnn, int(lengths.sum()))
    out, last = KERNEL.module().rnn_infer(x.contiguous(), lengths.to(device="cpu", dtype=torch.long).contiguous(),
                                          _weights(w, len(w) // dirs, dirs), [False, True][:dirs],
                                          isinstance(rnn, nn.LSTM), want_out)
    return (out if want_out else None), last


def gate_math(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The kernel's float32 ``(sigmoid(x), tanh(x))`` (for tests against the exact functions)."""
    s, t = KERNEL.module().gate_math(x)
    return s, t


def direct_blas(allow: bool = True) -> bool:
    """Whether the kernel's per-step products call torch's BLAS (MKL) directly, else
    ``at::mm_out``; ``allow=False`` makes them use ``at::mm_out`` from now on (tests), ``True``
    restores the default."""
    return bool(KERNEL.module().direct_blas(allow))
