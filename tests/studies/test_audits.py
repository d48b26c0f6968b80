import math

import pandas as pd
import pytest

import deidlib.privacy.gradients as gradients
from deidlib.studies import audits as au
from deidlib.studies.audits import run as run_module
from deidlib.studies.audits.accountant import epsilon_audits
from deidlib.studies.audits.claims import method_statements
from deidlib.studies.audits.data import AuditData, _half, prepare_data
from deidlib.studies.audits.figures import FAMILIES
from deidlib.studies.audits.tables import frontier_table


def test_params_resolve_and_reject_bad_values():
    p = au.params_for("smoke", references=2)
    assert p.references == 2 and p.profile == "smoke"
    with pytest.raises(ValueError, match="references"):
        au.params_for("smoke", references=0)
    with pytest.raises(ValueError, match="unknown audits parameters"):
        au.params_for("smoke", bogus=1)


def test_halves_are_balanced_and_seeded():
    pats = [str(i) for i in range(7) for _ in range(3)]
    h = _half(pats, 0, "x")
    assert sum(h.values()) == 4 and h == _half(pats, 0, "x") and h != _half(pats, 0, "y")
    with pytest.raises(ValueError, match="at least 2 patients"):
        _half(["a", "a"], 0, "x")


def test_an_empty_run_has_an_empty_frontier_that_lacks_every_method():
    fr = frontier_table({"membership": [], "dssgd": [], "surrogates": []})
    assert len(fr) == 0
    assert len(au.missing_methods(fr, 1)) == len(au.METHODS)


def test_the_study_raises_when_an_audit_beats_the_accountant(monkeypatch):
    """A noise bug in dpsgd (10x too small) makes the one-step audit exceed the accountant's ε:
    the study must refuse to report it as a result."""
    params = au.params_for("smoke", step_audit_trials=1000)
    data = prepare_data(params)
    real = gradients._add_noise
    monkeypatch.setattr(gradients, "_add_noise", lambda s, c, z, d, g: real(s, c, z / 10, d, g))
    with pytest.raises(RuntimeError, match="privacy bug"):
        epsilon_audits(data, params)


def _setting(method, setting, seed, f1, tpr, exposure=3.0, eps=1.0):
    sent = [{"level": "sentence", "attack": "loss", "auc": 0.6, "tpr@1%": tpr, "tpr@0.1%": tpr / 2},
            {"level": "sentence", "attack": "lira", "auc": 0.55, "tpr@1%": tpr / 3, "tpr@0.1%": 0.0}]
    pat = [{"level": "patient", "attack": a, "auc": 0.7, "tpr@1%": 0.0, "tpr@0.1%": 0.0} for a in ("loss", "lira")]
    return {"method": method, "setting": setting, "seed": seed, "epsilon": eps, "utility": {"f1": f1},
            "membership": sent + pat, "references": 2,
            "canaries": [{"copies": 16, "exposure": exposure, "max_exposure": 8.0},
                         {"copies": 1, "exposure": 0.5, "max_exposure": 8.0}]}


def _representations(seed, three_phase_acc=0.55, three_phase_f1=0.9):
    return [{"procedure": p, "n": 100, "seed": seed, "f1": f1, "adversary_accuracy": acc, "adversary_train_accuracy": acc,
             "adversary_pairs": 800, "seconds": 1.0}
            for p, f1, acc in (("three_phase", three_phase_f1, three_phase_acc), ("control raw", 0.85, 0.7),
                               ("control P1", 0.88, 0.62))]


def _shared_layers(seed, shared_acc=0.45, shared_f1=0.95):
    return [{"approach": a, "seed": seed, "micro": f1, "macro": f1 - 0.05, "registry_accuracy": acc,
             "chance": 1 / 3, "majority": 0.4, "class_label_floor": 0.5, "n_test": 400, "registries": 3,
             "adv_weight": 1.0 if a == "shared_private" else 0.0, "seconds": 1.0}
            for a, f1, acc in (("shared_private", shared_f1, shared_acc), ("shared_private_no_adv", 0.95, 0.66),
                               ("centralized", 0.99, 0.67))]


def _fake_results(dp_tpr=0.05, dp_f1=(0.6, 0.62, 0.64), three_phase_acc=0.55, shared_f1=0.95):
    mem = []
    for sd in range(3):
        mem.append(_setting("non-private (minilm recipe)", "", sd, 0.9, 0.3, eps=math.inf))
        mem.append(_setting("DP-SGD (minilm recipe)", "ε=4", sd, dp_f1[sd], dp_tpr))
        mem.append(_setting("non-private (festag)", "", sd, 0.6, 0.2, eps=math.inf))
    dssgd = [{"seed": sd, "theta_u": 1.0, "dp_epsilon_per_upload": math.inf, "f1": 0.3, "reconstruction_f1": 0.9}
             for sd in range(3)]
    sur = [{"seed": sd, "epsilon": 1.0, "memo_scope": "patient", "f1": 0.7, "linkage_f1": 0.3} for sd in range(3)]
    reps = [r for sd in range(3) for r in _representations(sd, three_phase_acc)]
    shared = [r for sd in range(3) for r in _shared_layers(sd, shared_f1=shared_f1)]
    return {"membership": mem, "dssgd": dssgd, "surrogates": sur, "representations": reps, "shared_layers": shared}


