"""Prediction: tags for sentences, spans for documents, i2b2 XML for the scorer."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext

import torch

from ..corpus.document import Document
from ..corpus.i2b2 import write_i2b2_dir
from ..corpus.labels import TaggedSentence, spans_from_predictions
from ..corpus.tokenize import document_sentences
from ..evaluation import binary_token_prf
from .precision import mixed_precision

__all__ = [
    "predict_tags", "predict_documents", "evaluate_tagger", "write_predictions", "operating_points",
    "THRESHOLD_GRID", "choose_threshold", "threshold_doc_counts",
]

#: PHI-marginal thresholds tried on a dev split when a threshold is chosen for a target recall
#: (``deidlib train --target-recall``, the transfer study's ``dev_target_recall``)
THRESHOLD_GRID = (0.9, 0.7, 0.5, 0.4, 0.3, 0.2, 0.15, 0.1, 0.07, 0.05, 0.03, 0.02, 0.01, 0.005, 0.002, 0.001)

#: how a tagger's labels map to text unless the tagger says otherwise
_DEFAULT_TASK = {"scheme": "i2b2", "encoding": "BIO", "mode": "default"}


def _task(tagger) -> dict:
    return {**_DEFAULT_TASK, **getattr(tagger, "task", {})}


def _batches(tagger, token_lists, batch_size, device):
    """Length-sorted batches: ``(original indices, encoded batch)``."""
    order = sorted(range(len(token_lists)), key=lambda i: len(token_lists[i]))
    for k in range(0, len(order), batch_size):
        idx = order[k : k + batch_size]
        yield idx, tagger.featurizer.encode([token_lists[i] for i in idx]).to(device)


@torch.no_grad()
def predict_tags(
    tagger, token_lists: Sequence[Sequence[str]], batch_size: int = 64, device: str | torch.device = "cpu",
    phi_threshold: float | None = None, encoding: str = "BIO",
) -> list[list[str]]:
    """Best tag sequence per sentence (length-sorted batches for speed; original order kept);
    with ``phi_threshold``, the recall-oriented decision of :mod:`deidlib.models.decoding`.
    The character encoder runs once per distinct token of the whole pass
    (:meth:`deidlib.models.layers.TokenEncoder.char_cache`); on a CUDA device an encoder
    tagger's encoder runs in bf16 autocast (:mod:`.precision`)."""
    tagger.eval()
    labels = tagger.featurizer.labels
    out: list[list[str] | None] = [None] * len(token_lists)
    tokens = getattr(tagger, "tokens", None)
    with tokens.char_cache() if tokens is not None and hasattr(tokens, "char_cache") else nullcontext(), mixed_precision(tagger, device):
        for idx, batch in _batches(tagger, token_lists, batch_size, device):
            seqs = tagger.predict(batch) if phi_threshold is None else tagger.predict(batch, phi_threshold, encoding)
            for i, seq in zip(idx, seqs):
                out[i] = [labels[j] for j in seq]
    return out  # type: ignore[return-value]


def _with_patterns(docs: Sequence[Document], t: dict) -> list[Document]:
    """``docs`` with the guideline patterns' spans merged in when the task names a pattern set
    (``task["patterns"]``, :mod:`deidlib.corpus.patterns`: the hybrid default model), after the
    model's DATE spans in number pairs written as measurements (``PSV 10/5``,
    :func:`deidlib.corpus.patterns.drop_measurements`) and its place spans that only name a kind
    of unit (``MICU``, :func:`deidlib.corpus.patterns.drop_generic_places`) are dropped; a label word
    at the start of a merged span (``SSN 123-45-6789``) is cut off
    (:func:`deidlib.corpus.patterns.trim_label_words`)."""
    if not t.get("patterns"):
        return list(docs)
    from ..corpus.patterns import (
        drop_generic_places,
        drop_measurements,
        merge_spans,
        pattern_spans,
        trim_label_words,
    )

    return [d.with_spans(trim_label_words(d.text, merge_spans(
                d.text, drop_generic_places(drop_measurements(d.text, d.spans)), pattern_spans(d.text, t["patterns"]))))
            for d in docs]


def predict_documents(
    tagger, docs: Sequence[Document], *, batch_size: int = 64, device="cpu", task: dict | None = None
) -> list[Document]:
    """Copies of ``docs`` whose spans are the tagger's predictions.

    ``task["phi_threshold"]`` (saved with the model by ``deidlib train --phi-threshold`` or
    given here) selects the recall-oriented decision on the PHI marginal; ``task["patterns"]``
    (the default model's ``"guideline"``) adds the spans of that pattern set
    (:mod:`deidlib.corpus.patterns`) to the tagger's.

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
    tags = (
        predict_tags(tagger, [[x.text for x in s] for s in sents], batch_size, device,
                     phi_threshold=t.get("phi_threshold"), encoding=t["encoding"])
        if sents else []
    )
    per_doc: list[tuple[list, list]] = [([], []) for _ in docs]
    for s, tg, i in zip(sents, tags, owners):
        per_doc[i][0].append(TaggedSentence(docs[i].id, s, tg))
        per_doc[i][1].append(tg)
    return _with_patterns(
        [spans_from_predictions(d, ss, ts, t["encoding"], t["scheme"]) for d, (ss, ts) in zip(docs, per_doc)], t)


def evaluate_tagger(tagger, docs: Sequence[Document], **kw) -> tuple[float, float, float]:
    """Binary-token micro P/R/F1 of the tagger's predictions on ``docs``."""
    return binary_token_prf(docs, predict_documents(tagger, docs, **kw))


