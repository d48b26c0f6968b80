"""Realistic misspellings injected into a test split, with the PHI spans kept exact.

:func:`misspell_documents` rewrites a fraction of the alphabetic tokens of each note (PHI and
non-PHI alike) with one typing error each: a keyboard-adjacent substitution, a transposition
of two neighbouring letters, a dropped letter or a doubled letter. Every span is moved to the
new offsets and its text re-read from the new note, so ``doc.text[s.start:s.end] == s.text``
holds for every span; a token that straddles a span boundary is never touched. The character
ranges of the misspelled tokens in the new text are returned with each note, so that scores can
be split by them (:func:`deidlib.evaluation.subsets.misspelled_token_counts`).

Meant for a test split after loading (a study's robustness check); the training data stay as
generated. Deterministic for a seed. Guarded by ``tests/synthetic/test_misspell.py``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

import numpy as np

from ..corpus.document import Document, Span

__all__ = ["misspell_documents"]

_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


def _neighbours() -> dict[str, str]:
    pos = {c: (r, i) for r, row in enumerate(_ROWS) for i, c in enumerate(row)}
    out = {}
    for c, (r, i) in pos.items():
        near = [d for d, (r2, i2) in pos.items() if d != c and abs(r2 - r) <= 1 and abs(i2 - i) <= 1]
        out[c] = "".join(sorted(near))
    return out


#: letters next to each letter on a QWERTY keyboard (same row and the rows above and below)
_KEYBOARD_NEIGHBOURS: dict[str, str] = _neighbours()
#: the typing errors :func:`_misspell_word` makes
_OPERATIONS = ("substitute", "transpose", "drop", "double")
_WORD = re.compile(r"[A-Za-z]{3,}")


def _misspell_word(word: str, rng: np.random.Generator, operation: str | None = None) -> str:
    """``word`` with one typing error (``operation`` or a random one of :data:`_OPERATIONS`); the
    result always differs from ``word``. The case of a substituted letter is kept. Words shorter
    than 2 letters are returned unchanged."""
    if len(word) < 2:
        return word
    ops = [operation] if operation else list(_OPERATIONS)
    if operation is not None and operation not in _OPERATIONS:
        raise ValueError(f"operation must be one of {_OPERATIONS}, got {operation!r}")
    for _ in range(20):
        op = ops[int(rng.integers(len(ops)))]
        if op == "substitute":
            i = int(rng.integers(len(word)))
            near = _KEYBOARD_NEIGHBOURS.get(word[i].lower(), "")
            if not near:
                continue
            c = near[int(rng.integers(len(near)))]
            new = word[:i] + (c.upper() if word[i].isupper() else c) + word[i + 1:]
        elif op == "transpose":
            i = int(rng.integers(len(word) - 1))
            new = word[:i] + word[i + 1] + word[i] + word[i + 2:]
        elif op == "drop":
            i = int(rng.integers(len(word)))
            new = word[:i] + word[i + 1:]
        else:
            i = int(rng.integers(len(word)))
            new = word[:i + 1] + word[i] + word[i + 1:]
        if new != word:
            return new
    return word[:-1]  # a word of one repeated letter that no other operation changed


def _misspell_document(doc: Document, rate: float, rng: np.random.Generator) -> tuple[Document, list[tuple[int, int]]]:
    """``doc`` with each alphabetic token of 3+ letters misspelled with probability ``rate``
    (tokens that cross a span boundary excepted) and the ``(start, end)`` ranges of the
    misspelled tokens in the new text. Spans keep their category/TYPE and cover the same
    (possibly misspelled) words."""
    if not 0 <= rate <= 1:
        raise ValueError(f"rate must lie in [0, 1], got {rate}")
    bounds = sorted({b for s in doc.spans for b in (s.start, s.end)})
    pieces: list[str] = []
    ranges: list[tuple[int, int]] = []
    shift = np.zeros(len(doc.text) + 1, dtype=np.int64)  # offset change at each old position
    pos, new_len, delta = 0, 0, 0
    for m in _WORD.finditer(doc.text):
        a, b = m.span()
        crosses = any(a < x < b for x in bounds)
        if crosses or rng.random() >= rate:
            continue
        new = _misspell_word(m.group(), rng)
        pieces.append(doc.text[pos:a])
        new_len += a - pos
        ranges.append((new_len, new_len + len(new)))
        pieces.append(new)
        new_len += len(new)
        delta += len(new) - (b - a)
        shift[b:] = delta  # positions from the token's end on move by the running change
        pos = b
    pieces.append(doc.text[pos:])
    text = "".join(pieces)
    spans = []
    for s in doc.spans:
        start, end = s.start + int(shift[s.start]), s.end + int(shift[s.end])
        spans.append(Span(start, end, s.category, s.subtype, text[start:end]))
    return replace(doc, text=text, spans=spans, metadata={**doc.metadata, "misspelled_tokens": len(ranges)}), ranges


def misspell_documents(docs: Iterable[Document], rate: float = 0.15, seed: int = 0
                       ) -> tuple[list[Document], dict[str, list[tuple[int, int]]]]:
    """:func:`_misspell_document` over ``docs`` with one generator seeded by ``seed``: the new
    documents and, per document id, the ranges of its misspelled tokens."""
    rng = np.random.default_rng(seed)
    out, ranges = [], {}
    for d in docs:
        nd, r = _misspell_document(d, rate, rng)
        out.append(nd)
        ranges[nd.id] = r
    return out, ranges
