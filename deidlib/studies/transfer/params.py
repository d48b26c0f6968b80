"""Parameters of the synthetic-to-real transfer study: the tagger recipes (:data:`WORD_RECIPE`,
:data:`ENCODER_RECIPE`, :data:`FROZEN_ENCODER_RECIPE`), the target on the nursing notes and
the profiles that scale them (the choices: :mod:`deidlib.studies.transfer`, ``docs/transfer.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ...corpus.conventions import GUIDELINES
from ...models.presets import encoder_of
from ..params import StudyParams, profiles

__all__ = ["params_for", "TARGET"]

#: real corpora tried, in order (each is skipped with a note when not on this machine)
REAL_CORPORA = ("physionet", "i2b2")
#: the target on the nursing notes, trained on synthetic notes only
TARGET = {"f1": 0.70, "recall": 0.85}


@dataclass(frozen=True)
class TransferParams(StudyParams):
    STUDY: ClassVar[str] = "transfer"

    model: str = "gru"
    epochs: int = 2
    lr_decay: float = 0.15
    #: learning rate (None: the tagger kind's default, :data:`deidlib.models.presets.DEFAULT_TRAINING`)
    lr: float | None = None
    batch_size: int = 16
    #: tagger hyperparameters (None: the preset's sizes)
    hparams: dict[str, Any] | None = None
    #: guideline the synthetic training spans are aligned to (:data:`~deidlib.corpus.conventions.GUIDELINES`)
    guideline: str = "physionet"
    #: cap on real test (and dev) documents per corpus (None: the whole split)
    max_test_documents: int | None = None
    #: synthetic corpus size (None: the profile's, :mod:`deidlib.profiles`)
    patients: int | None = None
    #: word vectors: ``"word2vec"`` trained on the synthetic training notes, or ``"glove"``: the
    #: public GloVe 6B 50-d vectors (:func:`deidlib.embeddings.public.load_glove`), frozen, with
    #: the vocabulary widened to GloVe's ``glove_words`` most frequent words, so that a word
    #: of a real note that no synthetic note has (a surname, a town) still has a vector
    vectors: str = "word2vec"
    glove_words: int = 100_000
    #: also score the real corpus' dev split: the model never sees real notes, so the real
    #: dev split is a clean place to *choose* a recipe, and the test split stays for reporting
    score_dev: bool = True
    #: share of synthetic *training* notes written in upper case before training (seeded; dev
    #: and test unchanged): a case augmentation against names missed in upper-case real notes.
    #: Measured and not adopted: the case-blind character encoder (``lowercase_chars``) fixed
    #: the same failure better (``benchmarks/transfer.py``).
    upper_share: float = 0.0
    #: factor on every site's weight of ICU nursing notes in the synthetic training corpus
    #: (1: the corpus every study uses; 3 measured better on the nursing notes with ``benchmarks/transfer.py``)
    icu_weight: float = 3.0
    #: fixed thresholds on the PHI marginal (:mod:`deidlib.models.decoding`) scored on the real
    #: corpora next to the model's own decision: an operating-point curve, chosen before any run
    #: (tuning one on the real test notes would be tuning on test data)
    thresholds: tuple[float, ...] = (0.3, 0.1, 0.03)
    #: choose a threshold on the real corpus' *dev* split: the highest of
    #: :data:`deidlib.training.THRESHOLD_GRID` whose dev recall reaches this (the grid only:
    #: ``choose_threshold(refine=False)``), and report the test split at it. One scalar is learned from real
    #: dev notes; the weights hold none. None: no dev-chosen operating point
    dev_target_recall: float | None = None
    #: the dev-chosen threshold never exceeds this (None: the whole grid). A recall-oriented
    #: operating point only *lowers* the threshold below the model's own decision; above 0.5 the
    #: dev recall's margin over the target is sold for precision and, measured (cpu profile,
    #: ``patients=600``, seed 4: dev-chosen 0.9, dev recall 0.865, test recall 0.817 against 0.879
    #: at 0.5), the test split falls below the target
    dev_threshold_cap: float | None = 0.5
    #: taggers trained (same synthetic corpus, initialisation seeds ``seed`` and then
    #: ``derive_seed(seed, "transfer-member", k)``) whose CRF marginals are averaged
    #: (:class:`deidlib.models.MarginalEnsemble`; its own decision: mean P(PHI) >= 0.5). 1: one tagger
    members: int = 1

    def check(self) -> None:
        if self.epochs < 1 or self.batch_size < 1:
            raise ValueError("epochs and batch_size must be >= 1")
        if self.members < 1:
            raise ValueError(f"members must be >= 1, got {self.members}")
        if self.lr is not None and not self.lr > 0:
            raise ValueError(f"lr must be > 0 or None, got {self.lr}")
        if self.guideline not in GUIDELINES:
            raise ValueError(f"guideline must be one of {', '.join(GUIDELINES)}, got {self.guideline!r}")
        if self.max_test_documents is not None and self.max_test_documents < 1:
            raise ValueError("max_test_documents must be >= 1 or None")
        if self.vectors not in ("word2vec", "glove"):
            raise ValueError(f"vectors must be 'word2vec' or 'glove', got {self.vectors!r}")
        if self.vectors == "glove" and encoder_of(self.model):
            raise ValueError(f"vectors='glove' needs a word-level tagger; {self.model!r} reads sub-word pieces")
        if not 0.0 <= self.upper_share <= 1.0:
            raise ValueError(f"upper_share must lie in [0, 1], got {self.upper_share}")
        if self.icu_weight <= 0:
            raise ValueError(f"icu_weight must be > 0, got {self.icu_weight}")
        if any(not 0.0 < t < 1.0 for t in self.thresholds):
            raise ValueError(f"thresholds must lie in (0, 1), got {self.thresholds}")
        if self.dev_target_recall is not None:
            if not 0.0 < self.dev_target_recall < 1.0:
                raise ValueError(f"dev_target_recall must lie in (0, 1) or be None, got {self.dev_target_recall}")
            if self.dev_threshold_cap is not None and not 0.0 < self.dev_threshold_cap < 1.0:
                raise ValueError(f"dev_threshold_cap must lie in (0, 1) or be None, got {self.dev_threshold_cap}")
            if not self.score_dev:
                raise ValueError("dev_target_recall chooses the threshold on the real dev split: it needs score_dev=True")


#: the word-level GRU-CRF's options for transfer: word dropout (unseen words are not read as
#: PHI), a case-blind character encoder plus the casing feature (names in upper-case notes)
WORD_RECIPE = {"word_dropout": 0.3, "lowercase_chars": True, "casing": True}
#: the encoder recipe (cpu and paper profiles; lr 3e-4): MiniLM, mean of hidden states 2-4 (so of the
#: three trainable top layers only the 4th gets a gradient), casing, BiGRU 64, CRF
ENCODER_RECIPE = {"finetune_layers": 3, "layers": [2, 3, 4], "hidden": 64, "casing": True}
#: lr 1e-3: the same with the encoder frozen; about half the training time
FROZEN_ENCODER_RECIPE = {**ENCODER_RECIPE, "finetune_layers": 0}

PROFILE_PARAMS = profiles(TransferParams, {
    "smoke": TransferParams(epochs=2, lr_decay=0.0, batch_size=8, max_test_documents=60,
                            hparams={"word_dim": 16, "char_emb_dim": 8, "char_hidden": 8, "hidden": 16, "ff_dim": 16,
                                     **WORD_RECIPE}),
    # twice the cpu profile's 300 patients (docs/transfer.md)
    "cpu": TransferParams(model="minilm", epochs=3, lr=3e-4, hparams=dict(ENCODER_RECIPE), patients=600,
                          dev_target_recall=TARGET["recall"]),
    "paper": TransferParams(model="minilm", epochs=3, lr=3e-4, hparams=dict(ENCODER_RECIPE),
                            dev_target_recall=TARGET["recall"]),
})


def params_for(profile: str, **overrides: Any) -> TransferParams:
    return TransferParams.resolve(profile, **overrides)
