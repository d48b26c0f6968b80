"""Taggers (char+word BiLSTM, BiLSTM-CRF, GRU stacks, transformer), the CRF and the featurizer.

Inside the package: :mod:`.presets` (kinds and hyperparameters) and :mod:`.protocol` (the
``Batch``/``Tagger`` interface) import nothing of it; :mod:`.features` and :mod:`.layers`
build on them; :mod:`.taggers` builds on all of these.
"""

from .crf import CRF
from .encoder_tagger import EncoderTagger  # registers the "minilm" kind with build_tagger
from .features import Featurizer, build_featurizer
from .presets import DEFAULT_TRAINING, KINDS, PRESETS
from .protocol import Batch, Tagger
from .taggers import (
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
    "EncoderTagger",
    "PRESETS",
    "KINDS",
    "DEFAULT_TRAINING",
    "build_tagger",
    "tagger_from_config",
    "count_parameters",
]
