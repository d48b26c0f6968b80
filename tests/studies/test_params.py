"""The one parameter resolver every study uses (deidlib.studies.params)."""

from __future__ import annotations

import importlib

import pytest

from deidlib.studies import ahmed_dp, ahmed_models, ahmed_utility, alawad, festag, friedrich, tchouka
from deidlib.studies.ahmed_dp.params import PROFILE_PARAMS as DP_PROFILES
from deidlib.studies.ahmed_dp.params import DPParams
from deidlib.studies.ahmed_utility.params import UtilityParams
from deidlib.studies.alawad.params import AlawadParams
from deidlib.studies.festag.params import PROFILE_PARAMS as FESTAG_PROFILES
from deidlib.studies.festag.params import FestagParams
from deidlib.studies.params import StudyParams

STUDIES = {
    "festag": (festag, FestagParams),
    "ahmed_dp": (ahmed_dp, DPParams),
    "ahmed_models": (ahmed_models, ahmed_models.AhmedParams),
    "tchouka": (tchouka, tchouka.TchoukaParams),
    "alawad": (alawad, AlawadParams),
    "ahmed_utility": (ahmed_utility, UtilityParams),
    "friedrich": (friedrich, friedrich.FriedrichParams),
}


@pytest.mark.parametrize("name", STUDIES)
def test_every_study_resolves_through_the_one_resolver(name):
    mod, cls = STUDIES[name]
    assert issubclass(cls, StudyParams)
    table = importlib.import_module(f"{mod.__name__}.params").PROFILE_PARAMS  # the profile table lives in params.py
    assert cls.PROFILES is table and set(cls.PROFILES) == {"smoke", "cpu", "paper"}
    for profile in cls.PROFILES:
        p = mod.params_for(profile)
        assert p == cls.resolve(profile) and p.profile == profile
        # None means "the profile's value"; everything else equals the profile's row
        assert mod.params_for(profile, **{f: None for f in cls.__dataclass_fields__ if f != "profile"}) == p
    with pytest.raises(ValueError, match=rf"unknown {name} parameters: \['not_a_knob'\]; known: "):
        mod.params_for("smoke", not_a_knob=1)
    with pytest.raises(ValueError, match="unknown profile 'laptop'; choose one of smoke, cpu, paper"):
        mod.params_for("laptop")


def test_types_are_checked_and_lists_become_tuples():
    with pytest.raises(ValueError, match="festag parameter epochs must be int, got '3'"):
        festag.params_for("smoke", epochs="3")
    with pytest.raises(ValueError, match="must be int, got True"):
        festag.params_for("smoke", n_sites=True)
    with pytest.raises(ValueError, match="max_site_sentences must be int or None"):
        festag.params_for("smoke", max_site_sentences=2.5)
    assert festag.params_for("smoke", lr=1).lr == 1  # an int is a float
    p = ahmed_models.params_for("smoke", deltas=[1, 3])
    assert p.deltas == (1.0, 3.0) and all(isinstance(d, float) for d in p.deltas)
    with pytest.raises(ValueError, match="tchouka parameter date_epsilons"):
        tchouka.params_for("smoke", date_epsilons=["a"])


def test_dict_fields_are_merged_into_the_profiles_dict():
    p = festag.params_for("cpu", tagger={"dropout": 0.1})
    assert p.tagger == {**FESTAG_PROFILES["cpu"].tagger, "dropout": 0.1}
    q = ahmed_dp.params_for("smoke", tagger={"layers": 3})
    assert q.tagger["layers"] == 3 and q.tagger["heads"] == DP_PROFILES["smoke"].tagger["heads"]


def test_run_study_takes_resolved_params_only():
    with pytest.raises(TypeError, match="resolved FestagParams"):
        festag.run_study("smoke")
    with pytest.raises(TypeError, match="resolved AhmedParams"):
        ahmed_models.run_study("smoke")
    with pytest.raises(TypeError, match="resolved DPParams"):
        ahmed_dp.run_study("smoke")
    with pytest.raises(TypeError, match="resolved UtilityParams"):
        ahmed_utility.run_study("smoke")
