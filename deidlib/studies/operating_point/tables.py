"""The operating-point study's table: test precision/recall/F1 at the model's own decision and
at the dev-chosen threshold (:func:`summary_rows`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .claims import TARGET

__all__ = ["summary_rows"]


def summary_rows(res: Mapping[str, Any]) -> list[dict]:
    """Test P/R/F1 at the model's own decision and at the dev-chosen threshold (with its dev
    numbers), and whether the target is met on test."""
    rows = []
    for name, th in (("model decision", None), ("dev-chosen threshold", res["chosen_threshold"])):
        if name != "model decision" and th is None:
            rows.append({"point": name, "threshold": None, "note": "no threshold reaches the target recall on dev"})
            continue
        d = next(p for p in res["dev_curve"] if p["threshold"] == th)
        t = next(p for p in res["test_curve"] if p["threshold"] == th)
        rows.append({
            "point": name, "threshold": th,
            "dev_precision": d["precision"], "dev_recall": d["recall"],
            "test_precision": t["precision"], "test_recall": t["recall"], "test_f1": t["f1"],
            "meets_target": t["recall"] >= TARGET["recall"] and t["precision"] >= TARGET["precision"],
        })
    return rows
