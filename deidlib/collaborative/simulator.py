"""In-process simulation of collaborative training: fresh sites per experiment, one call.

:func:`make_sites` turns per-site example lists (e.g. from
:func:`deidlib.corpus.splits.partition_by_patient`) into :class:`~.sites.Site` objects
that all start from the same agreed network; :func:`simulate` runs one strategy on
fresh sites, so experiments never share state.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from torch import nn

from ..rng import derive_seed
from .server import ParameterServer
from .sites import ModelFactory, Site, Trainer
from .strategies import CollaborativeHistory, Strategy

__all__ = ["make_sites", "simulate"]


def make_sites(
    partitions: Sequence[Sequence[Any]],
    *,
    model_factory: ModelFactory,
    trainer: Trainer,
    seed: int,
    names: Sequence[str] | None = None,
) -> list[Site]:
    """One :class:`Site` per partition, all initialised with ``derive_seed(seed, "init")``."""
    if not partitions:
        raise ValueError("no partitions given")
    names = list(names) if names is not None else [f"site{i + 1}" for i in range(len(partitions))]
    if len(names) != len(partitions):
        raise ValueError(f"{len(names)} names for {len(partitions)} partitions")
    init = derive_seed(seed, "init")
    return [Site(n, p, model_factory=model_factory, trainer=trainer, init_seed=init) for n, p in zip(names, partitions)]


def simulate(
    strategy: Strategy,
    partitions: Sequence[Sequence[Any]],
    *,
    model_factory: ModelFactory,
    trainer: Trainer,
    evaluate: Callable[[nn.Module], Any],
    epochs: int,
    seed: int,
    names: Sequence[str] | None = None,
    server: ParameterServer | None = None,
    progress: bool = False,
    stop: Callable[[CollaborativeHistory], bool] | None = None,
) -> CollaborativeHistory:
    """Run ``strategy`` on fresh sites built from ``partitions``; returns its :class:`CollaborativeHistory`
    (``stop``: an early-stopping rule, see :meth:`Strategy.run`)."""
    sites = make_sites(partitions, model_factory=model_factory, trainer=trainer, seed=seed, names=names)
    return strategy.run(sites, epochs=epochs, evaluate=evaluate, seed=seed, server=server, progress=progress, stop=stop)
