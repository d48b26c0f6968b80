"""The ahmed_dp claims (deidlib.studies.ahmed_dp.claims): the ensemble against its members
(Tables 5.1, 5.2), Table 5.3's DP cost read from the SAT runs, and the thesis' numbers read from
the one Table 5.3 the study keeps."""

from __future__ import annotations

import pandas as pd
import pytest

from deidlib.studies import ahmed_dp as ad
from deidlib.studies.ahmed_dp import claims as adc
from deidlib.studies.ahmed_dp.accounting import THESIS_TABLE_5_3
from deidlib.studies.ahmed_dp.claims import THESIS_POINTS


def _verdicts(t: pd.DataFrame) -> list[str]:
    assert list(t.columns)[0] == "claim" and t.columns[-1] == "verdict"
    return t.verdict.tolist()


def test_ahmed_dp_claims_compare_the_ensemble_with_its_members():
    a = pd.DataFrame({"target": ["s0"] * 3, "model": ["s1", "s2", "ensemble(s1+s2) minimality"],
                      "precision": [0.9, 0.8, 0.7], "recall": [0.6, 0.7, 0.75]})
    # the ensemble's recall rows hold by construction of the minimality (union) rule: not rows;
    # no DP-cost rows given: not measured
    t = ad.paper_vs_ours(a, None)
    assert _verdicts(t) == ["faithful", "not measured", "not measured"]
    assert not t.claim.str.contains("recall above").any()
    a.loc[2, "precision"] = 0.95  # the ensemble gains precision: the stated price is not paid
    assert _verdicts(ad.paper_vs_ours(a, None))[0] == "contradicts"


def test_ahmed_dp_cost_claims_read_the_sat_runs():
    """Table 5.3's "DP costs about one point" is computed from the SAT's runs: a cost near the
    thesis' is faithful, a large one is not."""
    from deidlib.studies.ahmed_dp import dp_costs

    def rows(np_f1, free, dp):
        return pd.DataFrame([{"role": "non-private SAT", "seed": 0, "f1": np_f1},
                             *({"role": "recipe without DP", "seed": s, "f1": f} for s, f in enumerate(free)),
                             *({"role": "DP SAT", "seed": s, "f1": f} for s, f in enumerate(dp))])

    costs = dp_costs(rows(0.98, [0.975, 0.97], [0.97, 0.96]))
    c = costs.set_index("cost")
    assert c.loc["non-private SAT − DP SAT", "mean"] == pytest.approx(1.5)  # 98 − mean(97, 96)
    assert c.loc["recipe without DP − DP SAT", "mean"] == pytest.approx(0.75)  # paired: 0.5 and 1.0
    assert (c.loc["recipe without DP − DP SAT", "min"], c.loc["recipe without DP − DP SAT", "max"]) == pytest.approx(
        (0.5, 1.0))
    assert _verdicts(ad.paper_vs_ours(None, None, costs))[1:] == ["faithful", "faithful"]
    big = dp_costs(rows(0.98, [0.97, 0.97], [0.90, 0.90]))
    assert _verdicts(ad.paper_vs_ours(None, None, big))[1:] == ["contradicts", "contradicts"]


def test_the_thesis_points_and_the_dp_cost_claims_read_table_5_3():
    nursing = [r for r in THESIS_TABLE_5_3 if r[0] == "Nursing Note"]
    assert [(p["epsilon"], p["noise_multiplier"]) for p in THESIS_POINTS] == [(r[3], r[2]) for r in nursing]
    assert [p["f1"] for p in THESIS_POINTS] == [0.805, 0.796]  # §5.2's rounding of Table 5.3's F1
    paper = [float(x) for x in ad.paper_vs_ours(None, None, None)["paper"].iloc[1:]]  # the table prints 3 decimals
    assert paper[0] == pytest.approx(adc._THESIS_SAT_I2B2_F1 - 97.53, abs=5e-4)  # Table 4.2 − Table 5.3 (i2b2, σ 0.55)
    assert paper[1] == pytest.approx(80.508 - 79.583, abs=5e-4)  # Table 5.3, nursing notes, σ 0.25 − σ 0.55
