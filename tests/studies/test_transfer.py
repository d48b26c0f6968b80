import pytest

from deidlib.corpus.conventions import age_value
from deidlib.evaluation import binary_token_prf
from deidlib.studies import transfer


def test_params_checks():
    assert transfer.params_for("cpu").hparams["word_dropout"] == 0.3
    with pytest.raises(ValueError, match="guideline"):
        transfer.params_for("smoke", guideline="hipaa")
    with pytest.raises(ValueError, match="max_test_documents"):
        transfer.params_for("smoke", max_test_documents=0)
    with pytest.raises(TypeError, match="resolved"):
        transfer.run_study({"profile": "smoke"})


def test_training_spans_are_aligned_to_the_guideline():
    from deidlib.datasets import load_corpus

    syn = transfer._aligned(load_corpus("synthetic", profile="smoke", seed=0), "physionet")
    spans = [s for d in syn.train + syn.dev + syn.test for s in d.spans]
    assert spans and not [s for s in spans if s.subtype in ("DEPARTMENT", "PROFESSION", "ROOM")]
    ages = [age_value(s.text) for s in spans if s.subtype == "AGE"]
    assert all(a is not None and a > 89 for a in ages)


def test_missing_real_corpus_is_skipped_with_a_reason(tmp_path):
    res = transfer.run_study(transfer.params_for("smoke"), data_dir=str(tmp_path), corpora=("i2b2",), progress=False)
    assert res["real"] == {} and "i2b2" in res["skipped"]
    assert 0 <= res["synthetic"]["f1"] <= 1 and res["epochs_run"] == 2
    assert [r["test set"] for r in transfer.score_rows(res)] == ["synthetic (test split)"]


@pytest.mark.realdata
def test_nursing_notes_are_scored_with_diagnostics_that_add_up(physionet_dir, monkeypatch):
    seen = []
    real_prf = binary_token_prf

    def spy(gold, system):
        gold, system = list(gold), list(system)
        seen.append(len(gold))
        return real_prf(gold, system)

    monkeypatch.setattr(transfer, "binary_token_prf", spy)
    res = transfer.run_study(transfer.params_for("smoke"), data_dir=str(physionet_dir), corpora=("physionet",),
                             progress=False)
    r = res["real"]["physionet"]
    assert r["documents"] == 60 and seen[-1] == 60
    tp, fp, fn = r["true_positives"], r["false_positives"], r["missed"]
    assert fp == sum(x["false_positives"] for x in r["false_positives_by_kind"])
    assert fn == sum(x["missed_tokens"] for x in r["missed_by_type"]) == sum(x["missed_tokens"] for x in r["missed_by_kind"])
    assert r["precision"] == pytest.approx(tp / (tp + fp) if tp + fp else 0.0)
    assert r["recall"] == pytest.approx(tp / (tp + fn))
    row = transfer.score_rows(res)[1]
    assert row["test set"] == "physionet" and row["goal"].endswith(("met", "not met"))
