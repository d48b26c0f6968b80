"""Parameters of the corpus overview (notebook ``00_corpus_overview``): the seeds, corpus size and
tagger of its one trained part, the cross-site matrix (:mod:`.sites`); the counts take none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..params import StudyParams, profiles

__all__ = ["params_for"]

#: the tagger of the matrix: small word-level GRU-CRF (hparams of :data:`deidlib.models.PRESETS` ``"gru"``)
TAGGER: dict[str, Any] = {"kind": "gru", "epochs": 3, "batch_size": 16, "lr": 3e-3,
                          "hparams": {"word_dim": 32, "char_emb_dim": 12, "char_hidden": 16, "hidden": 48,
                                      "casing": True}}


@dataclass(frozen=True)
class CorpusOverviewParams(StudyParams):
    """Seeds, corpus size (``patients``; None: the profile's) and tagger of the cross-site matrix
    (``tagger``: ``{"kind", "epochs", "batch_size", "lr", "hparams"}``, merged key by key)."""

    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    patients: int | None = None
    tagger: dict = field(default_factory=lambda: dict(TAGGER))

    STUDY: ClassVar[str] = "corpus_overview"
    MERGED: ClassVar[tuple[str, ...]] = ("tagger",)

    def check(self) -> None:
        if not self.seeds:
            raise ValueError("the cross-site matrix needs at least one seed")
        if self.patients is not None and self.patients < 1:
            raise ValueError(f"patients must be >= 1, got {self.patients}")


#: per profile (smoke: 40 patients, so that every site has test notes, and one tiny tagger: seconds)
PROFILE_PARAMS = profiles(CorpusOverviewParams, {
    "smoke": CorpusOverviewParams(seeds=(0,), patients=40,
                         tagger={"kind": "gru", "epochs": 1, "batch_size": 16,
                                 "hparams": {"word_dim": 8, "char_emb_dim": 4, "char_hidden": 4, "hidden": 8}}),
    "cpu": CorpusOverviewParams(seeds=(0, 1, 2)),
    "paper": CorpusOverviewParams(),
})


def params_for(profile: str, **overrides: Any) -> CorpusOverviewParams:
    """The cross-site matrix's parameters at ``profile`` (smoke, cpu, paper), overrides checked."""
    return CorpusOverviewParams.resolve(profile, **overrides)
