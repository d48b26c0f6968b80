"""The CRF log-partition and its gradient compiled for the CPU (:func:`log_partition`),
used by :meth:`deidlib.models.crf.CRF.log_partition`.

Why write it: the forward algorithm is a loop over time steps of about ten small
operators (a [B, L] × [L, L] product, exponentials, a logarithm, a mask), and autograd
records each of them and walks them back: with the ahmed taggers' 113 BIOES labels a
batch's CRF took 18 % of a training step of the GRU tagger (``benchmarks/taggers.py``
corpus, one thread), and ``torch.compile`` did not speed it up
(``benchmarks/compile_trial.py``). Here (``csrc/crf.cpp``) the same recursion runs as one
product per step and plain loops, and the gradient is the forward–backward algorithm
written out as the recursion's adjoint (what autograd computes through the Python loop):
the unary marginals ``γ_t = ∂ log Z / ∂ α_t`` run backwards in the forward's scaled space,
``γ_{t−1} = p ⊙ (et · (γ_t / S_t))`` with ``p = exp(α_{t−1} − m)``, one product per step,
the shifts' adjoints (0 up to rounding) handed to the arg-max entries as autograd does
through ``m = max α`` and ``c = max A`` (this keeps ``Σ γ = 1`` step by step); the pairwise
marginals for the transitions come as a single [L, N] × [N, L] product over every
(sentence, step) pair (``ξ_t(i, j) = p_i · et_ij · γ_t(j) / S_t(j)``). Every quantity is
probability-sized, so float32 rounding stays relative to the marginals. Until stop 25 the
marginals were ``exp(α + β − log Z)``, whose argument loses |log Z|·eps to cancellation: on a
long well-fitted sentence the gradient ``marginal − gold`` came out with errors of its own
size, some entries with the wrong sign (found by ``benchmarks/device_check.py``: DP-SGD's
clipped sums on the CPU were 5e-3 off the GPU's; ``tests/models/test_crf.py`` now bounds
the float32 error of that case).
It computes the same function as the Python recursion (same scaling, same −80 clamp, same
exact fallback for sums below 1e-20, padding keeps α) and agrees with it and with its
autograd gradient to float rounding (``tests/models/test_fused_crf.py``: float64
gradcheck, constrained BIOES transitions, ragged lengths, forced underflow).

The same source holds the Viterbi decode (:func:`viterbi`, used by :meth:`CRF.decode`):
with 113 labels the Python decode's [B, L, L] broadcast sum and maximum per step took 45 % of
the GRU tagger's inference pass (``torch.profiler``, one thread); compiled, it is a
compare-and-select loop with the identical arithmetic and tie rule, so paths are unchanged;
for a constrained BIOES CRF it maximises over the allowed predecessors only, with an exact check
that no disallowed one could win (stop 26: 3.8x fewer candidates with 113 labels).

Built on first use (:mod:`.compiled`); where it cannot be built, with
``DEIDLIB_COMPILED=0``, on other devices or inside ``torch.func`` transforms, the CRF keeps
its Python recursion. Its backward cannot run under batched gradients
(``autograd.grad(..., is_grads_batched=True)``): code that differentiates that way runs the
forward inside :func:`disabled` (DP-SGD's ``vmap`` method does).
"""

from __future__ import annotations

import torch

from .compiled import Kernel, wrapped

__all__ = ["available", "enabled", "disabled", "log_partition", "viterbi"]

KERNEL = Kernel("deidlib_fused_crf", "crf.cpp", "CRF", "the CRF uses its Python recursion (slower on the CPU)")


def available() -> bool:
    """Whether :func:`log_partition` can run here (builds the extension on the first call)."""
    return KERNEL.available()


def enabled() -> bool:
    """Whether :meth:`CRF.log_partition` uses the compiled code now."""
    return KERNEL.enabled()


def disabled():
    """Context manager: inside the block the CRF uses its Python recursion."""
    return KERNEL.disabled()


def usable(*tensors: torch.Tensor) -> bool:
    """Whether the compiled log-partition can take these tensors (:meth:`Kernel.usable`)."""
    return KERNEL.usable(*tensors)


class _LogPartition(torch.autograd.Function):
    @staticmethod
    def forward(ctx, em, lengths, transitions, start, end, allowed):
        em = em.contiguous()
        logz, alpha, s = KERNEL.module().forward(em, lengths, transitions.contiguous(), start.contiguous(),
                                                 end.contiguous(), allowed)
        ctx.save_for_backward(em, lengths, transitions, end, allowed, logz, alpha, s)
        return logz

    @staticmethod
    def backward(ctx, grad):
        if wrapped(grad):
            raise RuntimeError("the compiled CRF log-partition cannot be differentiated with batched gradients; "
                               "run the forward inside deidlib.models.fused_crf.disabled()")
        em, lengths, transitions, end, allowed, logz, alpha, s = ctx.saved_tensors
        d_em, d_a, d_start, d_end = KERNEL.module().backward(grad.contiguous(), em, lengths, transitions.contiguous(),
                                                             end.contiguous(), allowed, logz, alpha, s)
        return d_em, None, d_a, d_start, d_end, None


def log_partition(emissions: torch.Tensor, lengths: torch.Tensor, transitions: torch.Tensor, start: torch.Tensor,
                  end: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
    """log Z [B] of emissions [B, T, L] for sentences of ``lengths`` [B] (int64, ≥ 1) under
    (effective) ``transitions`` [L, L] (from → to), ``start`` and ``end`` [L]; ``allowed``
    [L, L] uint8 marks the moves that are not constrained away (0: exactly 0 in the scaled
    product, as the Python recursion's masked ``et``). Differentiable in emissions,
    transitions, start and end."""
    return _LogPartition.apply(emissions, lengths, transitions, start, end, allowed)


_NO_MASK = torch.empty(0, dtype=torch.uint8)


def viterbi(emissions: torch.Tensor, lengths: torch.Tensor, transitions: torch.Tensor, start: torch.Tensor,
            end: torch.Tensor, allowed: torch.Tensor | None = None) -> torch.Tensor:
    """Best tag path [B, T] (int64, 0 after each length) of emissions [B, T, L] for sentences of
    ``lengths`` [B] (int64, 1 ≤ length ≤ T) under (effective) ``transitions`` [L, L] (from →
    to), ``start`` and ``end`` [L]: :meth:`CRF.decode`'s recursion and tie rule (the first
    maximal predecessor, as ``argmax``), so the paths equal the Python decode's exactly
    (``tests/models/test_fused_crf.py``). Not differentiable (a path is discrete).

    ``allowed`` [L, L] (bool or uint8; a constrained CRF's moves that are not constrained
    away) changes only the speed: each step's maximum runs over the allowed predecessors and
    falls back to all of them wherever a disallowed one could reach that maximum (a bound
    check, exact in floating point), so the scores and paths are the same with or without it.
    It pays where few moves are allowed: a constrained BIOES CRF with 113 labels has 3,361 of
    12,769 (the decode 1.6-1.7x, a GRU-CRF tagger's prediction pass 1.045x:
    ``benchmarks/crf_kernel.py``, A/B in one process); a BIO one 1,709 of 3,249, where the
    grouped maximum measured 0.98x, so :meth:`CRF.decode` passes its ``viterbi_mask``, given
    only where at most half of the moves are allowed."""
    ok = _NO_MASK if allowed is None else allowed.detach().to("cpu", torch.uint8)
    return KERNEL.module().viterbi(emissions.detach().contiguous(), lengths, transitions.detach(), start.detach(),
                                   end.detach(), ok)
