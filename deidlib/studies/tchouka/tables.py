"""tchouka (Tchouka et al. 2023): the JSON summary of a study run, the key numbers of every table."""

from __future__ import annotations

import math

import pandas as pd

__all__: list[str] = []


# ----------------------------------------------------------------------------- summary
def summary(
    thread: dict,
    fig6: pd.DataFrame,
    du: pd.DataFrame,
    lu: pd.DataFrame,
    attack: pd.DataFrame,
    checks: pd.DataFrame,
    ba: dict,
) -> dict:
    """Key numbers for the results JSON (plain floats/strings)."""
    def recs(df):
        return [
            {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in r.items()}
            for r in df.to_dict(orient="records")
        ]

    sp = thread["spans"]
    return {
        "thread": {
            "surrogate_text": thread["surrogate"].text,
            "budget": thread["budget"],
            "replacements": recs(sp[["type", "original", "surrogate", "method", "unit", "epsilon"]]),
        },
        "figure6": recs(fig6),
        "date_utility": recs(du),
        "location_utility": recs(lu),
        "attack": recs(attack),
        "guarantee_checks": recs(checks),
        "before_after": {
            "documents": ba["documents"],
            "entities": ba["entities"],
            "epsilon_per_entity_mean": ba["epsilon_per_entity"],
            "methods": {str(k): int(v) for k, v in ba["corpus"].items()},
        },
    }
