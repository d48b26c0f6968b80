"""The transfer study draws no figure: its numbers are measured on real notes, which stay in the
run's folder (``runs/``), and notebook ``00_corpus_overview`` shows them as tables
(:func:`~.tables.score_rows` and the diagnostics of :func:`~.run.run_study`). The module is
here because every study package has the same five files (:mod:`deidlib.studies.protocol`).
"""

from __future__ import annotations

__all__: list[str] = []
