"""Corpus overview (notebook ``00_corpus_overview``): what the studies train and test on.

Counts documents, tokens and PHI mentions per site and category, label distributions under
each label scheme, PHI density per note type (:mod:`.tables`), and renders one annotated example
note. Example text is only ever shown for the synthetic corpus; real corpora get counts alone.

Its one trained part is the cross-site matrix (:mod:`.sites`): one small tagger per synthetic
site, scored on every site's test split, at heterogeneity 0 and at the generator's default; the
default is chosen for :data:`TARGET_GAP` and :data:`MIN_DIAGONAL` (:mod:`.claims`).

The package follows the study protocol (:mod:`deidlib.studies.protocol`): :func:`params_for`
(the matrix's seeds, corpus size and tagger), :func:`run_study` (:class:`CorpusOverviewResults`:
the synthetic corpus and one matrix per level), the tables, :func:`plot_overview` and
:func:`plot_cross_site`. The cross-site matrix is part of this package, not a study of its own,
because notebook 00 is one study (``deidlib reproduce --only corpus``) and the matrix is the
measurement behind the corpus's ``heterogeneity``. The synthetic-to-real transfer of the
notebook's last section is its own study (:mod:`deidlib.studies.transfer`).
"""

from .claims import MIN_DIAGONAL, TARGET_GAP, design_claims
from .figures import plot_cross_site, plot_overview
from .params import params_for
from .run import CorpusOverviewResults, run_study
from .tables import (
    corpus_table,
    cross_site_summary,
    cross_site_table,
    label_distribution,
    note_type_table,
    phi_table,
)

__all__ = [
    "TARGET_GAP", "MIN_DIAGONAL", "design_claims", "CorpusOverviewResults", "params_for", "run_study", "corpus_table",
    "phi_table", "label_distribution", "note_type_table", "cross_site_summary", "cross_site_table",
    "plot_overview", "plot_cross_site",
]
