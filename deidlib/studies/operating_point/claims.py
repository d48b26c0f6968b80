"""The operating-point study's claims. No paper states them: they are the package's promises for
the operating point, with the target (:data:`TARGET`) as the reference. Verdicts come from
:func:`deidlib.reporting.verdict`, never typed by hand.
"""

from __future__ import annotations

import math

import pandas as pd

from ...reporting import Claim, claims_table, flat_table, table_value

NAN = math.nan

__all__ = ["paper_vs_ours"]

#: the target on the nursing notes: recall >= 0.92 at precision >= 0.85
TARGET = {"recall": 0.92, "precision": 0.85}

_flat = flat_table
_one = table_value


def paper_vs_ours(summary: pd.DataFrame, target_recall: float,
                  test_recalls: list[float] | None = None) -> pd.DataFrame:
    """Notebook 10's package claims: the threshold chosen on the dev split reaches the target recall
    on the test split, at little F1 against the model's own decision
    (:func:`deidlib.studies.operating_point.summary_rows`). ``test_recalls``: the test recall of
    every threshold of the curve; when each reaches the target, no threshold could miss it and
    both rows say ``not measured`` (a comparison that cannot fail is not a claim)."""
    s = _flat(summary)
    binds = test_recalls is None or min(test_recalls, default=NAN) < float(target_recall)
    why = "" if binds else " (not a claim here: every threshold reaches the target on test)"

    def val(x):
        return x if binds else NAN

    return claims_table([
        Claim("the dev-chosen threshold reaches the target recall on the test split" + why,
              float(target_recall), val(_one(s, "test_recall", point="dev-chosen threshold")), "at_least", 0.01),
        Claim("the dev-chosen threshold costs little test F1 against the model's own decision: chosen − own" + why,
              0.0, val(_one(s, "test_f1", point="dev-chosen threshold") - _one(s, "test_f1", point="model decision")),
              "close", 0.01, paper_text="≈ 0"),
    ], reference="target")
