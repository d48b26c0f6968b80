"""festag parameters: profiles, overrides and one-line errors."""

from __future__ import annotations

import pytest

from deidlib.studies import festag
from deidlib.studies.festag.params import PROFILE_PARAMS


def test_params_for_overrides_and_errors():
    p = festag.params_for("smoke", epochs=3, theta_d=0.2, tagger={"dropout": 0.1})
    assert p.epochs == 3 and p.theta_d == 0.2 and p.tagger["dropout"] == 0.1
    assert p.tagger["token_hidden"] == PROFILE_PARAMS["smoke"].tagger["token_hidden"]
    assert festag.params_for("paper").epochs == 200 and festag.params_for("paper").batch_size == 1
    assert festag.params_for("paper").lr == 0.9
    # the cpu profile keeps the paper's optimisation: batch 1, lr 0.9, no clipping, NeuroNER's loss
    cpu = festag.params_for("cpu")
    assert (cpu.batch_size, cpu.lr, cpu.grad_clip, cpu.loss, cpu.n_seeds) == (1, 0.9, None, "token_mean", 3)
    with pytest.raises(ValueError, match="loss"):
        festag.params_for("smoke", loss="sum")
    with pytest.raises(ValueError, match="theta_d_sweep"):
        festag.params_for("smoke", theta_d_sweep=(0.0,))
    assert festag.params_for("cpu", negatives_per_positive=1).negatives_per_positive == 1
    with pytest.raises(ValueError):
        festag.params_for("nope")
    with pytest.raises(ValueError, match="unknown festag"):
        festag.params_for("smoke", bogus=1)
