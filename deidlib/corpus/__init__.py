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
from .phi import ALL_TYPES, CATEGORIES, FESTAG_TYPES, HIPAA_TYPES, TYPE_TO_CATEGORY, category_of

#: public name -> submodule that defines it
_LAZY = {
    **dict.fromkeys(
        ["read_i2b2_xml", "read_i2b2_dir", "parse_i2b2", "to_i2b2_xml", "write_i2b2_xml", "write_i2b2_dir",
         "UnknownTagError"],
        "i2b2",
    ),
    **dict.fromkeys(["read_physionet", "count_overlaps", "PHYSIONET_TYPE_MAP"], "physionet"),
    **dict.fromkeys(
        ["CorpusSplits", "split_by_patient", "split_by_document", "partition_by_patient", "read_split_dirs",
         "write_split_dirs", "split_counts", "THESIS_NURSING_FRACTIONS"],
        "splits",
    ),
    **dict.fromkeys(["Token", "split_sentences", "document_sentences"], "tokenize"),
    **dict.fromkeys(
        ["LABEL_SCHEMES", "encode_tags", "decode_tags", "tag_set", "TaggedSentence", "tagged_sentences",
         "spans_from_predictions"],
        "labels",
    ),
    "find_data_dir": "locate",
}

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
    *_LAZY,
]


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
