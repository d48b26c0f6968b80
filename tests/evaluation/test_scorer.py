"""Hand-computed checks of every measure of the i2b2 2014 scorer."""

import warnings

import pytest

from deidlib.corpus import Document, Span
from deidlib.evaluation import binary_token_prf, evaluate, prf

T1 = "Dr. John-Smith saw Ann Lee on 12/02/2020 in Boston, ID 12345."
#     0123456789012345678901234567890123456789012345678901234567890
#     Dr.=0-3 John-Smith=4-14 Ann Lee=19-26 12/02/2020=30-40 Boston=44-50 12345=55-60


def s(text, a, b, t):
    return Span.of(text, a, b, t)


def gold1():
    return Document("d1", T1, [s(T1, 4, 14, "DOCTOR"), s(T1, 19, 26, "PATIENT"), s(T1, 30, 40, "DATE"),
                              s(T1, 44, 50, "CITY"), s(T1, 55, 60, "IDNUM")])


def sys1():
    return Document("d1", T1, [
        s(T1, 4, 8, "DOCTOR"),      # only "John": strict miss, token: John TP, Smith FN
        s(T1, 19, 26, "DOCTOR"),    # right offsets, wrong TYPE: typed FP+FN, binary TP
        s(T1, 30, 38, "DATE"),      # end off by 2: relaxed TP, strict miss
        s(T1, 44, 50, "CITY"),      # exact
        s(T1, 44, 50, "CITY"),      # duplicate collapses
        s(T1, 55, 60, "MEDICALRECORD"),  # ID with another TYPE
    ])


def counts(rep, m):
    x = rep.scores[m]
    return (x.tp, x.fp, x.fn)


def test_strict_relaxed_token_typed():
    rep = evaluate([gold1()], [sys1()])
    # strict typed: exact keys equal only for CITY -> TP 1; system 5 distinct -> FP 4; gold 5 -> FN 4
    assert counts(rep, "strict") == (1, 4, 4)
    # relaxed typed: CITY and DATE (|40-38| = 2) match -> TP 2, FP 3, FN 3
    assert counts(rep, "relaxed") == (2, 3, 3)
    # token typed: gold tokens John Smith Ann Lee 12 02 2020 Boston 12345 = 9
    # system tokens John(DOCTOR) Ann Lee(DOCTOR) 12 02 20 Boston 12345(MEDICALRECORD) = 8
    # TP: John, 12, 02, Boston = 4 -> FP 4, FN 5
    assert counts(rep, "token") == (4, 4, 5)


def test_binary_modes():
    rep = evaluate([gold1()], [sys1()])
    # binary strict: (19,26) (44,50) (55,60) match -> TP 3, FP 2, FN 2
    assert counts(rep, "binary_strict") == (3, 2, 2)
    # binary token: John Ann Lee 12 02 Boston 12345 = 7 TP; sys "20"(36-38) FP; gold Smith, 2020 FN
    assert counts(rep, "binary_token") == (7, 1, 2)
    assert binary_token_prf([gold1()], [sys1()]) == pytest.approx((7 / 8, 7 / 9, 2 * (7 / 8) * (7 / 9) / (7 / 8 + 7 / 9)))
    # binary relaxed: strict matches plus DATE within 2 -> 4, FP 1 (John), FN 1 (John-Smith)
    assert counts(rep, "binary_relaxed") == (4, 1, 1)


def test_relaxed_tolerance_is_two_not_three():
    t = "x 0123456789"
    g = Document("a", t, [s(t, 2, 12, "DATE")])
    assert counts(evaluate([g], [g.with_spans([s(t, 2, 10, "DATE")])]), "relaxed") == (1, 0, 0)
    assert counts(evaluate([g], [g.with_spans([s(t, 2, 9, "DATE")])]), "relaxed") == (0, 1, 1)
    # one-to-one: two system tags near one gold tag give one TP and one FP
    assert counts(evaluate([g], [g.with_spans([s(t, 2, 11, "DATE"), s(t, 2, 10, "DATE")])]), "relaxed") == (1, 1, 0)


def test_hipaa_filter_separately_and_idnum_bug():
    rep = evaluate([gold1()], [sys1()])
    # gold HIPAA (original): PATIENT Ann Lee, DATE, CITY; DOCTOR and IDNUM out
    # system HIPAA: DATE(30-38), CITY, MEDICALRECORD(55-60); its Ann Lee is DOCTOR -> filtered out
    assert counts(rep, "hipaa_strict") == (1, 2, 2)
    # binary hipaa strict: gold {(19,26),(30,40),(44,50)}, sys {(30,38),(44,50),(55,60)}
    assert counts(rep, "binary_hipaa_strict") == (1, 2, 2)
    fixed = evaluate([gold1()], [sys1()], idnum_bug=False)
    # with IDNUM counted, gold gains (55,60) which the system's MEDICALRECORD matches by offsets
    assert counts(fixed, "binary_hipaa_strict") == (2, 1, 2)
    assert counts(fixed, "hipaa_strict") == (1, 2, 3)


