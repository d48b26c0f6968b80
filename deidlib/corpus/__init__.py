"""Corpus layer: data model, readers/writers, tokenization, label schemes, splits."""

from .document import CorpusError, Document, Span, SpanError
from .phi import ALL_TYPES, CATEGORIES, FESTAG_TYPES, HIPAA_TYPES, TYPE_TO_CATEGORY, category_of

__all__ = [
    "Document",
    "Span",
    "CorpusError",
    "SpanError",
    "CATEGORIES",
    "TYPE_TO_CATEGORY",
    "ALL_TYPES",
    "FESTAG_TYPES",
    "HIPAA_TYPES",
    "category_of",
]
