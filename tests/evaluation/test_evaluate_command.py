import json

from deidlib.cli import main
from deidlib.corpus import Document, Span
from deidlib.corpus.i2b2 import write_i2b2_dir

T = "Seen by Dr. Brown on 12/02/2020."


def test_evaluate_command_prints_table_and_json(tmp_path, capsys):
    gold = Document("001-01", T, [Span.of(T, 12, 17, "DOCTOR"), Span.of(T, 21, 31, "DATE")])
    system = gold.with_spans([Span.of(T, 21, 31, "DATE")])
    write_i2b2_dir([gold], tmp_path / "gold")
    write_i2b2_dir([system], tmp_path / "sys")
    rc = main(["evaluate", str(tmp_path / "gold"), str(tmp_path / "sys"), "--json", str(tmp_path / "r.json")])
    assert rc == 0
    out = capsys.readouterr().out
    assert "binary_token" in out and "Strict, per TYPE" in out
    rep = json.loads((tmp_path / "r.json").read_text())
    assert rep["scores"]["strict"]["tp"] == 1 and rep["scores"]["strict"]["fn"] == 1


def test_evaluate_command_errors(tmp_path, capsys):
    (tmp_path / "g").mkdir()
    (tmp_path / "g" / "001-01.xml").write_text("<deIdi2b2><TEXT>")
    (tmp_path / "s").mkdir()
    assert main(["evaluate", str(tmp_path / "g"), str(tmp_path / "s")]) == 1
    assert "001-01.xml" in capsys.readouterr().err
    assert main(["evaluate", str(tmp_path / "g"), str(tmp_path / "s"), "--measure", "nope"]) == 2


def test_evaluate_refuses_a_system_file_of_another_text(tmp_path, capsys):
    # same length, same offsets, another note: scoring it would report F1 1.0 for nothing
    other = T.replace("Brown", "Green")
    gold = Document("001-01", T, [Span.of(T, 12, 17, "DOCTOR")])
    write_i2b2_dir([gold], tmp_path / "gold")
    write_i2b2_dir([Document("001-01", other, [Span.of(other, 12, 17, "DOCTOR")])], tmp_path / "sys")
    assert main(["evaluate", str(tmp_path / "gold"), str(tmp_path / "sys")]) == 1
    err = capsys.readouterr().err
    assert str(tmp_path / "sys" / "001-01.xml") in err and "from character 12 on" in err
    assert "Brown" not in err and "Green" not in err and err.count("\n") == 1
    # --lenient skips the pair with a warning (then nothing is left to score)
    assert main(["evaluate", str(tmp_path / "gold"), str(tmp_path / "sys"), "--lenient"]) == 1
    err = capsys.readouterr().err
    assert "skipped file" in err and "Brown" not in err
