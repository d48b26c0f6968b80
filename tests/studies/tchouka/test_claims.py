"""The tchouka claims (deidlib.studies.tchouka.claims) read the guarantee checks: the published
Algorithm 1 is flagged, the private mechanisms hold."""

from __future__ import annotations

import math

import pandas as pd

from deidlib.studies import tchouka


def _verdicts(t: pd.DataFrame) -> list[str]:
    assert list(t.columns)[0] == "claim" and t.columns[-1] == "verdict"
    return t.verdict.tolist()


def test_tchouka_claims_flag_the_published_algorithm_1():
    checks = pd.DataFrame({
        "mechanism": ["dp (ε=0.5, d=1 day)", "shift (claimed)", "paper Algorithm 1 (ε=19.9)"],
        "bound": [0.5, 1.0, 1.0], "exact_max_log_ratio": [0.5, math.inf, math.inf],
        "empirical_max_log_ratio": [0.53, 1.0, 1.02]})
    t = tchouka.paper_vs_ours(checks)
    assert _verdicts(t) == ["faithful", "not measured", "faithful", "contradicts"]  # no ldp row here
