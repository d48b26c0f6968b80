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

Both run in time linear in the length of the text, whatever the text (a 5 MB note on one
line, or a 5 MB run of ``a.a.a.``): the e-mail alternative of ``default`` is the only one that
would rescan a run of ``[\\w.+-]`` characters from every position inside it (quadratic), so
e-mail candidates are found in a separate pass that starts only at the beginning of such runs,
and the main expression runs without it (:func:`_default_spans`). The token boundaries are
those of the single expression ``_DEFAULT_PATTERN`` applied left to right
(``tests/corpus/test_tokenize.py`` compares both on generated and adversarial text;
``benchmarks/tokenizer.py`` measures the time per MB at 50 KB, 500 KB and 5 MB).

With ``spans`` given, a token that straddles a PHI span edge is split at that edge
(``"Dr.Brown"`` with a span on ``Brown`` gives ``Dr``, ``.``, ``Brown``), so every span
is a union of whole tokens and label encodings decode back to the exact spans.

Sentence splitting (:func:`_split_sentences`) is rule-based and offline, in the spirit of
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

import regex

__all__ = ["Token", "tokenize", "document_sentences"]


class Token(NamedTuple):
    text: str
    start: int
    end: int


_URL = r"""(?:https?://|www\.)[^\s<>"]+[^\s<>".,;:!?)\]]"""
_EMAIL = r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
_REST = r"""
    \d+(?:[/.:\-]\d+)+                                 # 12/02/2020, 120/80, 10:30, 555-1234, 3.5
  | [^\W\d_]+(?:['’\-][^\W\d_]+)*                      # words, O'Brien, x-ray
  | \w+                                                # other alphanumerics, 25yo, A1c
  | [^\w\s]                                            # any other symbol, one at a time
"""
#: the ``default`` tokenizer as one expression (URLs, e-mail, then the rest), matched left to right
_DEFAULT_PATTERN = f"{_URL}  # URLs\n  | {_EMAIL}  # e-mail\n  | {_REST}"
_AGGRESSIVE_PATTERN = r"[^\W\d_]+|\d+|_|[^\w\s]"

# ``regex`` (the engine NLTK's RegexpTokenizer used for these patterns) with the same flags, so
# ``\w`` keeps its meaning (combining marks are word characters). None of these expressions can
# backtrack more than linearly, so no match time limit is needed.
_FLAGS = regex.VERBOSE | regex.UNICODE
_URL_RX = regex.compile(_URL, _FLAGS)
_NO_EMAIL_RX = regex.compile(f"{_URL}  # URLs\n  | {_REST}", _FLAGS)
#: an e-mail match can only start inside a maximal run of ``[\w.+-]``; its local part must end
#: where that run ends (``@`` is not in the run's class), so whether it matches, and where it
#: ends, is the same from every position of the run: found once, from the run's first character
#: (``overlapped``: a run may start inside the domain of the previous run's match)
_EMAIL_RUN_RX = regex.compile(r"(?<![\w.+-])([\w.+-]+)@[\w-]+(?:\.[\w-]+)+", _FLAGS)
_AGGRESSIVE_RX = regex.compile(_AGGRESSIVE_PATTERN, regex.UNICODE)


def _default_spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) matches of ``_DEFAULT_PATTERN`` over ``text``, left to right, in linear
    time. At each token start the single expression tries URL, then e-mail, then the rest; here
    the e-mail alternative is decided from the precomputed runs ``(run start, '@', match end)``:
    it matches at a position inside such a run (and ends at the run's match end) and nowhere else."""
    runs = [(m.start(), m.end(1), m.end()) for m in _EMAIL_RUN_RX.finditer(text, overlapped=True)]
    if not runs:
        return [m.span() for m in _NO_EMAIL_RX.finditer(text)]
    out: list[tuple[int, int]] = []
    pos = 0
    for run_start, at, end in runs:
        if at <= pos:
            continue  # a token already covered this run
        if pos < run_start:
            for m in _NO_EMAIL_RX.finditer(text, pos):
                if m.start() >= run_start:
                    break  # the next token starts inside the run: the e-mail rule decides it
                out.append(m.span())
                pos = m.end()
            if at <= pos:
                continue
        while pos < at:  # token start inside the run (run characters are never spaces)
            q = max(pos, run_start)
            u = _URL_RX.match(text, q)
            pos = u.end() if u else end
            out.append((q, pos))
    out.extend(m.span() for m in _NO_EMAIL_RX.finditer(text, pos))
    return out


def _aggressive_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _AGGRESSIVE_RX.finditer(text)]


