"""Tensors in and out of Flower records, and what a message carries.

Flower (``flwr``) moves :class:`~flwr.app.RecordDict` objects; parameter vectors and
index lists travel as :class:`~flwr.app.Array` entries of an
:class:`~flwr.app.ArrayRecord` (raw bytes of a numpy array, so float32 values cross
bit-exactly). :func:`count_arrays` is the server's meter: it counts the numbers in a
received message, floats (parameter values) and integers (their indices) separately.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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


def number(record: Mapping[str, Any], key: str, default: float | None = None) -> float:
    """The number under ``key`` of a Flower config or metric record (``default`` when absent and
    given, else a ``KeyError``); an entry that is a list, text or bytes is a ``ValueError``."""
    value = record[key] if default is None else record.get(key, default)
    if isinstance(value, bool | int | float):
        return value
    raise ValueError(f"record entry {key!r} is not a number: {value!r}")


def numbers(record: Mapping[str, Any], key: str) -> list[float]:
    """The list of numbers under ``key`` of a Flower config record."""
    value = record[key]
    if isinstance(value, list) and all(isinstance(v, bool | int | float) for v in value):
        return value
    raise ValueError(f"record entry {key!r} is not a list of numbers")


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
