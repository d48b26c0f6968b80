"""The gradient reversal layer (Ganin & Lempitsky, "Unsupervised Domain Adaptation by
Backpropagation", ICML 2015, section 3.2, eq. 9-10; Ganin et al. 2016, JMLR, DANN).

Forward it is the identity, ``R(x) = x``; backward it multiplies the incoming gradient by
``−λ``, ``dR/dx = −λ I``. Placed between a shared feature extractor and an adversary, one
backward pass of the *sum* of losses trains the adversary to minimise its loss while the
features below the layer are pushed to maximise it (Friedrich et al., ACL 2019, section 5.4:
DANN training of the representation against the adversaries; also used by the alawad study).
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["GradientReversal", "grad_reverse"]


class _ReverseGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, scale: float) -> torch.Tensor:
        ctx.scale = scale
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        return -ctx.scale * grad, None


def grad_reverse(x: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
    """Identity forward; gradient times ``−scale`` backward (``scale`` = Ganin's λ ≥ 0)."""
    if scale < 0:
        raise ValueError(f"the gradient reversal scale must be >= 0, got {scale}")
    return _ReverseGrad.apply(x, float(scale))


class GradientReversal(nn.Module):
    """Module form of :func:`grad_reverse`; ``scale`` may be changed between steps (Ganin &
    Lempitsky's schedule λ_p = 2/(1+exp(−10p)) − 1 is the caller's choice)."""

    def __init__(self, scale: float = 1.0) -> None:
        super().__init__()
        if scale < 0:
            raise ValueError(f"the gradient reversal scale must be >= 0, got {scale}")
        self.scale = float(scale)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return grad_reverse(x, self.scale)

    def extra_repr(self) -> str:
        return f"scale={self.scale}"
