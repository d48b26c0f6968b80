"""Shared fixtures. Real-data fixtures skip with a reason when the data is absent."""

from __future__ import annotations

import os

os.environ.setdefault("MPLBACKEND", "Agg")  # figures render off-screen; the package never picks a backend

import pytest  # noqa: E402
import torch  # noqa: E402

from deidlib.corpus.locate import PHYSIONET_DEID, find_data_dir  # noqa: E402


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    """Tiny models on a shared 2-core machine (xdist runs two workers): one intra-op
    thread avoids oversubscription (10-20x slower otherwise under load). Session scope,
    so that it is in force before module- and session-scoped fixtures train models too
    (a function-scoped version let a module fixture train with two threads per worker:
    minutes instead of seconds under load)."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="session")
def physionet_dir():
    """Folder of the PhysioNet deid 1.1 gold standard, or skip."""
    d = find_data_dir(PHYSIONET_DEID)
    if d is None:
        pytest.skip(f"{PHYSIONET_DEID} not found (set DEIDLIB_DATA_DIR or place it in ../shared/data)")
    return d


@pytest.fixture(scope="session")
def smoke_notebook(tmp_path_factory):
    """``run(entry) -> folder``: the manifest notebook ``entry`` executed under the smoke profile,
    once per test session. Its first caller executes it (under a file lock) and later callers, on
    any xdist worker, get the same folder: the notebook tests and the documentation-site test
    share one execution of each notebook."""
    import os
    from pathlib import Path

    from filelock import FileLock

    from deidlib.notebooks import run_notebook

    base = tmp_path_factory.getbasetemp()
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "smoke-notebooks"
    shared.mkdir(parents=True, exist_ok=True)

    def run(entry) -> Path:
        out = shared / entry.name
        with FileLock(str(shared / f"{entry.name}.lock")):
            if not (out / ".complete").is_file():
                # one intra-op thread per kernel, as `deidlib reproduce` uses for smoke (xdist runs two at once)
                old = {v: os.environ.get(v) for v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
                os.environ.update({v: "1" for v in old})
                try:
                    run_notebook(entry, profile="smoke", out_dir=out)
                finally:
                    for v, value in old.items():
                        if value is None:
                            os.environ.pop(v, None)
                        else:
                            os.environ[v] = value
                (out / ".complete").touch()
        return out

    return run
