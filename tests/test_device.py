"""The library on a CUDA device next to the CPU (``benchmarks/device_check.py``): training,
prediction, operating points and DP-SGD agree and the DP noise has its claimed scale there.
Skipped on machines without CUDA (CI); run it where a GPU is lent."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device on this machine")
def test_device_check_passes_on_cuda():
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "device_check.py"), "--patients", "40",
                        "--epochs", "1", "--repeats", "1"], capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    assert "0 failed" in r.stdout
