"""``deidlib train`` / ``deidlib predict`` end to end on a tiny synthetic corpus."""

import json

from deidlib.cli import main
from deidlib.corpus.i2b2 import read_i2b2_dir, write_i2b2_dir
from deidlib.datasets import load_corpus


def test_train_then_predict_then_evaluate(tmp_path, capsys):
    out = tmp_path / "run"
    rc = main(
        [
            "train",
            str(out),
            "--model",
            "gru",
            "--embeddings",
            "none",
            "--epochs",
            "2",
            "--batch-size",
            "8",
            "--scheme",
            "binary",
            "--lr",
            "0.03",
            "--seed",
            "1",
            "--set",
            "word_dim=16",
            "--set",
            "hidden=16",
            "--set",
            "char_hidden=8",
            "--set",
            "char_emb_dim=8",
            "--set",
            "ff_dim=16",
        ]
    )
    assert rc == 0
    assert "test binary-token P/R/F1" in capsys.readouterr().out
    hist = json.loads((out / "history.json").read_text())
    assert len(hist["epochs"]) == 2 and "dev_f1" in hist["epochs"][0]
    scores = json.loads((out / "scores.json").read_text())
    assert 0.0 <= scores["test_f1"] <= 1.0
    assert (out / "checkpoints" / "last.pt").is_file()
    cfg = json.loads((out / "model" / "config.json").read_text())
    assert cfg["tagger"]["hparams"]["hidden"] == 16

    # predict on the same test documents from their XML, ignoring their gold tags
    test = load_corpus("synthetic", profile="smoke", seed=1).test
    gold_dir = tmp_path / "gold"
    write_i2b2_dir(test, gold_dir)
    rc = main(["predict", str(out), str(gold_dir), str(tmp_path / "pred")])
    assert rc == 0
    pred = {d.id: d.spans for d in read_i2b2_dir(tmp_path / "pred")}
    saved = {d.id: d.spans for d in read_i2b2_dir(out / "test_predictions")}
    assert pred == saved
    assert (
        main(["evaluate", str(gold_dir), str(tmp_path / "pred"), "--measure", "binary_token", "--no-details"])
        == 0
    )
    # a recall-oriented operating point at predict time: a low PHI-marginal threshold finds
    # at least the gold PHI tokens the default decision finds, and marks more tokens
    from deidlib.evaluation import binary_token_prf

    assert main(["predict", str(out), str(gold_dir), str(tmp_path / "pred_lo"), "--phi-threshold", "0.0001"]) == 0
    lo = read_i2b2_dir(tmp_path / "pred_lo")
    p0, r0, _ = binary_token_prf(test, read_i2b2_dir(tmp_path / "pred"))
    p1, r1, _ = binary_token_prf(test, lo)
    assert r1 >= r0 and r1 > 0.9 and p1 < p0
    assert main(["predict", str(out), str(gold_dir), str(tmp_path / "x"), "--phi-threshold", "0"]) == 2


def test_train_rejects_bad_arguments(tmp_path, capsys):
    assert main(["train", str(tmp_path), "--model", "nope"]) == 2
    assert "unknown model" in capsys.readouterr().err
    assert main(["train", str(tmp_path), "--set", "hidden"]) == 2
    assert "KEY=VALUE" in capsys.readouterr().err
    assert main(["train", str(tmp_path), "--corpus", "i2b2", "--data-dir", str(tmp_path / "missing")]) == 1


