"""Running the synthetic-to-real transfer study: train on the synthetic corpus of the profile
only (guideline-aligned spans, ICU notes weighted, optional upper-cased notes, GloVe vectors or
several members), score the synthetic test split and every real corpus present, with
diagnostics, fixed-threshold operating points and a threshold chosen on the real dev split.
The choices are in the package docstring (:mod:`deidlib.studies.transfer`).
"""

from __future__ import annotations

import random
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from ...corpus.conventions import align_spans
from ...corpus.document import Document, Span
from ...corpus.splits import CorpusSplits
from ...datasets import load_corpus
from ...evaluation import binary_token_prf
from ...evaluation.diagnostics import error_tokens
from ...models.marginal_ensemble import MarginalEnsemble
from ...rng import derive_seed
from ...training import (
    THRESHOLD_GRID,
    choose_threshold,
    fit_tagger,
    operating_points,
    predict_documents,
    prepare_tagger,
    train,
)
from ..protocol import StudyResults
from .params import REAL_CORPORA, TransferParams

__all__ = ["TransferResults", "run_study"]


@dataclass
class TransferResults(StudyResults):
    """What :func:`run_study` returns (JSON-able; the input of :func:`~.tables.score_rows`)."""

    profile: str
    seed: int
    params: dict[str, Any]
    synthetic: dict[str, Any]  #: train/test sizes and test P/R/F1
    real: dict[str, dict[str, Any]] = field(default_factory=dict)  #: corpus -> documents, P/R/F1, diagnostics
    skipped: dict[str, str] = field(default_factory=dict)  #: corpus -> why it was not scored
    epochs_run: int = 0
    seconds: float = 0.0


def _aligned(splits: CorpusSplits, guideline: str) -> CorpusSplits:
    return CorpusSplits(align_spans(splits.train, guideline), align_spans(splits.dev, guideline),
                        align_spans(splits.test, guideline), splits.name)


def _upper_case_notes(docs: list[Document], share: float, seed: int) -> list[Document]:
    """Copies of ``docs`` of which a seeded ``share`` is written in upper case (spans kept;
    a note whose upper-casing would change its length, e.g. with 'ß', is left as it is)."""
    rng = random.Random(derive_seed(seed, "transfer-upper"))
    out = []
    for d in docs:
        up = d.text.upper()
        if rng.random() < share and len(up) == len(d.text):
            spans = [Span(s.start, s.end, s.category, s.subtype, up[s.start:s.end]) for s in d.spans]
            d = Document(d.id, up, spans, d.patient_id, d.site, {**d.metadata, "casing": "upper"})
        out.append(d)
    return out


def _fit_glove(params: TransferParams, syn: CorpusSplits, seed: int, train_kw: dict):
    """The tagger on frozen public GloVe vectors: vocabulary = the synthetic training words
    seen twice or more, then GloVe's ``glove_words`` most frequent words; each word's row is
    its GloVe vector, a word GloVe lacks gets a seeded random one (GloVe's scale), padding
    and ``<unk>`` zero. Nothing is learned into the word vectors, so they carry only what
    the public text taught them."""
    import torch

    from ...corpus.labels import tagged_sentences
    from ...embeddings import normalize_token
    from ...embeddings.public import glove_matrix, load_glove

    glove = load_glove()
    sents = tagged_sentences(syn.train, "binary", "BIOES", "default")
    counts = Counter(normalize_token(w) for s in sents for w in s.words)
    vocab = [w for w, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])) if n >= 2]
    vocab += [normalize_token(w) for w in glove.words[: params.glove_words]]
    hp = {**(params.hparams or {}), "word_dim": glove.dim, "freeze_embeddings": True}
    sents, tagger = prepare_tagger(params.model, syn.train, scheme="binary", encoding="BIOES", embeddings=None,
                                   seed=seed, vocabulary=list(dict.fromkeys(vocab)), **hp)
    matrix = glove_matrix(tagger.featurizer.words, seed)
    with torch.no_grad():
        tagger.tokens.word.weight.copy_(torch.from_numpy(matrix))
    hist = train(tagger, sents, syn.dev or None, None, seed=seed, **train_kw)
    return tagger, hist


