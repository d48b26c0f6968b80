import math

import pandas as pd
import pytest

import deidlib.privacy.dpsgd as dpsgd
from deidlib.studies import audits as au


def test_params_resolve_and_reject_bad_values():
    p = au.params_for("smoke", references=2)
    assert p.references == 2 and p.profile == "smoke"
    with pytest.raises(ValueError, match="references"):
        au.params_for("smoke", references=0)
    with pytest.raises(ValueError, match="unknown audits parameters"):
        au.params_for("smoke", bogus=1)


def test_halves_are_balanced_and_seeded():
    pats = [str(i) for i in range(7) for _ in range(3)]
    h = au._half(pats, 0, "x")
    assert sum(h.values()) == 4 and h == au._half(pats, 0, "x") and h != au._half(pats, 0, "y")
    with pytest.raises(ValueError, match="at least 2 patients"):
        au._half(["a", "a"], 0, "x")


def test_frontier_lists_the_missing_rows_without_numbers():
    res = {"membership": [], "dssgd": [], "surrogates": []}
    fr = au.frontier_table(res)
    assert len(fr) == len(au.MISSING) and fr.status.str.startswith("not joined").all()
    assert fr.utility_f1.isna().all() and fr.attack_success.isna().all()


def test_the_study_raises_when_an_audit_beats_the_accountant(monkeypatch):
    """A noise bug in dpsgd (10x too small) makes the one-step audit exceed the accountant's ε:
    the study must refuse to report it as a result."""
    params = au.params_for("smoke", step_audit_trials=1000)
    data = au.prepare_data(params)
    real = dpsgd._add_noise
    monkeypatch.setattr(dpsgd, "_add_noise", lambda s, c, z, d, g: real(s, c, z / 10, d, g))
    with pytest.raises(RuntimeError, match="privacy bug"):
        au.epsilon_audits(data, params)


def _setting(method, setting, seed, f1, tpr, exposure=3.0, eps=1.0):
    sent = [{"level": "sentence", "attack": "loss", "auc": 0.6, "tpr@1%": tpr, "tpr@0.1%": tpr / 2},
            {"level": "sentence", "attack": "lira", "auc": 0.55, "tpr@1%": tpr / 3, "tpr@0.1%": 0.0}]
    pat = [{"level": "patient", "attack": a, "auc": 0.7, "tpr@1%": 0.0, "tpr@0.1%": 0.0} for a in ("loss", "lira")]
    return {"method": method, "setting": setting, "seed": seed, "epsilon": eps, "utility": {"f1": f1},
            "membership": sent + pat, "references": 2,
            "canaries": [{"copies": 16, "exposure": exposure, "max_exposure": 8.0},
                         {"copies": 1, "exposure": 0.5, "max_exposure": 8.0}]}


def _fake_results(dp_tpr=0.05, dp_f1=(0.6, 0.62, 0.64)):
    mem = []
    for sd in range(3):
        mem.append(_setting("non-private (minilm recipe)", "", sd, 0.9, 0.3, eps=math.inf))
        mem.append(_setting("DP-SGD (minilm recipe)", "ε=4", sd, dp_f1[sd], dp_tpr))
        mem.append(_setting("non-private (festag)", "", sd, 0.6, 0.2, eps=math.inf))
    dssgd = [{"seed": sd, "theta_u": 1.0, "dp_epsilon_per_upload": math.inf, "f1": 0.3, "reconstruction_f1": 0.9}
             for sd in range(3)]
    sur = [{"seed": sd, "epsilon": 1.0, "memo_scope": "patient", "f1": 0.7, "linkage_f1": 0.3} for sd in range(3)]
    return {"membership": mem, "dssgd": dssgd, "surrogates": sur}


