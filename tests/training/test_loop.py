"""make_optimizer: Adam takes torch's fused kernel on the CPU, and its steps equal the plain
(for-loop) Adam's to float rounding."""

from __future__ import annotations

import torch

from deidlib.training import make_optimizer


def test_adam_is_fused_on_cpu_and_equals_the_plain_update():
    torch.manual_seed(0)
    a = torch.nn.Linear(5, 3)
    b = torch.nn.Linear(5, 3)
    b.load_state_dict(a.state_dict())
    start = a.weight.detach().clone()
    fused = make_optimizer(a.parameters(), "adam", 1e-2)
    plain = make_optimizer(b.parameters(), "adam", 1e-2, foreach=False)
    assert fused.defaults["fused"] is True and not plain.defaults.get("fused")
    x, y = torch.randn(16, 5), torch.randn(16, 3)
    for _ in range(5):
        for m, opt in ((a, fused), (b, plain)):
            opt.zero_grad()
            torch.nn.functional.mse_loss(m(x), y).backward()
            opt.step()
    for p, q in zip(a.parameters(), b.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-6)
    assert (a.weight - start).abs().max() > 1e-2  # five steps of lr 1e-2 did move it


def test_caller_choice_wins():
    m = torch.nn.Linear(2, 2)
    assert not make_optimizer(m.parameters(), "adam", 1e-3, fused=False).defaults["fused"]
    assert not make_optimizer(m.parameters(), "sgd", 1e-3).defaults.get("fused")
