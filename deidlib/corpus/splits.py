"""Seeded corpus splits: by patient (default), by document, and K-site partitions.

Splitting by patient keeps all records of a patient in one part, as the i2b2 2014
train/test split does; splitting by document reproduces papers that split notes
directly (the ahmed thesis' 80/20 split of the nursing notes, 1,948/486 notes).
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from ..rng import as_generator
from .document import Document

__all__ = [
    "CorpusSplits",
    "THESIS_NURSING_FRACTIONS",
    "split_by_patient",
    "split_by_document",
    "partition_by_patient",
    "read_split_dirs",
    "write_split_dirs",
]


@dataclass
class CorpusSplits:
    train: list[Document]
    dev: list[Document] = field(default_factory=list)
    test: list[Document] = field(default_factory=list)
    name: str = ""

    def summary(self) -> str:
        parts = []
        for k in ("train", "dev", "test"):
            docs = getattr(self, k)
            parts.append(
                f"{k}: {len(docs)} docs, {len({d.patient_id for d in docs})} patients, {sum(len(d.spans) for d in docs)} PHI"
            )
        return (f"{self.name}: " if self.name else "") + "; ".join(parts)

    @property
    def all(self) -> list[Document]:
        return self.train + self.dev + self.test


#: the ahmed thesis' document-level split of the 2,434 nursing notes: 1,948 train / 486 test
THESIS_NURSING_FRACTIONS = (1948 / 2434, 486 / 2434)


def _counts(n: int, fractions: Sequence[float]) -> list[int]:
    if len(fractions) not in (2, 3) or any(f < 0 for f in fractions) or abs(sum(fractions) - 1) > 1e-6:
        raise ValueError(f"fractions must be 2 or 3 non-negative numbers summing to 1, got {fractions}")
    cum = [round(n * sum(fractions[: i + 1])) for i in range(len(fractions))]
    cum[-1] = n
    return [b - a for a, b in zip([0] + cum[:-1], cum)]


def _as_splits(parts: list[list[Document]], name: str) -> CorpusSplits:
    if len(parts) == 2:
        return CorpusSplits(parts[0], [], parts[1], name)
    return CorpusSplits(parts[0], parts[1], parts[2], name)


def split_by_document(
    docs: Sequence[Document], fractions: Sequence[float] = (0.8, 0.2), seed: int = 0, name: str = ""
) -> CorpusSplits:
    """Shuffle documents (seeded) and cut them by ``fractions`` (train, [dev,] test).

    Counts are ``round(n * cumulative fraction)``: 2,434 notes at (0.8, 0.2) give
    1,947/487; the thesis' 1,948/486 needs ``fractions=(1948/2434, 486/2434)``, which
    :data:`THESIS_NURSING_FRACTIONS` holds.
    """
    order = as_generator(seed).permutation(len(docs))
    shuffled = [docs[i] for i in order]
    parts, pos = [], 0
    for c in _counts(len(docs), fractions):
        parts.append(sorted(shuffled[pos : pos + c], key=lambda d: d.id))
        pos += c
    return _as_splits(parts, name)


def _by_patient(docs: Sequence[Document]) -> dict[str, list[Document]]:
    groups: dict[str, list[Document]] = defaultdict(list)
    for d in docs:
        groups[d.patient_id or d.id].append(d)
    return groups


def split_by_patient(
    docs: Sequence[Document], fractions: Sequence[float] = (0.7, 0.1, 0.2), seed: int = 0, name: str = ""
) -> CorpusSplits:
    """Seeded split in which all records of a patient fall into one part.

    Patients are shuffled and assigned greedily so that each part's *document* count
    approaches its fraction (patients have different numbers of notes).
    """
    groups = _by_patient(docs)
    keys = sorted(groups)
    order = as_generator(seed).permutation(len(keys))
    targets = _counts(len(docs), fractions)
    parts: list[list[Document]] = [[] for _ in targets]
    k = 0
    for i in order:
        g = groups[keys[i]]
        while k < len(parts) - 1 and len(parts[k]) + len(g) / 2 > targets[k]:
            k += 1
        parts[k].extend(g)
    return _as_splits([sorted(p, key=lambda d: d.id) for p in parts], name)


def partition_by_patient(docs: Sequence[Document], k: int, seed: int = 0) -> list[list[Document]]:
    """``k`` disjoint subsets (sites), all records of a patient at one site, balanced by
    document count: patients in seeded random order go to the currently smallest site."""
    if k < 1:
        raise ValueError("k must be >= 1")
    groups = _by_patient(docs)
    keys = sorted(groups)
    if len(keys) < k:
        raise ValueError(f"cannot partition {len(keys)} patients into {k} sites")
    order = as_generator(seed).permutation(len(keys))
    sites: list[list[Document]] = [[] for _ in range(k)]
    for i in order:
        j = min(range(k), key=lambda s: (len(sites[s]), s))
        sites[j].extend(groups[keys[i]])
    return [sorted(s, key=lambda d: d.id) for s in sites]


def read_split_dirs(root: str | os.PathLike, *, lenient: bool = False, seed: int = 0) -> CorpusSplits:
    """Read i2b2-style ``train/``, ``dev/`` (optional) and ``test/`` folders of XML files;
    a flat folder of XML files is split by patient (70/10/20) instead."""
    from .i2b2 import read_i2b2_dir

    r = Path(root)
    if (r / "train").is_dir():
        get = lambda n: read_i2b2_dir(r / n, lenient=lenient) if (r / n).is_dir() else []  # noqa: E731
        return CorpusSplits(get("train"), get("dev"), get("test"), r.name)
    docs = read_i2b2_dir(r, lenient=lenient)
    if not docs:
        raise FileNotFoundError(f"{r}: no train/ folder and no *.xml files")
    return split_by_patient(docs, seed=seed, name=r.name)


def write_split_dirs(splits: CorpusSplits, root: str | os.PathLike) -> Path:
    from .i2b2 import write_i2b2_dir

    r = Path(root)
    for n in ("train", "dev", "test"):
        docs = getattr(splits, n)
        if docs:
            write_i2b2_dir(docs, r / n)
    return r