def test_type_agnostic_binary_hipaa_token():
    rep = evaluate([gold1()], [sys1()])
    # gold HIPAA tokens: Ann Lee 12 02 2020 Boston = 6
    # system tokens (any type): John Ann Lee 12 02 20 Boston 12345
    # TP = Ann Lee 12 02 Boston = 5; FN = 2020; FP = tokens that are no gold PHI: "20" only
    assert counts(rep, "binary_hipaa_token_agnostic") == (5, 1, 1)
    # the original's binary HIPAA token drops the system's DOCTOR Ann Lee: TP 12 02 Boston
    assert counts(rep, "binary_hipaa_token") == (3, 2, 3)


def test_micro_and_macro():
    t = "aa bb"
    g1 = Document("a", t, [s(t, 0, 2, "DATE"), s(t, 3, 5, "DATE")])
    g2 = Document("b", t, [s(t, 0, 2, "AGE")])
    s1 = g1.with_spans([s(t, 0, 2, "DATE")])  # P 1, R 0.5
    s2 = g2.with_spans([s(t, 3, 5, "AGE")])   # P 0, R 0
    rep = evaluate([g1, g2], [s1, s2])
    sc = rep.scores["strict"]
    assert (sc.tp, sc.fp, sc.fn) == (1, 1, 2)
    assert sc.micro == prf(1, 1, 2)
    assert sc.macro.precision == pytest.approx(0.5) and sc.macro.recall == pytest.approx(0.25)
    assert sc.macro.f1 == pytest.approx(2 * 0.5 * 0.25 / 0.75)


def test_per_category_and_type():
    rep = evaluate([gold1()], [sys1()])
    cat = {k: n for k, (_, n) in rep.per_category["strict"].items()}
    assert cat["LOCATION"] == (1, 0, 0) and cat["NAME"] == (0, 2, 2) and cat["ID"] == (0, 1, 1)
    typ = {k: n for k, (_, n) in rep.per_type["strict"].items()}
    assert typ["DOCTOR"] == (0, 2, 1) and typ["PATIENT"] == (0, 0, 1) and typ["MEDICALRECORD"] == (0, 1, 0)


def test_missing_documents_are_warned_and_not_scored():
    g = [gold1(), Document("d2", "x", [])]
    with pytest.warns(UserWarning, match="NOT scored"):
        rep = evaluate(g, [sys1(), Document("d3", "y", [])])
    assert rep.n_documents == 1 and rep.missing_in_system == ["d2"] and rep.missing_in_gold == ["d3"]
    assert "WARNING" in rep.table()


def test_bootstrap_ci_contains_estimate_and_is_seeded():
    docs, syss = [], []
    for i in range(30):
        t = f"seen {i:02d} by Smith on 1/{i % 9 + 1}/2020"
        g = Document(f"d{i}", t, [s(t, 5, 7, "AGE"), s(t, 11, 16, "DOCTOR"), s(t, 20, len(t), "DATE")])
        docs.append(g)
        syss.append(g.with_spans(g.spans[: 1 + i % 3]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = evaluate(docs, syss, n_boot=300, seed=4)
    b = evaluate(docs, syss, n_boot=300, seed=4)
    lo, hi = a.scores["strict"].ci["f1"]
    assert lo <= a.f1("strict") <= hi and lo < hi
    assert a.scores["strict"].ci == b.scores["strict"].ci


def test_f1_accessor_by_mode_and_binary():
    gold = [Document(id="a", text="Dr. John-Smith", spans=(Span.of("Dr. John-Smith", 4, 14, "DOCTOR"),))]
    system = [Document(id="a", text="Dr. John-Smith", spans=(Span.of("Dr. John-Smith", 4, 8, "PATIENT"),))]
    rep = evaluate(gold, system, n_boot=0)
    # binary token: gold tokens John, Smith; system John -> TP 1, FP 0, FN 1 -> P 1, R .5, F1 2/3
    assert rep.f1(mode="token", binary=True) == pytest.approx(2 / 3)
    assert rep.f1(mode="token", binary=True) == rep.f1("binary_token")
    assert rep.f1(mode="token") == 0.0  # typed: DOCTOR vs PATIENT never match
    with pytest.raises(ValueError):
        rep.f1("nonsense")
