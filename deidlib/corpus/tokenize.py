"""Offline tokenization that keeps character offsets.

Two word tokenizers, both built on NLTK's :class:`~nltk.tokenize.RegexpTokenizer`
(pure regular expressions: no model, no data download):

``default``
    Keeps clinical units whole: dates and numbers with inner separators
    (``12/02/2020``, ``120/80``, ``555-1234``), e-mail addresses, URLs, words with inner
    apostrophes or hyphens (``O'Brien``, ``x-ray``); every other punctuation mark is a token.
    Used by the festag, ahmed and alawad studies and by the DSSGD/DP experiments.
``aggressive``
    friedrich et al. (ACL 2019), section 4 "Preprocessing": split at *all* punctuation and
    mid-word at digit/letter boundaries (``"25yo" -> "25", "yo"``), after Liu et al. (2017).
    Used by the friedrich study.

With ``spans`` given, a token that straddles a PHI span edge is split at that edge
(``"Dr.Brown"`` with a span on ``Brown`` gives ``Dr``, ``.``, ``Brown``), so every span
is a union of whole tokens and label encodings decode back to the exact spans.

Sentence splitting (:func:`split_sentences`) is rule-based and offline, in the spirit of
friedrich's extended spaCy heuristics: split at blank lines, before bulleted or numbered
list items, and after ``. ! ?`` followed by whitespace and an upper-case letter or digit
unless the word before is a known abbreviation or a single initial. Lines are never
joined across a blank line; over-long sentences (tables) are cut at line breaks.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from nltk.tokenize import RegexpTokenizer

__all__ = [
    "Token",
    "TOKENIZER_MODES",
    "tokenize",
    "split_sentences",
    "document_sentences",
    "split_at_offsets",
]


class Token(NamedTuple):
    text: str
    start: int
    end: int


_DEFAULT_PATTERN = r"""
    (?:https?://|www\.)[^\s<>"]+[^\s<>".,;:!?)\]]      # URLs
  | [\w.+-]+@[\w-]+(?:\.[\w-]+)+                       # e-mail
  | \d+(?:[/.:\-]\d+)+                                 # 12/02/2020, 120/80, 10:30, 555-1234, 3.5
  | [^\W\d_]+(?:['’\-][^\W\d_]+)*                      # words, O'Brien, x-ray
  | \w+                                                # other alphanumerics, 25yo, A1c
  | [^\w\s]                                            # any other symbol, one at a time
"""
_AGGRESSIVE_PATTERN = r"[^\W\d_]+|\d+|_|[^\w\s]"

_TOKENIZERS = {
    "default": RegexpTokenizer(_DEFAULT_PATTERN, flags=re.VERBOSE | re.UNICODE),
    "aggressive": RegexpTokenizer(_AGGRESSIVE_PATTERN, flags=re.UNICODE),
}
TOKENIZER_MODES: tuple[str, ...] = tuple(_TOKENIZERS)


def _span_edges(spans: Iterable) -> list[int]:
    edges: set[int] = set()
    for s in spans:
        edges.add(s.start)
        edges.add(s.end)
    return sorted(edges)


def split_at_offsets(tokens: Sequence[Token], text: str, offsets: Sequence[int]) -> list[Token]:
    """Split every token at the (sorted) ``offsets`` that fall strictly inside it."""
    if not offsets:
        return list(tokens)
    out: list[Token] = []
    for tok in tokens:
        i = bisect.bisect_right(offsets, tok.start)
        if i >= len(offsets) or offsets[i] >= tok.end:
            out.append(tok)
            continue
        start = tok.start
        while i < len(offsets) and offsets[i] < tok.end:
            cut = offsets[i]
            piece = text[start:cut]
            if piece.strip():
                out.extend(_strip_piece(text, start, cut))
            start = cut
            i += 1
        if text[start : tok.end].strip():
            out.extend(_strip_piece(text, start, tok.end))
    return out


def _strip_piece(text: str, start: int, end: int) -> list[Token]:
    # tokens never contain whitespace, but keep it safe for pieces of odd tokens
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return [Token(text[start:end], start, end)] if end > start else []


def tokenize(
    text: str, mode: str = "default", spans: Iterable | None = None, *, start: int = 0, end: int | None = None
) -> list[Token]:
    """Tokenize ``text[start:end]`` with offsets into ``text``; split at span edges if given."""
    try:
        tok = _TOKENIZERS[mode]
    except KeyError:
        raise ValueError(f"unknown tokenizer mode {mode!r}; choose one of {', '.join(TOKENIZER_MODES)}") from None
    end = len(text) if end is None else end
    chunk = text[start:end]
    tokens = [Token(chunk[a:b], a + start, b + start) for a, b in tok.span_tokenize(chunk)]
    if spans is not None:
        tokens = split_at_offsets(tokens, text, _span_edges(spans))
    return tokens


_ABBREVIATIONS = frozenset(
    """dr mr mrs ms prof st sr jr vs etc eg ie no pt pts approx appt dept hosp mg ml mcg
    cm mm kg lb lbs min hr hrs wk wks mo mos yr yrs yo inc co corp ave rd blvd apt jan feb
    mar apr jun jul aug sep sept oct nov dec mon tue wed thu fri sat sun fig dx hx rx tx sx
    q qd bid tid qid prn po iv im sq subq h p a m""".split()
)
_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*\n\s*")
_LIST_ITEM = re.compile(r"\n(?=[ \t]*(?:[-*•·]|\d{1,2}[.)])[ \t]+\S)")
_SENT_END = re.compile(r"[.!?]+[\"')\]]*(?=\s+[\"'(\[]?[A-Z0-9])")
_ENUMERATOR = re.compile(r"[ \t]*\d{1,2}\.")
_WORD_BEFORE = re.compile(r"([A-Za-z]+)\.*$")


def _sentence_cuts(text: str, start: int, end: int) -> list[int]:
    cuts = []
    for m in _SENT_END.finditer(text, start, end):
        before = text[max(start, m.start() - 20) : m.start() + 1]
        w = _WORD_BEFORE.search(before)
        if m.group().startswith(".") and w and (w.group(1).lower() in _ABBREVIATIONS or len(w.group(1)) == 1):
            continue
        line_start = text.rfind("\n", start, m.start()) + 1 or start
        if _ENUMERATOR.fullmatch(text, max(line_start, start), m.end()):
            continue  # "1. Call ..." is a numbered list item, not a sentence end
        cuts.append(m.end())
    return cuts


def split_sentences(text: str, *, max_chars: int = 600) -> list[tuple[int, int]]:
    """Offline rule-based sentence splitting; returns ``(start, end)`` ranges without
    surrounding whitespace, covering every non-space character of ``text`` exactly once."""
    cuts = {0, len(text)}
    for rx in (_BLANK_LINE, _LIST_ITEM):
        for m in rx.finditer(text):
            cuts.add(m.start())
            cuts.add(m.end())
    bounds = sorted(cuts)
    pieces: list[tuple[int, int]] = []
    for a, b in zip(bounds, bounds[1:]):
        sub = [a, *_sentence_cuts(text, a, b), b]
        for x, y in zip(sub, sub[1:]):
            pieces.extend(_cut_long(text, x, y, max_chars))
    out = []
    for a, b in pieces:
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if b > a:
            out.append((a, b))
    return out


def _cut_long(text: str, a: int, b: int, max_chars: int) -> list[tuple[int, int]]:
    if b - a <= max_chars:
        return [(a, b)]
    out, cur = [], a
    for m in re.finditer(r"\n", text[a:b]):
        pos = a + m.end()
        if pos - cur >= max_chars // 2:
            out.append((cur, pos))
            cur = pos
    out.append((cur, b))
    return out


def _merge_for_spans(ranges: list[tuple[int, int]], spans: Sequence) -> list[tuple[int, int]]:
    """Merge adjacent sentences when a PHI span crosses their boundary."""
    if not spans or len(ranges) < 2:
        return ranges
    merged = [ranges[0]]
    for a, b in ranges[1:]:
        pa, pb = merged[-1]
        if any(s.start < pb and s.end > a for s in spans if s.start < a):
            merged[-1] = (pa, b)
        else:
            merged.append((a, b))
    return merged


def document_sentences(doc, mode: str = "default", *, use_spans: bool = True) -> list[list[Token]]:
    """Sentences of a :class:`~deidlib.corpus.document.Document` as token lists.

    Tokens are split at the edges of ``doc.spans`` (``use_spans=True``), and sentences
    are merged where a span would otherwise cross a sentence boundary. At prediction
    time there are no spans to respect; pass ``use_spans=False`` (or a document without
    spans) to tokenize exactly as a deployed system would.
    """
    spans = doc.spans if use_spans else []
    ranges = _merge_for_spans(split_sentences(doc.text), spans)
    sents = []
    for a, b in ranges:
        toks = tokenize(doc.text, mode, start=a, end=b)
        if spans:
            toks = split_at_offsets(toks, doc.text, _span_edges(s for s in spans if s.end > a and s.start < b))
        if toks:
            sents.append(toks)
    return sents