def run_study(params: TransferParams, *, data_dir: str | None = None, seed: int = 0, corpora=REAL_CORPORA,
              device: str = "cpu", progress: bool = True) -> TransferResults:
    """Train on synthetic notes only, score synthetic and every real corpus present."""
    if not isinstance(params, TransferParams):
        raise TypeError("run_study takes resolved TransferParams (transfer.params_for(profile, ...))")
    t0 = time.perf_counter()
    scale = None if params.icu_weight == 1 else {"icu_nursing_note": params.icu_weight}
    syn = _aligned(load_corpus("synthetic", profile=params.profile, seed=seed, patients=params.patients,
                               note_scale=scale), params.guideline)
    if params.upper_share:
        syn = CorpusSplits(_upper_case_notes(syn.train, params.upper_share, seed), syn.dev, syn.test, syn.name)
    train_kw: dict[str, Any] = dict(epochs=params.epochs, batch_size=params.batch_size, patience=None, lr_decay=params.lr_decay,
                    lr=params.lr, device=device, progress=progress)
    taggers = []
    for k in range(params.members):
        s = seed if k == 0 else derive_seed(seed, "transfer-member", k) & 0x7FFF_FFFF
        if params.vectors == "glove":
            tagger, hist = _fit_glove(params, syn, s, train_kw)
        else:
            tagger, hist = fit_tagger(params.model, syn, scheme="binary", encoding="BIOES", embeddings="word2vec",
                                      hparams=dict(params.hparams or {}), seed=s, evaluate_test=False, **train_kw)
        taggers.append(tagger)
    if len(taggers) > 1:
        tagger = MarginalEnsemble(taggers)
    p, r, f = binary_token_prf(syn.test, predict_documents(tagger, syn.test, device=device))
    out = TransferResults(
        profile=params.profile, seed=seed, params=asdict(params),
        synthetic={"train_documents": len(syn.train), "test_documents": len(syn.test),
                   "precision": p, "recall": r, "f1": f},
        real={}, skipped={}, epochs_run=len(hist.epochs), seconds=0.0,
    )
    for name in corpora:
        try:
            real = load_corpus(name, data_dir, seed=seed)
        except (FileNotFoundError, ValueError) as e:
            out.skipped[name] = str(e).split(";")[0]
            continue
        test = real.test[: params.max_test_documents] if params.max_test_documents else real.test
        pred = predict_documents(tagger, test, device=device)
        p, r, f = binary_token_prf(test, pred)
        errs = error_tokens(test, pred)
        dev: dict[str, Any] | None = None
        chosen = None
        if params.score_dev and real.dev:
            dev_docs = real.dev[: params.max_test_documents] if params.max_test_documents else real.dev
            if params.dev_target_recall is None:
                dp, dr, df = binary_token_prf(dev_docs, predict_documents(tagger, dev_docs, device=device))
                dev = {"documents": len(dev_docs), "precision": dp, "recall": dr, "f1": df}
            else:
                grid = tuple(t for t in THRESHOLD_GRID
                             if params.dev_threshold_cap is None or t <= params.dev_threshold_cap)
                chosen, curve = choose_threshold(tagger, dev_docs, params.dev_target_recall, grid=grid,
                                                 refine=False, device=device)
                own = curve[0]
                dev = {"documents": len(dev_docs), "precision": own["precision"], "recall": own["recall"],
                       "f1": own["f1"], "operating_points": curve[1:]}
        # marginals computed once, each threshold only re-decodes them
        extra = () if chosen is None or chosen in params.thresholds else (chosen,)
        points = operating_points(tagger, test, (*params.thresholds, *extra), device=device, own=False)
        dev_chosen = None
        if params.dev_target_recall is not None:
            at = next((pt for pt in points if pt["threshold"] == chosen), None)
            dev_at = next((pt for pt in dev["operating_points"] if pt["threshold"] == chosen), None) if dev else None
            dev_chosen = {"target_recall": params.dev_target_recall, "threshold": chosen, "dev": dev_at, "test": at}
        points = points[: len(params.thresholds)]
        out.real[name] = {
            "documents": len(test), "precision": p, "recall": r, "f1": f,
            "true_positives": errs.tp, "false_positives": errs.fp, "missed": errs.fn,
            "false_positives_by_kind": errs.fp_rows(), "missed_by_type": errs.fn_rows(),
            "missed_by_kind": [{"kind": k, "missed_tokens": c} for k, c in errs.fn_kind.most_common()],
            "top_false_positive_tokens": [{"token": t, "count": c} for t, c in errs.fp_token.most_common(25)],
            "operating_points": points,
            "dev": dev,
            "dev_chosen": dev_chosen,
        }
    out.seconds = time.perf_counter() - t0
    return out
