"""The thesis' numbers the study compares with (Ahmed 2020, chapter 5). The claims themselves
(Tables 5.1, 5.2 and 5.3's DP cost as verdicts) are built by :func:`deidlib.studies.claims.ahmed_dp`."""

from __future__ import annotations

__all__ = ["THESIS_TABLE_5_3"]

#: Table 5.3 of the thesis: (dataset, documents, noise multiplier, ε, P, R, F1)
THESIS_TABLE_5_3: tuple[tuple[str, int, float, float, float, float, float], ...] = (
    ("i2b2 2014", 790, 0.25, 356.0, 98.683, 97.669, 98.173),
    ("i2b2 2014", 790, 0.45, 21.7, 98.009, 97.228, 97.617),
    ("i2b2 2014", 790, 0.55, 9.15, 97.918, 97.149, 97.532),
    ("MIMIC-III", 3550, 0.25, 316.0, 99.934, 99.079, 99.505),
    ("MIMIC-III", 3550, 0.55, 6.95, 99.955, 98.987, 99.469),
    ("Nursing Note", 1948, 0.25, 343.0, 90.692, 72.381, 80.508),
    ("Nursing Note", 1948, 0.55, 8.41, 87.215, 73.180, 79.583),
)
