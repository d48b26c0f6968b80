"""The DP recipes' figure is drawn by the study that shows the recipes beside the thesis:
:func:`deidlib.studies.ahmed_dp.plot_recipe_curves` (notebook ``04_ahmed_dp_ensemble``), with the
thesis' points of :data:`deidlib.studies.ahmed_dp.claims.THESIS_POINTS`. It cannot live here:
``ahmed_dp`` trains its members by these recipes, and a study package imports no sibling that
imports it. The module is here because every study package has the same five files
(:mod:`deidlib.studies.protocol`).
"""

from __future__ import annotations

__all__: list[str] = []
