"""System (and gold) files whose tags overlap are scored as the official
i2b2 2014 script scores them, by comparing sets of tag keys; ``--strict-spans`` refuses them."""

from __future__ import annotations

import json

from deidlib.cli import main
from deidlib.corpus import Document, Span
from deidlib.corpus.i2b2 import write_i2b2_dir
from deidlib.evaluation import evaluate_dirs

T = "Seen by Dr. Brown on 12/02/2020."


def _write(tmp_path):
    gold = Document("001-01", T, [Span.of(T, 12, 17, "DOCTOR"), Span.of(T, 21, 31, "DATE")])
    # "Dr. Brown" and "Brown" overlap (both DOCTOR); the date is also tagged twice, once as an AGE
    system = gold.with_spans([Span.of(T, 8, 17, "DOCTOR"), Span.of(T, 12, 17, "DOCTOR"),
                              Span.of(T, 21, 31, "DATE"), Span.of(T, 21, 23, "AGE")])
    write_i2b2_dir([gold], tmp_path / "gold")
    write_i2b2_dir([system], tmp_path / "sys")


def test_overlapping_system_tags_are_scored_as_sets_of_keys(tmp_path):
    _write(tmp_path)
    rep = evaluate_dirs(tmp_path / "gold", tmp_path / "sys")
    s = rep.scores
    # strict keys: system {Dr. Brown, Brown, date, AGE 12}; gold {Brown, date}
    assert (s["strict"].tp, s["strict"].fp, s["strict"].fn) == (2, 2, 0)
    # typed tokens: system {Dr, Brown (twice: one key), 12, 02, 2020 as DATE, 12 as AGE}; gold {Brown, 12, 02, 2020}
    assert (s["token"].tp, s["token"].fp, s["token"].fn) == (4, 2, 0)
    # binary tokens: the AGE "12" and the DATE "12" are one key (offsets only)
    assert (s["binary_token"].tp, s["binary_token"].fp, s["binary_token"].fn) == (4, 1, 0)
    assert (s["binary_strict"].tp, s["binary_strict"].fp, s["binary_strict"].fn) == (2, 2, 0)


def test_evaluate_command_scores_overlaps_and_strict_spans_refuses_them(tmp_path, capsys):
    _write(tmp_path)
    assert main(["evaluate", str(tmp_path / "gold"), str(tmp_path / "sys"), "--json", str(tmp_path / "r.json")]) == 0
    assert json.loads((tmp_path / "r.json").read_text())["scores"]["token"]["fp"] == 2
    capsys.readouterr()
    assert main(["evaluate", str(tmp_path / "gold"), str(tmp_path / "sys"), "--strict-spans"]) == 1
    err = capsys.readouterr().err.strip()
    assert "001-01.xml" in err and "overlaps" in err and "\n" not in err
