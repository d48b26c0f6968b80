"""A compiled one-direction GRU layer for CPU training (:func:`gru_layer`), used by
:func:`deidlib.models.layers.run_rnn_padded` for plain ``nn.GRU`` layers.

Why write it: torch has no fused CPU GRU kernel. ``torch.gru`` on the CPU runs a per-step
loop of small autograd-recorded operators (about 16 per step forward and backward), and
that dispatch, not the arithmetic, is most of the time: the word-level GRU layers of the
ahmed taggers reached 37-41 % of the single-thread matmul peak in training (stop 21,
``benchmarks/taggers.py``), against 70 % for oneDNN's fused LSTM, and a hand-written
autograd function in Python was no faster (``benchmarks/gru_manual.py``). Here
(``csrc/gru.cpp``) a step is one ``addmm`` (MKL/oneDNN) and three plain loops over the
gates (torch's vectorised ``sigmoid_``/``tanh_`` for the non-linearities); the backward
through time is one ``addmm`` and one loop per step, and the weight gradients are two large
products after the loop. Same equations and gate order as ``nn.GRU`` (r, z, n;
``n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))``, ``h' = (1 − z) ⊙ n + z ⊙ h``);
equal to ``torch.gru`` up to float rounding, float64 gradcheck in ``tests``.

The extension is compiled on first use with :func:`torch.utils.cpp_extension.load` (a C++
compiler and the Python headers are needed; about a minute, then cached under torch's
extensions folder, shared by later processes). Where it cannot be built, or with
``DEIDLIB_FUSED_GRU=0``, :func:`available` is ``False`` and the callers keep ``torch.gru``
(one warning says why).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

import torch

__all__ = ["available", "enabled", "disabled", "gru_layer"]

_SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "csrc", "gru.cpp")


@lru_cache(maxsize=1)
def _extension():
    if os.environ.get("DEIDLIB_FUSED_GRU", "1") == "0":
        return None
    try:
        from torch.utils.cpp_extension import load

        return load(name="deidlib_fused_gru", sources=[_SRC], extra_cflags=["-O3"], verbose=False)
    except Exception as e:  # no compiler, no headers, a failed build: fall back to torch.gru
        warnings.warn(f"deidlib: the compiled GRU could not be built ({type(e).__name__}: {str(e)[:200]}); "
                      "GRU layers use torch.gru (slower on the CPU)", RuntimeWarning, stacklevel=3)
        return None


def available() -> bool:
    """Whether :func:`gru_layer` can run here (compiles the extension on the first call)."""
    return _extension() is not None


_DISABLED = 0


def enabled() -> bool:
    """Whether the taggers' GRU layers use :func:`gru_layer` now: :func:`available` and not
    inside :func:`disabled`."""
    return not _DISABLED and available()


@contextmanager
def disabled() -> Iterator[None]:
    """Inside the block the taggers' GRU layers use ``torch.gru`` (side-by-side measurements
    in ``benchmarks/taggers.py``, equality tests)."""
    global _DISABLED
    _DISABLED += 1
    try:
        yield
    finally:
        _DISABLED -= 1


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
        if any(g is not None and _wrapped(g) for g in (grad_out, grad_h)):
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


def _wrapped(t: torch.Tensor) -> bool:
    """Whether ``t`` is a batching or transform wrapper (``torch.func``'s, or the legacy
    batched tensors of ``autograd.grad(..., is_grads_batched=True)``): such tensors have no
    plain storage for the compiled code."""
    f = torch._C._functorch
    return f.is_functorch_wrapped_tensor(t) or f.is_legacy_batchedtensor(t)


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
