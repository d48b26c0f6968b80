"""Seeded corpus splits: by patient (default), by document, K-site partitions, and
i2b2-style ``train/ dev/ test/`` folders.

Splitting by patient keeps all records of a patient in one part, as the i2b2 2014
train/test split does (Stubbs & Uzuner 2015). Splitting by document reproduces papers
that split notes directly: the ahmed thesis (section 5, "Experimental setup") splits
the 2,434 nursing notes 80:20 into 1,948 training and 486 test notes.

Part sizes (choice, documented because papers are vague about rounding): for fractions
``(train, [dev,] test)`` the dev and test parts get ``floor(n * fraction)`` documents
and train gets the rest. This gives 2,434 -> 1,948 / 486 for ``(0.8, 0.2)`` and
``(0.8, 0.0, 0.2)``, the thesis' numbers (``round`` would give 1,947 / 487).
"""

from __future__ import annotations

import math
import os
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..rng import as_generator
from .document import CorpusError, Document

__all__ = [
    "CorpusSplits", "THESIS_NURSING_FRACTIONS", "split_by_patient", "split_by_document",
    "partition_by_patient", "subsample", "read_split_dirs",
]

PARTS = ("train", "dev", "test")


@dataclass
class CorpusSplits:
    """Train / dev / test documents (each list sorted by document id)."""

    train: list[Document]
    dev: list[Document] = field(default_factory=list)
    test: list[Document] = field(default_factory=list)
    name: str = ""

    def items(self) -> Iterator[tuple[str, list[Document]]]:
        for k in PARTS:
            yield k, getattr(self, k)

    @property
    def all(self) -> list[Document]:
        return self.train + self.dev + self.test

    def counts(self) -> dict[str, dict[str, int]]:
        """Documents, patients, sites and PHI spans per part."""
        return {
            k: {
                "documents": len(docs),
                "patients": len({d.patient_id or d.id for d in docs}),
                "sites": len({d.site for d in docs}),
                "phi": sum(len(d.spans) for d in docs),
            }
            for k, docs in self.items()
        }

    def summary(self) -> str:
        """One line per part, e.g. ``train: 72 docs, 17 patients, 5 sites, 1,204 PHI``."""
        lines = [f"corpus {self.name}" if self.name else "corpus"]
        for k, c in self.counts().items():
            lines.append(
                f"  {k:5s}: {c['documents']:,} docs, {c['patients']:,} patients, {c['sites']} sites, {c['phi']:,} PHI"
            )
        return "\n".join(lines)

    def __repr__(self) -> str:
        n = ", ".join(f"{k}={len(v)}" for k, v in self.items())
        return f"CorpusSplits({self.name!r}, {n})"


#: fractions of the ahmed thesis' nursing-note split (80:20, giving 1,948 / 486 notes)
THESIS_NURSING_FRACTIONS = (0.8, 0.2)


def _split_counts(n: int, fractions: Sequence[float]) -> list[int]:
    """Part sizes for ``n`` documents: ``floor(n * f)`` for dev/test, the rest for train."""
    fractions = tuple(float(f) for f in fractions)
    if len(fractions) not in (2, 3) or any(f < 0 for f in fractions) or abs(sum(fractions) - 1) > 1e-6:
        raise ValueError(f"fractions must be 2 (train, test) or 3 (train, dev, test) non-negative numbers summing to 1, got {fractions}")
    rest = [math.floor(n * f + 1e-9) for f in fractions[1:]]
    return [n - sum(rest), *rest]


def _as_splits(parts: list[list[Document]], name: str) -> CorpusSplits:
    parts = [sorted(p, key=lambda d: d.id) for p in parts]
    if len(parts) == 2:
        return CorpusSplits(parts[0], [], parts[1], name)
    return CorpusSplits(parts[0], parts[1], parts[2], name)


def _check_unique(docs: Sequence[Document]) -> None:
    dup = [i for i, c in Counter(d.id for d in docs).items() if c > 1]
    if dup:
        raise CorpusError(f"document ids must be unique to split a corpus; repeated: {', '.join(sorted(dup)[:5])}")


def split_by_document(
    docs: Sequence[Document], fractions: Sequence[float] = (0.8, 0.2), seed: int = 0, name: str = ""
) -> CorpusSplits:
    """Seeded document-level split into (train, [dev,] test) of :func:`_split_counts` sizes.

    Documents are shuffled with ``numpy.random.default_rng(seed).permutation`` and cut in
    order; with two fractions ``dev`` is empty. A patient's notes may land in different
    parts (that is the point of this split; use :func:`split_by_patient` otherwise).
    """
    _check_unique(docs)
    order = as_generator(seed).permutation(len(docs))
    shuffled = [docs[i] for i in order]
    parts, pos = [], 0
    for c in _split_counts(len(docs), fractions):
        parts.append(shuffled[pos : pos + c])
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

    Patients (``patient_id``, or the document id when empty) are visited in seeded random
    order; each goes to the first of test, dev whose document count stays within half
    the patient's record count of its :func:`_split_counts` target, otherwise to train.
    Part sizes therefore approach the targets in *documents* (patients have different
    numbers of notes), and train absorbs the slack.
    """
    _check_unique(docs)
    groups = _by_patient(docs)
    keys = sorted(groups)
    order = as_generator(seed).permutation(len(keys))
    targets = _split_counts(len(docs), fractions)
    parts: list[list[Document]] = [[] for _ in targets]
    fill = list(range(len(targets) - 1, 0, -1))  # test, then dev
    for i in order:
        g = groups[keys[i]]
        k = next((k for k in fill if len(parts[k]) + len(g) / 2 <= targets[k]), 0)
        parts[k].extend(g)
    return _as_splits(parts, name)


def partition_by_patient(docs: Sequence[Document], k: int, seed: int = 0) -> list[list[Document]]:
    """``k`` disjoint subsets ("sites"), all records of a patient at one site, balanced by
    document count.

    Longest-processing-time greedy: patients in seeded random order, stably sorted by
    number of records (largest first), each to the site with the fewest documents so
    far (lowest index on ties). Every site gets at least one patient; the largest and
    smallest sites differ by at most the largest patient's record count.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    _check_unique(docs)
    groups = _by_patient(docs)
    keys = sorted(groups)
    if len(keys) < k:
        raise ValueError(f"cannot partition {len(keys)} patients into {k} sites")
    order = [keys[i] for i in as_generator(seed).permutation(len(keys))]
    order.sort(key=lambda p: -len(groups[p]))
    sites: list[list[Document]] = [[] for _ in range(k)]
    for p in order:
        j = min(range(k), key=lambda s: (len(sites[s]), s))
        sites[j].extend(groups[p])
    return [sorted(s, key=lambda d: d.id) for s in sites]


