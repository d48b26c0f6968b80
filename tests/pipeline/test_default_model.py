"""The default model of ``deidlib deidentify``: synthetic data only, built on first use into the
cache, found there the second time, rebuilt when its recipe changes; its threshold is chosen on
synthetic dev by the recipe's rule; the gru recipe stays reachable by name."""

from __future__ import annotations

import json

import pytest

from deidlib.cli import main
from deidlib.pipeline import default_model as dm

from .conftest import TINY_HPARAMS

#: a recipe small enough for the suite (the real one trains minutes): the default recipe's rule
#: (guideline alignment, patterns, threshold for a target recall on synthetic dev) on a tiny GRU
TINY_RECIPE = {**dm.GUIDELINE_FORMS_RECIPE, "model": "gru", "profile": "smoke", "epochs": 2, "embeddings": None,
               "scheme": "category", "encoding": "BIO", "lr": 0.02, "lr_decay": 0.0, "batch_size": 8,
               "hparams": dict(TINY_HPARAMS), "target_recall": 0.5}
#: the gru recipe, made tiny the same way
TINY_GRU = {**dm.GRU_MODEL_RECIPE, "profile": "smoke", "epochs": 1, "embeddings": None, "scheme": "category",
            "encoding": "BIO", "lr_decay": 0.0, "batch_size": 8, "hparams": dict(TINY_HPARAMS)}


def _strings(x):
    if isinstance(x, dict):
        for v in x.values():
            yield from _strings(v)
    elif isinstance(x, (list, tuple)):
        for v in x:
            yield from _strings(v)
    elif isinstance(x, str):
        yield x


def test_cache_location_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("DEIDLIB_CACHE_DIR", str(tmp_path / "c"))
    assert dm.default_model_dir().parent == tmp_path / "c" / "models"
    assert dm._recipe_fingerprint(TINY_RECIPE) != dm._recipe_fingerprint()  # a new recipe, a new model


def test_only_synthetic_training_data():
    with pytest.raises(ValueError, match="synthetic corpus only"):
        dm.build_default_model("unused", {"corpus": "physionet"})


@pytest.mark.parametrize("name", sorted(dm.MODEL_RECIPES))
def test_named_recipes_name_no_real_data(name):
    """Every named recipe trains on the embedded synthetic corpus; no value of it is a path or a
    data folder's name (the guideline name only says which spans count as PHI)."""
    from pathlib import Path

    from deidlib.corpus import locate

    folders = {v for k, v in vars(locate).items() if k.isupper() and isinstance(v, str)}
    r = dm.named_recipe(name)
    assert r["corpus"] == "synthetic"
    for v in _strings(r):
        assert "/" not in v and "\\" not in v and not Path(v).suffix and v not in folders, v


def test_build_reads_only_the_synthetic_corpus_and_chooses_the_threshold_on_its_dev_split(monkeypatch, tmp_path):
    """The threshold saved with the model is the recipe's rule (the bagged highest threshold
    reaching ``target_recall``) applied to the model on the synthetic dev split, aligned as the
    training notes."""
    from deidlib import datasets
    from deidlib.corpus.conventions import align_spans
    from deidlib.synthetic.generator import GUIDELINE_NOTE_TYPES
    from deidlib.training import load_tagger
    from deidlib.training.threshold_rule import choose_threshold_bagged

    seen = []
    real_load = datasets.load_corpus

    def spy(corpus="synthetic", *a, **kw):
        seen.append(corpus)
        kwargs.append(kw)
        return real_load(corpus, *a, **kw)

    kwargs = []

    monkeypatch.setattr(datasets, "load_corpus", spy)
    info = dm.build_default_model(tmp_path / "m", TINY_RECIPE, progress=False)
    assert seen == ["synthetic"]
    # the guideline note types are in the training notes, as the recipe says
    assert kwargs[0]["extra_note_types"] == TINY_RECIPE["extra_note_types"]
    assert set(TINY_RECIPE["extra_note_types"]) == set(GUIDELINE_NOTE_TYPES)
    tagger = load_tagger(tmp_path / "m")
    saved = tagger.task["phi_threshold"]
    assert tagger.task["patterns"] == "guideline"
    assert saved == info["phi_threshold"] and "synthetic dev" in info["threshold_rule"]
    dev = align_spans(real_load("synthetic", profile="smoke", seed=0, note_scale=TINY_RECIPE["note_scale"],
                                extra_note_types=TINY_RECIPE["extra_note_types"]).dev, TINY_RECIPE["guideline"])
    assert {d.metadata["note_type"] for d in dev} & set(GUIDELINE_NOTE_TYPES)
    again, rec = choose_threshold_bagged(tagger, dev, TINY_RECIPE["target_recall"],
                                         resamples=TINY_RECIPE["rule_resamples"], seed=TINY_RECIPE["seed"])
    assert saved == pytest.approx(again)
    assert "bagged" in info["threshold_rule"] and info["plain_threshold_on_grid"] == rec["plain_threshold_on_grid"]
    assert info["synthetic_dev_curve"] == json.loads(json.dumps(rec["curve"]))
    # both rules' spread under resampling of the synthetic dev documents is recorded with the model
    assert {"plain", "bagged"} <= set(info["spread"]) and info["spread"]["bagged"]["threshold"] == pytest.approx(saved)


