"""Prediction: tags for sentences, spans for documents, i2b2 XML for the scorer."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ..corpus.document import Document
from ..corpus.i2b2 import write_i2b2_dir
from ..corpus.labels import TaggedSentence, spans_from_predictions
from ..corpus.tokenize import document_sentences
from ..evaluation import binary_token_prf

__all__ = ["predict_tags", "predict_documents", "evaluate_tagger", "write_predictions", "DEFAULT_TASK"]

#: how a tagger's labels map to text unless the tagger says otherwise
DEFAULT_TASK = {"scheme": "i2b2", "encoding": "BIO", "mode": "default"}


def _task(tagger) -> dict:
    return {**DEFAULT_TASK, **getattr(tagger, "task", {})}


@torch.no_grad()
def predict_tags(
    tagger, token_lists: Sequence[Sequence[str]], batch_size: int = 64, device: str | torch.device = "cpu"
) -> list[list[str]]:
    """Best tag sequence per sentence (length-sorted batches for speed; original order kept)."""
    tagger.eval()
    labels = tagger.featurizer.labels
    order = sorted(range(len(token_lists)), key=lambda i: len(token_lists[i]))
    out: list[list[str] | None] = [None] * len(token_lists)
    for k in range(0, len(order), batch_size):
        idx = order[k : k + batch_size]
        batch = tagger.featurizer.encode([token_lists[i] for i in idx]).to(device)
        for i, seq in zip(idx, tagger.predict(batch)):
            out[i] = [labels[j] for j in seq]
    return out  # type: ignore[return-value]


def predict_documents(
    tagger, docs: Sequence[Document], *, batch_size: int = 64, device="cpu", task: dict | None = None
) -> list[Document]:
    """Copies of ``docs`` whose spans are the tagger's predictions.

    Documents are tokenized without looking at their gold spans (``use_spans=False``),
    exactly as on unseen text.
    """
    t = {**_task(tagger), **(task or {})}
    sents: list[list] = []
    owners: list[int] = []
    for i, d in enumerate(docs):
        for toks in document_sentences(d, t["mode"], use_spans=False):
            sents.append(toks)
            owners.append(i)
    tags = predict_tags(tagger, [[x.text for x in s] for s in sents], batch_size, device) if sents else []
    per_doc: list[tuple[list, list]] = [([], []) for _ in docs]
    for s, tg, i in zip(sents, tags, owners):
        per_doc[i][0].append(TaggedSentence(docs[i].id, s, tg))
        per_doc[i][1].append(tg)
    return [
        spans_from_predictions(d, ss, ts, t["encoding"], t["scheme"]) for d, (ss, ts) in zip(docs, per_doc)
    ]


def evaluate_tagger(tagger, docs: Sequence[Document], **kw) -> tuple[float, float, float]:
    """Binary-token micro P/R/F1 of the tagger's predictions on ``docs``."""
    return binary_token_prf(docs, predict_documents(tagger, docs, **kw))


def write_predictions(tagger, docs: Sequence[Document], out_dir, **kw):
    """Predict and write i2b2 XML files (one per document) for ``deidlib evaluate``."""
    return write_i2b2_dir(predict_documents(tagger, docs, **kw), out_dir)
