"""Composable pieces of a training loop, shared by the trainer, collaborative strategies
(DSSGD, round robin) and DP-SGD."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import torch

from ..models.protocol import Batch
from ..models.taggers import BaseTagger

__all__ = ["make_optimizer"]

_OPTIMIZERS = ("sgd", "adam", "nadam")


def make_optimizer(
    params: Iterable[torch.nn.Parameter], name: str = "sgd", lr: float = 0.1, **kw
) -> torch.optim.Optimizer:
    """``sgd`` (plain, as festag's DSSGD), ``adam`` or ``nadam`` (friedrich).

    Adam uses torch's fused kernel (``fused=True``: one pass over each parameter instead of
    a dozen element-wise ops; the same update up to float rounding) when every parameter is
    a float tensor on the CPU or a CUDA device and ``kw`` does not choose otherwise;
    measured 1.06-1.12x faster training steps of the RNN taggers on one CPU thread
    (``benchmarks/taggers.py`` sizes, side by side)."""
    params = [p for p in params if p.requires_grad]
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr, **kw)
    if name == "adam":
        if "fused" not in kw and "foreach" not in kw and params and all(
                p.is_floating_point() and p.device.type in ("cpu", "cuda") for p in params):
            kw["fused"] = True
        return torch.optim.Adam(params, lr=lr, **kw)
    if name == "nadam":
        return torch.optim.NAdam(params, lr=lr, **kw)
    raise ValueError(f"unknown optimizer {name!r}; choose one of {', '.join(_OPTIMIZERS)}")


class InverseTimeLR(torch.optim.lr_scheduler.LRScheduler):
    """Inverse-time decay (Ma & Hovy 2016, §3.2): after ``t`` steps (epochs) the rate is
    ``initial_lr / (1 + decay·t)``, computed in that form (a ``LambdaLR`` multiplies by the
    reciprocal, which differs in the last bit for about one epoch in five)."""

    def __init__(self, optimizer: torch.optim.Optimizer, decay: float, last_epoch: int = -1):
        if decay < 0:
            raise ValueError(f"lr_decay must be >= 0, got {decay}")
        self.decay = decay
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float | torch.Tensor]:
        return [base / (1 + self.decay * self.last_epoch) for base in self.base_lrs]


def lr_schedule(optimizer: torch.optim.Optimizer, lr: float, decay: float = 0.0, start_epoch: int = 0
                ) -> InverseTimeLR:
    """The trainer's schedule, stepped once per epoch: epoch ``t`` (0-based) trains at
    ``lr / (1 + decay·t)``. Built for ``start_epoch`` (a resumed run): the optimizer's rate
    is epoch ``start_epoch``'s on return, whatever a loaded optimizer state held."""
    for group in optimizer.param_groups:
        group["initial_lr"] = lr
    return InverseTimeLR(optimizer, decay, last_epoch=start_epoch - 1)


def step(
    tagger: BaseTagger, batch: Batch, optimizer: torch.optim.Optimizer, clip: float | None = None
) -> float:
    """One gradient step on ``batch``; returns the loss. ``clip`` bounds the global grad norm."""
    optimizer.zero_grad(set_to_none=True)
    loss = tagger.loss(batch)
    loss.backward()
    if clip is not None:
        torch.nn.utils.clip_grad_norm_([p for p in tagger.parameters() if p.grad is not None], clip)
    optimizer.step()
    return float(loss.detach())


def train_epoch(
    tagger: BaseTagger,
    batches: Sequence[Batch],
    optimizer: torch.optim.Optimizer,
    *,
    clip: float | None = None,
    order: Sequence[int] | None = None,
    progress: bool = False,
    desc: str = "train",
) -> float:
    """One pass over ``batches`` (in ``order``); returns the mean loss per batch."""
    from tqdm.auto import tqdm

    tagger.train()
    idx = list(order) if order is not None else list(range(len(batches)))
    total = 0.0
    for i in tqdm(idx, desc=desc, leave=False, disable=not progress, unit="batch"):
        total += step(tagger, batches[i], optimizer, clip)
    return total / max(1, len(idx))
