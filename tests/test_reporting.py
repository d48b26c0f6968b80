"""deidlib.reporting: the tables, HTML and Result records every notebook writes."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from deidlib.corpus.document import Document, Span
from deidlib.reporting import (
    _UNMEASURED_PROFILES,
    _VERDICTS,
    Claim,
    annotated_html,
    claims_for_profile,
    claims_table,
    json_ready,
    to_markdown,
    verdict,
    verdict_counts,
    write_json,
    write_result,
    write_table,
)
from deidlib.results import _load_result


def test_write_table_index_rule_and_markdown(tmp_path):
    plain = pd.DataFrame({"model": ["a", "b"], "f1_mean": [0.5, 0.25], "f1_sd": [0.1, math.nan]})
    named = plain.set_index("model")
    write_table(plain, "plain", tmp_path, markdown=True)
    write_table(named, "named", tmp_path)
    write_table(named, "forced", tmp_path, index=False)
    assert (tmp_path / "plain.csv").read_text().splitlines()[0] == "model,f1_mean,f1_sd"  # RangeIndex dropped
    assert (tmp_path / "named.csv").read_text().splitlines()[0] == "model,f1_mean,f1_sd"  # named index kept
    assert (tmp_path / "forced.csv").read_text().splitlines()[0] == "f1_mean,f1_sd"
    assert not (tmp_path / "named.md").exists()
    assert (tmp_path / "plain.md").read_text().splitlines() == [
        "| model | f1 |", "|---|---|", "| a | 0.50 ± 0.10 |", "| b | 0.25 |"]
    assert to_markdown(pd.DataFrame({"crf": [True, False], "n": [3, None]})).splitlines()[2:] == [
        "| ✓ | 3.00 |", "| × | – |"]


def test_result_record_keeps_the_privacy_ledger(tmp_path):
    ledger = {"members": {"site_a": {"epsilon": 2.5, "delta": 1e-5, "steps": 12}}, "ensemble": {"epsilon": 2.5}}
    curve = pd.DataFrame({"epsilon": [math.inf, 1.0], "f1": [0.9, 0.5]})
    path = write_result(tmp_path, "ahmed_dp", "x", params={"noises": (0.5, 1.0)}, metrics={"curve": curve},
                        seeds=[0], data_fingerprint="abc", privacy_ledger=ledger)
    r = _load_result(path)
    assert path.name == "ahmed_dp_result.json" and r.privacy_ledger == ledger and r.seeds == [0]
    assert r.params == {"noises": [0.5, 1.0]} and r.metrics["curve"][0] == {"index": 0, "epsilon": "inf", "f1": 0.9}
    assert _load_result(write_result(tmp_path, "festag", "y", params={}, metrics={}, seeds=[1])).privacy_ledger is None
    write_json({"a": curve}, tmp_path / "r.json")
    assert json.loads((tmp_path / "r.json").read_text()) == json_ready({"a": curve})


def test_annotated_html_escapes_text_and_labels_spans():
    doc = Document(id="d", text="Seen <b> by Dr. Smith & co", spans=[Span(16, 21, "NAME", "DOCTOR", "Smith")])
    out = annotated_html(doc)
    assert "&lt;b&gt;" in out and "&amp; co" in out and "<b>" not in out
    assert '<mark title="NAME/DOCTOR"' in out and ">Smith<sub" in out and "DOCTOR</sub></mark>" in out
    assert "Smith" not in annotated_html(doc, max_chars=10)


# ---------------------------------------------------------------------- claims and verdicts


def test_every_verdict_is_reachable_under_every_rule():
    cases = {
        "close": [(0.50, "faithful"), (0.57, "partial"), (0.80, "contradicts")],  # paper 0.5, tol 0.05
        "at_least": [(0.60, "faithful"), (0.46, "partial"), (0.30, "contradicts")],
        "at_most": [(0.40, "faithful"), (0.54, "partial"), (0.70, "contradicts")],
    }
    for rule, xs in cases.items():
        for ours, want in xs:
            assert verdict(Claim("c", 0.5, ours, rule, 0.05)) == want, (rule, ours)
    # same_sign: the paper reports +0.05 (A beats B); tolerance 0.01 is "no clear difference"
    assert verdict(Claim("A − B", 0.05, 0.03, "same_sign", 0.01)) == "faithful"
    assert verdict(Claim("A − B", 0.05, 0.005, "same_sign", 0.01)) == "partial"
    assert verdict(Claim("A − B", 0.05, -0.03, "same_sign", 0.01)) == "contradicts"
    assert verdict(Claim("A − B", -0.05, -0.03, "same_sign", 0.01)) == "faithful"  # a claimed drop
    assert verdict(Claim("A − B", -0.05, 0.03, "same_sign", 0.01)) == "contradicts"
    for missing in (None, math.nan):
        assert verdict(Claim("c", 0.5, missing, "close", 0.05)) == "not measured"
    assert set(_VERDICTS) == {"faithful", "partial", "contradicts", "not measured"}


def test_a_reversed_finding_is_reported_as_contradicts():
    # the paper: DSSGD beats local training by 0.05; a run where it loses by 0.1 must not pass
    t = claims_table([Claim("C − D", 0.05, -0.10, "same_sign", 0.01)])
    assert t.verdict.tolist() == ["contradicts"]
    # an unbounded privacy loss against a finite ε·d bound
    assert verdict(Claim("ε·d-private", 1.0, math.inf, "at_most", 1e-6)) == "contradicts"


def test_interval_that_reaches_the_claim_downgrades_contradicts_to_partial():
    assert verdict(Claim("c", 0.5, 0.8, "close", 0.05)) == "contradicts"
    assert verdict(Claim("c", 0.5, 0.8, "close", 0.05, interval=(0.52, 0.9))) == "partial"
    assert verdict(Claim("c", 0.8, 0.6, "at_least", 0.05, interval=(0.5, 0.85))) == "partial"
    # an opposite-sign estimate is partial only while its interval still reaches the paper's effect
    assert verdict(Claim("A − B", 0.05, -0.03, "same_sign", 0.01, interval=(-0.05, 0.06))) == "partial"
    assert verdict(Claim("A − B", 0.05, -0.03, "same_sign", 0.01, interval=(-0.05, 0.04))) == "contradicts"


def test_exact_value_meeting_its_bound_up_to_rounding_is_faithful():
    assert verdict(Claim("ε·d", 0.5, 0.5000000000000142, "at_most")) == "faithful"


def test_claims_table_columns_reference_name_and_counts():
    t = claims_table([Claim("a", 1.0, 1.0, "close", 0.1), Claim("b", 1.0, None, "close", 0.1, paper_text="≈ 1")],
                     reference="accountant ε")
    assert list(t.columns) == ["claim", "accountant ε", "ours", "interval", "rule", "verdict"]
    assert t["accountant ε"].tolist() == ["1", "≈ 1"] and t.ours.tolist()[1] == "–"
    assert verdict_counts(t) == "1 faithful, 1 not measured"


def _random_claims(seed: int, n: int = 4000):
    """A seeded grid of claimed effects (hypothesis is not a dependency): for every rule, a paper
    effect of random sign and size beyond its tolerance, a random tolerance, a random no-effect
    value (``same_sign``: 0) and a random interval with the point estimate inside it."""
    import numpy as np

    g = np.random.default_rng(seed)
    for _ in range(n):
        rule = str(g.choice(["close", "at_least", "at_most", "same_sign"]))
        null = 0.0 if rule == "same_sign" else float(g.choice([0.0, g.normal(0, 5)]))
        tol = float(g.choice([0.0, g.exponential(1.0)]))
        side = float(g.choice([-1.0, 1.0]))
        paper = null + side * (tol + float(g.exponential(3.0)) + 1e-3)
        a, b = np.sort(g.normal(null, 4.0, size=2))
        yield rule, null, tol, paper, float(a), float(b), g


def test_an_interval_containing_the_no_effect_value_is_never_faithful():
    seen = 0
    for rule, null, tol, paper, a, b, g in _random_claims(seed=0):
        lo, hi = min(a, null), max(b, null)  # widened to contain the null
        ours = float(g.uniform(lo, hi))
        sign_only = bool(g.integers(2))
        v = verdict(Claim("effect", paper, ours, rule, tol, (lo, hi), null=null, sign_only=sign_only))
        assert v != "faithful", (rule, null, tol, paper, ours, lo, hi, sign_only)
        seen += 1
    assert seen == 4000


def test_an_interval_of_the_opposite_sign_excluding_the_no_effect_value_always_contradicts():
    for rule, null, tol, paper, a, b, g in _random_claims(seed=1):
        side = 1.0 if paper > null else -1.0
        w = abs(b - a)  # an interval strictly on the other side of the null, of any width
        near = null - side * float(g.uniform(1e-6, 3.0))
        lo, hi = (near - w, near) if side > 0 else (near, near + w)
        ours = float(g.uniform(lo, hi))
        sign_only = bool(g.integers(2))
        v = verdict(Claim("effect", paper, ours, rule, tol, (lo, hi), null=null, sign_only=sign_only))
        assert v == "contradicts", (rule, null, tol, paper, ours, lo, hi, sign_only)


def test_an_interval_on_the_papers_side_of_no_effect_can_still_be_faithful():
    # the two properties above are not met by a rule that never says faithful
    assert verdict(Claim("A − B", 0.5, 0.6, "same_sign", 0.1, (0.3, 0.9))) == "faithful"
    assert verdict(Claim("A − B", 0.5, 0.55, "close", 0.1, (0.3, 0.8), null=0.0)) == "faithful"


def test_opposite_sign_interval_contradicts_where_the_tolerance_alone_said_partial():
    # an effect of −0.3 inside the ±0.5 band used to read "no clear difference" (partial); its
    # interval excludes the thesis' +1 and zero, so the thesis' effect is contradicted
    assert verdict(Claim("dropout", 1.0, -0.3, "same_sign", 0.5)) == "partial"  # no interval: no spread
    assert verdict(Claim("dropout", 1.0, -0.3, "same_sign", 0.5, (-0.45, -0.15))) == "contradicts"
    # the thesis' dropout and δ_p rows: estimate below zero, interval spanning zero but excluding
    # the thesis' effect (+1.0, +0.4)
    assert verdict(Claim("dropout 0.25", 1.0, -0.19, "same_sign", 0.5, (-1.15, 0.767))) == "contradicts"
    assert verdict(Claim("δ_p 10 vs 1", 0.4, -0.24, "same_sign", 0.2, (-0.763, 0.274))) == "contradicts"
    # a claim of the sign only ("> 0", stand-in 1.0): an interval spanning zero stays partial
    assert verdict(Claim("> 0", 1.0, -0.2, "same_sign", 0.01, (-0.5, 0.3), sign_only=True)) == "partial"
    assert verdict(Claim("> 0", 1.0, -0.2, "same_sign", 0.01, (-0.5, -0.1), sign_only=True)) == "contradicts"
    # an interval reaching the paper's effect is not a contradiction yet
    assert verdict(Claim("δ_p", 0.4, -0.1, "same_sign", 0.2, (-0.6, 0.45))) == "partial"


def test_a_close_claim_of_a_tie_may_span_its_no_effect_value():
    # "CRF and softmax tie" (paper 0.1 within tol 1 of 0): spanning 0 is the claim itself
    assert verdict(Claim("tie", 0.1, 0.2, "close", 1.0, (-0.5, 0.9), null=0.0)) == "faithful"
    # an effect claimed beyond the tolerance, read as a difference with null 0, is not faithful
    # while its interval spans 0
    assert verdict(Claim("gain", 3.0, 2.5, "close", 1.0, (-0.5, 5.5), null=0.0)) == "partial"
    assert "no effect = 0" in claims_table([Claim("gain", 3.0, 2.5, "close", 1.0, null=0.0)]).rule[0]


def test_claim_rejects_a_reversed_interval():
    with pytest.raises(ValueError, match="interval"):
        Claim("c", 1.0, 1.0, "close", 0.1, (2.0, 1.0))


def test_a_profile_too_small_to_measure_prints_not_measured_never_a_verdict():
    # festag under the smoke profile: every F1 at 0.0, so every gap is 0 and a "close" row would
    # read faithful
    t = claims_table([Claim("A − B", 0.001, 0.0, "close", 0.02), Claim("C − D", 0.05, 0.0, "same_sign", 0.01)])
    assert "faithful" in set(t.verdict)
    assert "smoke" in _UNMEASURED_PROFILES
    shown = claims_for_profile(t, "smoke")
    assert shown.verdict.tolist() == ["not measured", "not measured"]
    assert shown.ours.tolist() == t.ours.tolist()  # the numbers stay, unjudged
    assert claims_for_profile(t, "cpu").verdict.tolist() == t.verdict.tolist()


def test_claim_rejects_unknown_rule_and_negative_tolerance():
    with pytest.raises(ValueError, match="unknown rule"):
        Claim("c", 1.0, 1.0, "roughly")
    with pytest.raises(ValueError, match="tol"):
        Claim("c", 1.0, 1.0, "close", -0.1)


def test_run_folder_defaults_to_the_checkouts_runs_of_the_profile_from_any_working_folder(tmp_path, monkeypatch):
    from pathlib import Path

    import deidlib
    from deidlib.reporting import run_folder

    checkout = Path(deidlib.__file__).resolve().parent.parent
    monkeypatch.chdir(tmp_path)
    name = "zz_run_folder_test"
    try:
        out = run_folder(None, "smoke", name)
        assert out == checkout / "runs" / "smoke" / name and out.is_dir()
    finally:
        (checkout / "runs" / "smoke" / name).rmdir()
    given = run_folder("elsewhere/x", "cpu", name)  # an explicit folder wins, relative to the working folder
    assert given.resolve() == tmp_path / "elsewhere" / "x" and given.is_dir()
