"""The server side: round robin, DSSGD (with or without DP uploads) and FedAvg on Flower's Grid.

One function, :func:`run_server`, drives any Flower :class:`~flwr.serverapp.Grid` — the
gRPC grid a SuperLink hands to a :class:`~flwr.serverapp.ServerApp` (real processes) or
the in-process :class:`~.engine.LoopbackGrid` — with the message protocol of
:mod:`.client_app`. It reproduces the schedule of the in-process simulator
(:mod:`deidlib.collaborative.strategies`, same seeds, same order):

* **B round robin** — per round, sites in fixed order; the server relays the full vector
  from one site to the next (site → server → site; the simulator hands it over directly);
  the last site of a round evaluates.
* **C DSSGD** — the server *is* the :class:`~deidlib.collaborative.server.ParameterServer`
  of Festag & Spreckelsen's DSSGD section (global vector + update counts); per round the
  workers take turns in the seeded random order; each turn is one Flower message: the
  θ_d·|p| most-updated global entries down, the selected update entries up.
  ``DSSGDConfig.dp_epsilon`` switches the sites to Shokri & Shmatikov's DP upload; each
  site keeps its own privacy ledger, which the server reads at the end (``query.ledger``).
* **FedAvg** (McMahan et al. 2017; not in the festag paper, a modern baseline) — Flower's
  own :class:`flwr.serverapp.strategy.FedAvg` (all sites every round, one local epoch,
  weighted by ``num-examples``); the global model is evaluated on the server
  (``evaluate_fn``), since in FedAvg the server holds it anyway.

The meter: :class:`RecordingGrid` wraps the grid and, for every reply the server
*receives*, records the round, the site, the message type and how many float values and
integer indices its arrays held (:func:`.records.count_arrays`) — measured on the
messages, not on what the strategy meant to send.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from flwr.app import ConfigRecord, Message, MetricRecord, RecordDict
from flwr.serverapp import Grid

from ...rng import derive_seed
from ..dp_upload import UploadLedger
from ..server import ParameterServer
from ..strategies import CollaborativeHistory, DSSGDConfig, dssgd_generator, dssgd_order, epoch_seed
from .records import array_record, count_arrays, from_array, number, numbers

__all__ = []

_STRATEGIES = ("round_robin", "dssgd", "fedavg")


@dataclass
class Plan:
    """What the server runs. ``dssgd`` may map site names to configurations."""

    strategy: str
    epochs: int
    seed: int
    dssgd: DSSGDConfig | Mapping[str, DSSGDConfig] = field(default_factory=DSSGDConfig)
    local_steps: int | Mapping[str, int | None] | None = None
    #: forward the DSSGD generator state to the sites (bit-equal to the simulator; studies only)
    reproducible: bool = True
    num_sites: int | None = None  # wait for this many nodes (None: whoever is connected)
    timeout: float = 3600.0

    def __post_init__(self):
        if self.strategy not in _STRATEGIES:
            raise ValueError(f"unknown Flower strategy {self.strategy!r}; choose one of {', '.join(_STRATEGIES)}")
        if int(self.epochs) < 0:
            raise ValueError(f"epochs must be >= 0, got {self.epochs}")

    def config_for(self, name: str) -> DSSGDConfig:
        if isinstance(self.dssgd, DSSGDConfig):
            return self.dssgd
        try:
            return self.dssgd[name]
        except KeyError:
            raise ValueError(f"no DSSGD configuration for site {name!r}") from None

    def steps_for(self, name: str) -> int:
        s = self.local_steps if self.local_steps is None or isinstance(self.local_steps, int) \
            else self.local_steps.get(name)
        return -1 if s is None else int(s)


class RecordingGrid(Grid):
    """A :class:`Grid` that forwards everything and meters every reply the server receives."""

    def __init__(self, inner: Grid):
        self.inner = inner
        self.names: dict[int, str] = {}
        self.received: list[dict[str, Any]] = []
        self._round: dict[str, str] = {}

    def set_run(self, run):
        self.inner.set_run(run)

    @property
    def run(self):
        return self.inner.run

    def create_message(self, content, message_type, dst_node_id, group_id, ttl=None):
        return self.inner.create_message(content, message_type, dst_node_id, group_id, ttl)

    def get_node_ids(self) -> Iterable[int]:
        return self.inner.get_node_ids()

    def push_messages(self, messages):
        messages = list(messages)
        ids = list(self.inner.push_messages(messages))
        for mid, m in zip(ids, messages):  # FedAvg's messages carry the round in their config
            cfg = m.content.config_records.get("config")
            rnd = m.metadata.group_id
            if not rnd and cfg is not None:
                rnd = str(cfg.get("server-round", ""))
            self._round[str(mid)] = rnd
        return ids

    def _meter(self, replies: Iterable[Message]) -> list[Message]:
        out = list(replies)
        for r in out:
            if r.has_error():
                raise RuntimeError(f"site {self.names.get(r.metadata.src_node_id, r.metadata.src_node_id)} "
                                   f"failed: {r.error.reason}")
            self.received.append({
                "round": self._round.pop(r.metadata.reply_to_message_id, r.metadata.group_id),
                "site": self.names.get(r.metadata.src_node_id, str(r.metadata.src_node_id)),
                "type": r.metadata.message_type,
                **count_arrays(r.content),
            })
        return out

    def pull_messages(self, message_ids):
        return self._meter(self.inner.pull_messages(message_ids))

    def send_and_receive(self, messages, *, timeout=None):
        ids = set(self.push_messages(messages))
        end = None if timeout is None else time.monotonic() + timeout
        out: list[Message] = []
        while ids:
            got = self.pull_messages(ids)
            out.extend(got)
            ids.difference_update(r.metadata.reply_to_message_id for r in got)
            if not ids or (end is not None and time.monotonic() > end):
                break
            if not got:
                time.sleep(0.05)
        return out


def _ask(grid: Grid, node: int, mtype: str, content: RecordDict, group: str, timeout: float) -> RecordDict:
    replies = list(grid.send_and_receive([Message(content, node, mtype, group_id=group)], timeout=timeout))
    if len(replies) != 1:
        raise TimeoutError(f"no reply from node {node} to {mtype} within {timeout} s")
    return replies[0].content


def _scores(metrics: MetricRecord, exclude: tuple[str, ...]) -> dict[str, float]:
    return {k: number(metrics, k) for k in metrics if k not in exclude}


@dataclass
class _Site:
    node: int
    name: str
    position: int
    num_examples: int


def _discover(grid: RecordingGrid, plan: Plan) -> list[_Site]:
    deadline = time.monotonic() + plan.timeout
    while True:
        nodes = sorted(grid.get_node_ids())
        if nodes and (plan.num_sites is None or len(nodes) >= plan.num_sites):
            break
        if time.monotonic() > deadline:
            raise TimeoutError(f"{len(nodes)} of {plan.num_sites} sites connected after {plan.timeout} s")
        time.sleep(0.5)
    replies = grid.send_and_receive([Message(RecordDict(), n, "query.hello", group_id="hello") for n in nodes],
                                    timeout=plan.timeout)
    sites = []
    for r in replies:
        c = r.content.config_records["site"]
        sites.append(_Site(r.metadata.src_node_id, str(c["name"]), int(c["position"]), int(c["num_examples"])))
    if len(sites) != len(nodes):
        raise TimeoutError(f"only {len(sites)} of {len(nodes)} sites answered")
    sites.sort(key=lambda s: s.position)
    names = [s.name for s in sites]
    if len(set(names)) != len(names) or [s.position for s in sites] != list(range(len(sites))):
        raise ValueError(f"sites must have unique names and positions 0..n-1, got {[(s.name, s.position) for s in sites]}")
    grid.names.update({s.node: s.name for s in sites})
    return sites


def _initial(grid: Grid, site: _Site, plan: Plan) -> torch.Tensor:
    """The agreed initial network (every site builds the same one from the shared init seed)."""
    content = _ask(grid, site.node, "query.initial", RecordDict(), "initial", plan.timeout)
    return from_array(content.array_records["arrays"]["params"])


@dataclass
class FlowerHistory(CollaborativeHistory):
    """A :class:`CollaborativeHistory` of a Flower run, plus what the server received
    (``received``) and the final global model: its ``server`` (DSSGD) or its parameters
    ``final`` (FedAvg). ``to_dict`` is the simulator's."""

    received: list[dict[str, Any]] = field(default_factory=list)
    server: ParameterServer | None = None
    final: torch.Tensor | None = None


