"""deidlib.training.stopping: the one early-stopping rule. It fires ``patience`` evaluations after
the best, never before ``min_epochs``; minimising with ``min_delta`` it is the rule the adversarial
procedures stopped by, maximising it is the trainer's and the festag study's (each checked against
the loop it replaced, kept here as the reference)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from deidlib.training import EarlyStopping, select_epoch


def test_select_epoch_stops_patience_epochs_after_the_dev_best():
    assert select_epoch([0.1, 0.3, 0.2, 0.25, 0.9], patience=2) == (1, 3)  # 0.9 comes too late
    assert select_epoch([0.1, 0.3, 0.2, 0.25, 0.9], patience=None) == (4, 4)
    assert select_epoch([0.5, 0.5, 0.5], patience=5) == (0, 2)  # ties: the first; never fired
    # a flat start (no PHI predicted yet) does not stop a unit before min_epochs
    assert select_epoch([0.0, 0.0, 0.0, 0.0, 0.4, 0.5], patience=2) == (0, 2)
    assert select_epoch([0.0, 0.0, 0.0, 0.0, 0.4, 0.5], patience=2, min_epochs=5) == (5, 5)
    with pytest.raises(ValueError):
        select_epoch([], patience=1)


def test_the_rule_minimises_with_a_margin_and_never_improves_on_nan():
    rule = EarlyStopping(2, "min", min_delta=0.1)
    assert not rule.update(1.0) and rule.improved and rule.best == 1.0
    assert not rule.update(0.95) and not rule.improved  # better, but not by more than min_delta
    assert rule.update(0.92) and rule.best_index == 0  # two evaluations without improvement
    nan = EarlyStopping(1)
    assert nan.update(math.nan) and not nan.improved and nan.best_index is None
    never = EarlyStopping(None)
    assert not any(never.update(v) for v in (0.5, 0.4, 0.3, 0.2)) and never.best_index == 0
    with pytest.raises(ValueError, match="mode"):
        EarlyStopping(1, "lowest")
    with pytest.raises(ValueError, match="patience"):
        EarlyStopping(0)


def _former_festag(dev, patience, min_epochs):
    best, stop = 0, len(dev) - 1
    for i, v in enumerate(dev):
        if v > dev[best]:
            best = i
        if patience is not None and i + 1 >= min_epochs and i - best >= patience:
            stop = i
            break
    return best, stop


def _former_trainer(dev, patience):
    best, best_epoch, bad = None, None, 0
    for i, v in enumerate(dev):
        if best is None or v > best:
            best, best_epoch, bad = v, i, 0
        else:
            bad += 1
            if patience is not None and bad >= patience:
                return best_epoch, i
    return best_epoch, len(dev) - 1


def _former_adversarial(losses, patience):
    best, best_i, bad = math.inf, None, 0
    for i, v in enumerate(losses):
        if v < best - 1e-6:
            best, best_i, bad = v, i, 0
        else:
            bad += 1
            if bad >= patience:
                return best_i, i
    return best_i, len(losses) - 1


def _run(rule, values):
    for i, v in enumerate(values):
        if rule.update(v):
            return rule.best_index, i
    return rule.best_index, len(values) - 1


@pytest.mark.parametrize("seed", range(40))
def test_the_rule_stops_where_each_former_loop_stopped(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 25))
    # plateaus and exact ties are where rules differ: round to a coarse grid
    scores = np.round(rng.random(n) * 4) / 4 + np.cumsum(rng.random(n)) * (seed % 3 == 0) * 0.01
    patience, min_epochs = int(rng.integers(1, 5)), int(rng.integers(1, 6))
    assert select_epoch(list(scores), patience, min_epochs) == _former_festag(list(scores), patience, min_epochs)
    assert select_epoch(list(scores), None) == _former_festag(list(scores), None, 1)
    assert _run(EarlyStopping(patience), scores) == _former_trainer(scores, patience)
    losses = scores + rng.choice([0.0, 5e-7, 2e-6], size=n)  # steps below and above min_delta
    assert _run(EarlyStopping(patience, "min", min_delta=1e-6), losses) == _former_adversarial(losses, patience)


def _former_friedrich(f1s, losses, tags_phi, patience):
    """The friedrich study's own loop before it used EarlyStopping: best by dev F1, ties (1e-9)
    broken by the dev loss (1e-6); a non-improving epoch counts only when the head tags PHI."""
    best, best_i, bad, stalled = (-1.0, math.inf), None, 0, 0
    for i, (f1, loss, phi) in enumerate(zip(f1s, losses, tags_phi)):
        if f1 > best[0] + 1e-9 or (abs(f1 - best[0]) <= 1e-9 and loss < best[1] - 1e-6):
            best, best_i, bad = (f1, loss), i, 0
        elif phi:
            bad += 1
            if bad >= patience:
                return best_i, i, best, stalled
        else:
            stalled += 1
    return best_i, len(f1s) - 1, best, stalled


def _tie_broken(f1s, losses, tags_phi, patience):
    rule, stalled = EarlyStopping(patience, "max", min_delta=1e-9, tie_delta=1e-6), 0
    for i, (f1, loss, phi) in enumerate(zip(f1s, losses, tags_phi)):
        fired = rule.update(f1, tie=loss, counts=phi)
        stalled += not rule.improved and not phi
        if fired:
            return rule.best_index, i, (rule.best, rule.best_tie), stalled
    return rule.best_index, len(f1s) - 1, (rule.best, rule.best_tie), stalled


@pytest.mark.parametrize("seed", range(60))
def test_the_tie_break_and_uncounted_evaluations_stop_where_friedrichs_loop_stopped(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 25))
    f1s = np.round(rng.random(n) * 3) / 3 * (rng.random(n) < 0.8)  # many exact ties, zeros
    losses = np.round(rng.random(n) * 4) / 4 + rng.choice([0.0, 5e-7, 2e-6], size=n)  # below and above tie_delta
    tags_phi = rng.random(n) < 0.6
    patience = int(rng.integers(1, 5))
    assert _tie_broken(f1s, losses, tags_phi, patience) == _former_friedrich(f1s, losses, tags_phi, patience)


def test_a_tie_improves_only_by_its_second_key_and_uncounted_evaluations_keep_patience():
    rule = EarlyStopping(2, "max", tie_delta=0.1)
    assert not rule.update(0.5, tie=1.0) and rule.improved
    assert not rule.update(0.5, tie=0.95) and not rule.improved and rule.bad == 1  # not lower by more than tie_delta
    rule = EarlyStopping(1, "max", tie_delta=0.1)
    rule.update(0.5, tie=1.0)
    assert not rule.update(0.5, tie=0.8) and rule.improved and rule.best_index == 1 and rule.best_tie == 0.8
    assert not rule.update(0.4, counts=False) and rule.bad == 0  # an uncounted miss
    assert rule.update(0.4) and rule.bad == 1  # a counted one fires at patience 1
