"""Taggers (char+word BiLSTM, BiLSTM-CRF, GRU stacks, transformer), the CRF and the featurizer.

Inside the package: :mod:`.presets` (kinds and hyperparameters) and :mod:`.protocol` (the
``Batch``/``Tagger`` interface) import nothing of it; :mod:`.features` and :mod:`.layers`
build on them; :mod:`.taggers` builds on all of these.
"""

from .crf import CRF
from .encoder_tagger import EncoderTagger  # registers the "minilm" kind with build_tagger
from .features import Featurizer, build_featurizer
from .presets import PRESETS
from .protocol import Batch
from .taggers import build_tagger, count_parameters, tagger_from_config

__all__ = [
    "Batch", "Featurizer", "build_featurizer", "CRF", "PRESETS", "build_tagger", "tagger_from_config",
    "count_parameters", "EncoderTagger",
]