def test_the_frontier_dp_rows_come_from_the_learning_recipe_at_the_documented_epsilons(monkeypatch):
    """The cpu frontier trains its DP rows through the frozen-MiniLM recipe at ε 1, 4, 8 (and
    its non-private reference, ε = ∞) on 3 seeds, besides the from-scratch contrast."""
    from deidlib.studies.dp_recipes import RECIPES

    params = au.params_for("cpu")
    assert params.dp_recipe == "minilm" and RECIPES["minilm"].tagger["finetune_layers"] == 0
    assert params.seeds >= 3 and params.dp_noises  # intervals over seeds; the from-scratch contrast stays
    calls = []
    monkeypatch.setattr(run_module, "prepare_data", lambda p, sd: AuditData([], [], ["a", "b"], [], [], f"fp{sd}"))
    monkeypatch.setattr(run_module, "recipe_base", lambda data, p, seed: f"base{seed}")
    monkeypatch.setattr(run_module, "membership_setting",
                        lambda data, p, s, seed: calls.append(("scratch", s, seed)) or _setting("x", "", seed, 0, 0))
    monkeypatch.setattr(run_module, "recipe_setting", lambda data, p, e, base, seed: calls.append(
        (p.dp_recipe, e, seed, base)) or _setting("y", "", seed, 0, 0))
    monkeypatch.setattr(run_module, "dssgd_rows", lambda data, p, seed: [])
    monkeypatch.setattr(run_module, "surrogate_rows", lambda data, p, seed: [])
    monkeypatch.setattr(run_module, "pseudonym_rows", lambda data, p, index, seed: [])
    monkeypatch.setattr(run_module, "representation_rows", lambda p, seed: [])
    monkeypatch.setattr(run_module, "shared_layer_rows", lambda p, seed: [])
    monkeypatch.setattr(run_module, "epsilon_audits", lambda data, p, seed: pd.DataFrame())
    au.run_study(params, seed=5, progress=False)
    recipe_calls = [c for c in calls if c[0] == "minilm"]
    assert recipe_calls == [("minilm", e, sd, f"base{sd}") for sd in (5, 6, 7) for e in (1.0, 4.0, 8.0, math.inf)]
    assert [c for c in calls if c[0] == "scratch"] == [("scratch", s, sd) for sd in (5, 6, 7)
                                                      for s in (None, *params.dp_noises)]


def test_the_statements_are_computed_from_the_results():
    """Change an attack's result or a method's F1 and the per-method statement changes with it."""
    st = method_statements(_fake_results())
    dp = st[st.method == "DP-SGD (minilm recipe)"].iloc[0]
    assert "TPR@1%FPR 0.050" in dp["attack found"] and "exposure" in dp["attack found"]
    assert dp["reference"] == "non-private (minilm recipe)" and dp["F1 cost"].startswith("0.280 [")
    assert "head" in dp["protects"] and dp["F1"] == "0.620 [0.600–0.640]"
    st2 = method_statements(_fake_results(dp_tpr=0.4, dp_f1=(0.8, 0.8, 0.8)))
    dp2 = st2[st2.method == "DP-SGD (minilm recipe)"].iloc[0]
    assert "TPR@1%FPR 0.400" in dp2["attack found"] and dp2["F1 cost"].startswith("0.100")
    assert (st2[st2.method == "non-private (festag)"]["F1 cost"] == "—").all()


def test_the_representation_statements_are_computed_from_their_runs():
    """The friedrich and alawad rows state their attack (with its chance level and floor), their
    F1 cost against their own non-private reference, and alawad's utility as its classification F1."""
    st = method_statements(_fake_results()).set_index("method")
    adv = st.loc["adversarial representation (friedrich §5)"]
    assert "accuracy on held-out real/fake pairs 0.550" in adv["attack found"] and "chance 0.500" in adv["attack found"]
    assert adv["reference"] == "non-private (friedrich §5)" and adv["F1 cost"].startswith("-0.020")
    assert st.loc["raw public vectors (friedrich §5 control)", "reference"] == "non-private (friedrich §5)"
    sh = st.loc["shared layers (alawad)"]
    assert "registry accuracy (held-out reports) 0.450" in sh["attack found"]
    assert "chance 0.333" in sh["attack found"] and "class-label floor 0.500" in sh["attack found"]
    assert sh["reference"] == "non-private (alawad)" and sh["F1 cost"].startswith("0.040")
    assert "subsite classification" in sh["utility"] and "registry" in sh["threat"]
    st2 = method_statements(_fake_results(three_phase_acc=0.8, shared_f1=0.5)).set_index("method")
    assert "0.800" in st2.loc["adversarial representation (friedrich §5)", "attack found"]
    assert st2.loc["shared layers (alawad)", "F1 cost"].startswith("0.490")
    assert (st.threat != "not stated").all() and (st.protects != "not stated").all()


