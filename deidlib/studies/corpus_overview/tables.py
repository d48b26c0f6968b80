"""The corpus overview's tables: documents, tokens and PHI mentions per site and category, label
distributions under each label scheme, PHI density per note type, and the cross-site matrix's
per-cell means (:func:`cross_site_summary`, :func:`cross_site_table`). Real corpora get counts
alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from ...corpus import CATEGORIES, Document
from ...corpus.labels import gold_tags, span_label, tagged_sentences
from ...corpus.tokenize import tokenize

__all__ = ["corpus_table", "phi_table", "label_distribution", "note_type_table", "cross_site_summary",
           "cross_site_table"]


def corpus_table(docs: Sequence[Document], by: str = "site") -> pd.DataFrame:
    """Documents, patients, tokens, characters and PHI mentions per ``by`` (site or split)."""
    rows: dict[str, Counter] = {}
    patients: dict[str, set] = {}
    for d in docs:
        key = getattr(d, by) or "-"
        c = rows.setdefault(key, Counter())
        c["documents"] += 1
        c["tokens"] += len(tokenize(d.text))
        c["characters"] += len(d.text)
        c["PHI mentions"] += len(d.spans)
        patients.setdefault(key, set()).add(d.patient_id)
    df = pd.DataFrame.from_dict(rows, orient="index").fillna(0).astype(int)
    df.insert(1, "patients", [len(patients[k]) for k in df.index])
    df.index.name = by
    df = df.sort_index()
    df.loc["total"] = df.sum(numeric_only=True)
    df.loc["total", "patients"] = len({d.patient_id for d in docs})
    return df


def phi_table(docs: Iterable[Document], level: str = "category", by: str = "site") -> pd.DataFrame:
    """PHI mentions per category (or TYPE with ``level="subtype"``) and site."""
    counts: Counter = Counter()
    for d in docs:
        for s in d.spans:
            counts[(getattr(s, level), getattr(d, by) or "-")] += 1
    if not counts:
        return pd.DataFrame()
    s = pd.Series(counts)
    df = s.unstack(fill_value=0).astype(int)
    if level == "category":
        df = df.reindex([c for c in CATEGORIES if c in df.index])
    df["total"] = df.sum(axis=1)
    return df


def note_type_table(docs: Sequence[Document]) -> pd.DataFrame:
    """Per note type: documents, sentences, the share of sentences holding PHI and the
    share of PHI tokens (binary labels, default tokenizer): how PHI-dense each kind of note is."""
    by: dict[str, list[Document]] = {}
    for d in docs:
        by.setdefault(d.metadata.get("note_type", "-"), []).append(d)
    rows = {}
    for nt, group in sorted(by.items()):
        sents = tagged_sentences(group, "binary", "BIO", "default")
        toks = sum(len(gold_tags(x)) for x in sents)
        rows[nt] = {"documents": len(group), "sentences": len(sents),
                    "sentences with PHI": sum(any(t != "O" for t in gold_tags(x)) for x in sents) / max(1, len(sents)),
                    "PHI tokens": sum(t != "O" for x in sents for t in gold_tags(x)) / max(1, toks)}
    df = pd.DataFrame.from_dict(rows, orient="index")
    df.index.name = "note type"
    return df


def label_distribution(docs: Iterable[Document], scheme: str = "i2b2") -> pd.Series:
    """Number of PHI mentions per label of ``scheme`` (spans the scheme drops are not counted)."""
    c: Counter = Counter()
    for d in docs:
        for s in d.spans:
            lab = span_label(s, scheme)
            if lab is not None:
                c[lab] += 1
    return pd.Series(c, dtype=int).sort_values(ascending=False)


def cross_site_summary(matrix: pd.DataFrame) -> dict[str, Any]:
    """Per-cell mean and spread (std over seeds) of F1, and the mean diagonal / off-diagonal F1.

    Returns ``{"cells": DataFrame[train, test, diagonal, f1_mean, f1_std, seeds], "diagonal": float,
    "off_diagonal": float, "gap": float (diagonal - off_diagonal), "min_diagonal": float}``.
    """
    cells = (matrix.groupby(["train", "test", "diagonal"], as_index=False)
             .agg(f1_mean=("f1", "mean"), f1_std=("f1", "std"), seeds=("seed", "nunique")))
    cells["f1_std"] = cells["f1_std"].fillna(0.0)
    diag = cells[cells["diagonal"]]
    off = cells[~cells["diagonal"]]
    d = float(diag["f1_mean"].mean())
    o = float(off["f1_mean"].mean()) if len(off) else float("nan")
    return {"cells": cells, "diagonal": d, "off_diagonal": o, "gap": d - o, "min_diagonal": float(diag["f1_mean"].min())}


def cross_site_table(results: Mapping[str, Any]) -> pd.DataFrame:
    """The cells of every heterogeneity level of :func:`~.run.run_study`'s cross-site matrices,
    one frame (``corpus_cross_site``): heterogeneity, train, test, diagonal, mean F1, its std, seeds."""
    tables = [cross_site_summary(m)["cells"].assign(heterogeneity=results["heterogeneity"][label])
              for label, m in results["cross_site"].items()]
    return pd.concat(tables, ignore_index=True)[["heterogeneity", "train", "test", "diagonal", "f1_mean", "f1_std",
                                                 "seeds"]]
