"""The site side: a Flower :class:`~flwr.clientapp.ClientApp` holding one site's data.

A site answers these messages from the server (:mod:`.server_app`):

``query.hello``
    its name, position and number of examples (nothing else about the data);
``query.initial``
    the agreed initial network (built from the shared init seed, before any training);
``query.ledger``
    its DP ledger (ε spent per upload), read by the server at the end of a DP run;
``train.round_robin``
    experiment B: load the full vector it is sent (if any), train one local epoch, return
    the full vector (Festag & Spreckelsen's cyclic hand-over, relayed by the server);
``train.dssgd``
    experiment C, one epoch of Festag & Spreckelsen's Figure 5 on the site: write the
    downloaded entries into the local model, train one local epoch, threshold / clip /
    select the update (or the differentially private selection of Shokri & Shmatikov
    §5) and return only the selected indices and values;
``train`` (default action)
    FedAvg (McMahan et al., AISTATS 2017, Algorithm 1, E = 1 local epoch): train one
    local epoch from the global vector, return the vector and ``num-examples`` — the
    message format of Flower's own :class:`flwr.serverapp.strategy.FedAvg`.

The local model outlives a message in ``context.state`` (Flower keeps a node's state
for the whole run; with process isolation a fresh process handles every message), and
so does the DP ledger. Evaluation on the global test set runs on the site (as in the
simulator, where the local model is evaluated after every worker epoch) and only the
scores are sent back.

Randomness. With ``reproducible`` set in a DSSGD message the server forwards the state
of the per-(epoch, worker) generator it used for the download, so that the site's upload
selection draws exactly the simulator's numbers (``strategies.dssgd_generator(seed, e, site)``,
:mod:`deidlib.collaborative.strategies`). That shares the site's sampling — and, for
the DP upload, its Laplace noise — with the server, which is only acceptable for
studies (:func:`.flower_simulate`, and ``reproducible=true`` in a real run, for checking
it against the simulator). Without it (the default of the Flower App's run configuration
and of ``python -m deidlib.collaborative.flower local``) the site seeds its generator from
:func:`secrets.randbits`.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, get_args

from flwr.app import ConfigRecord, Context, Message, MetricRecord, RecordDict
from flwr.app.typing import MetricRecordValues
from flwr.clientapp import ClientApp

from ..dp_upload import UploadLedger
from ..dssgd import Selection, UploadBase, make_generator
from ..sites import Site
from ..strategies import epoch_seed
from ..worker_upload import worker_upload
from .records import array_record, from_array, number, numbers

__all__ = []


@dataclass
class SiteSpec:
    """What a client process holds: its :class:`Site` (private data + model), its position
    among the sites (seed derivation), and optionally the global test-set evaluator."""

    site: Site
    position: int
    evaluate: Callable[[Any], Any] | None = None


def _metrics(value: Any) -> dict[str, float]:
    if value is None:
        return {}
    if isinstance(value, dict):
        return {str(k): float(v) for k, v in value.items()}
    return {"score": float(value)}


def _steps(cfg: ConfigRecord) -> int | None:
    s = int(number(cfg, "max_steps", -1))
    return None if s < 0 else s


def _choice(cfg: ConfigRecord, key: str, options: Any) -> Any:
    """The entry ``key`` of ``cfg``, one of the values of the ``Literal`` type ``options``."""
    value = cfg[key]
    if value not in get_args(options):
        raise ValueError(f"config entry {key!r} must be one of {get_args(options)}, got {value!r}")
    return value


def _restore(spec: SiteSpec, context: Context) -> None:
    """Put the site's own model back (from ``context.state``) before handling a message."""
    if "local" in context.state.array_records:
        spec.site.load_parameters(from_array(context.state.array_records["local"]["params"]))


def _keep(spec: SiteSpec, context: Context) -> None:
    context.state["local"] = array_record(params=spec.site.parameters())


def _evaluate(spec: SiteSpec, cfg: ConfigRecord) -> dict[str, float]:
    if not bool(cfg.get("evaluate", False)) or spec.evaluate is None:
        return {}
    return _metrics(spec.site.evaluate(spec.evaluate))


def _ledger(spec: SiteSpec, context: Context, budget: float | None) -> UploadLedger:
    led = UploadLedger(spec.site.name, budget)
    if "ledger" in context.state.config_records:
        rec = context.state.config_records["ledger"]
        led.entries = [{"epsilon": float(e), "epoch": int(p), "uploaded": int(u)}
                       for e, p, u in zip(numbers(rec, "epsilon"), numbers(rec, "epoch"), numbers(rec, "uploaded"))]
    return led


def _save_ledger(led: UploadLedger, context: Context) -> None:
    context.state["ledger"] = ConfigRecord({
        "epsilon": [float(e["epsilon"]) for e in led.entries],
        "epoch": [int(e["epoch"]) for e in led.entries],
        "uploaded": [int(e["uploaded"]) for e in led.entries],
    })


