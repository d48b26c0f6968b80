"""Gradient reversal layer (Ganin & Lempitsky 2015): identity forward, −λ·gradient backward."""

import pytest
import torch

from deidlib.models.gradient_reversal import GradientReversal, grad_reverse


@pytest.mark.parametrize("scale", [1.0, 0.3, 2.5])
def test_identity_forward_and_scaled_reversed_gradient(scale):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4, 5, generator=g, requires_grad=True)
    w = torch.randn(4, 5, generator=g)
    layer = GradientReversal(scale)
    y = layer(x)
    assert torch.equal(y, x)
    (y * w).sum().backward()
    torch.testing.assert_close(x.grad, -scale * w)  # d/dx of sum(w*x) is w; reversed and scaled


def test_only_the_path_through_the_layer_is_reversed():
    x = torch.tensor([2.0], requires_grad=True)
    (x * 3 + grad_reverse(x * 5, 1.0)).sum().backward()
    assert x.grad.item() == pytest.approx(3 - 5)


def test_zero_scale_blocks_and_negative_scale_is_refused():
    x = torch.ones(3, requires_grad=True)
    grad_reverse(x, 0.0).sum().backward()
    assert torch.equal(x.grad, torch.zeros(3))
    with pytest.raises(ValueError, match=">= 0"):
        GradientReversal(-1.0)
