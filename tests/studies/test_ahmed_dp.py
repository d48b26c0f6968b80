import dataclasses
import math

import pytest

from deidlib.privacy.accounting import epsilon, steps_for
from deidlib.studies import ahmed_dp as ad
from deidlib.studies.ahmed_dp.data import _sentences, prepare_sites
from deidlib.studies.ahmed_dp.members import train_member
from deidlib.studies.ahmed_dp.run import _results_json
from deidlib.studies.ahmed_dp.tables import epsilon_table

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(scope="module")
def smoke_sites():
    return prepare_sites("smoke", 0)


def test_params_for():
    p = ad.params_for("smoke", epochs=3, tagger={"layers": 2})
    assert p.epochs == 3 and p.tagger["layers"] == 2 and p.tagger["heads"] == 2
    with pytest.raises(ValueError, match="profile"):
        ad.params_for("huge")
    with pytest.raises(ValueError, match="unknown"):
        ad.params_for("smoke", sigma=1.0)


def test_sites_are_disjoint_by_patient(smoke_sites):
    assert len(smoke_sites) == 3
    seen = {}
    for s in smoke_sites:
        assert s.train and s.test
        assert {d.site for d in s.train + s.dev + s.test} == {s.name}
        for part in (s.train, s.dev, s.test):
            for d in part:
                assert seen.setdefault(d.patient_id, (s.name, id(part))) == (s.name, id(part))


def test_epsilon_table_matches_accountant():
    t = epsilon_table({"a": 1000, "b": 4000}, accountants=("rdp",))
    q, T = steps_for(4000, 16, 100)
    assert t.loc[("b", 4000, 0.55), "rdp"] == pytest.approx(epsilon(0.55, q, T, 1e-5, "rdp"))
    assert t.loc[("a", 1000, 0.55), "rdp"] > t.loc[("b", 4000, 0.55), "rdp"]
    assert len(t) == 6


def test_member_ledger_and_fine_tuning(smoke_sites):
    p = ad.params_for("smoke", epochs=1, train_sentence_rate=0.08)
    m = train_member(smoke_sites[0].train, None, p, noise_multiplier=1.0, seed=1)
    led = m["ledger"]
    n_all = len(_sentences(smoke_sites[0].train, None, 1))
    assert led.unit == "sentence" and led.n_units == m["sentences"]
    assert abs(m["sentences"] - 0.08 * n_all) < 6 * (n_all * 0.08 * 0.92) ** 0.5
    assert not led.secure_rng and "rng_note" in led.to_dict()  # seeded study runs say so
    assert led.epsilon == pytest.approx(epsilon(1.0, led.sample_rate, led.steps, p.delta, p.accountant))
    ft = train_member(smoke_sites[1].train, None, p, noise_multiplier=1.0, seed=1, base=m["tagger"])
    assert ft["tagger"] is not m["tagger"] and ft["tagger"].featurizer is not None
    assert ft["tagger"].featurizer.words == m["tagger"].featurizer.words
    assert math.isfinite(ft["ledger"].epsilon)
    plain = train_member(smoke_sites[0].train, None, p, noise_multiplier=None, seed=1)
    assert plain["ledger"] is None


@pytest.mark.slow
def test_run_study_smoke():
    out = ad.run_study(ad.params_for("smoke"))
    assert {f.name for f in dataclasses.fields(out)} == set(ad.DPStudyResults.__annotations__)
    assert _results_json(out)["guarantee"] == out.guarantee
    assert set(out.scenario_a.target) == {"site0", "site1", "site2"}
    assert len(out.scenario_b) == 3 * 3
    g = out.guarantee
    assert g["epsilon"] == pytest.approx(max(m["epsilon"] for m in out.members.values()))
    assert (
        math.isinf(out.curve.epsilon.iloc[0]) and out.curve.epsilon.iloc[1:].apply(math.isfinite).all()
    )
    # minimality never has lower recall than majority (same members, same documents)
    r = out.rules.set_index(["target", "rule"]).recall
    for t in ("site0", "site1", "site2"):
        assert r[(t, "minimality")] >= r[(t, "majority")] >= r[(t, "3_of_3")]


@pytest.mark.slow
@pytest.mark.realdata
def test_run_study_smoke_physionet_member(physionet_dir):
    out = ad.run_study(ad.params_for("smoke"), corpus="physionet", data_dir=str(physionet_dir), fine_tune=False)
    assert "physionet" in out.members and len(out.members) == 4
    assert "physionet" in set(out.scenario_b.target)
    assert out.epsilon_table.index.get_level_values("dataset").str.contains("physionet").any()
