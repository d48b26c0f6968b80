"""Ctrl-C stops ``deidlib deidentify``: exit code 130 and no OUT, also when a library swallowed the
``KeyboardInterrupt`` (the signal is remembered and checked before anything is committed)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from deidlib.cli import main
from deidlib.corpus.i2b2 import write_i2b2_dir

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigint_mid_run_exits_130_and_leaves_no_out(blind_model, synth_docs, tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    # 640 notes, 20 chunks of 32: tagging lasts seconds after the progress bar appears (160 notes
    # took ~1.1 s on an idle machine, too close to the 0.5 s wait: the run could finish first)
    for k in range(16):
        for d in synth_docs[:40]:
            (src / f"{k}-{d.id}.txt").write_text(d.text, encoding="utf-8")
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    p = subprocess.Popen([sys.executable, "-m", "deidlib", "deidentify", str(src), str(out), "--model",
                          str(blind_model), "--replace", "mask"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=env, cwd=tmp_path)
    seen, t0 = b"", time.monotonic()
    while b"deidentify:" not in seen and time.monotonic() - t0 < 300:  # the progress bar: tagging has begun
        chunk = os.read(p.stderr.fileno(), 256)
        if not chunk:
            break
        seen += chunk
    assert b"deidentify:" in seen, seen
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=300)
    assert p.returncode == 130, (seen + err)[-2000:]
    assert not out.exists()
    assert not [q for q in tmp_path.iterdir() if q.name.startswith(".out")]  # no staged leftovers
    assert b"Traceback" not in err


def test_interrupt_swallowed_by_a_library_still_stops_the_run(synth_docs, tmp_path, monkeypatch, capsys):
    import deidlib.pipeline.run as run_mod

    real = run_mod._process_chunk

    def swallowing(*a, **kw):  # a library that catches KeyboardInterrupt and goes on
        res = real(*a, **kw)
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(2)
        except KeyboardInterrupt:
            pass
        return res

    monkeypatch.setattr(run_mod, "_process_chunk", swallowing)
    write_i2b2_dir(synth_docs[:3], tmp_path / "in")
    out, audit = tmp_path / "out", tmp_path / "audit.jsonl"
    before = signal.getsignal(signal.SIGINT)  # Python's default, or what the test runner's worker set
    assert main(["deidentify", str(tmp_path / "in"), str(out), "--spans", "input", "--no-progress",
                 "--audit", str(audit)]) == 130
    assert "interrupted" in capsys.readouterr().err
    assert not out.exists() and not audit.exists()
    assert signal.getsignal(signal.SIGINT) is before  # the handler is given back