def test_the_frontier_has_every_method_of_the_package_on_every_seed(monkeypatch):
    """run_study puts every method of METHODS (the friedrich representation and alawad's shared
    layers included, with their controls) on the frontier with params.seeds seeds; a method that
    loses its rows on one seed is named by missing_methods."""
    params = au.params_for("cpu")
    assert params.seeds >= 3
    fake = _fake_results()
    monkeypatch.setattr(run_module, "prepare_data", lambda p, sd: AuditData([], [], ["a", "b"], [], [], f"fp{sd}"))
    monkeypatch.setattr(run_module, "recipe_base", lambda data, p, seed: None)
    monkeypatch.setattr(run_module, "membership_setting", lambda data, p, s, seed: _setting(
        "non-private (festag)" if s is None else "DP-SGD from scratch (festag)", "" if s is None else f"σ={s}", seed, 0.5, 0.1))
    monkeypatch.setattr(run_module, "recipe_setting", lambda data, p, e, base, seed: _setting(
        f"non-private ({p.dp_recipe} recipe)" if math.isinf(e) else f"DP-SGD ({p.dp_recipe} recipe)",
        "" if math.isinf(e) else f"ε={e:g}", seed, 0.5, 0.1))
    monkeypatch.setattr(run_module, "dssgd_rows", lambda data, p, seed: [
        {"theta_u": 1.0, "dp_epsilon_per_upload": e, "f1": 0.3, "reconstruction_f1": 0.9} for e in (math.inf, 1.0)])
    monkeypatch.setattr(run_module, "surrogate_rows", lambda data, p, seed: [fake["surrogates"][0]])
    monkeypatch.setattr(run_module, "pseudonym_rows", lambda data, p, index, seed: [
        {"n": 10, "seed": seed, "f1": 0.5, "recovery_recovered": 0.2}])
    monkeypatch.setattr(run_module, "representation_rows", lambda p, seed: _representations(seed))
    monkeypatch.setattr(run_module, "shared_layer_rows", lambda p, seed: _shared_layers(seed))
    monkeypatch.setattr(run_module, "epsilon_audits", lambda data, p, seed: pd.DataFrame())
    import deidlib.embeddings.public as public

    monkeypatch.setattr(public, "load_glove", lambda: None)
    import deidlib.embeddings.neighbours as neighbours

    monkeypatch.setattr(neighbours, "NeighbourIndex", lambda emb: object())
    res = au.run_study(params, seed=0, progress=False)
    fr = res.frontier
    assert au.missing_methods(fr, params.seeds, params.dp_recipe) == []
    for method, family in au.METHODS:
        rows = fr[(fr.method == method.format(recipe=params.dp_recipe)) & (fr.family == family)]
        assert len(rows) and (rows.seeds >= params.seeds).all(), method
    # a method that loses one seed's rows is named
    res.representations = [r for r in res.representations
                              if not (r["procedure"] == "three_phase" and r["seed"] == 1)]
    assert au.missing_methods(frontier_table(res), params.seeds, params.dp_recipe) == [
        "adversarial representation (friedrich §5) (representation (real/fake pairs))"]
    res.shared_layers = []
    assert len(au.missing_methods(frontier_table(res), params.seeds, params.dp_recipe)) == 4


def test_no_frontier_panel_mixes_attack_metrics():
    """Every attack family has one success metric, and each panel draws only that metric's rows."""
    import matplotlib.pyplot as plt
    from matplotlib.collections import PathCollection

    fr = frontier_table(_fake_results())
    measured = fr[fr.status == "measured"]
    assert (measured.groupby("family").attack_metric.nunique() == 1).all()
    assert set(measured.family) == {"membership", "canary exposure", "reconstruction", "linkage",
                                    "representation (real/fake pairs)", "representation (registry)"}
    assert set(measured.family) <= set(FAMILIES)
    assert (measured.seeds == 3).all() and (measured.utility_lo <= measured.utility_hi).all()
    fig = au.plot_frontier(fr, seed="seeds 0-2")
    axes = [a for a in fig.axes if a.get_xlabel()]
    assert len(axes) == measured.attack_metric.nunique()
    for ax in axes:
        metric = ax.get_xlabel().rsplit(" (attack success)", 1)[0]
        drawn = sum(len(c.get_offsets()) for c in ax.collections if isinstance(c, PathCollection))
        assert drawn == (measured.attack_metric == metric).sum(), metric
        # the utility axis too holds one metric: alawad's classification F1 never shares a panel with de-id F1
        utilities = set(measured[measured.attack_metric == metric].utility_metric)
        assert len(utilities) == 1 and ax.get_ylabel() == utilities.pop(), metric
    plt.close(fig)
