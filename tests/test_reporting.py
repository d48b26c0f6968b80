"""deidlib.reporting: the tables, HTML and Result records every notebook writes."""

from __future__ import annotations

import json
import math

import pandas as pd

from deidlib.corpus.document import Document, Span
from deidlib.reporting import annotated_html, json_ready, to_markdown, write_json, write_result, write_table
from deidlib.results import load_result


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
    r = load_result(path)
    assert path.name == "ahmed_dp_result.json" and r.privacy_ledger == ledger and r.seeds == [0]
    assert r.params == {"noises": [0.5, 1.0]} and r.metrics["curve"][0] == {"index": 0, "epsilon": "inf", "f1": 0.9}
    assert load_result(write_result(tmp_path, "festag", "y", params={}, metrics={}, seeds=[1])).privacy_ledger is None
    write_json({"a": curve}, tmp_path / "r.json")
    assert json.loads((tmp_path / "r.json").read_text()) == json_ready({"a": curve})


def test_annotated_html_escapes_text_and_labels_spans():
    doc = Document(id="d", text="Seen <b> by Dr. Smith & co", spans=[Span(16, 21, "NAME", "DOCTOR", "Smith")])
    out = annotated_html(doc)
    assert "&lt;b&gt;" in out and "&amp; co" in out and "<b>" not in out
    assert '<mark title="NAME/DOCTOR"' in out and ">Smith<sub" in out and "DOCTOR</sub></mark>" in out
    assert "Smith" not in annotated_html(doc, max_chars=10)
