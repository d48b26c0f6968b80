"""The four training strategies of Festag & Spreckelsen (JMIR Form Res 2020), Table 2.

=========  ======================  =====================================================
paper      class                   what crosses between parties
=========  ======================  =====================================================
A          :class:`Centralized`    every site's training data (disclosed to one trainer)
B          :class:`RoundRobin`     the full network, handed from site to site
C_θ        :class:`DSSGD`          θ_d·|p| global parameters down, ≤ θ_u·|p| updates up
D          :class:`LocalOnly`      nothing
=========  ======================  =====================================================

All strategies share one interface, :meth:`Strategy.run`, and return a :class:`CollaborativeHistory`
of test-set evaluations: after every global epoch for A and B (the paper evaluates B
"after every full epoch (ie, after 5 local epochs)"), after every local epoch of every
worker for C and D ("5 results for every epoch").

Seeds (all derived from the run seed with :func:`deidlib.rng.derive_seed`):

* the initial network: ``derive_seed(seed, "init")``, the same for every party (the
  topology and its initialisation are "collectively agreed upon");
* the shuffling (and dropout) of a local epoch: :func:`epoch_seed` ``(seed, e, i)``
  (``derive_seed(seed, "epoch", e, i)``) where ``i`` is the site's position in the round; the centralized trainer is position 0,
  so round robin with one site reproduces centralized training exactly;
* the worker order of a DSSGD round (simulated asynchrony): :func:`dssgd_order`
  (``derive_seed(seed, "order", e)``);
* a DSSGD worker's download tie-breaking and upload sampling: :func:`dssgd_generator`
  (``derive_seed(seed, "dssgd", e, site name)``).

The Flower apps (:mod:`deidlib.collaborative.flower`) call these same functions, which is
what makes their runs bit-identical to the simulator's.

Choices where the paper is silent: round robin visits the sites in a fixed order every
round; DSSGD workers start from the global initial parameters (Shokri & Shmatikov allow
either this or a private random initialisation), and upload after every local epoch
even when they ran fewer steps (``local_steps``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from ..rng import derive_seed
from .dp_upload import UploadLedger
from .dssgd import Selection, TieBreak, UploadBase, make_generator
from .server import ParameterServer
from .sites import Site
from .worker_upload import worker_upload

__all__ = ["Centralized", "RoundRobin", "DSSGD", "DSSGDConfig", "LocalOnly"]

Evaluator = Callable[[nn.Module], Any]


def epoch_seed(seed: int, epoch: int, position: int) -> int:
    """The seed of one party's local epoch (shuffling and dropout); ``position`` is the site's
    index (0 for the centralized model). The Flower apps derive it the same way."""
    return derive_seed(seed, "epoch", epoch, position)


def dssgd_order(seed: int, epoch: int, n_sites: int) -> np.ndarray:
    """The worker order of DSSGD round ``epoch`` (simulated asynchrony)."""
    return np.random.default_rng(derive_seed(seed, "order", epoch)).permutation(n_sites)


def dssgd_generator(seed: int, epoch: int, site_name: str) -> torch.Generator:
    """The generator of one worker's download tie-breaking and upload sampling in round ``epoch``."""
    return make_generator(derive_seed(seed, "dssgd", epoch, site_name))


def _metrics(value: Any) -> dict[str, float]:
    if isinstance(value, Mapping):
        return {str(k): float(v) for k, v in value.items()}
    return {"score": float(value)}


@dataclass
class CollaborativeHistory:
    """Test-set evaluations of one run: one record per (epoch, evaluated model)."""

    strategy: str
    records: list[dict[str, Any]] = field(default_factory=list)
    ledgers: dict[str, dict[str, Any]] = field(default_factory=dict)
    communication: dict[str, int] = field(default_factory=dict)

    def add(self, epoch: int, site: str, metrics: Mapping[str, float], **extra: Any) -> None:
        self.records.append({"strategy": self.strategy, "epoch": int(epoch), "site": site, **metrics, **extra})

    def frame(self):
        import pandas as pd

        return pd.DataFrame.from_records(self.records)

    def to_dict(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "records": self.records,
            "ledgers": self.ledgers,
            "communication": self.communication,
        }


def _steps_for(local_steps: int | Mapping[str, int | None] | None, site: Site) -> int | None:
    if local_steps is None or isinstance(local_steps, int):
        return local_steps
    return local_steps.get(site.name)


def _progress(total: int, desc: str, enabled: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, disable=not enabled, leave=False)


