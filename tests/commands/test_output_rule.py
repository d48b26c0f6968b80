"""Every path a command writes obeys one rule (``deidlib.commands._safety.check_output``): it
is never, contains or lies inside an input, and it is checked writable before any work; a
user-supplied model or checkpoint is read without running code, and a broken one is one line;
numeric options refuse meaningless values, naming the option."""

from __future__ import annotations

import builtins
import json
import os

import pytest
import torch

from deidlib.cli import main
from deidlib.corpus import Document, Span
from deidlib.corpus.i2b2 import write_i2b2_dir

T = "Seen by Dr. Brown on 12/02/2020 in Boston."
TINY = ["--epochs", "1", "--embeddings", "none", "--scheme", "binary", "--set", "word_dim=8", "--set", "hidden=8",
        "--set", "char_hidden=4", "--set", "char_emb_dim=4", "--set", "ff_dim=8"]


def _doc(i: int) -> Document:
    return Document(f"00{i}-01", T, [Span.of(T, 12, 17, "DOCTOR"), Span.of(T, 21, 31, "DATE")])


def _snapshot(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err and "\n" not in err and "Traceback" not in err, err
    return err


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """An untrained tagger saved as 'deidlib train' saves one, and an ensemble of it."""
    from deidlib.training import prepare_tagger, save_ensemble, save_tagger

    root = tmp_path_factory.mktemp("saved")
    _, tagger = prepare_tagger("gru", [_doc(i) for i in range(1, 4)], scheme="binary", embeddings=None, word_dim=8,
                               hidden=8, char_hidden=4, char_emb_dim=4, ff_dim=8)
    save_tagger(tagger, root / "run" / "model")
    save_ensemble(root / "ens", [root / "run" / "model"])
    return root


@pytest.fixture
def world(tmp_path, saved):
    """Inputs of every kind under one folder: IN (i2b2 XML and .txt notes), gold, models."""
    import shutil

    w = tmp_path / "w"
    shutil.copytree(saved, w)
    write_i2b2_dir([_doc(1), _doc(2)], w / "gold")
    (w / "notes").mkdir()
    for i in (1, 2):
        (w / "notes" / f"00{i}-01.txt").write_text(T)
    (w / "vecs").mkdir()
    (w / "vecs" / "v.txt").write_text("brown 0.1 0.2\n")
    return w


# ---- one rule: commands x input kinds --------------------------------------------------------------

#: (command line with {w} for the inputs' folder, the input the output would overwrite)
CASES = {
    "predict OUT_DIR in IN_DIR": "predict {w}/run {w}/gold {w}/gold/o",
    "predict OUT_DIR is IN_DIR": "predict {w}/run {w}/gold {w}/gold --force",
    "predict OUT_DIR in MODEL_DIR": "predict {w}/run {w}/gold {w}/run/model/o",
    "predict OUT_DIR in an ensemble member": "predict {w}/ens {w}/gold {w}/run/model/o",
    "ensemble OUT_DIR in a member": "ensemble {w}/run/model/o {w}/run",
    "ensemble OUT_DIR contains a member": "ensemble {w} {w}/run --force",
    "ensemble OUT_DIR in --data-dir": "ensemble {w}/gold/o {w}/run --corpus i2b2 --data-dir {w}/gold",
    "train OUT_DIR in --data-dir": "train {w}/gold/o --corpus i2b2 --data-dir {w}/gold",
    "train OUT_DIR contains --embeddings": "train {w}/vecs --embeddings {w}/vecs/v.txt --force",
    "train OUT_DIR contains --dp-vocab": "train {w}/vecs --dp-noise 1 --dp-vocab {w}/vecs/v.txt --force",
    "evaluate --json onto GOLD_DIR": "evaluate {w}/gold {w}/notes --json {w}/gold/001-01.xml",
    "evaluate --json into SYSTEM_DIR": "evaluate {w}/gold {w}/notes --json {w}/notes/r.json",
    "surrogate OUT_DIR in IN_DIR": "surrogate {w}/gold {w}/gold/o",
    "surrogate --audit onto IN_DIR": "surrogate {w}/gold {w}/o --audit {w}/gold/001-01.xml",
    "surrogate --audit in OUT_DIR": "surrogate {w}/gold {w}/o --audit {w}/o/a.jsonl",
    "deidentify OUT in IN": "deidentify {w}/notes {w}/notes/o --model {w}/run",
    "deidentify OUT in --model": "deidentify {w}/notes {w}/run/model/o --model {w}/run",
    "deidentify OUT in --gold": "deidentify {w}/notes {w}/gold/o --model {w}/run --gold {w}/gold",
    "deidentify --audit onto --model weights": "deidentify {w}/notes {w}/o --model {w}/run --audit {w}/run/model/weights.pt",
    "deidentify --audit onto a --gold file": "deidentify {w}/notes {w}/o --model {w}/run --gold {w}/gold "
                                             "--audit {w}/gold/001-01.xml",
    "deidentify --audit onto IN": "deidentify {w}/notes {w}/o --model {w}/run --audit {w}/notes/001-01.txt",
    "deidentify --audit in OUT": "deidentify {w}/notes {w}/o --model {w}/run --audit {w}/o/a.jsonl",
    "reproduce --runs-dir in --data-dir": "reproduce --corpus physionet --data-dir {w}/gold --runs-dir {w}/gold/r "
                                          "--only corpus",
}


@pytest.mark.parametrize("case", list(CASES))
def test_no_output_is_contains_or_lies_inside_an_input(case, world, capsys):
    before = _snapshot(world)
    argv = CASES[case].format(w=world).split()
    assert main(argv) == 2
    err = _one_line_error(capsys)
    assert "must lie outside" in err, err
    assert _snapshot(world) == before
    assert not list(world.rglob("*.partial")) and not (world / "o").exists()


# ---- writable before any work ----------------------------------------------------------------------

def _refuse_work(*a, **k):
    raise AssertionError("the command started its work before checking that its output is writable")


#: (command line, {o} = the unwritable output; the functions the work would call first)
UNWRITABLE = {
    "synth": ("synth {o} --patients 2", ["deidlib.synthetic.generate_iter"]),
    "train": ("train {o} " + " ".join(TINY), ["deidlib.datasets.load_corpus", "deidlib.training.fit_tagger"]),
    "predict": ("predict {w}/run {w}/gold {o}", ["deidlib.training.load_tagger", "deidlib.training.write_predictions"]),
    "ensemble": ("ensemble {o} {w}/run", ["deidlib.training.load_tagger", "deidlib.datasets.load_corpus"]),
    "evaluate": ("evaluate {w}/gold {w}/gold --json {o}", ["deidlib.evaluation.evaluate_dirs"]),
    "surrogate": ("surrogate {w}/gold {o}", ["deidlib.corpus.i2b2.read_i2b2_dir"]),
    "surrogate --audit": ("surrogate {w}/gold {w}/o --audit {o}", ["deidlib.corpus.i2b2.read_i2b2_dir"]),
    "deidentify": ("deidentify {w}/notes {o} --model {w}/run", ["deidlib.commands.deidentify.read_input"]),
    "deidentify --audit": ("deidentify {w}/notes {w}/o --model {w}/run --audit {o}",
                           ["deidlib.commands.deidentify.read_input"]),
    "reproduce --runs-dir": ("reproduce --runs-dir {o} --only corpus", ["deidlib.notebooks.reproduce"]),
}


@pytest.mark.parametrize("command", list(UNWRITABLE))
@pytest.mark.parametrize("where", ["under a file", "/proc"])
def test_an_unwritable_output_fails_fast_in_one_line(command, where, world, monkeypatch, capsys):
    import importlib

    line, work = UNWRITABLE[command]
    for target in work:
        mod, _, name = target.rpartition(".")
        monkeypatch.setattr(importlib.import_module(mod), name, _refuse_work)
    (world / "plain.txt").write_text("a file, not a folder")
    o = world / "plain.txt" / "out" if where == "under a file" else "/proc/deidlib-out"
    before = _snapshot(world)
    assert main(line.format(w=world, o=o).split()) == 2
    err = _one_line_error(capsys)
    assert "cannot write" in err, err
    assert _snapshot(world) == before and not (world / "o").exists()


# ---- no partial output; --force never follows a symlink --------------------------------------------

def test_force_replaces_a_symlinked_subfolder_without_writing_through_it(world, tmp_path, capsys):
    src = tmp_path / "in"
    for site in ("site0", "site1"):
        (src / site).mkdir(parents=True)
        (src / site / f"{site}-note.txt").write_text(T)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("not deidentify's")
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(elsewhere, out / "site0")
    # --keep-file-names: OUT gets IN's site folders, so site0/ is written where the symlink was
    assert main(["deidentify", str(src), str(out), "--model", str(world / "run"), "--force", "--no-progress",
                 "--keep-file-names"]) == 0
    capsys.readouterr()
    assert sorted(p.name for p in elsewhere.iterdir()) == ["keep.txt"]
    assert not (out / "site0").is_symlink() and (out / "site0").is_dir() and (out / "site1").is_dir()
    assert not list(tmp_path.glob(".out.*"))


def test_force_publish_that_fails_midway_puts_the_old_output_back(tmp_path, monkeypatch):
    from deidlib.commands import _safety

    out = tmp_path / "o"
    out.mkdir()
    (out / "a.xml").write_text("old a")
    (out / "b.xml").write_text("old b")
    real = os.replace
    calls = {"n": 0}

    def flaky(a, b):
        calls["n"] += 1
        if calls["n"] == 3:  # a aside, a in, then b aside fails
            raise OSError(28, "No space left on device")
        return real(a, b)

    with pytest.raises(OSError):
        with _safety.staged_dir(out) as tmp:
            (tmp / "a.xml").write_text("new a")
            (tmp / "b.xml").write_text("new b")
            monkeypatch.setattr(_safety.os, "replace", flaky)
    monkeypatch.setattr(_safety.os, "replace", real)
    assert {p.name: p.read_text() for p in out.iterdir()} == {"a.xml": "old a", "b.xml": "old b"}
    assert [p.name for p in tmp_path.iterdir()] == ["o"]


# ---- models: no code runs, a broken one is one line ------------------------------------------------

class _Crafted:
    """Unpickling this creates the file ``path``: what a malicious checkpoint would do."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (builtins.open, (self.path, "w"))


def _break(model_dir, how: str, marker) -> None:
    w, cfg = model_dir / "weights.pt", model_dir / "config.json"
    if how == "crafted pickle":
        torch.save({"out.weight": _Crafted(marker)}, w)
    elif how == "random bytes":
        w.write_bytes(os.urandom(512))
    elif how == "truncated zip":
        w.write_bytes(w.read_bytes()[:300])
    elif how == "bad JSON":
        cfg.write_text("{not json")
    elif how == "shape mismatch":
        c = json.loads(cfg.read_text())
        c["tagger"]["hparams"]["hidden"] = 12
        cfg.write_text(json.dumps(c))
    elif how == "bad scores.json":
        (model_dir.parent / "scores.json").write_text("[1, 2")


BREAKS = ["crafted pickle", "random bytes", "truncated zip", "bad JSON", "shape mismatch"]
COMMANDS = {
    "predict": "predict {m} {w}/gold {w}/o",
    "ensemble": "ensemble {w}/o {m}",
    "deidentify": "deidentify {w}/notes {w}/o --model {m} --no-progress",
    "predict an ensemble": "predict {w}/ens {w}/gold {w}/o",
}


@pytest.mark.parametrize("how", BREAKS)
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_broken_or_crafted_model_is_one_line_and_runs_no_code(command, how, world, tmp_path, capsys):
    marker = tmp_path / "pwned"
    _break(world / "run" / "model", how, marker)
    assert main(COMMANDS[command].format(w=world, m=world / "run").split()) == 2
    err = _one_line_error(capsys)
    assert "cannot load" in err and str(world) in err, err
    assert not marker.exists()
    assert not (world / "o").exists()


def test_ensemble_with_a_bad_scores_json_is_one_line(world, tmp_path, capsys):
    _break(world / "run" / "model", "bad scores.json", None)
    assert main(["ensemble", str(world / "o"), str(world / "run")]) == 2
    assert "cannot load" in _one_line_error(capsys)


def _checkpoint(world) -> str:
    ckpt = world / "t" / "checkpoints"
    ckpt.mkdir(parents=True)
    return ckpt / "last.pt"


@pytest.mark.parametrize("how", ["crafted pickle", "random bytes", "not a checkpoint"])
def test_train_resume_refuses_a_broken_or_crafted_checkpoint_before_any_work(how, world, tmp_path, monkeypatch,
                                                                              capsys):
    import deidlib.datasets

    monkeypatch.setattr(deidlib.datasets, "load_corpus", _refuse_work)
    marker = tmp_path / "pwned"
    last = _checkpoint(world)
    if how == "crafted pickle":
        torch.save({"model": _Crafted(marker)}, last)
    elif how == "random bytes":
        last.write_bytes(os.urandom(256))
    else:
        torch.save({"model": {}}, last)
    assert main(["train", str(world / "t"), "--resume", *TINY]) == 2
    err = _one_line_error(capsys)
    assert "cannot load" in err and "last.pt" in err, err
    assert not marker.exists()


def test_train_resume_with_a_checkpoint_of_another_tagger_is_one_line(world, capsys):
    from deidlib.training.trainer import CHECKPOINT_KEYS

    last = _checkpoint(world)
    state = {k: 0 for k in CHECKPOINT_KEYS}
    state.update(model={"bogus": torch.zeros(2)}, optimizer={}, history={}, rng=torch.get_rng_state())
    torch.save(state, last)
    assert main(["train", str(world / "t"), "--resume", *TINY]) == 2
    err = _one_line_error(capsys)
    assert "cannot load" in err and "does not fit" in err, err
    assert sorted(p.name for p in (world / "t").iterdir()) == ["checkpoints"]


def _calls(text: str, name: str):
    """The argument text of each call ``name(...)`` in ``text`` (nested parentheses matched)."""
    start = text.find(name + "(")
    while start >= 0:
        i = start + len(name)
        depth = 0
        for j in range(i, len(text)):
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            if depth == 0:
                yield text[i:j + 1]
                break
        start = text.find(name + "(", start + 1)


def test_no_torch_load_in_the_package_unpickles_arbitrary_objects():
    import pathlib

    import deidlib

    root = pathlib.Path(deidlib.__file__).parent
    calls = [(p.name, c) for p in root.rglob("*.py") for c in _calls(p.read_text(), "torch.load")]
    assert len(calls) >= 3
    assert [c for c in calls if "weights_only=True" not in c[1]] == []


# ---- numeric options: a message naming the option --------------------------------------------------

BAD_NUMBERS = [
    ("train {w}/t", "--epochs", "nan"), ("train {w}/t", "--epochs", "inf"), ("train {w}/t", "--epochs", "-1"),
    ("train {w}/t", "--lr-decay", "-1"), ("train {w}/t", "--lr-decay", "nan"), ("train {w}/t", "--seed", "-3"),
    ("train {w}/t", "--split-seed", "-1"), ("train {w}/t", "--clip", "inf"), ("train {w}/t", "--patience", "0"),
    ("surrogate {w}/gold {w}/o", "--epsilon", "inf"), ("surrogate {w}/gold {w}/o", "--seed", "-1"),
    ("deidentify {w}/notes {w}/o", "--seed", "-2"), ("deidentify {w}/notes {w}/o", "--epsilon", "nan"),
    ("evaluate {w}/gold {w}/gold", "--seed", "-1"), ("synth {w}/o", "--seed", "-1"),
    ("ensemble {w}/o {w}/run", "--split-seed", "-1"), ("reproduce --only corpus", "--seed", "-1"),
]


@pytest.mark.parametrize("line,opt,value", BAD_NUMBERS)
def test_meaningless_numbers_are_refused_naming_the_option(line, opt, value, world, capsys):
    assert main([*line.format(w=world).split(), opt, value]) == 2
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and opt in err.splitlines()[-1], err
    assert not (world / "t").exists() and not (world / "o").exists()