def write_predictions(tagger, docs: Sequence[Document], out_dir, **kw):
    """Predict and write i2b2 XML files (one per document) for ``deidlib evaluate``."""
    return write_i2b2_dir(predict_documents(tagger, docs, **kw), out_dir)


def _sentence_marginals(tagger, docs: Sequence[Document], batch_size: int, device, task: dict | None):
    """``(task, sentences, owners, marginals)``: each sentence of ``docs`` (tokenized as on
    unseen text), the document it belongs to and its CRF marginals ``[T, K]`` (on the CPU)."""
    t = {**_task(tagger), **(task or {})}
    sents, owners = [], []
    for i, d in enumerate(docs):
        for toks in document_sentences(d, t["mode"], use_spans=False):
            sents.append(toks)
            owners.append(i)
    words = [[x.text for x in s] for s in sents]
    tagger.eval()
    marg: list[torch.Tensor | None] = [None] * len(sents)
    with torch.no_grad(), mixed_precision(tagger, device):
        for idx, batch in _batches(tagger, words, batch_size, device):
            m = tagger.marginals(batch).cpu()
            for b, (i, n) in enumerate(zip(idx, batch.mask.sum(1).tolist())):
                marg[i] = m[b, :n]
    return t, sents, owners, marg


def _threshold_predictions(tagger, docs, decoded, th: float) -> list[Document]:
    """Copies of ``docs`` with the spans decided at ``th`` from the marginals of ``decoded``
    (patterns applied as the task says): what :func:`predict_documents` gives at that threshold."""
    from ..models.decoding import threshold_tags

    t, sents, owners, marg = decoded
    labels = tagger.featurizer.labels
    tags = [[labels[j] for j in threshold_tags(m, labels, th, t["encoding"])] for m in marg]
    per_doc: list[tuple[list, list]] = [([], []) for _ in docs]
    for s, tg, i in zip(sents, tags, owners):
        per_doc[i][0].append(s)
        per_doc[i][1].append(tg)
    return _with_patterns(
        [spans_from_predictions(d, ss, ts, t["encoding"], t["scheme"]) for d, (ss, ts) in zip(docs, per_doc)], t)


def _threshold_point(tagger, docs, decoded, th: float) -> dict:
    """Binary-token P/R/F1 on ``docs`` when the marginals of ``decoded`` are decided at ``th``."""
    p, r, f = binary_token_prf(docs, _threshold_predictions(tagger, docs, decoded, th))
    return {"threshold": th, "precision": p, "recall": r, "f1": f}


def threshold_doc_counts(tagger, docs: Sequence[Document], thresholds: Sequence[float], *, batch_size: int = 64,
                         device="cpu", decoded=None) -> dict:
    """Binary-token counts of each document of ``docs`` at each PHI-marginal threshold: the
    per-document form of :func:`operating_points` (marginals computed once, each threshold
    re-decodes them, patterns applied), from which a rule can resample documents without
    predicting again. Returns ``{"thresholds": [T], "tp": int array [D, T], "fp": [D, T],
    "gold": [D]}`` (gold: the document's gold PHI tokens; recall at a threshold is
    ``tp.sum(0) / gold.sum()``). ``decoded``: the marginals of an earlier call's
    ``_sentence_marginals`` on the same documents, to decide more thresholds without a new pass."""
    import numpy as np

    from ..evaluation.keys import token_keys

    if decoded is None:
        decoded = _sentence_marginals(tagger, docs, batch_size, device, None)
    gold = [token_keys(d.spans, True) for d in docs]
    tp = np.zeros((len(docs), len(thresholds)), dtype=np.int64)
    fp = np.zeros_like(tp)
    for j, th in enumerate(thresholds):
        for i, pred in enumerate(_threshold_predictions(tagger, docs, decoded, th)):
            s = token_keys(pred.spans, True)
            hit = len(gold[i] & s)
            tp[i, j], fp[i, j] = hit, len(s) - hit
    return {"thresholds": [float(x) for x in thresholds], "tp": tp, "fp": fp,
            "gold": np.array([len(g) for g in gold], dtype=np.int64)}


def _own_point(tagger, docs, decoded, batch_size, device) -> dict:
    t = decoded[0]
    pred = predict_documents(tagger, docs, task={**t, "phi_threshold": None}, batch_size=batch_size, device=device)
    p, r, f = binary_token_prf(docs, pred)
    return {"threshold": None, "precision": p, "recall": r, "f1": f}