class Strategy:
    """Common interface: ``run(sites, epochs=..., evaluate=..., seed=...) -> CollaborativeHistory``.

    ``server`` may be passed to any strategy (e.g. a recording server in tests); only
    :class:`DSSGD` uses one, the others must leave it untouched.

    ``stop``: ``stop(history) -> bool``, asked after every completed epoch (round) of the
    built-in strategies; ``True`` ends the run there (an early-stopping rule, e.g. on dev
    scores the evaluator records). It changes no update, only how many epochs run.
    """

    name = "strategy"
    _stop: Callable[[CollaborativeHistory], bool] | None = None

    def run(
        self,
        sites: Sequence[Site],
        *,
        epochs: int,
        evaluate: Evaluator,
        seed: int,
        server: ParameterServer | None = None,
        progress: bool = False,
        stop: Callable[[CollaborativeHistory], bool] | None = None,
    ) -> CollaborativeHistory:
        if not sites:
            raise ValueError("no sites given")
        names = [s.name for s in sites]
        if len(set(names)) != len(names):
            raise ValueError(f"site names must be unique, got {names}")
        if int(epochs) < 0:
            raise ValueError(f"epochs must be >= 0, got {epochs}")
        self._stop = stop
        try:
            return self._run(list(sites), int(epochs), evaluate, int(seed), server, progress)
        finally:
            self._stop = None

    def _halt(self, hist: CollaborativeHistory) -> bool:
        """Whether the run's ``stop`` rule ends it after the epoch just completed."""
        return self._stop is not None and bool(self._stop(hist))

    def _run(self, sites, epochs, evaluate, seed, server, progress) -> CollaborativeHistory:  # pragma: no cover
        raise NotImplementedError


class Centralized(Strategy):
    """Experiment A: all data disclosed to one trainer ("Nonprotective Training")."""

    name = "centralized"

    def _run(self, sites, epochs, evaluate, seed, server, progress):
        hist = CollaborativeHistory(self.name)
        central = Site.pooled("central", sites)
        hist.communication["examples_disclosed"] = central.num_examples
        with _progress(epochs, "A centralized", progress) as bar:
            for e in range(1, epochs + 1):
                stats = central.train_epoch(seed=epoch_seed(seed, e, 0))
                hist.add(e, "global", _metrics(central.evaluate(evaluate)), train_loss=stats["loss"])
                bar.update()
                if self._halt(hist):
                    break
        return hist


class RoundRobin(Strategy):
    """Experiment B: the network travels from site to site (cyclic weight transfer)."""

    name = "round_robin"

    def __init__(self, local_steps: int | Mapping[str, int | None] | None = None):
        self.local_steps = local_steps

    def _run(self, sites, epochs, evaluate, seed, server, progress):
        hist = CollaborativeHistory(self.name)
        transferred = 0
        current = sites[0]
        with _progress(epochs * len(sites), "B round robin", progress) as bar:
            for e in range(1, epochs + 1):
                losses = []
                for i, site in enumerate(sites):
                    if site is not current:
                        vec = current.parameters()
                        site.load_parameters(vec)
                        transferred += vec.numel()
                        current = site
                    stats = site.train_epoch(seed=epoch_seed(seed, e, i),
                                             max_steps=_steps_for(self.local_steps, site))
                    losses.append(stats["loss"])
                    bar.update()
                hist.add(e, "global", _metrics(current.evaluate(evaluate)), train_loss=float(np.mean(losses)))
                if self._halt(hist):
                    break
        hist.communication["parameters_transferred"] = transferred
        return hist


@dataclass(frozen=True)
class DSSGDConfig:
    """One worker's DSSGD hyperparameters (Festag & Spreckelsen, Table 2; defaults = C_0.1).

    ``dp_epsilon``: if set, uploads use Shokri & Shmatikov's differentially private
    selection (:func:`~deidlib.collaborative.dp_upload.dp_select_upload`) with this ε per
    upload; ``dp_budget`` caps the worker's total ε (it stops uploading when spent).
    """

    theta_d: float = 0.1
    theta_u: float = 0.5
    gamma: float = 10.0
    tau: float = 1e-4
    selection: Selection = "random"  # "random" (paper) | "largest" (Shokri & Shmatikov)
    upload_base: UploadBase = "parameters"  # "parameters": k = θ_u·|p| | "eligible": θ_u of non-zero
    tie_break: TieBreak = "random"
    dp_epsilon: float | None = None
    dp_budget: float | None = None

    def __post_init__(self):
        for nm in ("theta_d", "theta_u"):
            v = getattr(self, nm)
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"{nm} must be in [0, 1], got {v}")
        if self.tau < 0:
            raise ValueError(f"tau must be >= 0, got {self.tau}")
        if not self.gamma > 0:
            raise ValueError(f"gamma must be > 0, got {self.gamma}")
        if self.selection not in ("random", "largest"):
            raise ValueError(f"selection must be 'random' or 'largest', got {self.selection!r}")
        if self.dp_epsilon is not None and (self.dp_epsilon <= 0 or not math.isfinite(self.gamma)):
            raise ValueError("the DP upload needs dp_epsilon > 0 and a finite gamma")