def run_server(grid: Grid, plan: Plan, *, evaluate: Callable[[Any], Any] | None = None,
               model_factory: Callable[[int], Any] | None = None, progress: bool = False) -> FlowerHistory:
    """Run ``plan`` over ``grid``; returns a :class:`FlowerHistory`, a :class:`CollaborativeHistory`
    like the simulator's, plus ``history.received``: what the server received, one entry per reply (round, site,
    message type, float ``values``, integer ``indices``); ``communication`` gets the
    totals ``received_values`` and ``received_replies``.

    ``evaluate`` / ``model_factory`` are only used by FedAvg (server-side evaluation of
    the global model; ``model_factory(derive_seed(seed, "init"))`` builds the network).
    """
    rec = grid if isinstance(grid, RecordingGrid) else RecordingGrid(grid)
    sites = _discover(rec, plan)
    run = {"round_robin": _round_robin, "dssgd": _dssgd, "fedavg": _fedavg}[plan.strategy]
    hist = run(rec, sites, plan, evaluate, model_factory, progress)
    received = [r for r in rec.received if r["type"].startswith("train")]
    hist.received = received
    hist.communication["received_values"] = int(sum(r["values"] for r in received))
    hist.communication["received_replies"] = len(received)
    return hist


def _bar(total: int, desc: str, enabled: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, disable=not enabled, leave=False)


