"""The ahmed_models claims (deidlib.studies.ahmed_models.claims) read the configurations of Tables
4.2–4.4 on a tiny fake result, read the paired effects when given (a point estimate the paired test
cannot tell from zero is never faithful), and say "not measured" for parts a run skipped."""

from __future__ import annotations

import pandas as pd

from deidlib.studies import ahmed_models as am

COLUMNS = ["claim", "paper", "ours", "interval", "rule", "verdict"]


def _verdicts(t: pd.DataFrame) -> list[str]:
    assert list(t.columns)[0] == "claim" and t.columns[-1] == "verdict"
    return t.verdict.tolist()


def _ahmed_row(config, f1, r=90.0, **kw):
    return {"config": config, "F1_mean": f1, "R_mean": r, **kw}


def test_ahmed_models_claims_read_the_configurations():
    t42 = pd.DataFrame([_ahmed_row("gru", 77.0, kind="gru"), _ahmed_row("sat", 85.9, kind="minilm"),
                        _ahmed_row("transformer", 99.0, kind="transformer")])  # from scratch: not the SAT
    t43 = pd.DataFrame([_ahmed_row("gru-crf-d0.5", 97.3), _ahmed_row("gru-nochar-crf-d0.5", 90.7),
                        _ahmed_row("gru-softmax-d0.5", 96.5), _ahmed_row("sat-crf-d0.25", 98.2),
                        _ahmed_row("sat-softmax-d0.25", 98.1)])
    t44 = pd.DataFrame({"delta_p": [1.0, 10.0], "R_mean": [97.1, 97.5]})
    assert _verdicts(am.paper_vs_ours(t42, t43, t44)) == ["faithful"] * 5
    t42.loc[1, "F1_mean"] = 60.0
    v = _verdicts(am.paper_vs_ours(t42, None, None))
    assert v[0] == "contradicts" and v[1:] == ["not measured"] * 4


def test_ahmed_models_claims_read_the_paired_effects_when_given():
    eff = pd.DataFrame([
        {"claim": "characters help", "paper": 6.6, "rule": "same_sign", "tol": 1.0, "paper_text": None,
         "n": 5, "mean": 2.0, "lo": 1.2, "hi": 2.8, "p": 0.003, "verdict": "found"},
        {"claim": "CRF beats softmax", "paper": 0.8, "rule": "same_sign", "tol": 0.5, "paper_text": None,
         "n": 5, "mean": -0.3, "lo": -1.5, "hi": 0.9, "p": 0.6, "verdict": "not distinguishable from zero"},
        {"claim": "δ_p 15 lowers recall", "paper": -1.4, "rule": "same_sign", "tol": 0.2, "paper_text": None,
         "n": 5, "mean": 1.0, "lo": 0.5, "hi": 1.5, "p": 0.01, "verdict": "reversed"},
    ])
    t = am.paper_vs_ours(None, None, None, eff)
    assert list(t["paired test"]) == ["found", "not distinguishable from zero", "reversed"]
    assert list(t["seeds"]) == [5, 5, 5] and t["interval"].iloc[0] == "[1.2, 2.8]"
    assert _verdicts(t) == ["faithful", "partial", "contradicts"]


def test_ahmed_effect_indistinguishable_from_zero_is_never_faithful():
    """A point estimate on the paper's side (beyond the tolerance) whose paired test cannot tell
    it from zero is ``partial``; a found effect stays ``faithful``; a reversed one contradicts even
    when the rule alone would not say so."""
    row = {"claim": "characters help", "paper": 6.6, "rule": "same_sign", "tol": 1.0, "paper_text": None,
           "n": 5, "mean": 3.2, "lo": -9.6, "hi": 16.0, "p": 0.52}
    t = am.paper_vs_ours(None, None, None, pd.DataFrame([
        {**row, "verdict": "not distinguishable from zero"},
        {**row, "lo": 1.5, "hi": 4.9, "p": 0.004, "verdict": "found"},
        {**row, "claim": "tie", "paper": 0.1, "rule": "close", "mean": 0.5, "lo": 0.2, "hi": 0.8,
         "verdict": "reversed"},
    ]))
    assert _verdicts(t) == ["partial", "faithful", "contradicts"]
