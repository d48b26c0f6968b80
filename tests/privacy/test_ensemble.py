import numpy as np
import pytest

from deidlib.corpus.document import Document, Span
from deidlib.evaluation import binary_token_prf
from deidlib.privacy.ensemble import (
    _aggregate_votes,
    _token_grid,
    aggregate_documents,
    ensemble_guarantee,
    rule_scores,
)

V = np.array(
    [
        [1, 0, 0, 1, 0],
        [0, 0, 1, 1, 0],
        [0, 0, 0, 1, 1],
        [0, 0, 1, 1, 0],
    ],
    dtype=bool,
)


def test_rules_on_votes():
    assert _aggregate_votes(V, "minimality").tolist() == [True, False, True, True, True]
    # strict majority of 4 needs 3 votes; ties (2 of 4) are not PHI unless asked
    assert _aggregate_votes(V, "majority").tolist() == [False, False, False, True, False]
    assert _aggregate_votes(V, "majority", majority_ties="phi").tolist() == [False, False, True, True, False]
    assert _aggregate_votes(V, "k_of_n", k=2).tolist() == [False, False, True, True, False]
    assert _aggregate_votes(V, "k_of_n", k=4).tolist() == [False, False, False, True, False]
    assert _aggregate_votes(V[:3], "majority").tolist() == [False, False, False, True, False]
    # k = 1 is minimality
    assert (_aggregate_votes(V, "k_of_n", k=1) == _aggregate_votes(V, "minimality")).all()


def test_recall_monotone_in_k():
    rng = np.random.default_rng(0)
    v = rng.random((5, 200)) < 0.3
    counts = [_aggregate_votes(v, "k_of_n", k=k).sum() for k in range(1, 6)]
    assert counts == sorted(counts, reverse=True) and counts[0] > counts[-1]


def test_bad_votes():
    with pytest.raises(ValueError, match="k_of_n"):
        _aggregate_votes(V, "k_of_n", k=5)
    with pytest.raises(ValueError, match="unknown rule"):
        _aggregate_votes(V, "unanimous")
    with pytest.raises(ValueError, match="binary"):
        _aggregate_votes(np.array([[0, 2]]), "minimality")
    with pytest.raises(ValueError, match="members"):
        _aggregate_votes(np.array([0, 1]), "minimality")


TEXT = "Seen by Dr John Smith at Boston General on 2020-01-03."


def _doc(spans, did="d1"):
    return Document(did, TEXT, [Span.of(TEXT, a, b, t) for a, b, t in spans])


def _at(word):
    a = TEXT.index(word)
    return a, a + len(word)


def test_document_minimality_and_majority():
    john, smith = _at("John"), _at("Smith")
    boston_general = (_at("Boston")[0], _at("General")[1])
    date = _at("2020-01-03")
    m1 = _doc([(john[0], smith[1], "DOCTOR"), (*date, "DATE")])
    m2 = _doc([(*smith, "PATIENT"), (*boston_general, "HOSPITAL")])
    # a member with a span that cuts a token in half still votes for that token
    m3 = _doc([(smith[0] + 2, smith[1], "DOCTOR")])
    mini = aggregate_documents([[m1], [m2], [m3]], "minimality")[0]
    got = [(s.text, s.subtype, s.category) for s in mini.spans]
    assert got == [
        ("John Smith", "DOCTOR", "NAME"),
        ("Boston General", "HOSPITAL", "LOCATION"),
        ("2020-01-03", "DATE", "DATE"),
    ]
    maj = aggregate_documents([[m1], [m2], [m3]], "majority")[0]
    assert [s.text for s in maj.spans] == ["Smith"]
    assert maj.spans[0].subtype == "DOCTOR"  # 2 DOCTOR votes vs 1 PATIENT
    assert aggregate_documents([[m1], [m2], [m3]], "k_of_n", k=3)[0].spans[0].text == "Smith"
    assert aggregate_documents([[m1], [m2]], "k_of_n", k=2)[0].spans[0].text == "Smith"
    mini.validate()


