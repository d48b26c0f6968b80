"""The transfer study's score table (deidlib.studies.transfer.tables): the synthetic row first, one
row per real corpus and one more at the dev-chosen threshold, the target read on the nursing notes."""

from __future__ import annotations

from deidlib.studies import transfer


def _res(f1: float, recall: float) -> transfer.TransferResults:
    pt = {"precision": 0.8, "recall": recall, "f1": f1}
    return transfer.TransferResults(
        profile="smoke", seed=0, params={},
        synthetic={"train_documents": 10, "test_documents": 4, "precision": 0.9, "recall": 0.9, "f1": 0.9},
        real={"physionet": {"documents": 5, **pt,
                            "dev_chosen": {"threshold": 0.1, "target_recall": 0.85, "test": {**pt, "recall": 0.9}}}})


def test_score_rows_reads_the_target_on_the_nursing_notes():
    rows = transfer.score_rows(_res(0.75, 0.86))
    assert [r["test set"] for r in rows] == [
        "synthetic (test split)", "physionet", "physionet, P(PHI) >= 0.1 chosen on dev for R 0.85"]
    assert rows[0]["goal"] == "" and rows[1]["goal"].endswith(": met")
    assert transfer.score_rows(_res(0.65, 0.86))[1]["goal"].endswith("not met")  # F1 below the target's 0.70
    assert transfer.score_rows(_res(0.75, 0.80))[1]["goal"].endswith("not met")  # recall below 0.85
