"""Notebook 10's figure (deidlib.studies.operating_point.figures): on the nursing notes it draws
the default model's curve and the peers' points it is given; on synthetic notes neither."""

from __future__ import annotations

from dataclasses import asdict

from deidlib.studies import operating_point as op


def _res(corpus, default_model, peers):
    pt = {"threshold": 0.5, "precision": 0.9, "recall": 0.8, "f1": 0.85}
    return op.OperatingPointResults(
        profile="smoke", corpus=corpus, seed=0, params=asdict(op.params_for("smoke")),
        data={"train_documents": 1, "dev_documents": 1, "test_documents": 1}, epochs_run=1,
        best_dev_f1=0.8, dev_curve=[{**pt, "threshold": None}, pt],
        test_curve=[{**pt, "threshold": None}, pt], chosen_threshold=0.5, seconds=1.0,
        default_model=default_model, peers=peers)


def _labels(fig):
    return [t.get_text() for t in fig.axes[0].get_legend().get_texts()]


def test_nursing_figure_draws_the_default_model_and_each_peer():
    dm = [{"threshold": 0.31, "precision": 0.7, "recall": 0.9, "f1": 0.79, "own": True},
          {"threshold": 0.5, "precision": 0.8, "recall": 0.85, "f1": 0.82}]
    peers = [{"system": "philter", "precision": 0.1, "recall": 0.95},
             {"system": "presidio", "precision": 0.3, "recall": 0.5}]
    labels = _labels(op.plot_curve(_res("physionet", dm, peers)))
    assert any("default model's saved decision (T=0.31" in x for x in labels)
    assert any(x.startswith("default model (synthetic-only)") for x in labels)
    assert any(x.startswith("philter (peer)") for x in labels) and any(x.startswith("presidio (peer)") for x in labels)
    labels = _labels(op.plot_curve(_res("synthetic", [], [])))
    assert not any("peer" in x or "default model" in x for x in labels)


def test_the_summary_reads_the_dev_chosen_threshold_and_the_target():
    rows = op.summary_rows(_res("synthetic", [], []))
    assert [r["point"] for r in rows] == ["model decision", "dev-chosen threshold"]
    assert rows[1]["threshold"] == 0.5 and rows[1]["test_recall"] == 0.8
    assert not rows[1]["meets_target"]  # recall 0.8 < the target's 0.92
