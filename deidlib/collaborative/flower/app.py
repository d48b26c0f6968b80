"""The Flower App for real processes: ``server_app`` and ``client_app`` on a tiny demo task.

``flower-superlink`` runs :data:`server_app` (via ``flwr run``), every
``flower-supernode --node-config "site=I"`` runs :data:`client_app` for site ``I``,
which builds *only its own* partition of a small synthetic classification task
(:func:`_demo_partition`; a 6-feature, 3-class softmax problem and a one-hidden-layer
network, so that a run takes seconds on a CPU). The run configuration (``pyproject.toml``
next to this module, overridable with ``flwr run --run-config``) selects the strategy:

==================  ==============================================================
``strategy``        ``round_robin`` | ``dssgd`` | ``fedavg``
``epochs``          global rounds
``seed``            run seed (initial network, epoch shuffles, DSSGD order)
``theta-d`` ...     ``theta-u``, ``gamma``, ``tau``: DSSGD (defaults = C_0.1)
``dp-epsilon``      > 0: Shokri & Shmatikov's DP upload with this ε per upload
``dp-budget``       > 0: each site's total ε (0: unlimited)
``num-sites``       the server waits until this many SuperNodes are connected
``reproducible``    forward the DSSGD generator state (simulator-identical; studies only;
                    default false: each site draws its sampling and DP noise from secrets)
``out``             if set, the server writes the run (CollaborativeHistory as JSON) to this path
==================  ==============================================================

The server logs, per round, what it received from each site (``values`` /
``indices``). See docs/flower.md for the commands.
"""

from __future__ import annotations

import json
from functools import lru_cache
from logging import INFO, WARNING
from pathlib import Path
from typing import Any

import numpy as np
import torch
from flwr.app import Context
from flwr.common.logger import log
from flwr.serverapp import Grid, ServerApp
from torch import nn

from ...rng import derive_seed
from ..local import SGDTrainer
from ..sites import Site
from ..strategies import DSSGDConfig
from .client_app import SiteSpec, make_client_app
from .server_app import Plan, run_server

__all__ = []

FEATURES, CLASSES, HIDDEN = 6, 3, 8


class DemoNet(nn.Module):
    """6 → 8 (tanh) → 3, initialised from ``seed`` without touching torch's global RNG."""

    def __init__(self, seed: int):
        super().__init__()
        g = torch.Generator().manual_seed(int(seed) & 0x7FFF_FFFF_FFFF_FFFF)
        self.l1 = nn.Linear(FEATURES, HIDDEN)
        self.l2 = nn.Linear(HIDDEN, CLASSES)
        with torch.no_grad():
            for p in self.parameters():
                p.copy_(torch.randn(p.shape, generator=g) * 0.5)

    def forward(self, x):
        return self.l2(torch.tanh(self.l1(x)))


def _demo_model(seed: int) -> nn.Module:
    return DemoNet(seed)


def _examples(n: int, seed: int) -> list[tuple[torch.Tensor, int]]:
    w = np.random.default_rng(12345).normal(size=(FEATURES, CLASSES))  # the task, shared by all
    xs = np.random.default_rng(seed).normal(size=(n, FEATURES)).astype(np.float32)
    return [(torch.from_numpy(x), int(y)) for x, y in zip(xs, (xs @ w).argmax(1))]


def _demo_partition(site: int, seed: int, n: int = 40) -> list[tuple[torch.Tensor, int]]:
    """Site ``site``'s private examples (only that site's process builds them)."""
    return _examples(n + 10 * site, derive_seed(seed, "demo-site", site))


def _demo_test_set(seed: int, n: int = 200) -> list[tuple[torch.Tensor, int]]:
    return _examples(n, derive_seed(seed, "demo-test"))


def _loss(model, batch):
    x = torch.stack([b[0] for b in batch])
    y = torch.tensor([b[1] for b in batch])
    return nn.functional.cross_entropy(model(x), y)


def demo_trainer() -> SGDTrainer:
    return SGDTrainer(_loss, lr=0.5, batch_size=4)


def _demo_evaluator(test) -> Any:
    x = torch.stack([b[0] for b in test])
    y = torch.tensor([b[1] for b in test])

    def evaluate(model) -> dict[str, float]:
        return {"acc": float((model(x).argmax(1) == y).float().mean())}

    return evaluate


def _plan_from_config(cfg: dict[str, Any]) -> Plan:
    eps = float(cfg.get("dp-epsilon", 0.0))
    budget = float(cfg.get("dp-budget", 0.0))
    dssgd = DSSGDConfig(theta_d=float(cfg.get("theta-d", 0.1)), theta_u=float(cfg.get("theta-u", 0.5)),
                        gamma=float(cfg.get("gamma", 10.0)), tau=float(cfg.get("tau", 1e-4)),
                        dp_epsilon=eps if eps > 0 else None, dp_budget=budget if budget > 0 else None)
    n = int(cfg.get("num-sites", 0))
    return Plan(str(cfg.get("strategy", "dssgd")), int(cfg.get("epochs", 3)), int(cfg.get("seed", 0)), dssgd=dssgd,
                reproducible=bool(cfg.get("reproducible", False)), num_sites=n or None,
                timeout=float(cfg.get("timeout", 600)))


server_app = ServerApp()


@server_app.main()
def _serve(grid: Grid, context: Context) -> None:
    cfg = dict(context.run_config)
    plan = _plan_from_config(cfg)
    log(INFO, "deidlib: %s, %d rounds, seed %d, waiting for %s sites", plan.strategy, plan.epochs, plan.seed,
        plan.num_sites or "the connected")
    if plan.reproducible and plan.strategy == "dssgd":
        log(WARNING, "deidlib: reproducible=true hands each site's upload randomness (and DP noise) to the "
            "server: for checking against the simulator only")
    hist = run_server(grid, plan, evaluate=_demo_evaluator(_demo_test_set(plan.seed)), model_factory=_demo_model)
    log(INFO, "deidlib: what the server received (float values / integer indices per reply):")
    for r in hist.received:
        log(INFO, "deidlib:   round %s  %-6s  %-18s values=%d indices=%d", r["round"], r["site"], r["type"],
            r["values"], r["indices"])
    for rec in hist.records:
        log(INFO, "deidlib:   epoch %d  %-6s  acc=%.3f  train_loss=%.4f", rec["epoch"], rec["site"],
            rec.get("acc", float("nan")), rec["train_loss"])
    if hist.ledgers:
        for name, led in hist.ledgers.items():
            log(INFO, "deidlib:   ledger %s: %d uploads, total ε = %.3f (%s)", name, led["uploads"],
                led["total_epsilon"], led["composition"])
    if cfg.get("out"):
        Path(str(cfg["out"])).write_text(json.dumps({**hist.to_dict(), "received": hist.received}, indent=1))
        log(INFO, "deidlib: wrote %s", cfg["out"])


@lru_cache(maxsize=8)
def _spec(site: int, seed: int) -> SiteSpec:
    s = Site(f"site{site + 1}", _demo_partition(site, seed), model_factory=_demo_model, trainer=demo_trainer(),
             init_seed=derive_seed(seed, "init"))
    return SiteSpec(s, site, _demo_evaluator(_demo_test_set(seed)))


def _load(context: Context) -> SiteSpec:
    if "site" not in context.node_config:
        raise ValueError('start the SuperNode with --node-config "site=I" (I = 0, 1, ...)')
    return _spec(int(context.node_config["site"]), int(context.run_config.get("seed", 0)))


client_app = make_client_app(_load)
