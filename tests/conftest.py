"""Shared fixtures. Real-data fixtures skip with a reason when the data is absent."""

from __future__ import annotations

import pytest

from deidlib.corpus.locate import PHYSIONET_DEID, find_data_dir


@pytest.fixture(scope="session")
def physionet_dir():
    """Folder of the PhysioNet deid 1.1 gold standard, or skip."""
    d = find_data_dir(PHYSIONET_DEID)
    if d is None:
        pytest.skip(f"{PHYSIONET_DEID} not found (set DEIDLIB_DATA_DIR or place it in ../shared/data)")
    return d
