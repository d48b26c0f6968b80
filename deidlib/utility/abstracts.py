"""Loader for the labelled medical abstracts (Schopf et al., NLPIR 2022), the real-text
stand-in for the thesis' MIMIC-III classification task (Ahmed thesis §4.3.2, Table 4.9).

Folder layout (its README): ``medical_tc_train.csv`` / ``medical_tc_test.csv`` with columns
``condition_label`` (1-5) and ``medical_abstract``; ``medical_tc_labels.csv`` maps
``condition_label`` to ``condition_name``. Some copies ship only the test split; then
:func:`load_abstracts` with ``split="train"`` says so.
"""

from __future__ import annotations

import csv
from pathlib import Path

from deidlib.corpus.locate import MEDICAL_ABSTRACTS, find_data_dir

__all__ = ["AbstractsError", "load_abstracts"]



class AbstractsError(FileNotFoundError):
    """The medical abstracts folder or one of its files is missing or malformed."""


def _dir(folder) -> Path:
    if folder is not None:
        p = Path(folder)
        if not p.is_dir():
            raise AbstractsError(f"medical abstracts folder not found: {p}")
        return p
    found = find_data_dir(MEDICAL_ABSTRACTS)
    if found is None:
        raise AbstractsError(f"{MEDICAL_ABSTRACTS} not found: pass folder=..., or set DEIDLIB_DATA_DIR to a "
                             f"folder containing {MEDICAL_ABSTRACTS}/")
    return found


def label_names(folder=None) -> dict[int, str]:
    """``{condition_label: condition_name}`` from ``medical_tc_labels.csv``."""
    f = _dir(folder) / "medical_tc_labels.csv"
    if not f.is_file():
        raise AbstractsError(f"{f} not found")
    with f.open(newline="", encoding="utf-8") as fh:
        return {int(r["condition_label"]): r["condition_name"] for r in csv.DictReader(fh)}


def load_abstracts(folder=None, split: str = "test") -> tuple[list[str], list[int]]:
    """``(texts, labels)`` of ``medical_tc_{split}.csv`` (labels are the 1-5 condition ids)."""
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    f = _dir(folder) / f"medical_tc_{split}.csv"
    if not f.is_file():
        raise AbstractsError(f"{f} not found (this copy of the data set has no {split} split)")
    texts, labels = [], []
    with f.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = {"condition_label", "medical_abstract"} - set(reader.fieldnames or ())
        if missing:
            raise AbstractsError(f"{f}: missing column(s) {', '.join(sorted(missing))}")
        for i, r in enumerate(reader, start=2):
            try:
                labels.append(int(r["condition_label"]))
            except (TypeError, ValueError):
                raise AbstractsError(f"{f}:{i}: bad condition_label {r['condition_label']!r}") from None
            texts.append(r["medical_abstract"])
    return texts, labels
