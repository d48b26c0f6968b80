"""The i2b2 2014 de-identification scorer (token / strict / relaxed, HIPAA, binary) with
bootstrap confidence intervals; see :mod:`.scorer` and :mod:`.keys`."""

from .binary import binary_counts, binary_tag_prf, phi_flags
from .keys import TOKEN_RE, hipaa_filter, is_hipaa, relaxed_counts, strict_keys, token_keys
from .scorer import (
    MEASURES,
    MODES,
    PRF,
    MeasureScore,
    ScoreReport,
    binary_token_prf,
    evaluate,
    evaluate_dirs,
    prf,
)

__all__ = [
    "evaluate",
    "evaluate_dirs",
    "binary_token_prf",
    "binary_tag_prf",
    "binary_counts",
    "phi_flags",
    "ScoreReport",
    "MeasureScore",
    "PRF",
    "prf",
    "MEASURES",
    "MODES",
    "TOKEN_RE",
    "token_keys",
    "strict_keys",
    "relaxed_counts",
    "hipaa_filter",
    "is_hipaa",
]
