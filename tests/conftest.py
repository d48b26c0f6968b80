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
