"""What a tagger gets wrong, by kind of token (the transfer study's diagnostics; pure functions).

Binary-token errors are counted on the scorer's own token keys (:func:`.keys.token_keys`:
``[a-zA-Z0-9]+`` pieces of a span), so the counts add up to the FP and FN of
:func:`~deidlib.evaluation.scorer.binary_token_prf`. Each error token is classified by the
whitespace/punctuation token of the text that holds it (:func:`token_kind`), so ``120/80``
is one measurement, not two numbers.

Kinds (first rule that applies):

``time``          ``0600``, ``2130``, ``4pm``, ``10:30``, ``noon`` (four digits read as a 24-hour clock)
``date-like``     ``7/22``, ``10/14/87`` (month/day with a valid month and day)
``measurement``   digits with a unit, ``%``, ``/`` or ``-`` (``120/80``, ``40mg``, ``98%``, ``3LNP``, ``90-104``)
``number``        digits only (``58``, ``1.8``)
``abbreviation``  up to 3 letters, or letters joined by ``/`` or ``&`` (``MAE``, ``s/p``, ``a&o``)
``upper-case word``, ``capitalised word``, ``lower-case word``, ``other``
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Callable, Iterable

from ..corpus.document import Document
from ..corpus.tokenize import document_sentences
from .keys import TOKEN_RE, token_keys
from .scorer import prf

__all__ = ["token_kind", "error_tokens", "grouped_token_counts"]

_TOKEN_KINDS = ("time", "date-like", "measurement", "number", "abbreviation", "upper-case word",
               "capitalised word", "lower-case word", "other")

_HOLDER = re.compile(r"[^\s,;()\[\]\"]+")
_TIME = re.compile(r"^(?:@?(?:[01]\d|2[0-3])[0-5]\d|\d{1,2}(?::\d\d)?\s?(?:am|pm|a|p)|\d{1,2}:\d\d|noon|midnight)\.?$", re.I)
_MD = re.compile(r"^(\d{1,2})/(\d{1,2})(?:/(\d{2}|\d{4}))?\.?$")
_NUMBER = re.compile(r"^[+-]?\d+(?:\.\d+)?\.?$")
_ABBR = re.compile(r"^[A-Za-z]{1,3}\.?$|^[A-Za-z]+(?:[/&][A-Za-z0-9]+)+\.?$")


def token_kind(token: str) -> str:
    """The kind of ``token`` (see the module docstring for the rules)."""
    t = token.strip(".:")
    if not t:
        return "other"
    if _TIME.match(t):
        return "time"
    m = _MD.match(t)
    if m and 1 <= int(m.group(1)) <= 12 and 1 <= int(m.group(2)) <= 31:
        return "date-like"
    if _NUMBER.match(t):
        return "number"
    if any(c.isdigit() for c in t):
        return "measurement"
    if _ABBR.match(t):
        return "abbreviation"
    letters = [c for c in t if c.isalpha()]
    if not letters:
        return "other"
    if all(c.isupper() for c in letters):
        return "upper-case word"
    if t[0].isupper():
        return "capitalised word"
    if all(c.islower() for c in letters):
        return "lower-case word"
    return "other"


class ErrorCounts:
    """Binary-token errors of a system against gold: false positives by kind and token,
    false negatives by gold TYPE and kind. ``fp + tp`` and ``fn + tp`` match the scorer."""

    def __init__(self) -> None:
        self.tp = 0
        self.fp_kind: Counter = Counter()
        self.fp_token: Counter = Counter()
        self.fn_type: Counter = Counter()
        self.fn_kind: Counter = Counter()
        self.gold_type: Counter = Counter()

    @property
    def fp(self) -> int:
        return sum(self.fp_kind.values())

    @property
    def fn(self) -> int:
        return sum(self.fn_type.values())

    def fp_rows(self) -> list[dict]:
        """False positives per kind, most first, with their share of all false positives."""
        n = max(1, self.fp)
        return [{"kind": k, "false_positives": c, "share": c / n} for k, c in self.fp_kind.most_common()]

    def fn_rows(self) -> list[dict]:
        """Missed PHI tokens per gold TYPE, with the TYPE's gold tokens and its miss rate."""
        return [{"type": t, "missed_tokens": c, "gold_tokens": self.gold_type[t],
                 "miss_rate": c / max(1, self.gold_type[t])} for t, c in self.fn_type.most_common()]