def subsample(items: Sequence, n: int | None, seed: int) -> list:
    """A seeded random subset of ``n`` of ``items``, in their original order; all of them
    (as a new list) when ``n`` is ``None`` or not smaller than ``len(items)``.

    The subset is ``numpy.random.default_rng(seed).choice(len(items), n, replace=False)``,
    sorted: the same seed and length always pick the same positions. Its membership depends
    on the whole list, so it is a data-set cap, not a DP sampling step.
    """
    if n is None or len(items) <= n:
        return list(items)
    if n < 0:
        raise ValueError(f"cannot keep {n} items")
    idx = np.sort(np.random.default_rng(seed).choice(len(items), n, replace=False))
    return [items[i] for i in idx]


#: folder names accepted for each part by :func:`read_split_dirs` (the official n2c2
#: 2014 release ships ``training-PHI-Gold-Set1``, ``training-PHI-Gold-Set2`` and
#: ``testing-PHI-Gold-fixed``)
SPLIT_DIR_ALIASES = {
    "train": ("train", "training", "training-PHI-Gold-Set*"),
    "dev": ("dev", "valid", "validation"),
    "test": ("test", "testing", "testing-PHI-Gold*"),
}


def has_split_dirs(root: str | os.PathLike) -> bool:
    """Whether ``root`` holds train/ or test/ folders (or the official release's names)."""
    return any(_part_dirs(Path(root), p) for p in ("train", "test"))


def _part_dirs(root: Path, part: str) -> list[Path]:
    found: list[Path] = []
    for pattern in SPLIT_DIR_ALIASES[part]:
        found += sorted(p for p in root.glob(pattern) if p.is_dir() and p not in found)
    return found


def read_split_dirs(
    root: str | os.PathLike, *, lenient: bool = False, seed: int = 0, fractions: Sequence[float] = (0.7, 0.1, 0.2)
) -> CorpusSplits:
    """Read an i2b2-style corpus folder.

    ``root/train`` (or ``training-PHI-Gold-Set1`` and ``-Set2``), optional ``root/dev``
    (``valid``) and ``root/test`` (``testing-PHI-Gold-fixed``) folders of ``PPP-RR.xml``
    files; several folders for one part are concatenated. A folder without such
    subfolders but with ``*.xml`` files (in it or in any subfolder, as ``deidlib synth``
    writes them) is split by patient (``fractions``, ``seed``).
    """
    from .i2b2 import read_i2b2_dir

    r = Path(root)
    if not r.is_dir():
        raise FileNotFoundError(f"{r}: corpus folder does not exist")
    dirs = {p: _part_dirs(r, p) for p in PARTS}
    if dirs["train"] or dirs["test"]:
        parts = [[doc for d in dirs[p] for doc in read_i2b2_dir(d, lenient=lenient)] for p in PARTS]
        seen: dict[str, str] = {}
        for p, docs in zip(PARTS, parts):
            for doc in docs:
                if doc.id in seen:
                    raise CorpusError(f"{r}: document {doc.id!r} appears in both {seen[doc.id]} and {p}")
                seen[doc.id] = p
        train, dev, test = (sorted(x, key=lambda d: d.id) for x in parts)
        return CorpusSplits(train, dev, test, name=r.name)
    docs = read_i2b2_dir(r, lenient=lenient, recursive=True)  # e.g. the site<k>/ folders of 'deidlib synth'
    if not docs:
        raise FileNotFoundError(f"{r}: no train/ or test/ folder and no *.xml files")
    return split_by_patient(docs, fractions, seed=seed, name=r.name)


def _write_split_dirs(splits: CorpusSplits, root: str | os.PathLike, *, include_meta: bool = True) -> Path:
    """Write ``root/train``, ``root/dev``, ``root/test`` (non-empty parts only) as i2b2 XML.

    Each file is written atomically; every document is serialised before any file is
    written, so bad input leaves nothing behind. Existing files with other names in
    those folders are left alone (write into an empty folder to round-trip exactly).
    """
    from .i2b2 import to_i2b2_xml, write_i2b2_dir

    r = Path(root)
    for _, docs in splits.items():
        for d in docs:
            to_i2b2_xml(d, include_meta=include_meta)  # validate everything first
    for part, docs in splits.items():
        if docs:
            write_i2b2_dir(docs, r / part, include_meta=include_meta)
    return r
