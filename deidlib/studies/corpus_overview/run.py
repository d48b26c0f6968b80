"""Running the corpus overview: the synthetic corpus of the profile and seed (what the counts of
:mod:`.tables` read), and the cross-site matrix (:mod:`.sites`) at each heterogeneity level, over
the parameters' seeds.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd

from ...corpus.splits import CorpusSplits
from ...datasets import load_corpus
from ...synthetic.styles import DEFAULT_HETEROGENEITY
from ..protocol import StudyResults
from .params import CorpusOverviewParams
from .sites import cross_site_matrix

__all__ = ["CorpusOverviewResults", "run_study"]


@dataclass
class CorpusOverviewResults(StudyResults):
    """What :func:`run_study` returns: the synthetic corpus (not JSON: it holds note text, shown
    for the synthetic corpus only) and one cross-site matrix per heterogeneity level."""

    profile: str
    seed: int
    params: dict[str, Any]
    splits: CorpusSplits
    #: level label -> heterogeneity of the synthetic sites
    heterogeneity: dict[str, float] = field(default_factory=dict)
    #: level label -> :func:`~.sites.cross_site_matrix` (one row per seed, train site, test site)
    cross_site: dict[str, pd.DataFrame] = field(default_factory=dict)


def _default_levels() -> dict[str, float]:
    """The levels the notebook compares: one shared style (0) and the generator's default."""
    return {"heterogeneity 0": 0.0, f"heterogeneity {DEFAULT_HETEROGENEITY:g} (default)": DEFAULT_HETEROGENEITY}


def run_study(params: CorpusOverviewParams, *, seed: int = 0, levels: dict[str, float] | None = None,
              device: str = "cpu", progress: bool = False) -> CorpusOverviewResults:
    """Generate the synthetic corpus of ``params.profile`` at ``seed``, then for every level one
    cross-site matrix over the seeds ``seed + s`` (``s`` in ``params.seeds``) at ``params.patients``."""
    if not isinstance(params, CorpusOverviewParams):
        raise TypeError("run_study takes resolved CorpusOverviewParams (corpus_overview.params_for(profile, ...))")
    profile = params.profile
    splits = load_corpus("synthetic", profile=profile, seed=seed)
    levels = _default_levels() if levels is None else dict(levels)
    matrices = {}
    for label, h in levels.items():
        by_seed = {seed + s: load_corpus("synthetic", profile=profile, seed=seed + s, patients=params.patients,
                                         heterogeneity=h) for s in params.seeds}
        matrices[label] = cross_site_matrix(by_seed, tagger=params.tagger, device=device, progress=progress)
    return CorpusOverviewResults(profile=profile, seed=seed, params=asdict(params), splits=splits,
                                 heterogeneity=levels, cross_site=matrices)