def _round_robin(grid, sites, plan, evaluate, model_factory, progress) -> FlowerHistory:
    hist = FlowerHistory("round_robin")
    vec: torch.Tensor | None = None
    holder: int | None = None
    transferred = 0
    with _bar(plan.epochs * len(sites), "B round robin (flower)", progress) as bar:
        for e in range(1, plan.epochs + 1):
            losses: list[float] = []
            metrics: dict[str, float] = {}
            for i, s in enumerate(sites):
                content = RecordDict({"config": ConfigRecord({
                    "epoch_seed": epoch_seed(plan.seed, e, i), "max_steps": plan.steps_for(s.name),
                    "evaluate": i == len(sites) - 1})})
                if vec is not None and holder != s.node:
                    content["arrays"] = array_record(params=vec)
                    transferred += vec.numel()
                reply = _ask(grid, s.node, "train.round_robin", content, str(e), plan.timeout)
                vec, holder = from_array(reply.array_records["arrays"]["params"]), s.node
                m = reply.metric_records["metrics"]
                losses.append(number(m, "train_loss"))
                metrics = _scores(m, ("train_loss", "steps"))
                bar.update()
            hist.add(e, "global", metrics, train_loss=float(np.mean(losses)))
    hist.communication["parameters_transferred"] = transferred
    return hist


def _dp_budget(cfg: DSSGDConfig) -> float:
    return math.inf if cfg.dp_budget is None else float(cfg.dp_budget)