_TOKENIZERS = {"default": _default_spans, "aggressive": _aggressive_spans}
_TOKENIZER_MODES: tuple[str, ...] = tuple(_TOKENIZERS)


def _span_edges(spans: Iterable) -> list[int]:
    edges: set[int] = set()
    for s in spans:
        edges.add(s.start)
        edges.add(s.end)
    return sorted(edges)


def _split_at_offsets(tokens: Sequence[Token], text: str, offsets: Sequence[int]) -> list[Token]:
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
        raise ValueError(f"unknown tokenizer mode {mode!r}; choose one of {', '.join(_TOKENIZER_MODES)}") from None
    end = len(text) if end is None else end
    chunk = text[start:end]
    tokens = [Token(chunk[a:b], a + start, b + start) for a, b in tok(chunk)]
    if spans is not None:
        tokens = _split_at_offsets(tokens, text, _span_edges(spans))
    return tokens


_ABBREVIATIONS = frozenset(
    """dr mr mrs ms prof st sr jr vs etc eg ie no pt pts approx appt dept hosp mg ml mcg
    cm mm kg lb lbs min hr hrs wk wks mo mos yr yrs yo inc co corp ave rd blvd apt jan feb
    mar apr jun jul aug sep sept oct nov dec mon tue wed thu fri sat sun fig dx hx rx tx sx
    q qd bid tid qid prn po iv im sq subq h p a m""".split()
)
_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*\n\s*")
_LIST_ITEM = re.compile(r"\n(?=[ \t]*(?:[-*•·]|\d{1,2}[.)])[ \t]+\S)")
# a run of end marks starts the match only at its first mark: from inside the run the match
# would fail or succeed exactly as from its start, and trying every position is quadratic
_SENT_END = re.compile(r"(?<![.!?])[.!?]+[\"')\]]*(?=\s+[\"'(\[]?[A-Z0-9])")
_WORD_BEFORE = re.compile(r"([A-Za-z]+)\.*$")


def _is_enumerator(text: str, start: int, dot: int) -> bool:
    """Whether the line (from ``start`` at the earliest) up to the "." at ``dot`` is blanks
    then one or two digits: "1. Call ..." is a numbered list item, not a sentence end. Scans
    back over the digits and blanks only (never to the line start), so the cost stays linear."""
    j = dot
    while j > start and dot - j < 3 and text[j - 1].isdecimal():
        j -= 1
    if not 1 <= dot - j <= 2 or (j > start and text[j - 1].isdecimal()):
        return False
    while j > start and text[j - 1] in " \t":
        j -= 1
    return j == start or text[j - 1] == "\n"


def _sentence_cuts(text: str, start: int, end: int) -> list[int]:
    cuts = []
    for m in _SENT_END.finditer(text[start:end]):  # a slice: the look-behind sees nothing before start
        a, mark = start + m.start(), m.group()
        before = text[max(start, a - 20) : a + 1]
        w = _WORD_BEFORE.search(before)
        if mark.startswith(".") and w and (w.group(1).lower() in _ABBREVIATIONS or len(w.group(1)) == 1):
            continue
        if mark == "." and _is_enumerator(text, start, a):
            continue
        cuts.append(start + m.end())
    return cuts


def _split_sentences(text: str, *, max_chars: int = 600) -> list[tuple[int, int]]:
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
    by_start = sorted(spans, key=lambda s: s.start)
    i, reach = 0, -1  # reach: the largest end of the spans that start before the previous sentence ends
    merged = [ranges[0]]
    for a, b in ranges[1:]:
        pa, pb = merged[-1]
        while i < len(by_start) and by_start[i].start < pb:
            reach = max(reach, by_start[i].end)
            i += 1
        if reach > a:  # a span starting before pb ends after a: it crosses the boundary
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
    ranges = _merge_for_spans(_split_sentences(doc.text), spans)
    edges = _span_edges(spans)  # edges outside a sentence fall inside none of its tokens
    sents = []
    for a, b in ranges:
        toks = tokenize(doc.text, mode, start=a, end=b)
        if spans:
            toks = _split_at_offsets(toks, doc.text, edges)
        if toks:
            sents.append(toks)
    return sents
