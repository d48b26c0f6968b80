"""Topic overlap between original and de-identified corpora (Ahmed thesis §4.3.2, Table 4.6).

The thesis fits LDA with 5 topics ("defined according to the coherence score") and 30 words
per topic on the original and on each de-identified corpus and reports, per topic and
overall, the percentage of the original topic's words found in the de-identified one.
Choices where the thesis is vague:

* Preprocessing: lower-cased :func:`deidlib.corpus.tokenize` tokens, alphabetic, length >= 2,
  not in gensim's English ``STOPWORDS`` (no download). Mask labels (``[NAME]`` -> ``name``)
  are words of the de-identified text and stay.
* Both corpora get the same k and seed; gensim ``LdaModel(random_state=seed)``.
* k is chosen on the original corpus by coherence (:func:`choose_num_topics`), ``c_v`` by
  default: it correlates best with human topic judgements (Röder et al., WSDM 2015) and
  needs only the texts (no download); ``u_mass`` is offered as the fast alternative.
* Matching: original topic i is paired with de-identified topic j one-to-one so that the
  total number of shared top words is maximal (Hungarian assignment,
  ``scipy.optimize.linear_sum_assignment``); topic i's score is ``|W_i ∩ W_j| / top_n``.
  Topics are reported in the original model's order. "Overall" is
  ``|∪W_orig ∩ ∪W_deid| / |∪W_orig|`` over all topics' words (set-based, which is why the
  thesis' overall can exceed every per-topic value).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from gensim.corpora import Dictionary
from gensim.models import CoherenceModel, LdaModel
from gensim.parsing.preprocessing import STOPWORDS
from scipy.optimize import linear_sum_assignment

from deidlib.corpus.tokenize import tokenize

__all__ = ["fit_topics", "choose_num_topics", "topic_overlap"]


def _preprocess(text: str) -> list[str]:
    """Lower-cased alphabetic tokens (len >= 2) that are not English stop words."""
    out = []
    for t in tokenize(text):
        w = t.text.lower()
        if len(w) >= 2 and w.isalpha() and w not in STOPWORDS:
            out.append(w)
    return out


def _fit(docs: list[list[str]], k: int, seed: int, passes: int) -> tuple[LdaModel, Dictionary, list]:
    if not any(docs):
        raise ValueError("topic model needs at least one non-empty document")
    d = Dictionary(docs)
    bow = [d.doc2bow(x) for x in docs]
    lda = LdaModel(bow, num_topics=k, id2word=d, random_state=seed, passes=passes, iterations=100)
    return lda, d, bow


def fit_topics(texts: Sequence[str], k: int, *, top_n: int = 30, seed: int = 0, passes: int = 5) -> list[list[str]]:
    """Top ``top_n`` words of each of ``k`` LDA topics of ``texts`` (seeded, deterministic)."""
    lda, _, _ = _fit([_preprocess(t) for t in texts], k, seed, passes)
    return [[w for w, _ in lda.show_topic(i, topn=top_n)] for i in range(k)]


def choose_num_topics(texts: Sequence[str], candidates: Sequence[int] = (3, 4, 5, 6, 7, 8), *,
                      measure: str = "c_v", seed: int = 0, passes: int = 5, top_n: int = 30) -> tuple[int, dict[int, float]]:
    """k with the highest coherence (``c_v`` or ``u_mass``) on ``texts``; returns ``(k, {k: score})``.

    Ties go to the smaller k. Thesis §4.3.2: "the number of topics was defined according to
    the coherence score" (5 on i2b2).
    """
    if measure not in ("c_v", "u_mass"):
        raise ValueError(f"coherence measure must be 'c_v' or 'u_mass', got {measure!r}")
    if not candidates:
        raise ValueError("no candidate numbers of topics")
    docs = [_preprocess(t) for t in texts]
    scores = {}
    for k in candidates:
        lda, d, bow = _fit(docs, k, seed, passes)
        cm = CoherenceModel(model=lda, texts=docs, corpus=bow, dictionary=d, coherence=measure,
                            topn=min(top_n, len(d)), processes=1)
        scores[k] = float(cm.get_coherence())
    best = max(sorted(scores), key=lambda k: scores[k])
    return best, scores


@dataclass(frozen=True)
class TopicOverlap:
    """Per-topic and overall word-match percentages (Table 4.6) and the pairing used."""

    per_topic: list[float]
    overall: float
    pairing: list[int]


def topic_overlap(original: Sequence[Sequence[str]], deidentified: Sequence[Sequence[str]]) -> TopicOverlap:
    """Match percentages between two lists of topic word lists (see module docstring)."""
    if len(original) != len(deidentified) or not original:
        raise ValueError(f"need the same non-zero number of topics, got {len(original)} and {len(deidentified)}")
    a = [set(t) for t in original]
    b = [set(t) for t in deidentified]
    shared = np.array([[len(x & y) for y in b] for x in a])
    rows, cols = linear_sum_assignment(-shared)
    pairing = [int(c) for _, c in sorted(zip(rows, cols))]
    per = [100.0 * float(shared[i, j]) / max(len(original[i]), 1) for i, j in enumerate(pairing)]
    ua, ub = set().union(*a), set().union(*b)
    overall = 100.0 * len(ua & ub) / max(len(ua), 1)
    return TopicOverlap(per, overall, pairing)
