"""Distributed selective SGD (DSSGD): the selection math as pure tensor functions.

Implements the worker procedure of Festag & Spreckelsen (JMIR Form Res 2020;4(5):e14064),
section "Distributed Selective Stochastic Gradient Descent" and its Figure 5, which is
Shokri & Shmatikov, "Privacy-preserving deep learning", CCS 2015, Algorithm 1
("participant i"). Every function works on the *flattened* parameter vector ``p``
(:func:`torch.nn.utils.parameters_to_vector`), is vectorised (no Python loop over
parameters) and takes its randomness as a :class:`torch.Generator`.

One epoch of one worker (Figure 5)::

    idx_d  = select_download(counts, theta_d)          # the θ_d·|p| most-updated parameters
    p_loc  = apply_download(p_loc, p_glo, idx_d)
    ...one local epoch of plain SGD (lr η = 0.9 in the paper)...
    update = p_loc_after - p_loc_before                 # = Σ d over the epoch (Figure 5)
    update = threshold_and_clip(update, tau, gamma)     # |u| < τ -> 0, clamp to [-γ, γ]
    idx_u  = select_upload(update, theta_u)             # θ_u·|p| of the non-zero entries
    p_glo, counts = apply_upload(p_glo, counts, idx_u, update[idx_u])

Choices and deviations (the paper is silent or ambiguous on these):

* Figure 5's upload line says θ_d; its prose and Shokri & Shmatikov's Algorithm 1 use θ_u: so do we.
* Upload size ``round(θ_u · len(p))`` drawn among the non-zero entries left after the τ
  threshold (``base="eligible"``: θ_u of the non-zero entries); a positive fraction selects at
  least one entry. ``selection="largest"``: the ``k`` largest ``|update|`` instead.
* Download ties (all counts are 0 at the start) broken at random (``tie_break="random"``,
  default) or by index (``"index"``); ``|u| < τ`` dropped, exact zeros never uploaded.
* The differentially private upload (Shokri & Shmatikov §5): :mod:`deidlib.collaborative.dp_upload`.

Each choice in full: docs/design/collaborative.md.
"""

from __future__ import annotations

import math
from typing import Literal

import torch
from torch import nn

__all__ = ["flatten_parameters", "make_generator"]

Selection = Literal["random", "largest"]
TieBreak = Literal["random", "index"]
UploadBase = Literal["parameters", "eligible"]


def make_generator(seed: int) -> torch.Generator:
    """A CPU :class:`torch.Generator` seeded with ``seed`` (all selection randomness is CPU-side)."""
    g = torch.Generator(device="cpu")
    g.manual_seed(int(seed) & 0x7FFF_FFFF_FFFF_FFFF)
    return g


def flatten_parameters(model: nn.Module) -> torch.Tensor:
    """A detached copy of all trainable parameters as one flat vector (``parameters_to_vector``)."""
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise ValueError("model has no trainable parameters")
    return nn.utils.parameters_to_vector(params).detach().clone()


def load_parameters(model: nn.Module, vector: torch.Tensor) -> None:
    """Write a flat vector back into the trainable parameters of ``model`` (``vector_to_parameters``)."""
    params = [p for p in model.parameters() if p.requires_grad]
    n = sum(p.numel() for p in params)
    if not isinstance(vector, torch.Tensor) or vector.dim() != 1 or vector.numel() != n:
        shape = tuple(vector.shape) if isinstance(vector, torch.Tensor) else type(vector).__name__
        raise ValueError(f"parameter vector must be 1-D with {n} entries, got {shape}")
    with torch.no_grad():
        nn.utils.vector_to_parameters(vector.to(device=params[0].device, dtype=params[0].dtype), params)


def _check_fraction(name: str, value: float) -> float:
    value = float(value)
    if not (0.0 <= value <= 1.0) or math.isnan(value):
        raise ValueError(f"{name} must be a fraction in [0, 1], got {value}")
    return value


def fraction_count(fraction: float, n: int) -> int:
    """``round(fraction · n)`` rounded half up; at least 1 when ``fraction > 0`` and ``n > 0``."""
    fraction = _check_fraction("fraction", fraction)
    if n <= 0 or fraction == 0.0:
        return 0
    return max(1, min(n, int(math.floor(fraction * n + 0.5))))


def select_download(
    counts: torch.Tensor,
    theta_d: float,
    *,
    generator: torch.Generator | None = None,
    tie_break: TieBreak = "random",
) -> torch.Tensor:
    """Indices of the ``θ_d·len(p)`` parameters with the highest global update counts.

    Festag & Spreckelsen, DSSGD section: "The θ_d·len(p_glo) parameters with the highest
    global update statistics are chosen for the download." Ties (e.g. all counts 0 at the
    start) are broken uniformly at random with ``generator`` (``tie_break="random"``) or
    by lower index (``tie_break="index"``): with random keys ``count + U[0, 1)`` and one
    ``topk``. Returns a ``long`` tensor of indices (order unspecified).
    """
    if counts.dim() != 1:
        raise ValueError(f"counts must be a 1-D tensor, got shape {tuple(counts.shape)}")
    n = counts.numel()
    k = fraction_count(theta_d, n)
    if k == 0:
        return torch.empty(0, dtype=torch.long, device=counts.device)
    if k == n:
        return torch.arange(n, device=counts.device)
    if tie_break == "random":
        if generator is None:
            raise ValueError("tie_break='random' needs a torch.Generator (randomness is passed in)")
        # integer count + U[0, 1) key: orders by count, ties uniformly at random (exact in float64)
        key = counts.double() + torch.rand(n, generator=generator, dtype=torch.float64).to(counts.device)
        chosen = torch.topk(key, k, sorted=False).indices
    elif tie_break == "index":
        chosen = torch.sort(counts, descending=True, stable=True).indices[:k]
    else:
        raise ValueError(f"unknown tie_break {tie_break!r}; choose 'random' or 'index'")
    return chosen