def _dssgd(grid, sites, plan, evaluate, model_factory, progress) -> FlowerHistory:
    hist = FlowerHistory("dssgd")
    server = ParameterServer(_initial(grid, sites[0], plan))
    with _bar(plan.epochs * len(sites), "C DSSGD (flower)", progress) as bar:
        for e in range(1, plan.epochs + 1):
            order = dssgd_order(plan.seed, e, len(sites))
            for j in order:
                s = sites[j]
                cfg = plan.config_for(s.name)
                gen = dssgd_generator(plan.seed, e, s.name)
                idx, vals = server.download(cfg.theta_d, worker=s.name, generator=gen, tie_break=cfg.tie_break)
                content = RecordDict({
                    "download": array_record(indices=idx.long(), values=vals),
                    "config": ConfigRecord({
                        "epoch": e, "epoch_seed": epoch_seed(plan.seed, e, s.position),
                        "max_steps": plan.steps_for(s.name), "evaluate": True,
                        "theta_u": float(cfg.theta_u), "gamma": float(cfg.gamma), "tau": float(cfg.tau),
                        "selection": cfg.selection, "upload_base": cfg.upload_base,
                        "dp_epsilon": float(cfg.dp_epsilon or 0.0), "dp_budget": _dp_budget(cfg)}),
                })
                if plan.reproducible:
                    content["generator"] = array_record(state=gen.get_state())
                reply = _ask(grid, s.node, "train.dssgd", content, str(e), plan.timeout)
                up = reply.array_records["upload"]
                up_idx, up_vals = from_array(up["indices"]).long(), from_array(up["values"])
                if up_idx.numel():
                    server.upload(up_idx, up_vals, worker=s.name)
                m = reply.metric_records["metrics"]
                info = {"train_loss": number(m, "train_loss"), "steps": number(m, "steps"),
                        "downloaded": int(idx.numel()), "uploaded": int(up_idx.numel())}
                hist.add(e, s.name, _scores(m, ("train_loss", "steps", "downloaded", "uploaded", "epsilon_total")),
                         **info)
                bar.update()
    for s in sites:
        cfg = plan.config_for(s.name)
        if cfg.dp_epsilon:
            c = _ask(grid, s.node, "query.ledger", RecordDict(), "ledger", plan.timeout).config_records["ledger"]
            led = UploadLedger(s.name, cfg.dp_budget)
            led.entries = [{"epsilon": float(x), "epoch": int(p), "uploaded": int(u)}
                           for x, p, u in zip(numbers(c, "epsilon"), numbers(c, "epoch"), numbers(c, "uploaded"))]
            hist.ledgers[s.name] = led.to_dict()
    hist.communication.update({
        "downloaded": sum(c.values for c in server.calls if c.op == "download"),
        "uploaded": sum(c.values for c in server.calls if c.op == "upload"),
        "num_params": server.num_params,
    })
    hist.server = server  # the final global model, for tests and callers
    return hist


def _fedavg(grid, sites, plan, evaluate, model_factory, progress) -> FlowerHistory:
    from flwr.serverapp.strategy import FedAvg

    from ..dssgd import load_parameters

    hist = FlowerHistory("fedavg")
    init = _initial(grid, sites[0], plan)
    n = len(sites)
    model = model_factory(derive_seed(plan.seed, "init")) if (evaluate and model_factory) else None

    def evaluate_fn(rnd: int, arrays) -> MetricRecord | None:
        if model is None or rnd == 0:
            return None
        load_parameters(model, from_array(arrays["params"]))
        model.eval()
        with torch.no_grad():
            value = evaluate(model)
        vals = value if isinstance(value, Mapping) else {"score": value}
        return MetricRecord({str(k): float(v) for k, v in vals.items()})

    # Flower samples the nodes with the global `random`; seed it so that the aggregation order
    # (and so the float sums) is the same every run, and put the caller's state back afterwards
    saved = random.getstate()
    random.seed(derive_seed(plan.seed, "fedavg"))
    strategy = FedAvg(fraction_train=1.0, fraction_evaluate=0.0, min_train_nodes=n, min_evaluate_nodes=0,
                      min_available_nodes=n)
    try:
        result = strategy.start(grid=grid, initial_arrays=array_record(params=init), num_rounds=plan.epochs,
                                timeout=plan.timeout,
                                train_config=ConfigRecord({"seed": int(plan.seed), "max_steps": plan.steps_for("")}),
                                evaluate_fn=evaluate_fn)
    finally:
        random.setstate(saved)
    for e in range(1, plan.epochs + 1):
        ev = result.evaluate_metrics_serverapp.get(e)
        tr = result.train_metrics_clientapp.get(e)
        hist.add(e, "global", {k: number(ev, k) for k in ev} if ev else {},
                 train_loss=number(tr, "train_loss") if tr else float("nan"))
    hist.communication["parameters_transferred"] = 2 * n * plan.epochs * init.numel()
    hist.final = from_array(result.arrays["params"])
    return hist
