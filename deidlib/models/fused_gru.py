"""A compiled one-direction GRU layer for CPU training (:func:`gru_layer`), used by
:func:`deidlib.models.layers.run_rnn_padded` for plain ``nn.GRU`` layers.

Why write it: torch has no fused CPU GRU kernel. ``torch.gru`` on the CPU runs a per-step
loop of small autograd-recorded operators (about 16 per step forward and backward), and
that dispatch, not the arithmetic, is most of the time: the word-level GRU layers of the
ahmed taggers reached 37-41 % of the single-thread matmul peak in training (stop 21,
``benchmarks/taggers.py``), against 70 % for oneDNN's fused LSTM, and a hand-written
autograd function in Python was no faster (``benchmarks/gru_manual.py``). Here
(``csrc/gru.cpp``) a step is one matrix product (torch's own ``sgemm_`` called directly on
MKL builds, :func:`direct_blas`; ``at::mm_out`` otherwise, the same bits) and three plain loops over the
gates (torch's vectorised ``sigmoid_``/``tanh_`` for the non-linearities); the backward
through time is one ``mm`` and one loop per step, and the weight gradients are two large
products after the loop. Same equations and gate order as ``nn.GRU`` (r, z, n;
``n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))``, ``h' = (1 − z) ⊙ n + z ⊙ h``);
equal to ``torch.gru`` up to float rounding, float64 gradcheck in ``tests``.

Built on first use (:mod:`.compiled`); where it cannot be built, or with
``DEIDLIB_COMPILED=0``, :func:`available` is ``False`` and the callers keep ``torch.gru``.
"""

from __future__ import annotations

import torch

from .compiled import Kernel, wrapped

__all__ = ["available", "enabled", "disabled", "gru_layer", "direct_blas"]

KERNEL = Kernel("deidlib_fused_gru", "gru.cpp", "GRU", "GRU layers use torch.gru (slower on the CPU)")
_extension = KERNEL.module


def available() -> bool:
    """Whether :func:`gru_layer` can run here (builds the extension on the first call)."""
    return KERNEL.available()


def enabled() -> bool:
    """Whether the taggers' GRU layers use :func:`gru_layer` now: :func:`available` and not
    inside :func:`disabled`."""
    return KERNEL.enabled()


def disabled():
    """Context manager: inside the block the taggers' GRU layers use ``torch.gru``."""
    return KERNEL.disabled()


class _GRUFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, h0, w_ih, w_hh, b_ih, b_hh):
        ext = _extension()
        out, hs, rz, n, gh = ext.forward(x.contiguous(), h0.contiguous(), w_ih.contiguous(), w_hh.contiguous(),
                                         b_ih.contiguous(), b_hh.contiguous())
        ctx.save_for_backward(x, w_ih, w_hh, b_hh, hs, rz, n, gh)
        return out, hs[-1]

    @staticmethod
    def backward(ctx, grad_out, grad_h):
        x, w_ih, w_hh, b_hh, hs, rz, n, gh = ctx.saved_tensors
        if any(g is not None and wrapped(g) for g in (grad_out, grad_h)):
            # torch.func transforms (vmap over the backward: DP-SGD's ``vmap`` method) hand in
            # batched gradients the compiled loop cannot read: the same backward in torch ops
            return _backward_ops(grad_out, grad_h, x, w_ih, w_hh, b_hh, hs, rz, n, gh)
        B, T, H = x.shape[0], x.shape[1], w_hh.shape[1]
        go = grad_out if grad_out is not None else x.new_zeros(B, T, H)
        gh_T = grad_h if grad_h is not None else x.new_zeros(B, H)
        dx, dh0, dw_ih, dw_hh, db_ih, db_hh = _extension().backward(
            go.contiguous(), gh_T.contiguous(), x.contiguous(), w_ih.contiguous(), w_hh.contiguous(),
            b_hh.contiguous(), hs, rz, n, gh)
        return dx, dh0, dw_ih, dw_hh, db_ih, db_hh


def _backward_ops(grad_out, grad_h, x, w_ih, w_hh, b_hh, hs, rz, n, gh):
    """The compiled backward's equations in torch operators (composable with ``torch.func``);
    ``tests/models/test_fused_gru.py`` checks it against the compiled one."""
    B, T, _ = x.shape
    H = w_hh.shape[1]
    if grad_out is None:
        grad_out = x.new_zeros(B, T, H)
    carry = grad_h if grad_h is not None else x.new_zeros(B, H)
    bn = b_hh[2 * H:]
    dgi, dgh = [], []
    for t in range(T - 1, -1, -1):
        g = carry + grad_out[:, t]
        r, z, nn_, hp = rz[t, :, :H], rz[t, :, H:], n[t], hs[t]
        dn = g * (1 - z) * (1 - nn_ * nn_)
        dz = g * (hp - nn_) * z * (1 - z)
        dr = dn * (gh[t, :, 2 * H:] + bn) * r * (1 - r)
        dgi.append(torch.cat([dr, dz, dn], -1))
        dgh.append(torch.cat([dr, dz, dn * r], -1))
        carry = g * z + dgh[-1] @ w_hh
    dgi_ = torch.stack(dgi[::-1], 1).reshape(B * T, 3 * H)  # rows b·T + t, as x's
    dgh_ = torch.stack(dgh[::-1], 0).reshape(T * B, 3 * H)  # rows t·B + b, as hs's
    dw_hh = dgh_.t() @ hs[:-1].reshape(T * B, H)
    dw_ih = dgi_.t() @ x.reshape(B * T, -1)
    return (dgi_ @ w_ih).view(B, T, -1), carry, dw_ih, dw_hh, dgi_.sum(0), dgh_.sum(0)


def gru_layer(x: torch.Tensor, h0: torch.Tensor, w_ih: torch.Tensor, w_hh: torch.Tensor, b_ih: torch.Tensor,
              b_hh: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """One direction of a one-layer GRU over batch-first ``x`` [B, T, D] from ``h0`` [B, H]:
    ``(outputs [B, T, H], h_T [B, H])``, differentiable in every argument. CPU tensors,
    ``available()`` must be true."""
    return _GRUFunction.apply(x, h0, w_ih, w_hh, b_ih, b_hh)


def direct_blas(allow: bool = True) -> bool:
    """Whether the kernel's per-step products call torch's own ``sgemm_``/``dgemm_`` directly
    (MKL builds; the operands ``at::mm_out`` would pass, so the same bits without a tensor
    view and a dispatch per step). ``allow=False`` forces ``at::mm_out`` (tests compare the
    two); returns whether direct calls are in use now."""
    return bool(KERNEL.module().direct_blas(allow))