def make_client_app(load: Callable[[Context], SiteSpec]) -> ClientApp:
    """A ClientApp whose site is ``load(context)`` (e.g. by ``context.node_config["site"]``)."""
    app = ClientApp()

    @app.query("hello")
    def hello(msg: Message, context: Context) -> Message:
        spec = load(context)
        return Message(RecordDict({"site": ConfigRecord({"name": spec.site.name, "position": spec.position,
                                                         "num_examples": spec.site.num_examples})}),
                       reply_to=msg)

    @app.query("initial")
    def initial(msg: Message, context: Context) -> Message:
        spec = load(context)
        if "local" in context.state.array_records:
            raise RuntimeError("the initial network is only sent before training")
        # the agreed initial network (built from the shared init seed), untouched by any data
        return Message(RecordDict({"arrays": array_record(params=spec.site.parameters())}), reply_to=msg)

    @app.query("ledger")
    def ledger(msg: Message, context: Context) -> Message:
        spec = load(context)
        led = _ledger(spec, context, None)
        return Message(RecordDict({"ledger": ConfigRecord({
            "epsilon": [float(e["epsilon"]) for e in led.entries],
            "epoch": [int(e["epoch"]) for e in led.entries],
            "uploaded": [int(e["uploaded"]) for e in led.entries]})}), reply_to=msg)

    @app.train("round_robin")
    def round_robin(msg: Message, context: Context) -> Message:
        spec = load(context)
        cfg = msg.content.config_records["config"]
        _restore(spec, context)
        if "arrays" in msg.content.array_records:
            spec.site.load_parameters(from_array(msg.content.array_records["arrays"]["params"]))
        stats = spec.site.train_epoch(seed=int(number(cfg, "epoch_seed")), max_steps=_steps(cfg))
        _keep(spec, context)
        metrics: dict[str, MetricRecordValues] = {"train_loss": float(stats["loss"]), "steps": float(stats["steps"]),
                                                  **_evaluate(spec, cfg)}
        return Message(RecordDict({"arrays": array_record(params=spec.site.parameters()),
                                   "metrics": MetricRecord(metrics)}), reply_to=msg)

    @app.train("dssgd")
    def dssgd(msg: Message, context: Context) -> Message:
        spec = load(context)
        cfg = msg.content.config_records["config"]
        down = msg.content.array_records["download"]
        _restore(spec, context)
        idx = from_array(down["indices"]).long()
        if idx.numel():
            spec.site.load_entries(idx, from_array(down["values"]))
        if "generator" in msg.content.array_records:  # reproducible (study) mode, see module doc
            gen = make_generator(0)
            gen.set_state(from_array(msg.content.array_records["generator"]["state"]))
        else:
            gen = make_generator(secrets.randbits(63))
        before = spec.site.parameters()
        stats = spec.site.train_epoch(seed=int(number(cfg, "epoch_seed")), max_steps=_steps(cfg))
        update = spec.site.parameters() - before
        eps = float(number(cfg, "dp_epsilon", 0.0))
        budget = float(number(cfg, "dp_budget", math.inf))
        ledger = _ledger(spec, context, None if math.isinf(budget) else budget) if eps > 0 else None
        up_idx, up_vals = worker_upload(
            update, theta_u=number(cfg, "theta_u"), gamma=number(cfg, "gamma"), tau=number(cfg, "tau"),
            selection=_choice(cfg, "selection", Selection), base=_choice(cfg, "upload_base", UploadBase), generator=gen,
            dp_epsilon=eps if eps > 0 else None, ledger=ledger, epoch=int(number(cfg, "epoch")))
        if ledger is not None:
            _save_ledger(ledger, context)
        _keep(spec, context)
        metrics: dict[str, MetricRecordValues] = {
            "train_loss": float(stats["loss"]), "steps": float(stats["steps"]),
            "downloaded": float(idx.numel()), "uploaded": float(up_idx.numel()), **_evaluate(spec, cfg)}
        if ledger is not None:
            metrics["epsilon_total"] = ledger.total_epsilon
        return Message(RecordDict({"upload": array_record(indices=up_idx.long(), values=up_vals),
                                   "metrics": MetricRecord(metrics)}), reply_to=msg)

    @app.train()
    def fedavg(msg: Message, context: Context) -> Message:
        spec = load(context)
        cfg = msg.content.config_records["config"]
        spec.site.load_parameters(from_array(msg.content.array_records["arrays"]["params"]))
        seed = epoch_seed(int(number(cfg, "seed")), int(number(cfg, "server-round")), spec.position)
        stats = spec.site.train_epoch(seed=seed, max_steps=_steps(cfg))
        _keep(spec, context)
        return Message(RecordDict({
            "arrays": array_record(params=spec.site.parameters()),
            "metrics": MetricRecord({"num-examples": spec.site.num_examples, "train_loss": float(stats["loss"])}),
        }), reply_to=msg)

    return app

