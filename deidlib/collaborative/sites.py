"""A site (hospital, registry, worker) that keeps its training data to itself.

A :class:`Site` holds its private examples and its local copy of the network. Its public
API exchanges only what the protocols of Festag & Spreckelsen (JMIR Form Res 2020,
"Collaborative Training") allow: flat parameter vectors or selected entries of them
(round robin, DSSGD), scalar training statistics, and the local model for evaluation on
the global test set. The examples never leave the object, with one explicit exception:
:meth:`Site.disclose_data`, the "disclosure of the local training data" of the
nonprotective centralized training (experiment A), which is recorded
(:attr:`Site.disclosures`) so that a run can be audited.

Nothing here is a security boundary against code running in the same process (Python
has none); it makes the protocol explicit and testable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import nn

from .dssgd import flatten_parameters, load_parameters

__all__ = []

#: ``factory(init_seed) -> nn.Module``: the network topology "collectively agreed upon"
ModelFactory = Callable[[int], nn.Module]
#: ``trainer(model, examples, *, seed, max_steps) -> {"loss": ..., "steps": ...}``
Trainer = Callable[..., dict]


class Site:
    """One worker with private data and a local network."""

    __slots__ = ("name", "__data", "_model", "_factory", "_trainer", "_init_seed", "disclosures", "_n")

    def __init__(self, name: str, data: Sequence[Any], *, model_factory: ModelFactory, trainer: Trainer,
                 init_seed: int):
        if not data:
            raise ValueError(f"site {name!r} has no training examples")
        self.name = str(name)
        self.__data = tuple(data)
        self._n = len(self.__data)
        self._factory = model_factory
        self._trainer = trainer
        self._init_seed = int(init_seed)
        self._model = model_factory(self._init_seed)
        self.disclosures = 0

    def __repr__(self) -> str:
        return f"Site({self.name!r}, {self._n} examples)"

    # -- what may be known about a site ------------------------------------------------
    @property
    def num_examples(self) -> int:
        return self._n

    @property
    def model(self) -> nn.Module:
        """The local network (for evaluation on the global test set and for saving)."""
        return self._model

    # -- parameter exchange --------------------------------------------------------------
    def parameters(self) -> torch.Tensor:
        """A copy of the local network's flattened parameters."""
        return flatten_parameters(self._model)

    def load_parameters(self, vector: torch.Tensor) -> None:
        """Replace the local parameters by ``vector`` (round robin hand-over, DSSGD init)."""
        if not isinstance(vector, torch.Tensor):
            raise TypeError(f"site {self.name!r} only accepts parameter tensors, got {type(vector).__name__}")
        load_parameters(self._model, vector)

    def load_entries(self, indices: torch.Tensor, values: torch.Tensor) -> None:
        """Overwrite the local parameters at ``indices`` (a DSSGD download)."""
        if not (isinstance(indices, torch.Tensor) and isinstance(values, torch.Tensor)):
            raise TypeError(f"site {self.name!r} only accepts parameter tensors")
        vec = flatten_parameters(self._model)
        vec[indices.to(vec.device)] = values.to(vec.device, vec.dtype)
        load_parameters(self._model, vec)

    # -- local computation ------------------------------------------------------------
    def train_epoch(self, *, seed: int, max_steps: int | None = None) -> dict[str, float]:
        """One local epoch (or ``max_steps`` steps) of the site's trainer on its private data."""
        return dict(self._trainer(self._model, self.__data, seed=seed, max_steps=max_steps))

    def evaluate(self, evaluator: Callable[[nn.Module], Any]) -> Any:
        """Run ``evaluator`` (owned by whoever holds the global test set) on the local model."""
        was_training = self._model.training
        self._model.eval()
        try:
            with torch.no_grad():
                return evaluator(self._model)
        finally:
            self._model.train(was_training)

    # -- the nonprotective exception -------------------------------------------------------
    def disclose_data(self) -> tuple[Any, ...]:
        """Hand over the private examples (only the centralized experiment A does this)."""
        self.disclosures += 1
        return self.__data

    @classmethod
    def pooled(cls, name: str, sites: Sequence[Site]) -> Site:
        """A central site holding the disclosed union of ``sites``' data (experiment A).

        Uses the first site's model factory, trainer and initial seed, so that all
        experiments start from the same agreed network.
        """
        if not sites:
            raise ValueError("no sites to pool")
        first = sites[0]
        data: list[Any] = []
        for s in sites:
            data.extend(s.disclose_data())
        return cls(name, data, model_factory=first._factory, trainer=first._trainer, init_seed=first._init_seed)
