"""Tensors in and out of Flower records, and what a message carries.

Flower (``flwr``) moves :class:`~flwr.app.RecordDict` objects; parameter vectors and
index lists travel as :class:`~flwr.app.Array` entries of an
:class:`~flwr.app.ArrayRecord` (raw bytes of a numpy array, so float32 values cross
bit-exactly). :func:`count_arrays` is the server's meter: it counts the numbers in a
received message, floats (parameter values) and integers (their indices) separately.
"""

from __future__ import annotations

import numpy as np
import torch
from flwr.app import Array, ArrayRecord, RecordDict

__all__ = []


def _to_array(t: torch.Tensor) -> Array:
    """A Flower :class:`Array` holding a copy of the CPU tensor ``t``."""
    return Array(np.ascontiguousarray(t.detach().cpu().numpy()))


def from_array(a: Array) -> torch.Tensor:
    """The tensor of a Flower :class:`Array` (a copy; dtype preserved)."""
    return torch.from_numpy(np.array(a.numpy(), copy=True))


def array_record(**tensors: torch.Tensor) -> ArrayRecord:
    rec = ArrayRecord()
    for k, v in tensors.items():
        rec[k] = _to_array(v)
    return rec


def count_arrays(content: RecordDict) -> dict[str, int]:
    """``{"values": #floats, "indices": #integers}`` over all arrays of ``content``."""
    values = indices = 0
    for rec in content.array_records.values():
        for arr in rec.values():
            n = int(np.prod(arr.shape)) if arr.shape else 1
            if np.dtype(arr.dtype).kind == "f":
                values += n
            else:
                indices += n
    return {"values": values, "indices": indices}