def operating_points(tagger, docs: Sequence[Document], thresholds: Sequence[float], *, batch_size: int = 64,
                     device="cpu", task: dict | None = None, own: bool = True) -> list[dict]:
    """Binary-token P/R/F1 at each PHI-marginal threshold, preceded (``own=True``) by the model's
    own decision (``threshold=None``: one more prediction pass): the precision–recall curve of a
    trained tagger on ``docs``.

    The marginals are computed once per sentence; each threshold only re-decodes them
    (:func:`deidlib.models.decoding.threshold_tags`); a threshold's point equals what
    :func:`predict_documents` gives with that ``phi_threshold``."""
    decoded = _sentence_marginals(tagger, docs, batch_size, device, task)
    head = [_own_point(tagger, docs, decoded, batch_size, device)] if own else []
    return [*head, *(_threshold_point(tagger, docs, decoded, th) for th in thresholds)]


def threshold_for_recall(points: Sequence[dict], target_recall: float) -> float | None:
    """The highest threshold whose recall reaches ``target_recall`` (marking the fewest tokens:
    recall and marked tokens never decrease as the threshold falls), or ``None`` when no
    threshold of ``points`` does."""
    ok = [p["threshold"] for p in points if p["threshold"] is not None and p["recall"] >= target_recall]
    return max(ok) if ok else None


def _refine_threshold(candidates: Sequence[float], reaches) -> tuple[int, int] | None:
    """Binary search over ``candidates`` (ascending) for the highest one with ``reaches(c)``
    true, assuming ``reaches`` is monotone (true up to some index, false above it):
    ``(its index, calls made)``, or None when it is false for all of them."""
    lo, hi, calls = -1, len(candidates), 0  # invariant: reaches(candidates[lo]) (or lo == -1); not at hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        calls += 1
        if reaches(candidates[mid]):
            lo = mid
        else:
            hi = mid
    return None if lo < 0 else (lo, calls)


def choose_threshold(tagger, dev_docs: Sequence[Document], target_recall: float, *,
                     grid: Sequence[float] = THRESHOLD_GRID, refine: bool = True,
                     device="cpu") -> tuple[float | None, list[dict]]:
    """The highest threshold whose recall on ``dev_docs`` reaches ``target_recall`` (None when
    no threshold of ``grid`` does), and the dev curve it was read from (row 0: the model's own
    decision; then ``grid``, and the refined threshold in its place when it is new).

    ``refine=False``: the highest threshold of ``grid``. ``refine=True`` (the default,
    because the coarse grid's step from 0.3 to 0.2 cost the nursing-notes ensemble 6 points
    of precision): the grid only brackets the answer, between the chosen ``g`` and the next
    grid value above it, which misses the target (when the grid's highest value reaches the
    target there is no bracket and it is kept: a search above it would trade recall the model
    already has for precision, e.g. 0.99997 and test recall 0.99 → 0.93 on the synthetic
    notes). Inside the bracket the marked tokens change
    only where the threshold passes a dev token's PHI probability ``1 − P(O)``, so the highest
    threshold reaching the target is one of those values, found by binary search (recall never
    decreases as the threshold falls; about log2 of the bracket's tokens re-decodings). The
    saved threshold is the midpoint between that value and the next dev value below it (or
    ``g``): the same dev decisions, with a margin for the rounding of marginals between runs. It is a statistic of the dev split only; test never
    enters (the commands report the test curve, never choose on it)."""
    from ..models.decoding import phi_probability

    decoded = _sentence_marginals(tagger, dev_docs, 64, device, None)
    curve = [_own_point(tagger, dev_docs, decoded, 64, device),
             *(_threshold_point(tagger, dev_docs, decoded, th) for th in grid)]
    th = threshold_for_recall(curve, target_recall)
    if th is None or not refine:
        return th, curve
    above = [g for g in grid if g > th]
    if not above:  # the grid's top reaches the target: never refined above the grid (precision bought with recall)
        return th, curve
    top = min(above)
    labels = tagger.featurizer.labels
    # in the marginals' own dtype, as threshold_tags compares them
    phi = torch.cat([phi_probability(m, labels) for m in decoded[3]]) if decoded[3] else torch.zeros(0)
    values = sorted({v for v in phi.tolist() if th < v < top})
    seen: dict[float, dict] = {}

    def reaches(v: float) -> bool:
        seen[v] = _threshold_point(tagger, dev_docs, decoded, v)
        return seen[v]["recall"] >= target_recall

    found = _refine_threshold(values, reaches)
    if found is None:
        return th, curve
    k = found[0]
    below = values[k - 1] if k > 0 else th  # the next value down; between the two, the same tokens are marked
    best = (below + values[k]) / 2
    point = _threshold_point(tagger, dev_docs, decoded, best)
    if point["recall"] < target_recall:  # rounding moved a decision: keep the dev value itself
        best, point = values[k], seen[values[k]]
    rows = [*curve[1:], point]
    rows.sort(key=lambda p: -p["threshold"])
    return best, [curve[0], *rows]
