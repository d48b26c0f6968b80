"""Corpus overview (notebook ``00_corpus_overview``): what the studies train and test on.

Counts documents, tokens and PHI mentions per site and category, label distributions
under each label scheme, and renders one annotated example note. Example text is only
ever shown for the synthetic corpus; real corpora get counts alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import matplotlib.pyplot as plt
import pandas as pd

from ..corpus import CATEGORIES, Document
from ..corpus.labels import span_label, tagged_sentences
from ..corpus.tokenize import tokenize
from ..plotting import style

__all__ = ["corpus_table", "phi_table", "label_distribution", "note_type_table", "plot_overview"]


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
        toks = sum(len(x.tags) for x in sents)
        rows[nt] = {"documents": len(group), "sentences": len(sents),
                    "sentences with PHI": sum(any(t != "O" for t in x.tags) for x in sents) / max(1, len(sents)),
                    "PHI tokens": sum(t != "O" for x in sents for t in x.tags) / max(1, toks)}
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


@style()
def plot_overview(phi_by_site: pd.DataFrame, labels: pd.Series, title: str = "synthetic corpus",
                  sizes: pd.DataFrame | None = None):
    """Two panels: PHI mentions per category and site (stacked bars) and the label distribution
    (horizontal bars, log scale, so that every label name reads). ``sizes`` (a
    :func:`corpus_table` with its ``total`` row) puts the corpus size in the title: documents,
    patients, tokens and PHI mentions."""
    data = phi_by_site.drop(columns="total", errors="ignore")
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, max(4.4, 0.19 * len(labels) + 1.2)),
                               gridspec_kw={"width_ratios": [1.3, 1]})
    bottom = None
    for site in data.columns:
        a.bar(data.index, data[site], bottom=bottom, label=site)
        bottom = data[site] if bottom is None else bottom + data[site]
    a.set_title("PHI mentions per category and site", fontsize=10)
    a.set_ylabel("mentions")
    a.tick_params(axis="x", labelsize=8)
    plt.setp(a.get_xticklabels(), rotation=30, ha="right")
    a.legend(fontsize=8, title="site", title_fontsize=8)
    b.barh(labels.index[::-1], labels.values[::-1], color="tab:purple")
    b.set_xscale("log")
    b.set_xlabel("mentions (log scale)")
    b.tick_params(axis="y", labelsize=7)
    b.set_title("label distribution (festag 29-class scheme, non-PHI omitted)", fontsize=10)
    head = title
    if sizes is not None and "total" in sizes.index:
        t = sizes.loc["total"]
        head += (f": {int(t['documents']):,} documents, {int(t['patients']):,} patients, {int(t['tokens']):,} tokens, "
                 f"{int(t['PHI mentions']):,} PHI mentions")
    fig.suptitle(head, fontsize=10)
    fig.tight_layout()
    return fig
