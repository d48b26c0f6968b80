"""The span-exact text builder of a note.

A note is built by appending pieces to a :class:`NoteBuilder`: plain text
(:meth:`~NoteBuilder.add_text`), or a PHI piece (:meth:`~NoteBuilder.add_phi`) whose span
is recorded at the current offset. Casing (all-caps / all-lowercase sites) is applied to
each piece *before* its offset is taken, so gold spans are exact by construction
(``text[start:end] == span.text``) whatever the site's style. A site's wording of common
words (``vocab``, e.g. "patient" -> "pt") rewrites plain text only, never PHI pieces.
"""

from __future__ import annotations

import functools
import re

from ...corpus.document import Span
from ...corpus.phi import TYPE_TO_CATEGORY

__all__ = []


class NoteBuilder:
    """Appends text pieces and records PHI spans at exact offsets."""

    __slots__ = ("parts", "pos", "spans", "case", "vocab")

    def __init__(self, case: str = "normal", vocab: dict[str, str] | None = None) -> None:
        self.parts: list[str] = []
        self.pos = 0
        self.spans: list[Span] = []
        self.case = case
        self.vocab = vocab or None

    def _cased(self, s: str) -> str:
        if self.case == "upper":
            return s.upper()
        if self.case == "lower":
            return s.lower()
        return s

    def add_text(self, s: str) -> None:
        """Append plain (non-PHI) text."""
        if s:
            if self.vocab:
                pat, table = _vocab_pattern(tuple(sorted(self.vocab.items())))
                s = pat.sub(lambda m: table[m.group(0)], s)
            s = self._cased(s)
            self.parts.append(s)
            self.pos += len(s)

    def add_phi(self, s: str, subtype: str) -> None:
        """Append a PHI piece; its span is ``[pos, pos+len)`` of the cased text."""
        s = self._cased(s)
        if not s or s != s.strip():
            raise ValueError(f"PHI piece {s!r} ({subtype}) is empty or has outer whitespace")
        self.spans.append(Span(self.pos, self.pos + len(s), TYPE_TO_CATEGORY[subtype], subtype, s))
        self.parts.append(s)
        self.pos += len(s)

    def text(self) -> str:
        return "".join(self.parts)


@functools.lru_cache(maxsize=64)
def _vocab_pattern(items: tuple[tuple[str, str], ...]) -> tuple[re.Pattern, dict[str, str]]:
    """A whole-word pattern over the keys of a site's wording table (longest first)."""
    table = dict(items)
    keys = sorted(table, key=len, reverse=True)
    return re.compile(r"(?<![\w/])(?:" + "|".join(re.escape(k) for k in keys) + r")(?![\w/])"), table
