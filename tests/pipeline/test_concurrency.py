"""One ``deidlib deidentify`` run per OUT: two runs never merge into one OUT (a lock beside OUT and
an exclusive publish), ``--force`` replaces OUT whole, SIGTERM stops a run as Ctrl-C does, and what a
killed run left beside OUT and ``--audit`` is removed by the next run, the audit's partial file first."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from deidlib.cli import main
from deidlib.commands._safety import output_lock
from deidlib.corpus import Document, Span
from deidlib.corpus.i2b2 import read_i2b2_dir, write_i2b2_dir

ROOT = Path(__file__).resolve().parents[2]
TEXT = "Pt stable overnight. Plan: follow up in clinic.\n"


def _notes(folder: Path, n: int, start: int = 0) -> Path:
    docs = [Document(f"{k:04d}-01", TEXT, [Span.of(TEXT, 40, 46, "HOSPITAL")], f"{k:04d}") for k in
            range(start, start + n)]
    write_i2b2_dir(docs, folder)
    return folder


def _argv(src, out, *extra):
    return ["deidentify", str(src), str(out), "--spans", "input", "--replace", "mask", "--no-progress", *extra]


def _env():
    return {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX flock")
def test_two_runs_into_one_out_never_merge(tmp_path):
    """Two real processes started together into one OUT: one writes OUT, the other stops with one
    line (whichever comes second: the lock, the non-empty OUT or the exclusive publish refuses it);
    OUT holds every note exactly once."""
    src = _notes(tmp_path / "in", 400)
    out = tmp_path / "out"
    procs = [subprocess.Popen([sys.executable, "-m", "deidlib", *_argv(src, out)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=_env(), cwd=tmp_path) for _ in range(2)]
    results = [(p.wait(timeout=600), p.stderr.read().decode()) for p in procs]
    codes = sorted(rc for rc, _ in results)
    assert codes == [0, 1], results
    loser = next(err for rc, err in results if rc == 1)
    assert "Traceback" not in loser and len(loser.strip().splitlines()) == 1, loser
    assert any(w in loser for w in ("another run is writing it", "is not empty", "appeared")), loser
    assert len(list(out.glob("*.xml"))) == 400
    assert json.loads((out / "deidentify.json").read_text())["input"]["documents"] == 400
    assert not [q.name for q in tmp_path.iterdir() if q.name.startswith(".out")]  # no lock, no staging left


def test_a_run_stops_when_another_holds_the_lock_of_out(tmp_path, capsys):
    src = _notes(tmp_path / "in", 3)
    out = tmp_path / "out"
    with output_lock(out, "OUT"):
        assert main(_argv(src, out)) == 1
    err = capsys.readouterr().err
    assert "another run is writing it" in err and not out.exists()
    assert main(_argv(src, out)) == 0  # the lock is free again once its holder is done


def test_out_filled_meanwhile_is_never_merged(tmp_path, capsys, monkeypatch):
    """OUT filled by someone else between the checks and the publish (no lock of ours): the run's
    single rename refuses it, and OUT keeps only what the other writer put there."""
    import deidlib.commands.deidentify as cmd

    src = _notes(tmp_path / "in", 3)
    out = tmp_path / "out"
    real = cmd._same_mtime

    def intruder(folder):
        out.mkdir()
        (out / "other.txt").write_text("written by someone else")
        real(folder)

    monkeypatch.setattr(cmd, "_same_mtime", intruder)
    assert main(_argv(src, out)) == 1
    assert "appeared" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["other.txt"]
    assert not [q.name for q in tmp_path.iterdir() if q.name.startswith(".out")]


def test_force_replaces_out_whole(tmp_path):
    """Two --force runs into one OUT: the second OUT holds the second run's notes only (file names are
    random pseudonyms per run, so merging would accumulate), and a foreign file in OUT is gone."""
    out = tmp_path / "out"
    assert main(_argv(_notes(tmp_path / "a", 5), out)) == 0
    (out / "stray.txt").write_text("x")
    assert main(_argv(_notes(tmp_path / "b", 3, start=100), out)) == 2  # non-empty without --force
    assert main(_argv(tmp_path / "b", out, "--force")) == 0
    assert sorted(p.name for p in out.iterdir() if p.suffix != ".xml") == ["deidentify.json"]
    assert len(read_i2b2_dir(out)) == 3
    assert json.loads((out / "deidentify.json").read_text())["input"]["documents"] == 3
    assert not [q.name for q in tmp_path.iterdir() if q.name.startswith(".out")]  # the old OUT is deleted


def test_leftovers_of_a_killed_run_are_removed_audit_partials_first(tmp_path, capsys):
    """What SIGKILL leaves (the staging folder beside OUT, the audit's partial file holding original PHI,
    a lock file) is removed by the next run into the same OUT and reported, audit first; look-alike
    names that are not ours stay."""
    src = _notes(tmp_path / "in", 3)
    out, audit = tmp_path / "out", tmp_path / "audit.jsonl"
    staging = tmp_path / ".out.k9x2_abc.partial"
    staging.mkdir()
    (staging / "note.xml").write_text("de-identified")
    old = tmp_path / ".out.Zz09qqqq.old"
    old.mkdir()
    partial = tmp_path / ".audit.jsonl.ab12cd34.partial"
    partial.write_text('{"original": "Hortensia Villegas"}\n')
    (tmp_path / ".out.lock").write_text("")  # the kernel released the lock when the run died
    keep = [tmp_path / ".out.notes", tmp_path / ".out.toolongname.partial"]
    for k in keep:
        k.write_text("not ours")
    assert main(_argv(src, out, "--audit", str(audit))) == 0
    err = capsys.readouterr().err
    assert not staging.exists() and not old.exists() and not partial.exists()
    assert all(k.exists() for k in keep)
    assert "leftover" in err and err.index(partial.name) < err.index(staging.name)
    assert not (tmp_path / ".out.lock").exists() and not (tmp_path / ".audit.jsonl.lock").exists()
    assert out.is_dir() and audit.is_file()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigterm_behaves_as_sigint(blind_model, synth_docs, tmp_path):
    """SIGTERM (a batch scheduler's stop) mid-run: exit code 130 as for Ctrl-C, no OUT, no audit, no
    staging or lock left beside them, no traceback."""
    src = tmp_path / "in"
    src.mkdir()
    for k in range(16):  # 640 notes: tagging lasts seconds after the progress bar appears
        for d in synth_docs[:40]:
            (src / f"{k}-{d.id}.txt").write_text(d.text, encoding="utf-8")
    out, audit = tmp_path / "out", tmp_path / "audit.jsonl"
    p = subprocess.Popen([sys.executable, "-m", "deidlib", "deidentify", str(src), str(out), "--model",
                          str(blind_model), "--replace", "mask", "--audit", str(audit)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=_env(), cwd=tmp_path)
    seen, t0 = b"", time.monotonic()
    while b"deidentify:" not in seen and time.monotonic() - t0 < 300:  # the progress bar: tagging has begun
        chunk = os.read(p.stderr.fileno(), 256)
        if not chunk:
            break
        seen += chunk
    assert b"deidentify:" in seen, seen
    time.sleep(0.5)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=300)
    assert p.returncode == 130, (seen + err)[-2000:]
    assert not out.exists() and not audit.exists()
    assert not [q.name for q in tmp_path.iterdir() if q.name.startswith((".out", ".audit"))]
    assert b"Traceback" not in err