class DSSGD(Strategy):
    """Experiment C: distributed selective SGD through a :class:`ParameterServer`.

    Per round, the workers take turns in a seeded random order (simulated asynchrony).
    A worker's turn is one epoch of Figure 5: download the ``θ_d·|p|`` most-updated global
    parameters, train one local epoch of plain SGD, upload a selection of its update
    (see :mod:`deidlib.collaborative.dssgd`), and the local model is evaluated.
    """

    name = "dssgd"

    def __init__(
        self,
        config: DSSGDConfig | Mapping[str, DSSGDConfig] = DSSGDConfig(),
        local_steps: int | Mapping[str, int | None] | None = None,
    ):
        self.config = config
        self.local_steps = local_steps

    def _cfg(self, site: Site) -> DSSGDConfig:
        if isinstance(self.config, DSSGDConfig):
            return self.config
        try:
            return self.config[site.name]
        except KeyError:
            raise ValueError(f"no DSSGD configuration for site {site.name!r}") from None

    def _run(self, sites, epochs, evaluate, seed, server, progress):
        hist = CollaborativeHistory(self.name)
        init = sites[0].parameters()
        if server is None:
            server = ParameterServer(init)
        elif server.num_params != init.numel():
            raise ValueError(f"server holds {server.num_params} parameters, the model has {init.numel()}")
        ledgers = {s.name: UploadLedger(s.name, self._cfg(s).dp_budget) for s in sites if self._cfg(s).dp_epsilon}
        position = {s.name: i for i, s in enumerate(sites)}
        with _progress(epochs * len(sites), "C DSSGD", progress) as bar:
            for e in range(1, epochs + 1):
                order = dssgd_order(seed, e, len(sites))
                for j in order:
                    site = sites[j]
                    info = self._worker_epoch(site, server, e, seed, position[site.name], ledgers.get(site.name))
                    hist.add(e, site.name, _metrics(site.evaluate(evaluate)), **info)
                    bar.update()
                if self._halt(hist):
                    break
        hist.ledgers = {k: v.to_dict() for k, v in ledgers.items()}
        hist.communication = {
            "downloaded": sum(c.values for c in server.calls if c.op == "download"),
            "uploaded": sum(c.values for c in server.calls if c.op == "upload"),
            "num_params": server.num_params,
        }
        return hist

    def _worker_epoch(self, site: Site, server: ParameterServer, epoch: int, seed: int, pos: int,
                      ledger: UploadLedger | None) -> dict[str, float]:
        cfg = self._cfg(site)
        gen = dssgd_generator(seed, epoch, site.name)
        idx, vals = server.download(cfg.theta_d, worker=site.name, generator=gen, tie_break=cfg.tie_break)
        if idx.numel():
            site.load_entries(idx, vals)
        before = site.parameters()
        stats = site.train_epoch(seed=epoch_seed(seed, epoch, pos),
                                 max_steps=_steps_for(self.local_steps, site))
        update = site.parameters() - before  # = Σ d of Figure 5
        up_idx, up_vals = worker_upload(update, theta_u=cfg.theta_u, gamma=cfg.gamma, tau=cfg.tau, generator=gen,
                                        selection=cfg.selection, base=cfg.upload_base,
                                        dp_epsilon=cfg.dp_epsilon, ledger=ledger, epoch=epoch)
        if up_idx.numel():
            server.upload(up_idx, up_vals, worker=site.name)
        return {"train_loss": stats["loss"], "steps": stats["steps"], "downloaded": int(idx.numel()),
                "uploaded": int(up_idx.numel())}


class LocalOnly(Strategy):
    """Experiment D: every site trains on its own data; nothing is exchanged."""

    name = "local"

    def __init__(self, local_steps: int | Mapping[str, int | None] | None = None):
        self.local_steps = local_steps

    def _run(self, sites, epochs, evaluate, seed, server, progress):
        hist = CollaborativeHistory(self.name)
        with _progress(epochs * len(sites), "D local only", progress) as bar:
            for e in range(1, epochs + 1):
                for i, site in enumerate(sites):
                    stats = site.train_epoch(seed=epoch_seed(seed, e, i),
                                             max_steps=_steps_for(self.local_steps, site))
                    hist.add(e, site.name, _metrics(site.evaluate(evaluate)), train_loss=stats["loss"],
                             steps=stats["steps"])
                    bar.update()
                if self._halt(hist):
                    break
        hist.communication = {"parameters_transferred": 0}
        return hist


_STRATEGIES: dict[str, type[Strategy]] = {
    "centralized": Centralized,
    "round_robin": RoundRobin,
    "dssgd": DSSGD,
    "local": LocalOnly,
}
