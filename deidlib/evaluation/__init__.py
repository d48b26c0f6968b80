"""The i2b2 2014 de-identification scorer (token / strict / relaxed, HIPAA, binary) with
bootstrap confidence intervals; see :mod:`.scorer` and :mod:`.keys`."""

from .binary import binary_counts, binary_tag_prf, phi_flags
from .keys import TOKEN_RE, hipaa_filter, token_keys
from .scorer import MEASURES, ScoreReport, binary_token_prf, evaluate, evaluate_dirs, prf

__all__ = [
    "evaluate", "evaluate_dirs", "binary_token_prf", "binary_tag_prf", "binary_counts", "phi_flags",
    "ScoreReport", "prf", "MEASURES", "TOKEN_RE", "token_keys", "hipaa_filter",
]