def _apply_download(local: torch.Tensor, global_: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    """A copy of ``local`` with the entries at ``indices`` replaced by the global values."""
    if local.shape != global_.shape:
        raise ValueError(f"local {tuple(local.shape)} and global {tuple(global_.shape)} parameter vectors differ in shape")
    out = local.clone()
    out[indices] = global_[indices].to(out.dtype)
    return out


def threshold_and_clip(update: torch.Tensor, tau: float, gamma: float) -> torch.Tensor:
    """Figure 5's per-entry rule: ``0`` if ``|u| < τ`` else ``clamp(u, -γ, γ)``.

    ``gamma=math.inf`` disables clipping, ``tau=0`` disables the threshold.
    """
    if tau < 0 or math.isnan(tau):
        raise ValueError(f"tau must be >= 0, got {tau}")
    if not gamma > 0:
        raise ValueError(f"gamma must be > 0 (math.inf disables clipping), got {gamma}")
    out = torch.where(update.abs() < tau, torch.zeros_like(update), update)
    if math.isfinite(gamma):
        out = out.clamp(-gamma, gamma)
    return out


def select_upload(
    update: torch.Tensor,
    theta_u: float,
    *,
    generator: torch.Generator | None = None,
    selection: Selection = "random",
    base: UploadBase = "parameters",
) -> torch.Tensor:
    """Indices of the update entries a worker uploads (``long`` tensor, order unspecified).

    Candidates are the non-zero entries of ``update`` (already passed through
    :func:`threshold_and_clip`). ``selection="random"`` samples ``k`` of them uniformly
    without replacement (the ``k`` largest of i.i.d. uniform keys) (Festag & Spreckelsen, Figure 5, with θ_u for the typo θ_d);
    ``selection="largest"`` takes the ``k`` largest ``|update|`` (Shokri & Shmatikov).
    ``k = round(θ_u·len(p))`` capped at the number of candidates (``base="parameters"``),
    or ``round(θ_u·nnz)`` (``base="eligible"``).
    """
    if update.dim() != 1:
        raise ValueError(f"update must be a 1-D tensor, got shape {tuple(update.shape)}")
    eligible = torch.nonzero(update != 0, as_tuple=False).squeeze(1)
    nnz = eligible.numel()
    if base == "parameters":
        k = min(fraction_count(theta_u, update.numel()), nnz)
    elif base == "eligible":
        k = fraction_count(theta_u, nnz)
    else:
        raise ValueError(f"unknown upload base {base!r}; choose 'parameters' or 'eligible'")
    if k == 0:
        return torch.empty(0, dtype=torch.long, device=update.device)
    if k == nnz:
        return eligible
    if selection == "random":
        if generator is None:
            raise ValueError("selection='random' needs a torch.Generator (randomness is passed in)")
        # the k largest of i.i.d. uniform keys: a uniformly random k-subset
        keys = torch.rand(nnz, generator=generator, dtype=torch.float64).to(update.device)
        chosen = eligible[torch.topk(keys, k, sorted=False).indices]
    elif selection == "largest":
        mags = update[eligible].abs()
        chosen = eligible[torch.sort(mags, descending=True, stable=True).indices[:k]]
    else:
        raise ValueError(f"unknown selection {selection!r}; choose 'random' or 'largest'")
    return chosen


def apply_upload(
    global_: torch.Tensor, counts: torch.Tensor, indices: torch.Tensor, values: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """New ``(global, counts)``: the chosen updates added, their counts incremented by one.

    Festag & Spreckelsen: "Update global parameters by adding chosen updates"; the server
    "maintains a statistic for every weight indicating how often it has been updated".
    Repeated indices are accumulated (``index_add``), though selections never repeat.
    """
    if indices.dim() != 1 or values.shape != indices.shape:
        raise ValueError(
            f"indices and values must be 1-D of equal length, got {tuple(indices.shape)} and {tuple(values.shape)}"
        )
    if indices.numel() and (int(indices.min()) < 0 or int(indices.max()) >= global_.numel()):
        raise ValueError(f"upload indices out of range [0, {global_.numel()})")
    new_global = global_.index_add(0, indices, values.to(global_.dtype))
    new_counts = counts.index_add(0, indices, torch.ones_like(indices, dtype=counts.dtype))
    return new_global, new_counts
