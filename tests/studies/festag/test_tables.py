"""festag tables: Table 3 at the final and the dev-selected epoch, the selection (dev only,
never test), the θ_d sweep and the heterogeneity table, on hand-made results."""

from __future__ import annotations

import pytest

from deidlib.studies import festag


def test_table3_hand_computed(make_results):
    t = festag.table3(make_results())
    assert t.loc["A", "mean"] == pytest.approx(0.85) and t.loc["A", "min"] == pytest.approx(0.8)
    assert t.loc["A", "max"] == pytest.approx(0.9) and t.loc["A", "n"] == 2
    # C_0.1 at epoch 2: 0.8 + {0, .01, .02} + {0, .01}
    assert t.loc["C_0.1", "min"] == pytest.approx(0.8) and t.loc["C_0.1", "max"] == pytest.approx(0.83)
    assert t.loc["C_0.1", "mean"] == pytest.approx(0.815) and t.loc["C_0.1", "n"] == 6


def test_table3_best_epoch_and_theta_table(make_results):
    r = make_results()
    best = festag.table3(r, at="best")
    # A's best epoch is its last: 0.8 / 0.9; C_0.5 rises too, so best == final here
    assert best.loc["A", "mean"] == pytest.approx(0.85)
    assert best.loc["C_0.5", "n"] == 6
    r["runs"][0]["records"][1]["f1"] = 0.1  # seed 0's A collapses on test at its last epoch, dev still rises
    assert festag.table3(r, at="best").loc["A", "min"] == pytest.approx(0.1)  # dev chose epoch 2: test unseen
    assert festag.table3(r).loc["A", "min"] == pytest.approx(0.1)
    with pytest.raises(ValueError):
        festag.table3(r, at="median")
    r["params"] = {"theta_d": 0.1, "theta_d_high": 0.5, "epochs": 2}
    sweep = {"seed": 1, "thetas": [1.0], "runs": [
        {"experiment": "C_1", "seed": 1, "theta_d": 1.0,
         "records": [{"epoch": e, "site": f"site{i}", "f1": 0.3 + 0.1 * i + 0.1 * e} for e in (1, 2) for i in range(2)]}]}
    t = festag.theta_table(r, sweep)
    assert list(t.theta_d.dropna()) == [0.1, 0.5, 1.0]
    c1 = t[t.experiment == "C_1"].iloc[0]
    assert (c1.final_min, c1.final_mean, c1.final_max) == pytest.approx((0.5, 0.55, 0.6))
    c01 = t[t.experiment == "C_0.1"].iloc[0]  # seed 1's C_0.1 at epoch 2: 0.81 + {0, .01, .02}
    assert c01.final_mean == pytest.approx(0.82)
    assert set(t[t.theta_d.isna()].experiment) == {"A", "B", "D"}
    fig = festag.figure_theta_sweep(r, sweep)
    assert fig.axes[0].get_xscale() == "log"


def test_best_table_takes_the_test_score_at_the_dev_selected_epoch_not_the_test_max(make_results):
    r = make_results()
    a0 = r["runs"][0]["records"]  # seed 0's A: test 0.5 -> 0.8
    a0[0]["dev_f1"], a0[1]["dev_f1"] = 0.7, 0.4  # dev prefers epoch 1
    best = festag.table3(r, at="best")
    assert best.loc["A", "min"] == pytest.approx(0.5)  # the test max (0.8) would be chosen on test
    sel = festag.selection(r).set_index(["experiment", "seed", "site"])
    assert sel.loc[("A", 0, "global"), "selected_epoch"] == 1
    # a worker is selected on its own site's dev split, not on another site's
    c = r["runs"][2]["records"]  # C_0.1 seed 0
    for rec in c:
        if rec["site"] == "site1":
            rec["dev_f1@site1"] = 0.9 if rec["epoch"] == 1 else 0.2
            rec["dev_f1@site2"] = 0.1 if rec["epoch"] == 1 else 0.95
    sel = festag.selection(r).set_index(["experiment", "seed", "site"])
    assert sel.loc[("C_0.1", 0, "site1"), "selected_epoch"] == 1
    for rec in r["runs"][0]["records"]:
        del rec["dev_f1"]
    with pytest.raises(ValueError, match="dev scores"):
        festag.table3(r, at="best")


def test_heterogeneity_table_compares_levels_on_the_same_seeds_and_measures_the_site_gap(make_results):
    r = make_results()
    r["params"] = {"patience": None, "heterogeneity": 0.8}
    flat = make_results()
    flat["params"] = {"patience": None, "heterogeneity": 0.0}
    flat["experiments"] = ["A", "D"]
    flat["runs"] = [x for x in flat["runs"] if x["experiment"] in ("A", "D") and x["seed"] == 0]
    for x in flat["runs"]:
        for rec in x["records"]:
            for k in rec:
                if k.startswith("dev_f1@"):
                    rec[k] = rec["f1"]  # alike sites: a worker scores the same on every site's dev
    het = {"levels": [0.0], "seeds": [0], "runs": [flat]}
    t = festag.heterogeneity_table(r, het).set_index(["heterogeneity", "experiment"])
    assert set(t.index) == {(0.0, "A"), (0.0, "D"), (0.8, "A"), (0.8, "D")}
    assert t.loc[(0.8, "A"), "best_mean"] == pytest.approx(0.8)  # seed 0 only, not seed 1's 0.9
    assert t.loc[(0.8, "D"), "cross_site_gap"] == pytest.approx(0.1)  # own dev − other sites' dev
    assert t.loc[(0.0, "D"), "cross_site_gap"] == pytest.approx(0.0)
    fig = festag.figure_heterogeneity(r, het)
    assert len(fig.axes) == 2
