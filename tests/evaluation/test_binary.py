"""deidlib.evaluation.binary: the one binary-token scorer counts tokens tagged PHI whatever the
class, equals scikit-learn's binary scores, and refuses mismatched lengths."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import precision_recall_fscore_support

from deidlib.evaluation import binary_counts, binary_tag_prf, phi_flags


def test_binary_tag_prf_counts_tokens_tagged_phi():
    gold = [["O", "B-PHI", "I-PHI", "O"], ["B-PHI"]]
    pred = [["B-PHI", "B-PHI", "O", "O"], ["I-PHI"]]  # tp 2 (any PHI tag counts), fp 1, fn 1
    r = binary_tag_prf(gold, pred)
    assert r.precision == pytest.approx(2 / 3) and r.recall == pytest.approx(2 / 3)
    assert r.f1 == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="2 gold sentences but 1 predicted"):
        binary_tag_prf(gold, pred[:1])
    with pytest.raises(ValueError, match="4 gold tags has 3 predicted"):
        binary_tag_prf(gold, [pred[0][:3], pred[1]])


@pytest.mark.parametrize("phi_rate", [0.0, 0.05, 0.3, 0.9, 1.0])
def test_binary_scores_equal_sklearn_and_the_counts_on_flags(phi_rate):
    rng = np.random.default_rng(int(phi_rate * 100))
    tags = ["O", "B-DATE", "I-NAME"]
    gold = [[str(rng.choice(tags[1:])) if rng.random() < phi_rate else "O" for _ in range(int(rng.integers(1, 9)))]
            for _ in range(int(rng.integers(1, 12)))]
    pred = [[str(rng.choice(tags)) for _ in g] for g in gold]
    got = binary_tag_prf(gold, pred)
    g, p = np.concatenate([phi_flags(x) for x in gold]), np.concatenate([phi_flags(x) for x in pred])
    want = precision_recall_fscore_support(g, p, average="binary", zero_division=0)[:3]
    assert (got.precision, got.recall, got.f1) == pytest.approx(want)
    tp, fp, fn = binary_counts(g, p)
    assert (tp, fp, fn) == (int((g & p).sum()), int((~g & p).sum()), int((g & ~p).sum()))
    with pytest.raises(ValueError, match="predicted tags"):
        binary_counts(g, p[:-1])
