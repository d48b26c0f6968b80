import numpy as np
import pytest

from deidlib.audits import attack_scores, roc_auc, tpr_at_fpr


def test_auc_and_tpr_of_separated_and_identical_scores():
    rng = np.random.default_rng(0)
    assert roc_auc([2, 3, 4], [0, 1]) == 1.0
    assert roc_auc([0, 1], [2, 3]) == 0.0
    assert roc_auc([1, 1], [1, 1]) == 0.5  # ties count one half
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
        tpr = tpr_at_fpr(a, b, f)
        t = np.sort(b)[::-1][int(np.floor(f * b.size))] if int(np.floor(f * b.size)) < b.size else -np.inf
        assert (b > t).mean() <= f + 1e-12
        assert tpr == pytest.approx((a > t).mean())


def test_bad_scores_are_one_line_errors():
    with pytest.raises(ValueError, match="at least one member"):
        roc_auc([], [1.0])
    with pytest.raises(ValueError, match="finite"):
        roc_auc([np.nan], [1.0])
