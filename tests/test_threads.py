"""Threads are set by one helper (deidlib.threads): the commands, the de-identification
workers and the studies all go through it, and a study's limit is undone afterwards."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import torch

from deidlib.threads import limited_threads, set_threads

DEIDLIB = Path(__file__).resolve().parents[1] / "deidlib"


def test_limited_threads_applies_inside_and_restores_after(monkeypatch):
    from threadpoolctl import threadpool_info

    n = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        monkeypatch.setenv("OMP_NUM_THREADS", "2")
        monkeypatch.delenv("MKL_NUM_THREADS", raising=False)
        with limited_threads(1) as inside:
            assert inside == 1 and torch.get_num_threads() == 1
            assert os.environ["OMP_NUM_THREADS"] == "1" and os.environ["MKL_NUM_THREADS"] == "1"
            assert all(p["num_threads"] == 1 for p in threadpool_info())
        assert torch.get_num_threads() == 2
        assert os.environ["OMP_NUM_THREADS"] == "2" and "MKL_NUM_THREADS" not in os.environ
        with limited_threads(None) as inside:  # no limit asked: nothing changes
            assert inside == 2 and os.environ["OMP_NUM_THREADS"] == "2"
    finally:
        torch.set_num_threads(n)


def test_limited_threads_restores_after_an_error():
    n = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        try:
            with limited_threads(1):
                raise KeyError("boom")
        except KeyError:
            pass
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(n)


def test_the_deidentify_worker_initialiser_uses_the_helper(monkeypatch):
    from deidlib.pipeline import run

    seen = []
    monkeypatch.setattr(run, "set_threads", lambda n: seen.append(n))
    run._init_worker(None, run.DeidOptions(threads=3, spans="input"))
    assert seen == [3]


def test_only_the_helper_sets_thread_counts():
    """No module but deidlib/threads.py calls torch.set_num_threads, threadpool_limits or
    writes OMP_NUM_THREADS."""
    offenders = []
    for f in sorted(DEIDLIB.rglob("*.py")):
        if f == DEIDLIB / "threads.py":
            continue
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            name = None
            if isinstance(node, ast.Call):
                fn = node.func
                name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", None)
            if name in ("set_num_threads", "threadpool_limits") or (
                    isinstance(node, ast.Constant) and node.value in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")):
                offenders.append(f"{f.relative_to(DEIDLIB.parent)}:{node.lineno}")
    assert offenders == []


def test_set_threads_default_is_one(monkeypatch):
    n = torch.get_num_threads()
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    try:
        assert set_threads(None) == 1 and torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(n)
