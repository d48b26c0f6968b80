"""The ahmed_utility claims (deidlib.studies.ahmed_utility.claims) read the rows of the tagger and
the gold spans under the surrogate transform, and say "not measured" for a table the run skipped."""

from __future__ import annotations

import pandas as pd

from deidlib.studies import ahmed_utility as au


def _verdicts(t: pd.DataFrame) -> list[str]:
    assert list(t.columns)[0] == "claim" and t.columns[-1] == "verdict"
    return t.verdict.tolist()


def test_ahmed_utility_claims_on_a_tiny_result():
    idx = pd.MultiIndex.from_tuples([("ground truth", "surrogate ε=1"), ("GRU-CRF", "surrogate ε=1")],
                                    names=["source", "transform"])
    bleu = pd.DataFrame({"BLEU-1": [0.898, 0.923]}, index=idx)
    topics = pd.DataFrame({"Overall": [83.3, 84.0]}, index=idx)
    cls = pd.concat([pd.DataFrame({"acc 3": [91.5]}, index=pd.MultiIndex.from_tuples(
        [("non-sanitized", "original")], names=["source", "transform"])), pd.DataFrame({"acc 3": [90.0, 91.8]}, index=idx)])
    assert _verdicts(au.paper_vs_ours(bleu, topics, cls)) == ["faithful"] * 3
    assert _verdicts(au.paper_vs_ours(bleu, topics, pd.DataFrame()))[2] == "not measured"