def test_gru_recipe_still_resolves_by_name(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("DEIDLIB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setitem(dm.MODEL_RECIPES, "gru", TINY_GRU)
    src = tmp_path / "in"
    src.mkdir()
    (src / "n1.txt").write_text("Mr. John Smith was seen on 03/04/2015 at Boston Medical Center.\n")
    assert main(["deidentify", str(src), str(tmp_path / "o"), "--model", "gru", "--no-progress"]) == 0
    assert "building the gru model" in capsys.readouterr().err
    d = dm.default_model_dir(TINY_GRU)
    assert json.loads((d / "config.json").read_text())["tagger"]["kind"] == "gru"
    assert json.loads((d / "config.json").read_text())["task"]["phi_threshold"] == 0.03
    summary = json.loads((tmp_path / "o" / "deidentify.json").read_text())
    assert summary["model"].startswith("gru (") and d.name in summary["model"]
    with pytest.raises(ValueError, match="unknown model recipe"):
        dm.named_recipe("nope")


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
    # the threshold chosen on synthetic dev and the patterns travel with the model (deidentify applies them)
    task = json.loads((d / "config.json").read_text())["task"]
    assert task["phi_threshold"] == info["phi_threshold"] and task["patterns"] == "guideline"
    summary = json.loads((tmp_path / "o1" / "deidentify.json").read_text())
    assert summary["model"].startswith("default (") and d.name in summary["model"]
    mtime = (d / "weights.pt").stat().st_mtime_ns
    assert main(["deidentify", str(src), str(tmp_path / "o2"), "--no-progress"]) == 0
    assert "building" not in capsys.readouterr().err and (d / "weights.pt").stat().st_mtime_ns == mtime
    # the date the patterns find is masked even where the tiny tagger misses it (a d-private date
    # surrogate may equal the original, so masks show it)
    assert main(["deidentify", str(src), str(tmp_path / "o3"), "--no-progress", "--replace", "mask"]) == 0
    masked = "".join(p.read_text() for p in (tmp_path / "o3").rglob("*.txt"))
    assert "03/04/2015" not in masked and "[DATE]" in masked


def test_a_change_of_the_guideline_patterns_names_a_new_model(monkeypatch, tmp_path):
    """The threshold is read with the patterns applied, so the cache folder's fingerprint covers
    their source: changed patterns build a new model (and re-read its threshold)."""
    from pathlib import Path

    from deidlib.corpus import patterns

    before = dm._recipe_fingerprint()
    changed = tmp_path / "patterns.py"
    changed.write_bytes(Path(patterns.__file__).read_bytes() + b"\n# changed\n")
    monkeypatch.setattr(patterns, "__file__", str(changed))
    assert dm._recipe_fingerprint() != before


def test_the_fingerprint_follows_the_rules_output_not_its_code(monkeypatch):
    """The bagged rule's answers on fixed probe curves enter the default model's fingerprint: a
    rule that answers differently names a new model; the same answers from other code keep the
    cached one; a recipe with a fixed threshold (gru) does not depend on the rule at all."""
    from deidlib.training import threshold_rule

    before, gru = dm._recipe_fingerprint(), dm._recipe_fingerprint(dm.GRU_MODEL_RECIPE)
    real = threshold_rule.bagged_threshold
    dm._rule_probe.cache_clear()
    monkeypatch.setattr(threshold_rule, "bagged_threshold", lambda *a, **kw: real(*a, **kw))  # same output
    assert dm._recipe_fingerprint() == before
    dm._rule_probe.cache_clear()
    monkeypatch.setattr(threshold_rule, "bagged_threshold",
                        lambda *a, **kw: None if (v := real(*a, **kw)) is None else v * 1.01)  # another output
    assert dm._recipe_fingerprint() != before
    assert dm._recipe_fingerprint(dm.GRU_MODEL_RECIPE) == gru
    dm._rule_probe.cache_clear()
    # the rule's parameters are part of the recipe
    assert dm._recipe_fingerprint({**dm.DEFAULT_MODEL_RECIPE, "threshold_rule": "plain"}) != before
