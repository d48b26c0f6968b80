"""Parameters of the ahmed_utility study (Ahmed 2020 thesis §4.3.2): one dataclass whose defaults
are the thesis where it says, the span sources and the profiles that scale them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..params import StudyParams, profiles

__all__ = ["params_for"]

SCHEME, ENCODING = "i2b2", "BIOES"
#: span sources: key -> row label
SOURCES = {"gold": "ground truth", "gru": "GRU-CRF", "baseline": "baseline (short-trained GRU-CRF)"}
METRICS = ("precision", "recall", "f1")


@dataclass(frozen=True)
class UtilityParams(StudyParams):
    """All knobs of the study (defaults = the thesis where it says; profiles override some)."""

    STUDY: ClassVar[str] = "ahmed_utility"
    MERGED: ClassVar[tuple[str, ...]] = ("sizes",)

    #: tagger kind of both taggers and its sizes (thesis chapter 4 GRU sizes)
    kind: str = "gru"
    sizes: dict[str, Any] = field(default_factory=lambda: {
        "word_dim": 100, "char_emb_dim": 50, "char_hidden": 25, "hidden": 150, "ff_dim": 150, "dropout": 0.5})
    #: the well-trained tagger
    epochs: int = 30
    max_train_sentences: int | None = None
    #: the weak baseline: same model, this training budget
    baseline_epochs: int = 2
    baseline_train_sentences: int | None = 500
    lr: float = 2e-3
    batch_size: int = 32
    word2vec_epochs: int = 5
    #: cap on the de-identified corpus (dev + test documents; None: all)
    max_utility_documents: int | None = None
    #: surrogate ε per document (Tchouka et al.; seeded)
    epsilons: tuple[float, ...] = (1.0, 10.0)
    #: Friedrich neighbour pseudonymization with N GloVe neighbours (empty: none)
    pseudonym_n: tuple[int, ...] = (100,)
    #: Table 4.6: topics × words; candidates for the coherence choice of k
    n_topics: int = 5
    top_words: int = 30
    topic_candidates: tuple[int, ...] = (3, 4, 5, 6, 7, 8)
    coherence: str = "c_v"
    lda_passes: int = 10
    #: Table 4.9: numbers of classes; the classification is averaged over this many patient splits
    class_counts: tuple[int, ...] = (3, 5, 7)
    class_repeats: int = 5
    test_size: float = 0.25
    #: medical abstracts de-identified by the taggers (0: skip; None: all 2,888)
    max_abstracts: int | None = None
    #: torch intra-op threads while the study runs (None: leave torch's setting)
    num_threads: int | None = None

    def check(self) -> None:
        if min(self.epochs, self.baseline_epochs, self.batch_size, self.n_topics, self.top_words,
               self.class_repeats) < 1:
            raise ValueError("epochs, baseline_epochs, batch_size, n_topics, top_words and class_repeats must be >= 1")
        if any(not (e > 0 and math.isfinite(e)) for e in self.epsilons):
            raise ValueError(f"surrogate epsilons must be positive and finite, got {self.epsilons}")
        if any(n < 1 for n in self.pseudonym_n):
            raise ValueError(f"pseudonym N must be >= 1, got {self.pseudonym_n}")
        if any(c < 2 for c in self.class_counts) or any(k < 1 for k in self.topic_candidates):
            raise ValueError("class counts must be >= 2 and topic candidates >= 1")
        if self.coherence not in ("c_v", "u_mass"):
            raise ValueError(f"coherence must be 'c_v' or 'u_mass', got {self.coherence!r}")
        if not 0 < self.test_size < 1:
            raise ValueError(f"test_size must lie in (0, 1), got {self.test_size}")


_SMOKE_SIZES = {"word_dim": 16, "char_emb_dim": 8, "char_hidden": 8, "hidden": 16, "ff_dim": 16, "dropout": 0.5}
_CPU_SIZES = {"word_dim": 50, "char_emb_dim": 16, "char_hidden": 16, "hidden": 48, "ff_dim": 48, "dropout": 0.5}

PROFILE_PARAMS: dict[str, UtilityParams] = profiles(UtilityParams, {
    "smoke": UtilityParams(
        sizes=dict(_SMOKE_SIZES), epochs=2, max_train_sentences=150, baseline_epochs=1,
        baseline_train_sentences=40, lr=1e-2, batch_size=16, word2vec_epochs=1, epsilons=(1.0,),
        pseudonym_n=(10,), topic_candidates=(3, 5), coherence="u_mass", lda_passes=2, class_counts=(3, 5),
        class_repeats=1, test_size=0.34, max_abstracts=0, num_threads=1,
    ),
    # baseline 4 epochs: at 2 it stayed in the all-O phase (F1 0: no de-identification at all);
    # at 4 it finds PHI with low precision (P 33 / R 85 / F1 47 on the cpu run)
    "cpu": UtilityParams(
        sizes=dict(_CPU_SIZES), epochs=8, max_train_sentences=1500, baseline_epochs=4,
        baseline_train_sentences=1000, lr=8e-3, batch_size=16, word2vec_epochs=5, epsilons=(1.0, 10.0),
        pseudonym_n=(100,), lda_passes=5, class_repeats=5, max_abstracts=None, num_threads=1,
    ),
    "paper": UtilityParams(),
})


def params_for(profile: str, **overrides: Any) -> UtilityParams:
    """The profile's parameters with ``overrides`` (:meth:`StudyParams.resolve`)."""
    return UtilityParams.resolve(profile, **overrides)
