"""Scores of a membership-style attack: AUC and TPR at a fixed low FPR (Carlini et al. 2022,
"Membership Inference Attacks From First Principles", §III: report the true-positive rate at
low false-positive rates, not only the AUC, because an attack that is confident about a few
records is a privacy failure even when its AUC is near 0.5).

Convention everywhere in :mod:`deidlib.audits`: a *higher* score means "more likely a member".
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["attack_scores"]

#: the false-positive rates at which TPR is reported
_FPRS = (0.01, 0.001)


def _arrays(scores_in, scores_out) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(scores_in, dtype=float).ravel()
    b = np.asarray(scores_out, dtype=float).ravel()
    if a.size == 0 or b.size == 0:
        raise ValueError("an attack needs at least one member and one non-member score")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("attack scores must be finite")
    return a, b


def _roc_auc(scores_in: Sequence[float] | np.ndarray, scores_out: Sequence[float] | np.ndarray) -> float:
    """P(score of a random member > score of a random non-member), ties counted 1/2: the
    ROC AUC of members (label 1) against non-members (label 0), by
    :func:`sklearn.metrics.roc_auc_score`. Without a member or without a non-member there is
    no AUC: ``ValueError``."""
    from sklearn.metrics import roc_auc_score

    a, b = _arrays(scores_in, scores_out)
    labels = np.concatenate([np.ones(a.size), np.zeros(b.size)])
    return float(roc_auc_score(labels, np.concatenate([a, b])))


def _tpr_at_fpr(scores_in: Sequence[float] | np.ndarray, scores_out: Sequence[float] | np.ndarray, fpr: float) -> float:
    """The largest TPR of a threshold rule ``score > t`` whose FPR on the non-members is at
    most ``fpr``. With fewer than ``1/fpr`` non-members the only admissible rule flags no
    non-member at all (FPR = 0), which is what is reported (conservative)."""
    a, b = _arrays(scores_in, scores_out)
    if not 0 <= fpr <= 1:
        raise ValueError(f"fpr must be in [0, 1], got {fpr}")
    allowed = int(np.floor(fpr * b.size))  # non-members that may lie above the threshold
    bs = np.sort(b)[::-1]
    t = bs[allowed] if allowed < bs.size else -np.inf  # strictly above the (allowed+1)-th largest
    return float((a > t).mean())


def attack_scores(scores_in: Sequence[float], scores_out: Sequence[float], fprs=_FPRS) -> dict[str, float]:
    """``{"auc", "tpr@1%", "tpr@0.1%", "n_in", "n_out"}`` of one attack."""
    a, b = _arrays(scores_in, scores_out)
    out = {"auc": _roc_auc(a, b)}
    for f in fprs:
        out[f"tpr@{f * 100:g}%"] = _tpr_at_fpr(a, b, f)
    out["n_in"], out["n_out"] = int(a.size), int(b.size)
    return out