def test_train_target_recall_saves_the_dev_chosen_threshold(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["train", str(out), "--embeddings", "none", "--epochs", "1", "--batch-size", "8", "--scheme",
            "binary", "--lr", "0.03", "--seed", "1", "--set", "word_dim=12", "--set", "hidden=8",
            "--set", "char_hidden=6", "--set", "char_emb_dim=6", "--set", "ff_dim=8"]
    assert main([*args, "--target-recall", "0.9"]) == 0
    assert "operating point: PHI threshold" in capsys.readouterr().out
    scores = json.loads((out / "scores.json").read_text())
    th = scores["phi_threshold"]
    cfg = json.loads((out / "model" / "config.json").read_text())
    assert cfg["task"]["phi_threshold"] == th
    chosen = next(p for p in scores["dev_operating_points"] if p["threshold"] == th)
    assert chosen["recall"] >= 0.9
    higher = [p for p in scores["dev_operating_points"] if p["threshold"] is not None and p["threshold"] > th]
    assert all(p["recall"] < 0.9 for p in higher)  # the highest threshold that reaches the target
    # with DP-SGD a dev-chosen threshold would fall outside the guarantee: refused
    assert main([*args, "--target-recall", "0.9", "--dp-noise", "1.0", "--force"]) == 2
    assert "outside the DP" in capsys.readouterr().err
    assert main([*args, "--target-recall", "0.9", "--phi-threshold", "0.5", "--force"]) == 2


def test_predict_reports_missing_model(tmp_path, capsys):
    (tmp_path / "in").mkdir()
    (tmp_path / "m").mkdir()
    assert main(["predict", str(tmp_path / "m"), str(tmp_path / "in"), str(tmp_path / "o")]) == 1
    assert "not a saved deidlib tagger" in capsys.readouterr().err


SMALL = ["--set", "word_dim=12", "--set", "hidden=8", "--set", "char_hidden=6", "--set", "char_emb_dim=6",
         "--set", "ff_dim=8"]


def test_train_with_dp_sgd_writes_the_ledger_and_what_dp_does_not_cover(tmp_path, capsys):
    from deidlib.privacy.accounting import epsilon

    out = tmp_path / "dp"
    rc = main(["train", str(out), "--model", "gru", "--scheme", "binary", "--epochs", "0.25", "--batch-size", "8",
               "--dp-noise", "1.2", "--dp-accountant", "rdp", "--dp-unit", "patient", "--seed", "2", *SMALL])
    assert rc == 0, capsys.readouterr().err
    assert "DP-SGD: (" in capsys.readouterr().out
    led = json.loads((out / "privacy.json").read_text())
    assert led["unit"] == "patient" and led["noise_multiplier"] == 1.2 and led["accountant"] == "rdp"
    # the ledger composes the DP vocabulary's Gaussian phase (history) with DP-SGD
    assert led["epsilon"] == epsilon(1.2, led["sample_rate"], led["steps"], led["delta"], "rdp",
                                     history=[tuple(h) for h in led["history"]])
    assert led["steps"] == round(0.25 / led["sample_rate"]) and led["secure_rng"]  # OS CSPRNG by default
    assert led["vocabulary"]["unit"] == "patient" and led["guarantee"]["unit"] == "patient"
    # DP vocabulary, embeddings none under DP: only the held-out notes' statistics, the synthetic test
    # notes' predictions and the user's choices are outside the guarantee
    assert set(led["not_covered_by_dp"]) == {"test_scores", "dev_scores", "test_predictions", "hyperparameters"}
    scores = json.loads((out / "scores.json").read_text())
    assert scores["dp_epsilon"] == led["guarantee"]["epsilon"] and 0 <= scores["test_f1"] <= 1
    assert (out / "model" / "weights.pt").is_file()
    # a target epsilon is met (calibrated sigma), and word2vec is reported as not covered
    out2 = tmp_path / "dp2"
    assert main(["train", str(out2), "--scheme", "binary", "--epochs", "0.25", "--batch-size", "8",
                 "--dp-epsilon", "5", "--embeddings", "word2vec", *SMALL]) == 0
    led2 = json.loads((out2 / "privacy.json").read_text())
    assert 4.9 < led2["guarantee"]["epsilon"] <= 5 and led2["target_epsilon"] < 5  # target met with the vocabulary
    assert "embeddings" in led2["not_covered_by_dp"]
    # options of ordinary training that DP-SGD does not take are refused, as are both noise options
    capsys.readouterr()
    assert main(["train", str(tmp_path / "x"), "--dp-noise", "1", "--patience", "2"]) == 2
    assert "--patience" in capsys.readouterr().err
    assert main(["train", str(tmp_path / "x"), "--dp-noise", "1", "--dp-epsilon", "3"]) == 2
    assert main(["train", str(tmp_path / "x"), "--epochs", "1.5"]) == 2  # fractions only with DP