def test_the_frontier_dp_rows_come_from_the_learning_recipe_at_the_documented_epsilons(monkeypatch):
    """The cpu frontier trains its DP rows through the frozen-MiniLM recipe at ε 1, 4, 8 (and
    its non-private reference, ε = ∞) on 3 seeds, besides the from-scratch contrast."""
    from deidlib.studies.dp_recipes import RECIPES

    params = au.params_for("cpu")
    assert params.dp_recipe == "minilm" and RECIPES["minilm"].tagger["finetune_layers"] == 0
    assert params.seeds >= 3 and params.dp_noises  # intervals over seeds; the from-scratch contrast stays
    calls = []
    monkeypatch.setattr(au, "prepare_data", lambda p, sd: au.AuditData([], [], ["a", "b"], [], [], f"fp{sd}"))
    monkeypatch.setattr(au, "recipe_base", lambda data, p, seed: f"base{seed}")
    monkeypatch.setattr(au, "membership_setting",
                        lambda data, p, s, seed: calls.append(("scratch", s, seed)) or _setting("x", "", seed, 0, 0))
    monkeypatch.setattr(au, "recipe_setting", lambda data, p, e, base, seed: calls.append(
        (p.dp_recipe, e, seed, base)) or _setting("y", "", seed, 0, 0))
    monkeypatch.setattr(au, "dssgd_rows", lambda data, p, seed: [])
    monkeypatch.setattr(au, "surrogate_rows", lambda data, p, seed: [])
    monkeypatch.setattr(au, "pseudonym_rows", lambda data, p, index, seed: [])
    monkeypatch.setattr(au, "epsilon_audits", lambda data, p, seed: pd.DataFrame())
    au.run_study(params, seed=5, progress=False)
    recipe_calls = [c for c in calls if c[0] == "minilm"]
    assert recipe_calls == [("minilm", e, sd, f"base{sd}") for sd in (5, 6, 7) for e in (1.0, 4.0, 8.0, math.inf)]
    assert [c for c in calls if c[0] == "scratch"] == [("scratch", s, sd) for sd in (5, 6, 7)
                                                      for s in (None, *params.dp_noises)]


def test_the_statements_are_computed_from_the_results():
    """Change an attack's result or a method's F1 and the per-method statement changes with it."""
    st = au.method_statements(_fake_results())
    dp = st[st.method == "DP-SGD (minilm recipe)"].iloc[0]
    assert "TPR@1%FPR 0.050" in dp["attack found"] and "exposure" in dp["attack found"]
    assert dp["reference"] == "non-private (minilm recipe)" and dp["F1 cost"].startswith("0.280 [")
    assert "head" in dp["protects"] and dp["F1"] == "0.620 [0.600–0.640]"
    st2 = au.method_statements(_fake_results(dp_tpr=0.4, dp_f1=(0.8, 0.8, 0.8)))
    dp2 = st2[st2.method == "DP-SGD (minilm recipe)"].iloc[0]
    assert "TPR@1%FPR 0.400" in dp2["attack found"] and dp2["F1 cost"].startswith("0.100")
    assert (st2[st2.method == "non-private (festag)"]["F1 cost"] == "—").all()
    assert st.method.str.startswith("shared layers").any()  # the missing rows are listed, without numbers


def test_no_frontier_panel_mixes_attack_metrics():
    """Every attack family has one success metric, and each panel draws only that metric's rows."""
    import matplotlib.pyplot as plt
    from matplotlib.collections import PathCollection

    fr = au.frontier_table(_fake_results())
    measured = fr[fr.status == "measured"]
    assert (measured.groupby("family").attack_metric.nunique() == 1).all()
    assert set(measured.family) == {"membership", "canary exposure", "reconstruction", "linkage"}
    assert (measured.seeds == 3).all() and (measured.utility_lo <= measured.utility_hi).all()
    fig = au.plot_frontier(fr, seed="seeds 0-2")
    axes = [a for a in fig.axes if a.get_xlabel()]
    assert len(axes) == measured.attack_metric.nunique()
    for ax in axes:
        metric = ax.get_xlabel().rsplit(" (attack success)", 1)[0]
        drawn = sum(len(c.get_offsets()) for c in ax.collections if isinstance(c, PathCollection))
        assert drawn == (measured.attack_metric == metric).sum(), metric
    plt.close(fig)
