"""Flower without a network: the server and client apps of this package in one process.

Flower's own simulation engine (:func:`flwr.simulation.run_simulation`) needs Ray
(``flwr[simulation]``), a large dependency that deidlib does not install. The
:class:`LoopbackGrid` below is a :class:`~flwr.serverapp.Grid` that hands each message
straight to the destination node's :class:`~flwr.clientapp.ClientApp` (each node with
its own :class:`~flwr.app.Context`, as a SuperNode keeps one), so the *same* Flower
message handlers run as over gRPC, minus serialization and transport.
:func:`flower_simulate` has the signature of :func:`deidlib.collaborative.simulate`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from uuid import uuid4

from flwr.app import Context, Message, RecordDict
from flwr.clientapp import ClientApp
from flwr.serverapp import Grid
from flwr.supercore.task_identity import TaskIdentity

from ..simulator import make_sites
from ..sites import ModelFactory, Trainer
from ..strategies import DSSGD, CollaborativeHistory, RoundRobin, Strategy
from .client_app import SiteSpec, make_client_app
from .server_app import Plan, run_server

__all__ = ["flower_simulate"]


@contextmanager
def _task_identity(run_id: int = 1) -> Iterator[None]:
    """Flower stamps messages with the process's task identity (set by its runtime);
    set one for the duration of an in-process run and restore whatever was there."""
    saved = {k: getattr(TaskIdentity, k) for k in ("_run_id", "_node_id", "_task_id")}
    try:
        for k, v in saved.items():
            if v is None:
                setattr(TaskIdentity, k, run_id if k == "_run_id" else 0)
        yield
    finally:
        for k, v in saved.items():
            setattr(TaskIdentity, k, v)


@contextmanager
def _quiet_flower() -> Iterator[None]:
    """Flower logs every round at INFO; keep in-process runs (studies, tests) quiet."""
    import logging

    log = logging.getLogger("flwr")
    level = log.level
    log.setLevel(logging.WARNING)
    try:
        yield
    finally:
        log.setLevel(level)


class LoopbackGrid(Grid):
    """Delivers every message synchronously to an in-process ClientApp (node ids 1..n)."""

    def __init__(self, client_app: ClientApp, node_configs: Sequence[dict[str, Any]], run_config=None):
        self.app = client_app
        self.contexts = {i + 1: Context(run_id=1, node_id=i + 1, node_config=dict(cfg), state=RecordDict(),
                                        run_config=dict(run_config or {}))
                         for i, cfg in enumerate(node_configs)}
        self._replies: dict[str, Message] = {}
        self._run = None

    def set_run(self, run):
        self._run = run

    @property
    def run(self):
        return self._run

    def create_message(self, content, message_type, dst_node_id, group_id, ttl=None):
        return Message(content, dst_node_id, message_type, ttl=ttl, group_id=group_id)

    def get_node_ids(self) -> Iterable[int]:
        return list(self.contexts)

    def push_messages(self, messages):
        ids = []
        for msg in messages:
            mid = str(uuid4())
            msg.metadata.__dict__["_message_id"] = mid
            msg.metadata.__dict__["_src_node_id"] = 0
            self._replies[mid] = self.app(msg, self.contexts[msg.metadata.dst_node_id])
            ids.append(mid)
        return ids

    def pull_messages(self, message_ids):
        return [self._replies.pop(m) for m in list(message_ids) if m in self._replies]

    def send_and_receive(self, messages, *, timeout=None):
        return self.pull_messages(self.push_messages(messages))


class FedAvg(Strategy):
    """FedAvg (McMahan et al., AISTATS 2017) — only on the Flower engine (``engine="flower"``)."""

    name = "fedavg"

    def __init__(self, local_steps=None):
        self.local_steps = local_steps

    def _run(self, sites, epochs, evaluate, seed, server, progress):
        raise ValueError("FedAvg runs only as Flower apps: use flower_simulate (engine='flower')")


def _plan_for(strategy: Strategy, *, epochs: int, seed: int, reproducible: bool = True,
             num_sites: int | None = None) -> Plan:
    """The :class:`Plan` of a simulator :class:`Strategy` object (B, C, DP-C or FedAvg)."""
    if isinstance(strategy, RoundRobin):
        return Plan("round_robin", epochs, seed, local_steps=strategy.local_steps, num_sites=num_sites)
    if isinstance(strategy, DSSGD):
        return Plan("dssgd", epochs, seed, dssgd=strategy.config, local_steps=strategy.local_steps,
                    reproducible=reproducible, num_sites=num_sites)
    if isinstance(strategy, FedAvg):
        return Plan("fedavg", epochs, seed, local_steps=strategy.local_steps, num_sites=num_sites)
    raise ValueError(f"strategy {strategy.name!r} has no Flower version (A centralized pools the data, "
                     "D local-only exchanges nothing); use engine='simulator'")


def flower_simulate(
    strategy: Strategy,
    partitions: Sequence[Sequence[Any]],
    *,
    model_factory: ModelFactory,
    trainer: Trainer,
    evaluate: Callable[[Any], Any],
    epochs: int,
    seed: int,
    names: Sequence[str] | None = None,
    progress: bool = False,
) -> CollaborativeHistory:
    """Run ``strategy`` as Flower apps over a :class:`LoopbackGrid`; same result as ``simulate``."""
    plan = _plan_for(strategy, epochs=epochs, seed=seed, num_sites=len(partitions))
    sites = make_sites(partitions, model_factory=model_factory, trainer=trainer, seed=seed, names=names)
    specs = {i: SiteSpec(s, i, evaluate) for i, s in enumerate(sites)}
    app = make_client_app(lambda ctx: specs[int(ctx.node_config["site"])])
    grid = LoopbackGrid(app, [{"site": i} for i in range(len(sites))])
    with _task_identity(), _quiet_flower():
        return run_server(grid, plan, evaluate=evaluate, model_factory=model_factory, progress=progress)
