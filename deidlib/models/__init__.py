"""Taggers (char+word BiLSTM, BiLSTM-CRF, GRU stacks, transformer), the CRF and the featurizer."""

from .crf import CRF
from .features import Featurizer, build_featurizer
from .protocol import Batch, Tagger
from .taggers import (
    PRESETS,
    BaseTagger,
    RNNTagger,
    TransformerTagger,
    build_tagger,
    count_parameters,
    tagger_from_config,
)

__all__ = [
    "Batch",
    "Tagger",
    "Featurizer",
    "build_featurizer",
    "CRF",
    "BaseTagger",
    "RNNTagger",
    "TransformerTagger",
    "PRESETS",
    "build_tagger",
    "tagger_from_config",
    "count_parameters",
]
