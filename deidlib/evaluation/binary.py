"""Binary token scoring of tag sequences: a token is positive when its tag is not ``"O"``,
whatever the PHI class (Dernoncourt et al.'s binary token scoring, used by Festag &
Spreckelsen, Results, and the "token-based" F1 of Friedrich et al., section 6).

The one implementation of those counts: the festag evaluator passes flags it computed once
per sentence, the friedrich study passes tag strings. The document-level measure of the
i2b2 scorer (:func:`deidlib.evaluation.binary_token_prf`) scores spans instead.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .scorer import PRF, prf

__all__ = ["phi_flags", "binary_counts", "binary_tag_prf"]


def phi_flags(tags: Sequence[str]) -> np.ndarray:
    """Boolean flags of one tag sequence: ``True`` where the tag is not ``"O"``."""
    return np.array([t != "O" for t in tags], dtype=bool)


def binary_counts(gold: np.ndarray, pred: np.ndarray) -> tuple[int, int, int]:
    """``(tp, fp, fn)`` of two equally long flag arrays (``True`` = PHI)."""
    if pred.shape != gold.shape:
        raise ValueError(f"{pred.size} predicted tags for {gold.size} gold tags")
    return int((pred & gold).sum()), int((pred & ~gold).sum()), int((~pred & gold).sum())


def binary_tag_prf(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]]) -> PRF:
    """Micro binary-token precision, recall and F1 of predicted tag sequences against gold ones
    (sentence by sentence; a length mismatch is an error, not a silent truncation)."""
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold sentences but {len(pred)} predicted")
    for g, p in zip(gold, pred):
        if len(g) != len(p):
            raise ValueError(f"a sentence of {len(g)} gold tags has {len(p)} predicted")
    g_all = np.concatenate([phi_flags(g) for g in gold]) if gold else np.zeros(0, bool)
    p_all = np.concatenate([phi_flags(p) for p in pred]) if pred else np.zeros(0, bool)
    return prf(*binary_counts(g_all, p_all))
