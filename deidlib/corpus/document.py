"""The corpus data model: :class:`Span` and :class:`Document`.

Offsets are character offsets into the exact ``Document.text`` (Python ``str``
indices, end exclusive). Every reader and generator produces documents that pass
:meth:`Document.validate`; every model and scorer consumes them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from .phi import CATEGORIES, TYPE_TO_CATEGORY, UnknownPHITypeError

__all__ = ["Span", "Document", "CorpusError", "SpanError"]


class CorpusError(ValueError):
    """Bad corpus input. The message names the file (if any) and the position or tag."""


class SpanError(CorpusError):
    """A span that does not fit its document (range, text mismatch, overlap, type)."""


@dataclass(frozen=True, order=True)
class Span:
    """One PHI mention.

    Attributes:
        start, end: character offsets into the document text, ``end`` exclusive.
        category: i2b2 category / XML tag (``NAME``, ``LOCATION``, ...).
        subtype: i2b2 ``TYPE`` attribute (``PATIENT``, ``CITY``, ...).
        text: the covered text, equal to ``document.text[start:end]``.
    """

    start: int
    end: int
    category: str
    subtype: str
    text: str = field(default="", compare=True)

    @classmethod
    def of(cls, text: str, start: int, end: int, subtype: str) -> Span:
        """Build a span over ``text[start:end]`` with the category derived from ``subtype``."""
        cat = TYPE_TO_CATEGORY.get(subtype)
        if cat is None:
            raise UnknownPHITypeError(f"unknown PHI TYPE {subtype!r}")
        return cls(start, end, cat, subtype, text[start:end])

    @property
    def length(self) -> int:
        return self.end - self.start

    def shifted(self, delta: int) -> Span:
        return replace(self, start=self.start + delta, end=self.end + delta)


@dataclass
class Document:
    """A clinical note with its PHI spans.

    Attributes:
        id: record id (i2b2 file stem ``PPP-RR`` or PhysioNet ``pid-nid``).
        patient_id: id of the patient the note belongs to (splits are by patient).
        site: the hospital / registry the note comes from (collaborative studies).
        text: the exact note text.
        spans: PHI spans, sorted by (start, end).
        metadata: free-form (note type, date, diagnosis label, source file, ...).
    """

    id: str
    text: str
    spans: list[Span] = field(default_factory=list)
    patient_id: str = ""
    site: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.spans = sorted(self.spans)

    def validate(self, *, source: str | None = None, allow_overlap: bool = False) -> Document:
        """Check every span against the text and the taxonomy; return ``self``.

        Raises :class:`SpanError` naming ``source`` (a file) or the document id and the
        offending span. Overlapping spans are an error unless ``allow_overlap``.
        """
        where = source or f"document {self.id!r}"
        n = len(self.text)
        prev: Span | None = None
        for s in self.spans:
            if s.category not in CATEGORIES:
                raise SpanError(f"{where}: unknown PHI category {s.category!r} at {s.start}-{s.end}")
            if s.subtype not in CATEGORIES[s.category]:
                raise SpanError(
                    f"{where}: unknown TYPE {s.subtype!r} for {s.category} at {s.start}-{s.end}"
                )
            if not (0 <= s.start < s.end <= n):
                raise SpanError(
                    f"{where}: span {s.category}/{s.subtype} {s.start}-{s.end} out of range (text length {n})"
                )
            if self.text[s.start : s.end] != s.text:
                raise SpanError(
                    f"{where}: span {s.category}/{s.subtype} at {s.start}-{s.end}: its text differs from the "
                    "document's text there (the message does not quote either: both may be PHI)"
                )
            if prev is not None and s.start < prev.end and not allow_overlap:
                raise SpanError(
                    f"{where}: span {s.subtype} {s.start}-{s.end} overlaps {prev.subtype} {prev.start}-{prev.end}"
                )
            prev = s
        return self

    def with_spans(self, spans: Iterable[Span]) -> Document:
        """A copy with other spans (e.g. a system's predictions) and the same text."""
        return replace(self, spans=list(spans), metadata=dict(self.metadata))
