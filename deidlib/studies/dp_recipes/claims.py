"""The DP recipes study states no paper's numbers of its own: the thesis' DP-SGD results it is set
against are :data:`deidlib.studies.ahmed_dp.claims.THESIS_POINTS` (read from Table 5.3 there, in
that one place), and whether DP fine-tuning beats the public model alone is the paired verdict of
:func:`~.tables.curve_summary`. The module is here because every study package has the same five
files (:mod:`deidlib.studies.protocol`).
"""

from __future__ import annotations

__all__: list[str] = []
