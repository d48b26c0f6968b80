"""The ahmed_utility study's tables (Ahmed 2020 thesis §4.3.2): BLEU (Table 4.5), LDA topic
overlap (Table 4.6, with the coherence-chosen k) and downstream classification (Table 4.9) of
every (span source, transform), and the medical abstracts classified after de-identification.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from ...corpus import Document
from ...corpus.splits import subsample
from ...corpus.tokenize import tokenize
from ...rng import derive_seed
from ...training import predict_documents
from ...utility.bleu import bleu_scores
from ...utility.classify import classify, restrict, top_classes
from ...utility.topics import choose_num_topics, fit_topics, topic_overlap
from .deidentify import make_transforms
from .params import SOURCES, UtilityParams

__all__ = []


def _frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows).set_index(["source", "transform"])


def bleu_table(originals: Sequence[str], texts: dict[tuple[str, str], list[str]], scores: pd.DataFrame) -> pd.DataFrame:
    """Table 4.5: P/R/F1 of the span source and BLEU-1/2/3 of each de-identified corpus."""
    rows = []
    for (s, t), xs in texts.items():
        rows.append({"source": SOURCES.get(s, s), "transform": t, **scores.loc[s, ["P(%)", "R(%)", "F1(%)"]].to_dict(),
                     **bleu_scores(originals, xs)})
    return _frame(rows)


def topic_table(originals: Sequence[str], texts: dict[tuple[str, str], list[str]], scores: pd.DataFrame,
                params: UtilityParams, *, seed: int = 0, progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """Table 4.6 (per-topic and overall word match %, ``n_topics`` × ``top_words``) plus the
    overall match at the coherence-chosen k; returns ``(table, coherence, k)``."""
    kw = {"top_n": params.top_words, "seed": seed, "passes": params.lda_passes}
    k_best, coh = choose_num_topics(originals, params.topic_candidates, measure=params.coherence, **kw)
    ks = [params.n_topics] + ([k_best] if k_best != params.n_topics else [])
    ref = {k: fit_topics(originals, k, **kw) for k in ks}
    rows = []
    for (s, t), xs in tqdm(texts.items(), desc="topics", disable=not progress):
        row = {"source": SOURCES.get(s, s), "transform": t, **scores.loc[s, ["P(%)", "R(%)", "F1(%)"]].to_dict()}
        for k in ks:
            ov = topic_overlap(ref[k], fit_topics(xs, k, **kw))
            if k == params.n_topics:
                row.update({f"Topic{i + 1}": v for i, v in enumerate(ov.per_topic)})
                row["Overall"] = ov.overall
            if k == k_best:
                row[f"Overall (k={k_best}, {params.coherence})"] = ov.overall
        rows.append(row)
    coherence = pd.DataFrame({"k": list(coh), params.coherence: list(coh.values())}).set_index("k")
    coherence["chosen"] = coherence.index == k_best
    return _frame(rows), coherence, k_best


def _accuracy(texts, labels, groups, n, params, seed) -> float:
    classes = top_classes(labels, n)
    idx = [i for i, y in enumerate(labels) if y in set(classes)]
    accs = []
    for r in range(params.class_repeats):
        x, y = restrict([texts[i] for i in idx], [labels[i] for i in idx], classes)
        g = None if groups is None else [groups[i] for i in idx]
        accs.append(classify(x, y, groups=g, test_size=params.test_size, seed=derive_seed(seed, "classify", r) % 2**32)["accuracy"])
    return 100 * float(np.mean(accs))


def classification_table(originals: Sequence[str], texts: dict[tuple[str, str], list[str]], labels: Sequence,
                         groups: Sequence | None, scores: pd.DataFrame, params: UtilityParams, *, seed: int = 0,
                         progress: bool = True) -> pd.DataFrame:
    """Table 4.9: accuracy (%) with 3/5/7 classes (the most frequent labels, nested), trained and
    tested on original and on each de-identified corpus, the same patient splits for every row
    (mean over ``class_repeats`` seeded splits). Class counts above the number of labels are left out."""
    counts = [n for n in params.class_counts if n <= len(set(labels))]
    rows = [{"source": "non-sanitized", "transform": "original", "P(%)": np.nan, "R(%)": np.nan, "F1(%)": np.nan,
             **{f"acc {n}": _accuracy(list(originals), labels, groups, n, params, seed) for n in counts}}]
    for (s, t), xs in tqdm(texts.items(), desc="classify", disable=not progress):
        rows.append({"source": SOURCES.get(s, s), "transform": t, **scores.loc[s, ["P(%)", "R(%)", "F1(%)"]].to_dict(),
                     **{f"acc {n}": _accuracy(xs, labels, groups, n, params, seed) for n in counts}})
    return _frame(rows)


def abstracts_table(taggers: dict[str, dict[str, Any]], params: UtilityParams, *, seed: int = 0, device="cpu",
                    progress: bool = True) -> pd.DataFrame | None:
    """Medical abstracts de-identified by each tagger (removal, mask, first surrogate ε) and
    classified with 3 and 5 classes; ``None`` when the data set is not found or ``max_abstracts`` is 0."""
    from ...utility.abstracts import AbstractsError, load_abstracts

    if params.max_abstracts == 0:
        return None
    try:
        texts, labels = load_abstracts(split="test")
    except AbstractsError:
        return None
    keep = subsample(list(range(len(texts))), params.max_abstracts, derive_seed(seed, "abstracts"))
    texts, labels = [texts[i] for i in sorted(keep)], [labels[i] for i in sorted(keep)]
    docs = [Document(id=f"abstract-{i}", text=t) for i, t in enumerate(texts)]
    transforms = make_transforms(replace(params, pseudonym_n=(), epsilons=params.epsilons[:1]), seed=seed)
    n_tokens = sum(len(tokenize(t)) for t in texts)
    counts = [n for n in (3, 5) if n <= len(set(labels))]
    rows = [{"tagger": "none", "transform": "original", "tokens flagged (%)": 0.0,
             **{f"acc {n}": _accuracy(texts, labels, None, n, params, seed) for n in counts}}]
    for name, tg in taggers.items():
        pred = predict_documents(tg["tagger"], docs, device=device)
        flagged = sum(len(tokenize(d.text[s.start:s.end])) for d in pred for s in d.spans)
        for t, f in transforms.items():
            xs = f(pred, name)
            rows.append({"tagger": SOURCES[name], "transform": t, "tokens flagged (%)": 100 * flagged / max(n_tokens, 1),
                         **{f"acc {n}": _accuracy(xs, labels, None, n, params, seed) for n in counts}})
    return pd.DataFrame(rows).set_index(["tagger", "transform"])