def test_members_in_any_order_and_errors():
    a = [_doc([(*_at("John"), "DOCTOR")], "a"), _doc([], "b")]
    b = [_doc([], "b"), _doc([(*_at("Smith"), "DOCTOR")], "a")]
    out = aggregate_documents([a, b])
    assert [d.id for d in out] == ["a", "b"]
    assert [s.text for s in out[0].spans] == ["John Smith"] and out[1].spans == []
    with pytest.raises(ValueError, match="differ"):
        aggregate_documents([a, b[:1]])
    c = [Document("a", TEXT + " x", []), Document("b", TEXT, [])]
    with pytest.raises(ValueError, match="text"):
        aggregate_documents([a, c])
    with pytest.raises(ValueError, match="at least one"):
        aggregate_documents([])


def test_rule_scores_precision_recall_tradeoff():
    gold = [_doc([(_at("John")[0], _at("Smith")[1], "DOCTOR"), (*_at("2020-01-03"), "DATE")])]
    m1 = [_doc([(*_at("John"), "DOCTOR"), (*_at("Seen"), "DOCTOR")])]
    m2 = [_doc([(*_at("Smith"), "DOCTOR"), (*_at("Seen"), "DOCTOR")])]
    m3 = [_doc([(*_at("2020-01-03"), "DATE")])]
    sc = rule_scores(gold, [m1, m2, m3])
    # gold tokens: John Smith 2020 01 03 (5); minimality finds all + 'Seen'
    assert sc["minimality"] == pytest.approx((5 / 6, 1.0, 2 * (5 / 6) / (5 / 6 + 1)))
    assert sc["1_of_3"] == sc["minimality"]
    # 2 of 3 (= majority): only 'Seen' has two votes
    assert sc["majority"] == sc["2_of_3"] == (0.0, 0.0, 0.0)
    assert sc["minimality"][1] >= sc["3_of_3"][1]
    assert sc["minimality"] == binary_token_prf(gold, aggregate_documents([m1, m2, m3]))


def test_token_grid_matches_scorer_units():
    assert [TEXT[a:b] for a, b in _token_grid(TEXT)][:4] == ["Seen", "by", "Dr", "John"]


def test_guarantee():
    g = ensemble_guarantee([(8.41, 1e-5, "patient"), (9.15, 1e-5, "patient"), (6.95, 1e-6, "patient")])
    assert (g.epsilon, g.delta, g.composition) == (9.15, 1e-5, "parallel")
    s = ensemble_guarantee([(8.41, 1e-5, "patient"), (9.15, 1e-5, "patient")], disjoint=False)
    assert s.epsilon == pytest.approx(17.56) and s.delta == pytest.approx(2e-5)
    assert "parallel" in str(g)
    with pytest.raises(ValueError):
        ensemble_guarantee([])
    with pytest.raises(ValueError):
        ensemble_guarantee([(-1.0, 1e-5, "sentence")])


def test_guarantee_states_the_members_unit():
    # members DP per sentence must not give a guarantee "per person"
    g = ensemble_guarantee([(8.41, 1e-5, "sentence"), (9.15, 1e-5, "sentence")])
    assert g.unit == "sentence" and str(g) == "(9.15, 1e-05)-DP per sentence by parallel composition"
    p = ensemble_guarantee([(1.0, 1e-6, "patient"), (2.0, 1e-6, "patient")], disjoint=False)
    assert p.unit == "patient" and "per patient" in str(p) and p.epsilon == 3.0
    with pytest.raises(ValueError, match="different units"):
        ensemble_guarantee([(1.0, 1e-6, "patient"), (2.0, 1e-6, "sentence")])
    with pytest.raises(ValueError, match="privacy unit"):
        ensemble_guarantee([(1.0, 1e-6)])  # a guarantee without its unit is refused
    with pytest.raises(ValueError, match="unknown privacy unit"):
        ensemble_guarantee([(1.0, 1e-6, "person")])
