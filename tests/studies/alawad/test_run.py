"""The alawad study (deidlib.studies.alawad): run_study at a tiny scale returns every
approach's scores, significance, per-class F1, attacks and an upload log in which nothing
private left a registry; same seed, same numbers; bad input is a one-line error."""

import math

import pytest

from deidlib.studies import alawad
from deidlib.studies.alawad.params import APPROACHES

TINY = dict(n_registries=3, patients=150, n_buckets=256, emb_dim=8, filters=4, max_len=80, epochs=2,
            batch_size=16, min_support=3, n_seeds=2, n_resamples=50, attack_epochs=2)


@pytest.fixture(scope="module")
def results():
    return alawad.run_study(alawad.params_for("smoke", **TINY), progress=False)


def test_results_are_the_typed_dataclass_read_as_attributes_or_keys(results):
    assert isinstance(results, alawad.AlawadResults) and results.scores is results["scores"]
    assert set(results) == set(alawad.AlawadResults.__annotations__) and results.params["profile"] == "smoke"


def test_every_approach_is_scored_for_every_seed(results):
    assert results["seeds"] == [0, 1]
    got = {(r["seed"], r["approach"]) for r in results["scores"]}
    assert got == {(s, a) for s in (0, 1) for a in APPROACHES}
    assert all(0 <= r["micro"] <= 1 and 0 <= r["macro"] <= 1 for r in results["scores"])
    t = alawad.f1_table(results)
    assert list(t.index) == list(APPROACHES) and (t.n_seeds == 2).all()
    assert (t.micro_min <= t.micro_mean).all() and (t.micro_mean <= t.micro_max).all()


def test_significance_per_seed_and_pooled(results):
    sig = alawad.significance_table(results)
    assert set(sig.seed.astype(str)) == {"0", "1", "all"}
    pair = sig[(sig.a == "single") & (sig.b == "shared_private")]
    assert set(pair.metric) == {"micro", "macro"} and len(pair) == 6
    assert ((sig.p_bootstrap >= 0) & (sig.p_bootstrap <= 1) & (sig.p_mcnemar <= 1)).all()
    # the observed Δ is the difference of the two approaches' scores
    s = {(r["seed"], r["approach"]): r for r in results["scores"]}
    row = pair[(pair.seed.astype(str) == "0") & (pair.metric == "macro")].iloc[0]
    assert math.isclose(row.delta, s[(0, "shared_private")]["macro"] - s[(0, "single")]["macro"], abs_tol=1e-9)


def test_nothing_private_leaves_a_registry(results):
    up = results["uploads"]
    assert len(up) == 2 * 2 * 3  # seeds x shared-private runs x registries
    assert all(u["private_tensors"] == 0 and u["layers"] == "discriminator shared_encoder" for u in up)
    assert all(u["hand_offs"] >= results["params"]["epochs"] for u in up)
    assert len({u["values"] for u in up}) == 1


def test_equivalence_and_discriminator_check_are_reported(results):
    eq = alawad.equivalence_table(results)
    pooled = eq[(eq.seed.astype(str) == "all") & (eq.b == "shared_private")]
    assert set(pooled.metric) == {"micro", "macro"}
    assert (pooled.margin == 0.03).all() and (pooled.lo <= pooled.hi).all()
    assert (pooled.equivalent == (pooled.p_tost < 0.05)).all()
    d = alawad.discriminator_check(results)
    assert set(d.approach) == {"shared_private", "shared_private_no_adv"}
    assert (d.stuck == (d.discriminator <= d.majority + 0.02)).all()


def test_attacks_report_chance_and_the_per_class_roles(results):
    att = alawad.attack_table(results)
    assert set(att.approach) == {"centralized", "shared_private", "shared_private_no_adv", "label_only"}
    assert att.chance.tolist() == pytest.approx([1 / 3] * len(att))
    assert ((att.accuracy_min >= 0) & (att.accuracy_max <= 1)).all()
    pc = alawad.per_class_table(results)
    assert set(pc.role) <= {"most", "least"} and len(pc)
    assert (pc.train_count >= TINY["min_support"]).all()
    reg = alawad.registries_table(results)
    assert len(reg) == 6 and (reg.train > 0).all()


def test_same_seed_same_scores(results):
    again = alawad.run_study(alawad.params_for("smoke", **{**TINY, "n_seeds": 1}), progress=False,
                             approaches=("single", "shared_private"))
    first = {(r["seed"], r["approach"]): (r["micro"], r["macro"]) for r in results["scores"]}
    for r in again["scores"]:
        assert (r["micro"], r["macro"]) == first[(r["seed"], r["approach"])]


def test_bad_input_is_a_one_line_error():
    p = alawad.params_for("smoke", **TINY)
    with pytest.raises(ValueError, match="corpus must be one of synthetic, abstracts"):
        alawad.run_study(p, corpus="physionet", progress=False)
    with pytest.raises(ValueError, match="unknown approaches"):
        alawad.run_study(p, approaches=("federated",), progress=False)
    with pytest.raises(TypeError, match="resolved AlawadParams"):
        alawad.run_study("smoke")
    with pytest.raises(ValueError, match="visit_batches"):
        alawad.params_for("smoke", visit_batches=0)
    with pytest.raises(ValueError, match="equivalence_margin"):
        alawad.params_for("smoke", equivalence_margin=0)
    with pytest.raises(ValueError, match="at least 2 registries"):
        alawad.params_for("smoke", n_registries=1)


def test_class_size_table_groups_classes_rarest_first(results):
    cs = alawad.class_size_table(results)
    assert list(cs.index) == ["rarest 1/3", "middle 2/3", "most frequent 3/3"]
    lo = [int(r.split("-")[0]) for r in cs.train_count_range]
    assert lo == sorted(lo)
    assert (cs.shared_private_gain == cs.shared_private - cs.single).all()
