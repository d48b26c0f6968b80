"""Registries for the Alawad et al. 2020 highlight (cancer registries that classify pathology
reports by primary site / subsite and collaborate without sharing data).

Two sources:

* :func:`synthetic_registries` — the generator's pathology reports
  (``deidlib.synthetic.generate(..., note_mix={"pathology_report": 1})``); each generator site
  is one registry. Registries differ (1) in writing style, vocabulary, casing and abbreviation
  rate as the generator's per-site ``SiteStyle`` already provides, (2) in primary-site
  prevalence (the style's ``primary_site_weights``) and (3) in label prevalence by a
  Dirichlet draw: registry *r* draws ``p_r ~ Dir(concentration · 1)`` over the labels and keeps
  each of its reports of label *c* with probability ``p_r[c] / max(p_r)`` (rejection
  thinning, so a registry never invents reports; small ``concentration`` = strong skew).
* :func:`abstract_registries` — ``medical_abstracts_tc`` (Schopf et al. 2023; 5 classes of
  patient condition) split into pseudo-registries by the label-skewed Dirichlet partition
  of Hsu et al. 2019 ("Measuring the effects of non-identical data distribution for
  federated visual classification"): for each class, its abstracts are shuffled and cut
  among the registries in proportions ``q_c ~ Dir(concentration · 1)``. Real text; the
  registries differ only in label mix, not in writing style.

Each registry's reports are then split into train and test (seeded, ``test_fraction``).
"""

from __future__ import annotations

import csv
import os
import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..corpus.locate import MEDICAL_ABSTRACTS, find_data_dir
from ..rng import derive_seed
from ..synthetic.generator import generate

__all__ = ["Registry", "synthetic_registries", "abstract_registries", "label_counts"]

#: metadata keys of a pathology report that can serve as the class label.
_LABEL_FIELDS = ("subsite", "primary_site")


@dataclass(frozen=True)
class Registry:
    """One registry's labelled reports: texts with integer labels into ``label_names``."""

    name: str
    train_texts: tuple[str, ...]
    train_labels: tuple[int, ...]
    test_texts: tuple[str, ...]
    test_labels: tuple[int, ...]
    label_names: tuple[str, ...]


def _split(name, texts, labels, label_names, test_fraction, seed) -> Registry:
    order = list(range(len(texts)))
    random.Random(derive_seed(seed, "registry-split", name)).shuffle(order)
    n_test = max(1, round(test_fraction * len(order))) if len(order) > 1 else 0
    test, train = order[:n_test], order[n_test:]
    return Registry(name, tuple(texts[i] for i in train), tuple(labels[i] for i in train),
                    tuple(texts[i] for i in test), tuple(labels[i] for i in test), tuple(label_names))


def _check(n_registries: int, concentration: float, test_fraction: float) -> None:
    if n_registries < 2:
        raise ValueError(f"need at least 2 registries, got {n_registries}")
    if concentration <= 0:
        raise ValueError(f"the Dirichlet concentration must be > 0, got {concentration}")
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")


def synthetic_registries(n_registries: int = 3, patients: int = 600, *, seed: int = 0, label: str = "subsite",
                         concentration: float = 5.0, test_fraction: float = 0.3) -> list[Registry]:
    """Registries of synthetic pathology reports (see the module docstring for how they differ).

    ``patients`` cancer patients get one pathology report each; ``label`` is ``"subsite"``
    (ICD-O-3 topography such as ``C50.4``; 30 classes) or ``"primary_site"`` (6 classes).
    Label names are sorted over all registries so ids mean the same everywhere.
    """
    _check(n_registries, concentration, test_fraction)
    if label not in _LABEL_FIELDS:
        raise ValueError(f"label must be one of {_LABEL_FIELDS}, got {label!r}")
    docs = generate(patients, n_registries, seed, (1, 1), note_mix={"pathology_report": 1})
    names = sorted({d.metadata[label] for d in docs})
    index = {n: i for i, n in enumerate(names)}
    rng = np.random.default_rng(derive_seed(seed, "registry-prevalence", n_registries, concentration))
    out = []
    for r in range(n_registries):
        site = f"site{r}"
        p = rng.dirichlet(np.full(len(names), concentration))
        keep = p / p.max()
        thin = random.Random(derive_seed(seed, "registry-thin", r))
        mine = [d for d in docs if d.site == site and thin.random() < keep[index[d.metadata[label]]]]
        out.append(_split(site, [d.text for d in mine], [index[d.metadata[label]] for d in mine], names,
                          test_fraction, seed))
    return out


def _read_abstracts(root) -> tuple[list[str], list[int], list[str]]:
    label_file = os.path.join(root, "medical_tc_labels.csv")
    with open(label_file, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    names = [r["condition_name"] for r in sorted(rows, key=lambda r: int(r["condition_label"]))]
    texts, labels = [], []
    for part in ("medical_tc_train.csv", "medical_tc_test.csv"):
        path = os.path.join(root, part)
        if not os.path.exists(path):
            continue
        with open(path, newline="", encoding="utf-8") as f:
            for r in csv.DictReader(f):
                texts.append(r["medical_abstract"])
                labels.append(int(r["condition_label"]) - 1)
    if not texts:
        raise FileNotFoundError(f"no medical_tc_train.csv or medical_tc_test.csv under {root}")
    return texts, labels, names


def abstract_registries(n_registries: int = 3, *, seed: int = 0, concentration: float = 0.5,
                        test_fraction: float = 0.3, data_dir: str | os.PathLike | None = None,
                        limit: int | None = None) -> list[Registry]:
    """Pseudo-registries from ``medical_abstracts_tc`` by the label-skewed Dirichlet partition.

    Reads every ``medical_tc_{train,test}.csv`` present (the shared copy holds the test file,
    2,888 abstracts); ``limit`` keeps a seeded random subset first. Raises
    ``FileNotFoundError`` with a one-line message when the data is absent.
    """
    _check(n_registries, concentration, test_fraction)
    root = find_data_dir(MEDICAL_ABSTRACTS, data_dir)
    if root is None:
        raise FileNotFoundError(f"{MEDICAL_ABSTRACTS} not found (pass data_dir or set DEIDLIB_DATA_DIR)")
    texts, labels, names = _read_abstracts(root)
    rng = np.random.default_rng(derive_seed(seed, "abstract-registries", n_registries, concentration))
    order = rng.permutation(len(texts))
    if limit is not None:
        order = order[:limit]
    parts: list[list[int]] = [[] for _ in range(n_registries)]
    for c in range(len(names)):
        idx = [int(i) for i in order if labels[i] == c]
        q = rng.dirichlet(np.full(n_registries, concentration))
        cuts = (np.cumsum(q)[:-1] * len(idx)).astype(int)
        for r, chunk in enumerate(np.split(np.asarray(idx, dtype=int), cuts)):
            parts[r].extend(int(i) for i in chunk)
    return [_split(f"registry{r}", [texts[i] for i in p], [labels[i] for i in p], names, test_fraction, seed)
            for r, p in enumerate(parts)]


def label_counts(registries: Sequence[Registry], split: str = "train") -> np.ndarray:
    """``(n_registries, n_labels)`` counts of each label per registry in ``split``."""
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    n = len(registries[0].label_names)
    out = np.zeros((len(registries), n), dtype=int)
    for r, reg in enumerate(registries):
        for y in getattr(reg, f"{split}_labels"):
            out[r, y] += 1
    return out