def _holder_of(holders: list[tuple[int, int, str]], ends: list[int], a: int) -> str:
    """The whitespace-delimited token of the text that holds offset ``a`` ('' if none)."""
    k = bisect.bisect_right(ends, a)
    return holders[k][2] if k < len(holders) and holders[k][0] <= a else ""


def error_tokens(gold_docs: Iterable[Document], system_docs: Iterable[Document]) -> ErrorCounts:
    """Count binary-token errors of ``system_docs`` against ``gold_docs`` (paired by id)."""
    system = {d.id: d for d in system_docs}
    out = ErrorCounts()
    for g in gold_docs:
        s = system.get(g.id)
        sys_keys = token_keys(s.spans, True) if s is not None else set()
        gold_keys = token_keys(g.spans, True)
        gold_type = {}
        for sp in g.spans:
            for m in TOKEN_RE.finditer(sp.text):
                gold_type[(sp.start + m.start(), sp.start + m.end())] = sp.subtype
        holders = [(m.start(), m.end(), m.group()) for m in _HOLDER.finditer(g.text)]
        ends = [h[1] for h in holders]
        out.tp += len(gold_keys & sys_keys)
        for a, b in sys_keys - gold_keys:
            out.fp_kind[token_kind(_holder_of(holders, ends, a))] += 1
            out.fp_token[g.text[a:b].lower()] += 1
        for key in gold_keys:
            out.gold_type[gold_type.get(key, "?")] += 1
        for a, b in gold_keys - sys_keys:
            out.fn_type[gold_type.get((a, b), "?")] += 1
            out.fn_kind[token_kind(_holder_of(holders, ends, a))] += 1
    return out


def grouped_token_counts(
    gold_docs: Iterable[Document],
    system_docs: Iterable[Document],
    group: Callable[[str], str],
    mode: str = "default",
) -> dict[str, dict[str, float]]:
    """Binary-token TP/FP/FN and P/R/F1 split by a property of the token that holds each key.

    Every scorer token key, gold or system (:func:`.keys.token_keys`), is assigned to the
    token of the package's tokenizer (``mode``, spans not looked at, as a tagger sees the
    text) that contains its first character; ``group(token_text)`` names the key's group
    (e.g. in or out of a tagger's vocabulary). A key outside every token (whitespace) goes
    to group ``"?"``. The counts of all groups add up to the scorer's binary-token counts.
    Returns ``{group: {"tp", "fp", "fn", "precision", "recall", "f1"}}``.
    """
    system = {d.id: d for d in system_docs}
    counts: dict[str, list[int]] = {}
    for g in gold_docs:
        s = system.get(g.id)
        holders = [(t.start, t.end, t.text) for sent in document_sentences(g, mode, use_spans=False) for t in sent]
        ends = [h[1] for h in holders]
        gold_keys = token_keys(g.spans, True)
        sys_keys = token_keys(s.spans, True) if s is not None else set()
        for keys, slot in ((gold_keys & sys_keys, 0), (sys_keys - gold_keys, 1), (gold_keys - sys_keys, 2)):
            for a, _ in keys:
                token = _holder_of(holders, ends, a)
                name = group(token) if token else "?"
                counts.setdefault(name, [0, 0, 0])[slot] += 1
    out = {}
    for k, (tp, fp, fn) in sorted(counts.items()):
        p = prf(tp, fp, fn)
        out[k] = {"tp": tp, "fp": fp, "fn": fn, "precision": p.precision, "recall": p.recall, "f1": p.f1}
    return out
