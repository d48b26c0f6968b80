"""The DSSGD parameter server: global parameters and per-parameter update counts.

Festag & Spreckelsen (JMIR Form Res 2020), DSSGD section: "the global weights p_glo are
initialized at the server. Beside the single set of weights, the server maintains a
statistic for every weight indicating how often it has been updated by workers." The
server "is solely used to upload and download subsets of local derivatives" and "does not
have access to the local training data".

The API enforces that: every method takes and returns plain tensors (copies, never views
of server state), rejects anything else with a :class:`TypeError`, and appends one entry
per call to :attr:`ParameterServer.calls` (operation, number of values moved), so tests
and notebooks can audit what crossed the boundary.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .dssgd import TieBreak, apply_upload, select_download

__all__ = ["ParameterServer"]


@dataclass(frozen=True)
class ServerCall:
    op: str  # "download" | "upload" | "read"
    worker: str
    values: int  # number of scalars that crossed


def _tensor(name: str, x: object) -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"the server only exchanges tensors; {name} is a {type(x).__name__}")
    return x


class ParameterServer:
    """Global parameter vector + update counts (float64 counts would be overkill: ``long``)."""

    def __init__(self, initial: torch.Tensor):
        initial = _tensor("initial", initial)
        if initial.dim() != 1:
            raise ValueError(f"initial parameters must be a flat vector, got shape {tuple(initial.shape)}")
        self._params = initial.detach().clone()
        self._counts = torch.zeros(initial.numel(), dtype=torch.long, device=initial.device)
        self.calls: list[ServerCall] = []

    @property
    def num_params(self) -> int:
        return self._params.numel()

    def counts(self) -> torch.Tensor:
        """A copy of the per-parameter update counts."""
        return self._counts.clone()

    def parameters(self, worker: str = "observer") -> torch.Tensor:
        """A copy of the full global vector (logged as a read)."""
        self.calls.append(ServerCall("read", str(worker), self.num_params))
        return self._params.clone()

    def download(
        self,
        theta_d: float,
        *,
        worker: str,
        generator: torch.Generator | None = None,
        tie_break: TieBreak = "random",
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(indices, values)`` of the ``θ_d·|p|`` most-updated global parameters (copies)."""
        idx = select_download(self._counts, theta_d, generator=generator, tie_break=tie_break)
        self.calls.append(ServerCall("download", str(worker), idx.numel()))
        return idx, self._params[idx].clone()

    def upload(self, indices: torch.Tensor, values: torch.Tensor, *, worker: str) -> None:
        """Add ``values`` at ``indices`` to the global parameters and count the updates."""
        indices = _tensor("indices", indices).detach().to(self._params.device, torch.long)
        values = _tensor("values", values).detach().to(self._params.device)
        self._params, self._counts = apply_upload(self._params, self._counts, indices, values)
        self.calls.append(ServerCall("upload", str(worker), indices.numel()))
