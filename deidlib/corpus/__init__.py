"""Corpus layer: data model, readers/writers, tokenization, label schemes, splits.

The data model and the PHI taxonomy are imported eagerly; readers, splits, tokenizers
and label schemes are exported lazily (PEP 562), so ``import deidlib.corpus`` stays
cheap. This package is the bottom of the data stack: it imports nothing above
:mod:`deidlib.rng`/:mod:`deidlib.results`; loading a named corpus (synthetic or real)
is :func:`deidlib.datasets.load_corpus`, one layer up. The ``tokenize`` function is not
re-exported: its name is taken by the :mod:`.tokenize` submodule.
"""

from importlib import import_module

from .document import CorpusError, Document, Span, SpanError
from .phi import CATEGORIES, HIPAA_TYPES, TYPE_TO_CATEGORY

#: public name -> submodule that defines it
_LAZY = {
    **dict.fromkeys(["read_i2b2_xml", "read_i2b2_dir", "to_i2b2_xml", "write_i2b2_dir"], "i2b2"),
    "read_physionet": "physionet",
    **dict.fromkeys(
        ["CorpusSplits", "split_by_patient", "split_by_document", "partition_by_patient", "read_split_dirs",
         "THESIS_NURSING_FRACTIONS"],
        "splits",
    ),
    **dict.fromkeys(["Token", "document_sentences"], "tokenize"),
    **dict.fromkeys(["tag_set", "TaggedSentence", "tagged_sentences", "spans_from_predictions"], "labels"),
    "find_data_dir": "locate",
}

__all__ = [
    "Document", "Span", "CorpusError", "SpanError", "CATEGORIES", "TYPE_TO_CATEGORY", "HIPAA_TYPES",
    "read_i2b2_xml", "read_i2b2_dir", "to_i2b2_xml", "write_i2b2_dir", "read_physionet", "CorpusSplits",
    "split_by_patient", "split_by_document", "partition_by_patient", "read_split_dirs",
    "THESIS_NURSING_FRACTIONS", "Token", "document_sentences", "tag_set", "TaggedSentence",
    "tagged_sentences", "spans_from_predictions", "find_data_dir",
]


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
