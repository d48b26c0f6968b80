"""A tiny model and data set for testing the collaborative machinery without a tagger."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from deidlib.collaborative import SGDTrainer


class Tiny(nn.Module):
    def __init__(self, seed: int, d: int = 6, h: int = 5, k: int = 3):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.l1 = nn.Linear(d, h)
        self.l2 = nn.Linear(h, k)
        self.drop = nn.Dropout(0.2)
        with torch.no_grad():
            for p in self.parameters():
                p.copy_(torch.randn(p.shape, generator=g) * 0.5)

    def forward(self, x):
        return self.l2(self.drop(torch.tanh(self.l1(x))))


def tiny_factory(seed: int) -> nn.Module:
    return Tiny(seed)


def tiny_loss(model, batch):
    x = torch.stack([b[0] for b in batch])
    y = torch.tensor([b[1] for b in batch])
    return nn.functional.cross_entropy(model(x), y)


def tiny_data(n: int, seed: int, d: int = 6, k: int = 3):
    rng = np.random.default_rng(seed)
    w = np.random.default_rng(12345).normal(size=(d, k))
    xs = rng.normal(size=(n, d)).astype(np.float32)
    ys = (xs @ w).argmax(1)
    return [(torch.from_numpy(x), int(y)) for x, y in zip(xs, ys)]


def tiny_trainer(lr: float = 0.5, batch_size: int = 1) -> SGDTrainer:
    return SGDTrainer(tiny_loss, lr=lr, batch_size=batch_size)


def tiny_accuracy(test):
    x = torch.stack([b[0] for b in test])
    y = torch.tensor([b[1] for b in test])

    def evaluate(model):
        return {"acc": float((model(x).argmax(1) == y).float().mean())}

    return evaluate
