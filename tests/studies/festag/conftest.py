"""Shared fixtures of the festag study tests: a hand-made result of the five experiments."""

from __future__ import annotations

import pytest

from deidlib.studies.festag.params import EXPERIMENTS


def _results():
    runs = []
    for seed in (0, 1):
        runs.append({"experiment": "A", "seed": seed, "records": [
            {"epoch": 1, "site": "global", "f1": 0.5 + seed / 10, "dev_f1": 0.5},
            {"epoch": 2, "site": "global", "f1": 0.8 + seed / 10, "dev_f1": 0.6}]})
        runs.append({"experiment": "B", "seed": seed, "records": [
            {"epoch": 1, "site": "global", "f1": 0.5, "dev_f1": 0.5}, {"epoch": 2, "site": "global", "f1": 0.8,
                                                                       "dev_f1": 0.6}]})
        for name, base in (("C_0.1", 0.7), ("C_0.5", 0.4), ("D", 0.6)):
            recs = []
            for e in (1, 2):
                for i in range(3):
                    f1 = base + 0.01 * i + 0.05 * e + 0.01 * seed
                    recs.append({"epoch": e, "site": f"site{i + 1}", "f1": f1,
                                 **{f"dev_f1@site{j + 1}": f1 - 0.1 * (j != i) for j in range(3)}})
            runs.append({"experiment": name, "seed": seed, "records": recs})
    return {"experiments": list(EXPERIMENTS), "runs": runs, "seeds": [0, 1], "corpus": "x", "profile": "smoke",
            "params": {"patience": None}}


@pytest.fixture
def make_results():
    """A function giving a fresh hand-made festag result (two seeds, two epochs)."""
    return _results
