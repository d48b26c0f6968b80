"""The operating-point claims (deidlib.studies.operating_point.claims) read the summary rows: the
dev-chosen threshold's test recall against the target, "not measured" when no threshold was chosen."""

from __future__ import annotations

import pandas as pd

from deidlib.studies import operating_point as op


def _verdicts(t: pd.DataFrame) -> list[str]:
    assert list(t.columns)[0] == "claim" and t.columns[-1] == "verdict"
    return t.verdict.tolist()


def test_operating_point_claims_on_a_tiny_summary():
    s = pd.DataFrame({"point": ["model decision", "dev-chosen threshold"], "test_recall": [0.9, 0.95],
                      "test_f1": [0.93, 0.925]})
    assert _verdicts(op.paper_vs_ours(s, 0.92)) == ["faithful", "faithful"]
    assert _verdicts(op.paper_vs_ours(s, 0.99))[0] == "contradicts"
    none = pd.DataFrame({"point": ["model decision", "dev-chosen threshold"], "test_recall": [0.9, None]})
    assert _verdicts(op.paper_vs_ours(none, 0.92))[0] == "not measured"


def test_operating_point_rows_that_cannot_fail_are_not_claims():
    """When every threshold of the test curve reaches the target (the synthetic curve: recall ≥
    0.985), no choice of threshold could miss it: both rows say not measured."""
    s = pd.DataFrame({"point": ["model decision", "dev-chosen threshold"], "test_recall": [0.99, 0.995],
                      "test_f1": [0.97, 0.969]})
    t = op.paper_vs_ours(s, 0.92, test_recalls=[0.985, 0.99, 0.995])
    assert _verdicts(t) == ["not measured", "not measured"] and t.claim.str.contains("not a claim here").all()
    assert _verdicts(op.paper_vs_ours(s, 0.92, test_recalls=[0.5, 0.9, 0.99, 0.995])) == ["faithful", "faithful"]
