"""No command destroys its input; bad input is a one-line error."""

from __future__ import annotations

import json
import os

import pytest

from deidlib.cli import main
from deidlib.corpus import Document, Span
from deidlib.corpus.i2b2 import read_i2b2_dir, write_i2b2_dir

T = "Seen by Dr. Brown on 12/02/2020 in Boston."


def _doc(i: int) -> Document:
    return Document(f"00{i}-01", T, [Span.of(T, 12, 17, "DOCTOR"), Span.of(T, 21, 31, "DATE")])


#: keeps a run short where a command that failed to refuse would train
TINY = ["--epochs", "1", "--embeddings", "none", "--scheme", "binary", "--set", "word_dim=8", "--set", "hidden=8",
        "--set", "char_hidden=4", "--set", "char_emb_dim=4", "--set", "ff_dim=8"]


@pytest.fixture
def gold(tmp_path):
    d = tmp_path / "gold"
    write_i2b2_dir([_doc(1), _doc(2)], d)
    return d


def _snapshot(d):
    return {p.name: p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err and "\n" not in err and "Traceback" not in err, err
    return err


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    """An untrained tagger saved as 'deidlib train' saves one (quick: no training needed
    to check what predict does with its files)."""
    from deidlib.training import prepare_tagger, save_tagger

    out = tmp_path_factory.mktemp("run")
    docs = [_doc(i) for i in range(1, 4)]
    _, tagger = prepare_tagger("gru", docs, scheme="binary", embeddings=None, word_dim=8, hidden=8,
                               char_hidden=4, char_emb_dim=4, ff_dim=8)
    save_tagger(tagger, out / "model")
    return out


# ---- outputs never overwrite inputs -------------------------------------------------

def test_predict_in_dir_as_out_dir_is_refused_and_gold_tags_survive(model_dir, gold, capsys):
    before = _snapshot(gold)
    assert main(["predict", str(model_dir), str(gold), str(gold)]) == 2
    assert "OUT_DIR" in _one_line_error(capsys)
    assert main(["predict", str(model_dir), str(gold), str(gold / "sub")]) == 2
    assert main(["predict", str(model_dir), os.path.join(str(gold.parent), ".", "gold"), str(gold)]) == 2  # spelled otherwise
    capsys.readouterr()
    assert _snapshot(gold) == before
    assert all(d.spans for d in read_i2b2_dir(gold))


def test_predict_refuses_non_empty_out_dir_without_force(model_dir, gold, tmp_path, capsys):
    out = tmp_path / "pred"
    out.mkdir()
    (out / "notes.md").write_text("mine")
    assert main(["predict", str(model_dir), str(gold), str(out)]) == 2
    err = _one_line_error(capsys)
    assert "not empty" in err and "--force" in err
    assert sorted(p.name for p in out.iterdir()) == ["notes.md"]
    assert main(["predict", str(model_dir), str(gold), str(out), "--force"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["001-01.xml", "002-01.xml", "notes.md"]


def test_evaluate_json_onto_an_input_file_is_refused(gold, tmp_path, capsys):
    target = gold / "001-01.xml"
    before = target.read_bytes()
    assert main(["evaluate", str(gold), str(gold), "--json", str(target)]) == 2
    assert "--json" in _one_line_error(capsys)
    assert target.read_bytes() == before


def test_surrogate_audit_onto_an_input_file_is_refused(gold, tmp_path, capsys):
    target = gold / "001-01.xml"
    before = target.read_bytes()
    assert main(["surrogate", str(gold), str(tmp_path / "out"), "--audit", str(target)]) == 2
    assert "--audit" in _one_line_error(capsys)
    assert target.read_bytes() == before and not (tmp_path / "out").exists()


def test_surrogate_out_dir_inside_in_dir_is_refused(gold, capsys):
    before = _snapshot(gold)
    assert main(["surrogate", str(gold), str(gold / "sub")]) == 2
    assert "lies inside" in _one_line_error(capsys)
    assert not (gold / "sub").exists() and _snapshot(gold) == before


def test_check_output_sees_through_symlinks_and_dotdot(tmp_path):
    from deidlib.commands._safety import UsageError, check_output

    (tmp_path / "in").mkdir()
    os.symlink(tmp_path / "in", tmp_path / "link")
    with pytest.raises(UsageError, match="is the input"):
        check_output(tmp_path / "link", [tmp_path / "in"], what="OUT_DIR")
    with pytest.raises(UsageError, match="contains"):
        check_output(tmp_path, [tmp_path / "in"], what="OUT_DIR", force=True)
    with pytest.raises(UsageError, match="lies inside"):
        check_output(tmp_path / "x" / ".." / "in" / "o", [tmp_path / "in"], what="OUT_DIR")
    assert check_output(tmp_path / "o", [tmp_path / "in"], what="OUT_DIR") == (tmp_path / "o").resolve()


def test_staged_dir_leaves_no_partial_output_on_failure(tmp_path):
    from deidlib.commands._safety import staged_dir

    out = tmp_path / "o"
    with pytest.raises(RuntimeError), staged_dir(out) as tmp:
        (tmp / "a.xml").write_text("half")
        raise RuntimeError("boom")
    assert not out.exists() and list(tmp_path.iterdir()) == []
    with staged_dir(out) as tmp:
        (tmp / "a.xml").write_text("whole")
    assert (out / "a.xml").read_text() == "whole" and [p.name for p in tmp_path.iterdir()] == ["o"]


# ---- one-line errors ------------------------------------------------------------------

def test_evaluate_negative_bootstrap_is_a_one_line_error(gold, capsys):
    assert main(["evaluate", str(gold), str(gold), "--bootstrap", "-5"]) == 2
    assert "--bootstrap" in capsys.readouterr().err


def test_evaluate_empty_gold_folder_is_a_clear_error_not_a_warning(gold, tmp_path, capsys, recwarn):
    (tmp_path / "empty").mkdir()
    assert main(["evaluate", str(tmp_path / "empty"), str(gold)]) == 1
    assert "no *.xml" in _one_line_error(capsys)
    assert not [w for w in recwarn if issubclass(w.category, UserWarning)]


def test_predict_out_dir_that_is_a_file_is_a_one_line_error(model_dir, gold, tmp_path, capsys):
    f = tmp_path / "file.txt"
    f.write_text("keep")
    assert main(["predict", str(model_dir), str(gold), str(f)]) == 2
    assert "existing file" in _one_line_error(capsys)
    assert f.read_text() == "keep"


def test_predict_cuda_without_cuda_is_a_one_line_error(model_dir, gold, tmp_path, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    assert main(["predict", str(model_dir), str(gold), str(tmp_path / "o"), "--device", "cuda"]) == 2
    assert "CUDA" in _one_line_error(capsys)
    assert not (tmp_path / "o").exists()


def test_predict_reads_txt_and_xml_files_side_by_side(model_dir, gold, tmp_path, capsys):
    (gold / "003-01.txt").write_text("Plain note of Dr. Smith.")
    assert main(["predict", str(model_dir), str(gold), str(tmp_path / "o")]) == 0
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["001-01.xml", "002-01.xml", "003-01.xml"]
    (gold / "001-01.txt").write_text("collides with 001-01.xml")
    assert main(["predict", str(model_dir), str(gold), str(tmp_path / "o2")]) == 1
    assert "001-01" in _one_line_error(capsys)


@pytest.mark.parametrize("opt,value", [("--batch-size", "0"), ("--lr", "-1"), ("--lr", "nan")])
def test_train_bad_numbers_are_one_line_errors(tmp_path, capsys, opt, value):
    assert main(["train", str(tmp_path / "o"), opt, value, *TINY]) == 2
    assert opt in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_train_data_dir_with_synthetic_corpus_is_refused(tmp_path, capsys):
    assert main(["train", str(tmp_path / "o"), "--data-dir", str(tmp_path), *TINY]) == 2
    assert "--data-dir" in _one_line_error(capsys)


def test_train_resume_without_checkpoint_is_refused(tmp_path, capsys):
    assert main(["train", str(tmp_path / "o"), "--resume", *TINY]) == 1
    assert "--resume" in _one_line_error(capsys)


def test_train_names_the_real_corpus_folder_it_found(tmp_path, monkeypatch, capsys):
    from deidlib.corpus.locate import PHYSIONET_DEID

    (tmp_path / PHYSIONET_DEID).mkdir()  # found, but empty: loading fails after the folder is named
    monkeypatch.setenv("DEIDLIB_DATA_DIR", str(tmp_path))
    main(["train", str(tmp_path / "o"), "--corpus", "physionet", *TINY])
    assert f"corpus physionet from {(tmp_path / PHYSIONET_DEID).resolve()}" in capsys.readouterr().out


def test_synth_zero_patients_is_an_error(tmp_path, capsys):
    assert main(["synth", str(tmp_path / "o"), "--patients", "0"]) == 2
    assert "--patients" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_synth_force_replaces_the_old_corpus_and_nothing_else(tmp_path, capsys):
    out = tmp_path / "c"
    assert main(["synth", str(out), "--patients", "8", "--sites", "4", "--seed", "1"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["metadata.tsv", "site0", "site1", "site2", "site3"]
    assert main(["synth", str(out), "--patients", "6", "--sites", "2", "--seed", "2", "--force"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["metadata.tsv", "site0", "site1"]
    rows = (out / "metadata.tsv").read_text().splitlines()[1:]
    assert sorted(r.split("\t")[0] + ".xml" for r in rows) == sorted(p.name for p in out.glob("site*/*.xml"))
    # a file synth did not write: --force refuses instead of deleting it
    (out / "my_notes.txt").write_text("keep")
    capsys.readouterr()
    assert main(["synth", str(out), "--patients", "3", "--force"]) == 2
    assert "my_notes.txt" in _one_line_error(capsys)
    assert (out / "my_notes.txt").read_text() == "keep" and (out / "site1").is_dir()


def test_reproduce_threads_zero_is_refused(capsys):
    assert main(["reproduce", "--threads", "0", "--only", "corpus"]) == 2
    assert "--threads" in capsys.readouterr().err


def test_reproduce_resolves_data_dir_against_the_callers_cwd(tmp_path, monkeypatch):
    from deidlib import notebooks

    seen = {}

    def fake_run(entry, **kw):
        seen.update(kw)
        return tmp_path

    monkeypatch.setattr(notebooks, "run_notebook", fake_run)
    (tmp_path / "data").mkdir()
    monkeypatch.chdir(tmp_path)
    notebooks.reproduce("smoke", only=["corpus"], corpus="physionet", data_dir="data", copy_figures=False,
                        runs_dir=tmp_path / "runs")
    assert seen["data_dir"] == str((tmp_path / "data").resolve())


def test_a_failing_notebook_is_reported_in_a_few_lines_and_not_passed_off_as_complete(tmp_path, monkeypatch):
    import nbformat

    from deidlib import notebooks

    nbs = tmp_path / "nbs"
    nbs.mkdir()
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("out_dir = None")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell("# divide\n1 / 0")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, nbs / "bad.ipynb")
    monkeypatch.setattr(notebooks, "notebooks_dir", lambda: nbs)
    out = tmp_path / "run"
    out.mkdir()
    (out / "bad.ipynb").write_text("{}")  # a complete notebook of an earlier run
    entry = notebooks.NotebookEntry(name="bad", study="x")
    with pytest.raises(notebooks.NotebookRunError) as ei:
        notebooks.run_notebook(entry, profile="smoke", out_dir=out)
    msg = str(ei.value)
    assert len(msg.splitlines()) <= 4, msg
    assert "bad" in msg.splitlines()[0] and "ZeroDivisionError" in msg.splitlines()[0] and "1 / 0" in msg
    assert str(out / "bad.failed.ipynb") in msg
    assert (out / "bad.failed.ipynb").is_file() and not (out / "bad.ipynb").exists()
    cells = json.loads((out / "bad.failed.ipynb").read_text())["cells"]
    assert any(o.get("ename") == "ZeroDivisionError" for c in cells for o in c.get("outputs", []))
