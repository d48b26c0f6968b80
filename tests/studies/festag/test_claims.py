"""festag claims: the paper's Table 3 in one place, and the "paper vs ours" verdicts that must
follow from the numbers."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from deidlib.studies import festag


def _verdicts(t: pd.DataFrame) -> list[str]:
    assert list(t.columns)[0] == "claim" and t.columns[-1] == "verdict"
    return t.verdict.tolist()


def test_festag_claims_follow_table3_and_flag_a_reversed_ordering():
    t3 = pd.DataFrame({"min": [0.96, 0.96, 0.95, 0.70, 0.90], "mean": [0.962, 0.961, 0.955, 0.84, 0.905],
                       "max": [0.96, 0.96, 0.956, 0.95, 0.91]}, index=["A", "B", "C_0.1", "C_0.5", "D"])
    assert _verdicts(festag.paper_vs_ours(t3)) == ["faithful"] * 5  # the paper's own Table 3
    worse = t3.copy()
    worse.loc["C_0.1", "mean"] = 0.80  # DSSGD below local-only training
    assert _verdicts(festag.paper_vs_ours(worse))[2] == "contradicts"
    assert _verdicts(festag.paper_vs_ours(t3.drop(index="C_0.5")))[4] == "not measured"
    level = t3.copy()
    level.loc["D", "mean"] = 0.962  # local-only as good as centralized: no clear gap
    assert _verdicts(festag.paper_vs_ours(level))[3] == "partial"
    level.loc["D", "mean"] = 0.99  # local-only above centralized
    assert _verdicts(festag.paper_vs_ours(level))[3] == "contradicts"


def test_festag_stability_claim_reads_the_std_over_the_last_epochs():
    t3 = pd.DataFrame({"min": [0.96, 0.96, 0.95, 0.95, 0.90], "mean": [0.962, 0.961, 0.955, 0.95, 0.905],
                       "max": [0.96, 0.96, 0.956, 0.956, 0.91]}, index=["A", "B", "C_0.1", "C_0.5", "D"])
    wobbly = pd.DataFrame({"std_last": [0.01, 0.01, 0.01, 0.08, 0.01]}, index=t3.index)
    steady = pd.DataFrame({"std_last": [0.01, 0.01, 0.05, 0.01, 0.01]}, index=t3.index)
    assert _verdicts(festag.paper_vs_ours(t3, wobbly))[4] == "faithful"
    assert _verdicts(festag.paper_vs_ours(t3, steady))[4] == "contradicts"  # C_0.1 the less stable one


def test_the_claims_read_the_papers_numbers_from_its_one_table(monkeypatch):
    t3 = festag.paper_table3()
    assert t3.loc["C_0.5", "max"] == 0.944 and math.isnan(t3.loc["A", "min"])  # A and B: one model, mean only
    first = festag.paper_vs_ours(t3).iloc[0]
    assert "0.962 vs 0.961" in first.claim and float(first.paper) == pytest.approx(0.001)
    monkeypatch.setitem(festag.PAPER_TABLE3, "B", {"mean": 0.9})  # text and value follow the one table
    again = festag.paper_vs_ours(t3).iloc[0]
    assert "0.962 vs 0.900" in again.claim and float(again.paper) == pytest.approx(0.062)
