"""Label schemes and BIO/BIOES/IO encodings with exact decoding back to spans.

Schemes (what a label names):

``i2b2``
    festag et al. (JMIR Form Res 2020), Table 1: the 28 PHI subtypes
    (:data:`~deidlib.corpus.phi.FESTAG_TYPES`) plus non-PHI, 29 classes in all; "if there
    is at least one subclass, the general class is not used as a label". i2b2's ROOM and
    DEPARTMENT, absent from Table 1, are folded into LOCATION-OTHER; i2b2's OTHER
    category is not a festag class and is treated as non-PHI (choice, documented here).
``category``
    the eight i2b2 categories (NAME, PROFESSION, LOCATION, AGE, DATE, CONTACT, ID, OTHER).
``binary``
    PHI / non-PHI (the ahmed thesis' binary evaluation and the DP ensemble).

Encodings: ``BIO`` (B-X, I-X, O), ``BIOES`` (adds S- for single-token and E- for last
token; ahmed thesis §4.1) and ``IO`` (I-X, O; adjacent mentions of one type merge).

Decoding gives, for each chunk of tokens, the span ``text[first.start:last.end]``: the
exact inverse of encoding whenever span edges are token edges, which
:func:`~deidlib.corpus.tokenize.document_sentences` guarantees for gold spans that do not
begin or end on whitespace. Decoded spans get the category of their label; with the
``category`` and ``binary`` schemes, where the label names no TYPE, the subtype is the
category's representative in :data:`_DEFAULT_SUBTYPE` (binary spans are
``OTHER/OTHER``): binary and category-level scores are unaffected by that choice.
Ill-formed sequences are decoded leniently, as conlleval does: an ``I-``/``E-`` that does
not continue a chunk of the same label starts a new chunk.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .document import Document, Span
from .phi import CATEGORIES, FESTAG_TYPES, TYPE_TO_CATEGORY
from .tokenize import Token, document_sentences

__all__ = [
    "span_label", "scheme_labels", "tag_set", "TaggedSentence", "gold_tags", "tagged_sentences", "downsample_negatives",
    "thin_negatives", "keyed_subsample", "spans_from_predictions",
]

_LABEL_SCHEMES: tuple[str, ...] = ("i2b2", "category", "binary")
_ENCODINGS: tuple[str, ...] = ("BIO", "BIOES", "IO")

_I2B2_FOLD = {"ROOM": "LOCATION-OTHER", "DEPARTMENT": "LOCATION-OTHER", "OTHER": None}

#: subtype given to decoded spans of a category-level or binary label
_DEFAULT_SUBTYPE = {
    "NAME": "PATIENT",
    "PROFESSION": "PROFESSION",
    "LOCATION": "LOCATION-OTHER",
    "AGE": "AGE",
    "DATE": "DATE",
    "CONTACT": "PHONE",
    "ID": "IDNUM",
    "OTHER": "OTHER",
    "PHI": "OTHER",
}


def _check(scheme: str, encoding: str | None = None) -> None:
    if scheme not in _LABEL_SCHEMES:
        raise ValueError(f"unknown label scheme {scheme!r}; choose one of {', '.join(_LABEL_SCHEMES)}")
    if encoding is not None and encoding not in _ENCODINGS:
        raise ValueError(f"unknown encoding {encoding!r}; choose one of {', '.join(_ENCODINGS)}")


def span_label(span: Span, scheme: str = "i2b2") -> str | None:
    """The label a span gets in ``scheme`` (``None``: treated as non-PHI)."""
    _check(scheme)
    if scheme == "binary":
        return "PHI"
    if scheme == "category":
        return span.category
    return _I2B2_FOLD.get(span.subtype, span.subtype)


def scheme_labels(scheme: str) -> list[str]:
    """Entity labels of a scheme (without O), in a fixed order."""
    _check(scheme)
    if scheme == "binary":
        return ["PHI"]
    if scheme == "category":
        return list(CATEGORIES)
    return list(FESTAG_TYPES)


def tag_set(scheme: str = "i2b2", encoding: str = "BIO") -> list[str]:
    """All tags of a scheme and encoding, ``"O"`` first (id 0)."""
    _check(scheme, encoding)
    prefixes = {"BIO": "BI", "BIOES": "BIES", "IO": "I"}[encoding]
    return ["O"] + [f"{p}-{lab}" for lab in scheme_labels(scheme) for p in prefixes]


def _encode_tags(
    tokens: Sequence[Token], spans: Iterable[Span], scheme: str = "i2b2", encoding: str = "BIO"
) -> list[str]:
    """Tags for ``tokens``; a token belongs to the first span (by start) that overlaps it."""
    _check(scheme, encoding)
    tags = ["O"] * len(tokens)
    spans = sorted(spans)
    j = 0
    for i, tok in enumerate(tokens):
        while j < len(spans) and spans[j].end <= tok.start:
            j += 1
        if j < len(spans) and spans[j].start < tok.end:
            lab = span_label(spans[j], scheme)
            if lab is not None:
                tags[i] = f"{j}\0{lab}"  # chunk id marker, resolved below
    return encode_runs([None if t == "O" else t for t in tags], encoding,
                       label=lambda key: key.split("\0", 1)[1])


def encode_runs(keys: Sequence, encoding: str = "BIO", label=lambda key: key) -> list[str]:
    """Tags for a sequence of chunk keys: ``None`` is outside (``O``); a run of equal keys is
    one chunk labelled ``label(key)``, written in ``encoding`` (IO, BIO or BIOES)."""
    out = ["O"] * len(keys)
    i = 0
    while i < len(keys):
        if keys[i] is None:
            i += 1
            continue
        k = i
        while k + 1 < len(keys) and keys[k + 1] == keys[i]:
            k += 1
        lab = label(keys[i])
        for m in range(i, k + 1):
            if encoding == "IO":
                p = "I"
            elif encoding == "BIO":
                p = "B" if m == i else "I"
            else:
                p = "S" if i == k else ("B" if m == i else ("E" if m == k else "I"))
            out[m] = f"{p}-{lab}"
        i = k + 1
    return out


def _label_to_types(label: str, scheme: str | None) -> tuple[str, str]:
    if label in TYPE_TO_CATEGORY and scheme in (None, "i2b2"):
        return TYPE_TO_CATEGORY[label], label
    if label in CATEGORIES:
        return label, _DEFAULT_SUBTYPE[label]
    if label == "PHI":
        return "OTHER", "OTHER"
    raise ValueError(f"cannot decode label {label!r}")


def _decode_tags(
    tokens: Sequence[Token], tags: Sequence[str], text: str, encoding: str = "BIO", scheme: str | None = None
) -> list[Span]:
    """Spans encoded by ``tags`` over ``tokens`` (offsets into ``text``)."""
    if len(tokens) != len(tags):
        raise ValueError(f"{len(tokens)} tokens but {len(tags)} tags")
    chunks: list[list[Any]] = []  # [first token, last token, label], the open one still growing
    open_chunk: list[Any] | None = None
    for i, tag in enumerate(tags):
        if tag == "O":
            open_chunk = None
            continue
        prefix, _, lab = tag.partition("-")
        if not lab:
            raise ValueError(f"malformed tag {tag!r} at token {i}")
        cont = open_chunk is not None and open_chunk[2] == lab and prefix in ("I", "E")
        if encoding == "IO":
            cont = open_chunk is not None and open_chunk[2] == lab
        if cont and open_chunk is not None:
            open_chunk[1] = i
        else:
            open_chunk = [i, i, lab]
            chunks.append(open_chunk)
        if encoding == "BIOES" and prefix in ("E", "S"):
            open_chunk = None
    spans = []
    for a, b, lab in chunks:
        cat, sub = _label_to_types(lab, scheme)
        s, e = tokens[a].start, tokens[b].end
        spans.append(Span(s, e, cat, sub, text[s:e]))
    return spans


@dataclass
class TaggedSentence:
    """One tokenized sentence with its tags (gold for training, ``None`` at prediction time)."""

    doc_id: str
    tokens: list[Token]
    tags: list[str] | None = None

    @property
    def words(self) -> list[str]:
        return [t.text for t in self.tokens]

def tagged_sentences(
    docs: Iterable[Document],
    scheme: str = "i2b2",
    encoding: str = "BIO",
    mode: str = "default",
    *,
    use_spans: bool = True,
) -> list[TaggedSentence]:
    """Tokenize documents into sentences and tag them from their gold spans."""
    _check(scheme, encoding)
    out = []
    for d in docs:
        for toks in document_sentences(d, mode, use_spans=use_spans):
            out.append(TaggedSentence(d.id, toks, _encode_tags(toks, d.spans, scheme, encoding)))
    return out


def spans_from_predictions(
    doc: Document,
    sentences: Sequence[TaggedSentence | Sequence[Token]],
    tag_seqs: Sequence[Sequence[str]],
    encoding: str = "BIO",
    scheme: str | None = None,
) -> Document:
    """A copy of ``doc`` whose spans are decoded from predicted tags of its sentences."""
    spans: list[Span] = []
    for sent, tags in zip(sentences, tag_seqs, strict=True):
        toks = sent.tokens if isinstance(sent, TaggedSentence) else sent
        spans.extend(_decode_tags(toks, tags, doc.text, encoding, scheme))
    return doc.with_spans(spans)


def gold_tags(sentence: TaggedSentence) -> list[str]:
    """The ``tags`` of a sentence that must have gold tags (training, scoring): a sentence
    without them (``tags=None``, as at prediction time) is a ``ValueError``."""
    if sentence.tags is None:
        raise ValueError(f"a sentence of document {sentence.doc_id!r} has no gold tags")
    return sentence.tags


def _has_phi(sentence: TaggedSentence) -> bool:
    return any(t != "O" for t in gold_tags(sentence))


def downsample_negatives(sentences: Sequence[TaggedSentence], per_positive: float, seed: int) -> list[TaggedSentence]:
    """All sentences with a PHI tag plus ``round(per_positive · #PHI sentences)`` seeded
    random PHI-free ones (all of them if there are fewer), in their original order.

    For corpora with sparse PHI (PhysioNet nursing notes: 4 % of sentences hold PHI) at
    small training budgets; evaluate on the natural distribution to see its precision cost."""
    import numpy as np

    if per_positive < 0:
        raise ValueError(f"negatives_per_positive must be >= 0, got {per_positive}")
    pos = [i for i, s in enumerate(sentences) if _has_phi(s)]
    neg = [i for i, s in enumerate(sentences) if not _has_phi(s)]
    k = min(len(neg), round(per_positive * len(pos)))
    keep = set(pos) | set(np.random.default_rng(seed).choice(neg, k, replace=False).tolist() if k else [])
    return [s for i, s in enumerate(sentences) if i in keep]


def _sentence_coin(sentence: TaggedSentence, key: int | str | bytes) -> float:
    """A uniform number in [0, 1) that depends only on ``key`` and the sentence itself:
    HMAC-SHA256 (RFC 2104) keyed by ``key`` of the sentence's document id and its token texts,
    the first 53 bits of the digest scaled to [0, 1).

    The key is the sentence's *content* (document id + words), not its position in a list
    nor its character offset (inserting a sentence into a document moves the offsets of the
    later ones), so adding or removing one sentence leaves every other sentence's coin
    unchanged. Two identical sentences of one document share a coin (a choice: they are
    indistinguishable to the trainer anyway)."""
    import hashlib
    import hmac

    k = key if isinstance(key, bytes) else str(key).encode()
    msg = "\x1f".join([str(sentence.doc_id), *sentence.words]).encode()
    h = int.from_bytes(hmac.new(k, msg, hashlib.sha256).digest()[:8], "big") >> 11
    return h / float(2**53)


def _check_rate(name: str, rate: float) -> None:
    if not 0 <= rate <= 1:
        raise ValueError(f"{name} must lie in [0, 1], got {rate}")


def keyed_subsample(
    sentences: Sequence[TaggedSentence], rate: float, key: int | str | bytes
) -> list[TaggedSentence]:
    """Each sentence independently with probability ``rate``, decided by its own keyed coin
    (:func:`_sentence_coin` < ``rate``), in the original order.

    The decision for a sentence depends only on ``rate``, ``key`` and that sentence, so for
    neighbouring training sets (one sentence added or removed) the subsets are equal or
    neighbouring: an (ε, δ)-DP guarantee (add/remove one sentence) for training on the
    subset holds for the full set. ``rate`` must be fixed in advance: a rate computed from
    the data (e.g. ``cap / len(sentences)``) would let one sentence change other decisions.
    This claims no privacy amplification by the subsampling (the key may be public)."""
    _check_rate("rate", rate)
    return [s for s in sentences if _sentence_coin(s, key) < rate]


def thin_negatives(sentences: Sequence[TaggedSentence], keep_rate: float, seed: int) -> list[TaggedSentence]:
    """All sentences with a PHI tag plus each PHI-free sentence independently with
    probability ``keep_rate``, decided by its keyed coin (:func:`_sentence_coin` with key
    ``seed``), in their original order.

    Unlike :func:`downsample_negatives` (a fixed number of negatives, which depends on how
    many positives there are), whether a sentence is kept depends only on that sentence
    (its document id, words and tags) and the key, so adding or removing one sentence
    changes the thinned set by at most that sentence: a DP guarantee for the thinned
    training set holds for the full one."""
    _check_rate("keep_rate", keep_rate)
    return [s for s in sentences if _has_phi(s) or _sentence_coin(s, seed) < keep_rate]
