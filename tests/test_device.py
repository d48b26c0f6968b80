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


def test_a_different_decision_on_the_device_is_a_tie_at_the_threshold():
    """``device_check.tie_report`` (runs without a GPU): flips are counted per threshold, and a
    token can flip only within the marginals' largest difference of a threshold."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("device_check", ROOT / "benchmarks" / "device_check.py")
    dc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dc)
    cpu = [torch.tensor([0.5, 0.2, 0.9]), torch.tensor([0.1000001])]
    same = dc.tie_report(cpu, [c.clone() for c in cpu], (0.5, 0.1))
    assert same == {"max_marginal_difference": 0.0, "flipped": 0, "near_threshold": 1}  # 0.5 is on its threshold
    dev = [torch.tensor([0.49999, 0.2, 0.9]), torch.tensor([0.0999995])]
    r = dc.tie_report(cpu, dev, (0.5, 0.1))
    assert r["flipped"] == 2 and r["max_marginal_difference"] == pytest.approx(1e-5, rel=1e-2)
    assert r["near_threshold"] == 2  # both flipped tokens lie within 1e-5 of their threshold
