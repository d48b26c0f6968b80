"""Early stopping: the one rule every training loop of the library stops by.

A monitored value (a dev F1 to maximise, a validation loss to minimise) improves when it beats
the best so far by more than ``min_delta``; the rule fires once ``patience`` evaluations in a
row brought no improvement, and never before the ``min_epochs``-th evaluation. The caller keeps
the best state: :attr:`EarlyStopping.improved` says when to save it. :func:`select_epoch` runs
the same rule over a finished series of scores (the festag study selects epochs after the fact).
Two options serve a monitor with a second key: an evaluation that ties the best (within
``min_delta``) improves when its ``tie`` value (a loss: lower is better) beats the best one's by
more than ``tie_delta``; and an evaluation marked ``counts=False`` that does not improve leaves
the patience count alone (the friedrich study's all-O epochs).

Used by :func:`deidlib.training.train` (dev F1), the adversarial procedures of
:mod:`deidlib.privacy.adversarial` (validation losses), the festag study's run units and the
friedrich study's de-identification model (dev F1, ties broken by the dev loss).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["EarlyStopping", "select_epoch"]


@dataclass
class EarlyStopping:
    """State of the stopping rule over the evaluations seen so far.

    ``patience=None`` never fires (the best evaluation is still tracked). ``mode``: ``"max"``
    (a score) or ``"min"`` (a loss). ``best`` starts at −∞ (``"max"``) or +∞ (``"min"``), so
    any first finite value improves; a NaN never does. ``tie_delta``: the margin by which a tied
    evaluation's ``tie`` value must fall below the best one's (``best_tie``, +∞ at first).
    """

    patience: int | None = None
    mode: str = "max"
    min_delta: float = 0.0
    min_epochs: int = 1
    best: float = math.nan
    best_index: int | None = None
    bad: int = 0
    seen: int = 0
    improved: bool = False
    tie_delta: float = 0.0
    best_tie: float = math.inf

    def __post_init__(self) -> None:
        if self.mode not in ("max", "min"):
            raise ValueError(f"mode must be 'max' or 'min', got {self.mode!r}")
        if self.patience is not None and self.patience < 1:
            raise ValueError(f"patience must be >= 1 or None, got {self.patience}")
        if math.isnan(self.best):
            self.best = -math.inf if self.mode == "max" else math.inf

    def update(self, value: float, *, tie: float | None = None, counts: bool = True) -> bool:
        """Record one evaluation; ``True`` when the rule fires now (stop after this one).

        ``tie``: the second key of an evaluation that ties the best (lower is better);
        ``counts=False``: a non-improving evaluation does not count towards ``patience``.
        """
        if self.mode == "max":
            self.improved = value > self.best + self.min_delta
        else:
            self.improved = value < self.best - self.min_delta
        if not self.improved and tie is not None and abs(value - self.best) <= self.min_delta:
            self.improved = tie < self.best_tie - self.tie_delta
        if self.improved:
            self.best, self.best_index, self.bad = float(value), self.seen, 0
            self.best_tie = math.inf if tie is None else float(tie)
        elif counts:
            self.bad += 1
        self.seen += 1
        return self.fired

    @property
    def fired(self) -> bool:
        """``patience`` evaluations without improvement, at or after the ``min_epochs``-th."""
        return self.patience is not None and self.seen >= self.min_epochs and self.bad >= self.patience


def select_epoch(scores: Sequence[float], patience: int | None, min_epochs: int = 1) -> tuple[int, int]:
    """``(selected, stopped)`` positions in a run's per-epoch dev ``scores`` (higher is better).

    The run stops at the first epoch where :class:`EarlyStopping` fires (``None``: never; then at
    the last epoch); ``selected`` is the epoch of the best score up to the stop (the first of ties).
    """
    if not len(scores):
        raise ValueError("no dev scores to select an epoch on")
    rule = EarlyStopping(patience, "max", min_epochs=min_epochs)
    stop = len(scores) - 1
    for i, v in enumerate(scores):
        if rule.update(v):
            stop = i
            break
    return (rule.best_index if rule.best_index is not None else 0), stop
