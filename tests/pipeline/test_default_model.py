"""The default model of ``deidlib deidentify``: synthetic data only, built on first use into the
cache, found there the second time, rebuilt when its recipe changes."""

from __future__ import annotations

import json

import pytest

from deidlib.cli import main
from deidlib.pipeline import default_model as dm

from .conftest import TINY_HPARAMS

#: a recipe small enough for the suite (the real one trains minutes)
TINY_RECIPE = {**dm.DEFAULT_MODEL_RECIPE, "profile": "smoke", "epochs": 1, "embeddings": None, "scheme": "category",
               "encoding": "BIO", "lr_decay": 0.0, "batch_size": 8, "hparams": dict(TINY_HPARAMS)}


def test_cache_location_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("DEIDLIB_CACHE_DIR", str(tmp_path / "c"))
    assert dm.default_model_dir().parent == tmp_path / "c" / "models"
    assert dm.recipe_fingerprint(TINY_RECIPE) != dm.recipe_fingerprint()  # a new recipe, a new model


def test_only_synthetic_training_data():
    with pytest.raises(ValueError, match="synthetic corpus only"):
        dm.build_default_model("unused", {"corpus": "physionet"})


def test_deidentify_without_model_builds_the_default_once(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("DEIDLIB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(dm, "DEFAULT_MODEL_RECIPE", TINY_RECIPE)
    src = tmp_path / "in"
    src.mkdir()
    (src / "n1.txt").write_text("Mr. John Smith was seen on 03/04/2015 at Boston Medical Center.\n")
    assert main(["deidentify", str(src), str(tmp_path / "o1"), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "building the default model" in err
    d = dm.default_model_dir()
    info = json.loads((d / "recipe.json").read_text())
    assert info["recipe"]["corpus"] == "synthetic" and info["training_data"].startswith("embedded synthetic")
    assert info["size_bytes"] > 0 and info["build_seconds"] > 0
    # the recall-oriented threshold of the recipe travels with the model (deidentify applies it)
    assert json.loads((d / "config.json").read_text())["task"]["phi_threshold"] == TINY_RECIPE["phi_threshold"] == 0.03
    summary = json.loads((tmp_path / "o1" / "deidentify.json").read_text())
    assert summary["model"].startswith("default (") and d.name in summary["model"]
    mtime = (d / "weights.pt").stat().st_mtime_ns
    assert main(["deidentify", str(src), str(tmp_path / "o2"), "--no-progress"]) == 0
    assert "building" not in capsys.readouterr().err and (d / "weights.pt").stat().st_mtime_ns == mtime
