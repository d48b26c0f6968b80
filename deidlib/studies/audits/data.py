"""The audit's population (whole patients of the synthetic training split) and test notes, the
tagger every from-scratch setting trains, its trainer (ordinary or DP-SGD, seeded) and the seeded
patient halves of the membership game."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...corpus.document import Document
from ...corpus.labels import TaggedSentence, tag_set, tagged_sentences
from ...corpus.splits import subsample
from ...datasets import load_corpus
from ...models import Featurizer, build_tagger
from ...privacy.dpsgd import train_dp
from ...results import fingerprint_documents
from ...rng import derive_seed
from ...training import train
from .params import ENCODING, SCHEME, AuditParams

__all__ = []


@dataclass
class AuditData:
    docs: list  # population documents (whole patients)
    sentences: list  # their tagged sentences
    patients: list  # patient id of every sentence
    test_docs: list
    test_sentences: list
    fingerprint: str


def prepare_data(params: AuditParams, seed: int = 0) -> AuditData:
    """The population (patients of the training split in a seeded order, at most
    ``max_patient_sentences`` seeded sentences each, up to ``max_pool_sentences`` sentences)
    and the test documents. ``docs`` are the population patients' documents (surrogates)."""
    sp = load_corpus("synthetic", profile=params.profile, seed=seed, patients=params.patients, split="patient")
    by_patient: dict[str, list] = {}
    for d in sp.train:
        by_patient.setdefault(d.patient_id, []).append(d)
    order = np.random.default_rng(derive_seed(seed, "audits-population")).permutation(sorted(by_patient))
    docs: list[Document] = []
    sents: list[TaggedSentence] = []
    pats: list[str] = []
    for p in order:
        ss = [s for s in tagged_sentences(by_patient[p], SCHEME, ENCODING) if s.tokens]
        ss = subsample(ss, params.max_patient_sentences, derive_seed(seed, "audits-patient", str(p)))
        if sents and len(sents) + len(ss) > params.max_pool_sentences:
            break
        docs.extend(by_patient[p])
        sents.extend(ss)
        pats.extend([str(p)] * len(ss))
    test_docs = subsample(list(sp.test), params.max_eval_documents, derive_seed(seed, "audits-eval"))
    test = [s for s in tagged_sentences(test_docs, SCHEME, ENCODING, use_spans=False) if s.tokens]
    return AuditData(docs, sents, pats, test_docs, test, fingerprint_documents([*sp.train, *test_docs]))


def make_tagger(featurizer: Featurizer, params: AuditParams, seed: int):
    """An untrained tagger of ``params.kind`` over ``featurizer``."""
    t = build_tagger(params.kind, featurizer, seed=seed, **params.tagger)
    t.task = {"scheme": SCHEME, "encoding": ENCODING, "mode": "default"}
    return t


def _featurizer(words_of, extra=()) -> Featurizer:
    return Featurizer.build(words_of, tag_set(SCHEME, ENCODING), min_count=1, extra_words=extra)


def fit(tagger, sentences, params: AuditParams, noise: float | None, seed: int, *, epochs: float | None = None,
        batch_size: int | None = None, accountant: str | None = None):
    """Train in place: the ordinary trainer (``noise=None``) or DP-SGD at σ = ``noise``
    (seeded, ``secure=False``). Returns the ledger (None if non-private). ``accountant``
    overrides the ledger's accountant."""
    epochs = params.epochs if epochs is None else epochs
    bs = params.batch_size if batch_size is None else batch_size
    if noise is None:
        train(tagger, sentences, None, None, epochs=max(1, round(epochs)), batch_size=int(bs),
              optimizer=params.optimizer, lr=params.lr, clip=params.max_grad_norm, seed=seed, progress=False)
        return None
    _, ledger = train_dp(tagger, sentences, None, None, epochs=epochs, batch_size=bs, noise_multiplier=noise,
                         delta=params.delta, max_grad_norm=params.max_grad_norm,
                         accountant=accountant or params.accountant,
                         optimizer=params.optimizer, lr=params.lr, seed=seed, progress=False,
                         eval_every=10**9, secure=False)
    return ledger



def _half(patients, seed: int, tag: str) -> dict[str, bool]:
    """A seeded random half of the patients (exactly ⌈n/2⌉ in, so both sides are never empty)."""
    ids = sorted(set(patients))
    if len(ids) < 2:
        raise ValueError(f"the membership game needs at least 2 patients in the population, got {len(ids)}")
    perm = np.random.default_rng(derive_seed(seed, "audits-coin", tag)).permutation(len(ids))
    inside = set(perm[: (len(ids) + 1) // 2].tolist())
    return {p: i in inside for i, p in enumerate(ids)}
