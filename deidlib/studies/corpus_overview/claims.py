"""The corpus overview's targets. No paper states them: they are what the synthetic corpus's
default ``heterogeneity`` (:mod:`deidlib.synthetic.styles`) is chosen for, read against the
cross-site matrix (:func:`~.tables.cross_site_summary`) in notebook ``00_corpus_overview``.
"""

from __future__ import annotations

__all__ = ["TARGET_GAP", "MIN_DIAGONAL"]

#: what the default heterogeneity is chosen for: mean diagonal F1 at least this much above the
#: mean off-diagonal F1
TARGET_GAP = 0.15
#: every site must still be learnt alone at the default level: lowest diagonal F1 at least this
MIN_DIAGONAL = 0.85
