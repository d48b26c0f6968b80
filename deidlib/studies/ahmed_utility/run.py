"""Running the ahmed_utility study (Ahmed 2020 thesis §4.3.2): train the two taggers, de-identify
the utility corpus (dev + test notes) every way from every span source, and score it with the
tables of :mod:`.tables`. The choices are in the package docstring.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

from ...corpus.splits import subsample
from ...datasets import load_corpus
from ...results import fingerprint_documents
from ...rng import derive_seed
from ...threads import limited_threads
from ...training import predict_documents
from ..protocol import StudyResults
from .deidentify import deidentify, make_transforms, source_scores, train_taggers
from .params import SOURCES, UtilityParams
from .tables import abstracts_table, bleu_table, classification_table, topic_table

__all__ = ["UtilityResults", "run_study"]


@dataclass
class UtilityResults(StudyResults):
    """What :func:`run_study` returns (the input of the notebook's tables, :func:`~.figures.plot_tradeoff`
    and the claims)."""

    params: dict[str, Any]
    taggers: pd.DataFrame  # per tagger: epochs, sentences, seconds, P/R/F1 on the utility corpus
    scores: pd.DataFrame  # per source: P/R/F1 (%)
    bleu: pd.DataFrame  # Table 4.5
    topics: pd.DataFrame  # Table 4.6 (+ overall at the coherence-chosen k)
    coherence: pd.DataFrame
    k_coherence: int
    classification: pd.DataFrame  # Table 4.9
    abstracts: pd.DataFrame | None
    n_documents: int
    n_patients: int
    fingerprint: str
    notes: list[str]
    seconds: float


def run_study(params: UtilityParams, *, corpus: str = "synthetic", data_dir: str | None = None, seed: int = 0,
              device: str = "cpu", progress: bool = True) -> UtilityResults:
    """Train the two taggers, de-identify the utility corpus every way, and score it (module docstring)."""
    if not isinstance(params, UtilityParams):
        raise TypeError("run_study takes resolved UtilityParams (ahmed_utility.params_for(profile, ...))")
    t0 = time.perf_counter()
    with limited_threads(params.num_threads or None):
        splits = load_corpus(corpus=corpus, data_dir=data_dir, profile=params.profile, seed=seed)
        gold = subsample(list(splits.dev) + list(splits.test), params.max_utility_documents,
                         derive_seed(seed, "utility-docs"))
        if not gold:
            raise ValueError(f"the {corpus} corpus has no dev/test documents to de-identify")
        notes: list[str] = []
        taggers = train_taggers(splits.train, params, seed=seed, device=device, progress=progress)
        docs_by_source = {"gold": gold}
        for name, tg in taggers.items():
            docs_by_source[name] = predict_documents(tg["tagger"], gold, device=device)
        scores = source_scores(gold, docs_by_source)
        transforms = make_transforms(params, seed=seed, notes=notes)
        texts = deidentify(docs_by_source, transforms, progress=progress)
        originals = [d.text for d in gold]
        bleu = bleu_table(originals, texts, scores)
        topics, coherence, k_best = topic_table(originals, texts, scores, params, seed=seed, progress=progress)
        labels = [d.metadata.get("diagnosis") for d in gold]
        if all(y is not None for y in labels) and len(set(labels)) >= 2:
            groups = [d.patient_id or d.id for d in gold]
            classification = classification_table(originals, texts, labels, groups, scores, params, seed=seed,
                                                  progress=progress)
        else:
            classification = pd.DataFrame()
            notes.append(f"no classification: the {corpus} notes carry no diagnosis label")
        abstracts = abstracts_table(taggers, params, seed=seed, device=device, progress=progress)
        if abstracts is None and params.max_abstracts != 0:
            notes.append("medical abstracts not found: no real-text classification")
        tag_rows = {SOURCES[n]: {"epochs": tg["epochs"], "train sentences": tg["sentences"],
                                 "seconds": round(tg["seconds"], 1), **scores.loc[n, ["P(%)", "R(%)", "F1(%)"]].to_dict()}
                    for n, tg in taggers.items()}
    return UtilityResults(
        params=asdict(params), taggers=pd.DataFrame.from_dict(tag_rows, orient="index"), scores=scores, bleu=bleu,
        topics=topics, coherence=coherence, k_coherence=k_best, classification=classification, abstracts=abstracts,
        n_documents=len(gold), n_patients=len({d.patient_id for d in gold}),
        fingerprint=fingerprint_documents(gold), notes=notes, seconds=time.perf_counter() - t0,
    )
