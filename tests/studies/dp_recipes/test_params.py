"""The DP recipes sweep's parameters (deidlib.studies.dp_recipes.params): unknown recipes, negative
or NaN ε, a wrong unit and no seeds are one-line errors; run_study takes resolved parameters only."""

from __future__ import annotations

import math

import pytest

from deidlib.studies import dp_recipes


def test_the_profiles_sweep_known_recipes():
    cpu = dp_recipes.params_for("cpu")
    assert cpu.recipes == ("minilm",) and cpu.epsilons[-1] == math.inf and cpu.seeds == (0,)
    assert dp_recipes.params_for("smoke", recipes=["thesis", "glove"]).recipes == ("thesis", "glove")


@pytest.mark.parametrize(("overrides", "message"), [
    ({"recipes": ["nope"]}, "unknown recipe"),
    ({"epsilons": [1.0, -1.0]}, "epsilons must be >= 0"),
    ({"epsilons": [math.nan]}, "epsilons must be >= 0"),
    ({"unit": "document"}, "unit must be"),
    ({"seeds": []}, "at least one seed"),
    ({"delta": 1.0}, "delta"),
])
def test_bad_parameters_are_refused(overrides, message):
    with pytest.raises(ValueError, match=message):
        dp_recipes.params_for("smoke", **overrides)


def test_run_study_takes_resolved_params_only():
    with pytest.raises(TypeError, match="resolved DpRecipesParams"):
        dp_recipes.run_study({"recipes": ("minilm",)})
