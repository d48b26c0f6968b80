"""The transfer study's table: one row per test set with P/R/F1 and, on the nursing notes, whether
the target is met (:func:`score_rows`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .params import TARGET

__all__ = ["score_rows"]


def score_rows(res: Mapping[str, Any]) -> list[dict]:
    """One row per test set: documents, P/R/F1 (synthetic first), and the target for the nursing notes;
    with ``dev_target_recall``, one more row per real corpus at the threshold chosen on its dev split."""
    s = res["synthetic"]
    rows = [{"test set": "synthetic (test split)", "documents": s["test_documents"], "precision": s["precision"],
             "recall": s["recall"], "f1": s["f1"], "goal": ""}]
    for name, r in res["real"].items():
        points = [("", r)]
        c = r.get("dev_chosen")
        if c and c["threshold"] is not None:
            points.append((f", P(PHI) >= {c['threshold']:g} chosen on dev for R {c['target_recall']:g}", c["test"]))
        for label, pt in points:
            goal = ""
            if name == "physionet":
                met = pt["f1"] >= TARGET["f1"] and pt["recall"] >= TARGET["recall"]
                goal = f"F1 >= {TARGET['f1']}, R >= {TARGET['recall']}: {'met' if met else 'not met'}"
            rows.append({"test set": name + label, "documents": r["documents"], "precision": pt["precision"],
                         "recall": pt["recall"], "f1": pt["f1"], "goal": goal})
    return rows
