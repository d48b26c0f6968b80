import numpy as np
import pytest

from deidlib.audits import attack_scores
from deidlib.audits.metrics import _roc_auc, _tpr_at_fpr


def test_auc_and_tpr_of_separated_and_identical_scores():
    rng = np.random.default_rng(0)
    assert _roc_auc([2, 3, 4], [0, 1]) == 1.0
    assert _roc_auc([0, 1], [2, 3]) == 0.0
    assert _roc_auc([1, 1], [1, 1]) == 0.5  # ties count one half
    a, b = rng.normal(size=20000), rng.normal(size=20000)
    s = attack_scores(a, b)
    assert abs(s["auc"] - 0.5) < 0.02
    assert s["tpr@1%"] < 0.02 and s["tpr@0.1%"] < 0.005
    s = attack_scores(a + 10, b)
    assert s["auc"] > 0.999 and s["tpr@0.1%"] > 0.99


def test_tpr_at_fpr_never_exceeds_the_fpr_on_the_non_members():
    rng = np.random.default_rng(1)
    a, b = rng.normal(1, 1, 500), rng.normal(0, 1, 300)
    for f in (0.0, 0.001, 0.01, 0.1, 0.5):
        tpr = _tpr_at_fpr(a, b, f)
        t = np.sort(b)[::-1][int(np.floor(f * b.size))] if int(np.floor(f * b.size)) < b.size else -np.inf
        assert (b > t).mean() <= f + 1e-12
        assert tpr == pytest.approx((a > t).mean())


def test_bad_scores_are_one_line_errors():
    with pytest.raises(ValueError, match="at least one member"):
        _roc_auc([], [1.0])
    with pytest.raises(ValueError, match="finite"):
        _roc_auc([np.nan], [1.0])


def _mann_whitney_auc(a, b) -> float:
    """The hand-written rank form roc_auc used before it delegated to scikit-learn."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    allv = np.concatenate([a, b])
    order = allv.argsort(kind="mergesort")
    ranks = np.empty(allv.size)
    _, first, counts = np.unique(allv[order], return_index=True, return_counts=True)
    ranks[order] = np.repeat(first + (counts - 1) / 2.0 + 1.0, counts)
    return float((ranks[: a.size].sum() - a.size * (a.size + 1) / 2) / (a.size * b.size))


@pytest.mark.parametrize("seed", range(6))
def test_roc_auc_equals_the_mann_whitney_statistic(seed):
    """scikit-learn's roc_auc_score gives the rank statistic the module computed by hand,
    with ties (rounded scores) and unequal group sizes, and one member or one non-member."""
    rng = np.random.default_rng(seed)
    n_in, n_out = int(rng.integers(1, 300)), int(rng.integers(1, 300))
    a = np.round(rng.normal(0.3 * seed, 1, n_in), 1)
    b = np.round(rng.normal(0, 1, n_out), 1)
    assert _roc_auc(a, b) == pytest.approx(_mann_whitney_auc(a, b), abs=1e-12)
    assert _roc_auc(a[:1], b) == pytest.approx(_mann_whitney_auc(a[:1], b), abs=1e-12)
    assert _roc_auc(a, b[:1]) == pytest.approx(_mann_whitney_auc(a, b[:1]), abs=1e-12)


def test_roc_auc_of_one_class_only_is_the_same_error_as_before():
    with pytest.raises(ValueError, match="at least one member and one non-member"):
        _roc_auc([0.1, 0.2], [])
