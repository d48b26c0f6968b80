"""The ahmed_utility claims (deidlib.studies.ahmed_utility.claims) read the rows of the tagger and
the gold spans under the thesis' transform (removal when the table has it), and say "not measured" for a table the run skipped."""

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
    # a loss of accuracy within the old ±2 band is no longer faithful
    cls.iloc[2, 0] = 90.0
    assert _verdicts(au.paper_vs_ours(bleu, topics, cls))[2] == "partial"
    cls.iloc[2, 0] = 88.0
    assert _verdicts(au.paper_vs_ours(bleu, topics, cls))[2] == "contradicts"


def test_ahmed_utility_claims_read_the_thesis_removal_transform_when_present():
    idx = pd.MultiIndex.from_tuples([(s, t) for s in ("ground truth", "GRU-CRF") for t in ("removal", "surrogate ε=1")],
                                    names=["source", "transform"])
    # removal: Ours − GT = +0.02 (the thesis' sign); surrogates: −0.02
    bleu = pd.DataFrame({"BLEU-1": [0.87, 0.91, 0.89, 0.89]}, index=idx)
    topics = pd.DataFrame({"Overall": [71.7, 70.8, 70.8, 84.0]}, index=idx)
    t = au.paper_vs_ours(bleu, topics, None)
    assert "(removal)" in t.claim[0] and "(removal)" in t.claim[1]
    assert _verdicts(t)[:2] == ["faithful", "faithful"]  # −0.9 topic points: inside ±5 (surrogates: +13.2)
