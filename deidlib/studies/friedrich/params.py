"""Parameters of the friedrich study (Friedrich et al., ACL 2019): one dataclass for both
notebooks (05 pseudonymization, 06 adversarial), its per-profile table and the paper's
reference shapes live in :mod:`.claims`.

Paper values (``paper`` profile): Table 1 (BiLSTM-CRF, 2 × 128 units, batch 32, Nadam,
gradient norm 1.0), N ∈ {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000} (Figure 4), five runs
(Table 2, Figures 4/5), d = 50 (section 7.3), K = 50 frozen-adversary epochs (Figure 5;
20 for the DANN statement of section 7.3). The paper does not give the number of training
epochs; ``epochs`` is a cap with early stopping on the validation binary F1, ties broken by
the validation loss (``patience``; :func:`~deidlib.studies.friedrich.common.train_deid`).
``smoke`` and ``cpu`` shrink the corpus, the models, the N grid and the seeds (the
notebooks state each profile's scale); they never change an algorithm.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ..params import StudyParams, profiles

__all__ = ["FriedrichParams", "params_for"]

#: the study's two experiments (``run_study(params, experiment=...)``): notebook 05 and notebook 06
EXPERIMENTS = ("pseudonymization", "adversarial")

#: public embedding matrices (deidlib.embeddings.public)
_EMBEDDINGS = ("fasttext", "glove")
#: adversarial training procedures (section 5.4)
_PROCEDURES = ("three_phase", "dann")


@dataclass(frozen=True)
class FriedrichParams(StudyParams):
    """All knobs of notebooks 05 and 06 (defaults = the paper where it says; see the module docstring)."""

    STUDY: ClassVar[str] = "friedrich"

    embeddings: tuple[str, ...] = _EMBEDDINGS
    #: Figure 4: numbers of neighbours N of the pseudonymization sweep (1 = non-private)
    neighbours: tuple[int, ...] = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
    #: Figure 5: N of the adversarial representation (fake pairs need N >= 2)
    adv_neighbours: tuple[int, ...] = (10, 20, 50, 100, 200, 500, 1000)
    #: the N of the Table 2 analog's private rows
    table_neighbours: int = 100
    n_seeds: int = 5
    #: seeds of the adversarial study (Figure 5; the paper: 5 runs)
    adv_seeds: int = 5
    #: training epochs of the de-identification model (cap; early stopping on dev F1, then dev l_deid)
    epochs: int = 30
    patience: int = 3
    batch_size: int = 32
    lr: float = 2e-3  # Nadam (Keras' default learning rate)
    deid_hidden: int = 128
    deid_layers: int = 2
    #: representation size d (section 7.3: d ∈ {50, 100, 300} make no difference; 50 chosen)
    d: int = 50
    adv_hidden: int = 64
    noise_std: float = 0.1  # initial standard deviation of the trainable noise
    #: three-phase: epoch caps of P1, P2, P3 (each early-stopped with ``patience``); DANN: its cap
    p1_epochs: int = 30
    p2_epochs: int = 30
    p3_epochs: int = 30
    dann_epochs: int = 30
    #: K: epochs of the adversary on the frozen representation (Figure 5: 50)
    frozen_epochs: int = 50
    procedures: tuple[str, ...] = _PROCEDURES
    #: also attack two representations without privacy training (raw embeddings; noise-free
    #: BiLSTM trained on de-identification only) the same way: the attack's own yardstick
    controls: bool = True
    #: the N at which the controls are attacked (None: every N of ``adv_neighbours``)
    control_neighbours: tuple[int, ...] | None = None
    #: sentences with PHI of the training split whose real/fake pairs the frozen adversary trains
    #: on (a seeded draw from the whole split; None: those of the representation's training sentences)
    attack_sentences: int | None = None
    #: sentences with PHI of the test split whose pairs score the frozen adversary (held out: none
    #: is an adversary training sentence; a seeded draw from the whole split; None: those of the test cap)
    attack_heldout: int | None = None
    #: notebook 06: batches of sentences of similar length (shuffled batch order) for the frozen
    #: adversary: the same epochs at about 0.6 of its CPU time (the adversaries' fused LSTM kernel
    #: runs every row to the batch's longest sentence); False: uniformly shuffled batches (about 0.04
    #: more held-out accuracy on one representation at the same pairs; the time saved buys more
    #: attack sentences, the stronger lever). The taggers (three-phase, DANN, controls) always train on uniformly
    #: shuffled batches: length buckets lowered their test F1 (three-phase by 0.08)
    length_buckets: bool = True
    #: notebook 06: the frozen adversary's batch size and Nadam learning rate in the attack (None:
    #: ``batch_size`` / ``lr``, those of the taggers and of the adversaries during privacy training)
    attack_batch_size: int | None = None
    attack_lr: float | None = None
    #: embeddings of the adversarial study (None: ``embeddings``)
    adv_embeddings: tuple[str, ...] | None = None
    #: caps on sentences (seeded subsets; None: all)
    max_train_sentences: int | None = None
    max_dev_sentences: int | None = None
    max_test_sentences: int | None = None
    #: keep every PHI sentence and k PHI-free ones per PHI sentence (None: all; sparse nursing notes)
    negatives_per_positive: float | None = None
    #: FastText on public text (medical abstracts + Wikipedia sample): dimension (paper: 300),
    #: epochs, documents of each source (None: all)
    fasttext_dim: int = 300
    fasttext_epochs: int = 5
    fasttext_documents: int | None = None

    def check(self) -> None:
        bad = [e for e in (*self.embeddings, *(self.adv_embeddings or ())) if e not in _EMBEDDINGS]
        if bad or not self.embeddings or self.adv_embeddings == ():
            raise ValueError(f"friedrich embeddings must be among {', '.join(_EMBEDDINGS)}, got embeddings="
                             f"{self.embeddings}, adv_embeddings={self.adv_embeddings}")
        bad = [p for p in self.procedures if p not in _PROCEDURES]
        if bad:
            raise ValueError(f"friedrich procedures must be among {', '.join(_PROCEDURES)}, got {self.procedures}")
        if not self.neighbours or min(self.neighbours) < 1:
            raise ValueError(f"friedrich neighbours must be >= 1, got {self.neighbours}")
        if self.adv_neighbours and min(self.adv_neighbours) < 2:
            raise ValueError(f"friedrich adv_neighbours must be >= 2 (a fake needs another word), got {self.adv_neighbours}")
        if self.control_neighbours is not None and min(self.control_neighbours, default=2) < 2:
            raise ValueError(f"friedrich control_neighbours must be >= 2, got {self.control_neighbours}")
        if self.table_neighbours < 2:
            raise ValueError(f"friedrich table_neighbours must be >= 2, got {self.table_neighbours}")
        for name in ("n_seeds", "adv_seeds", "epochs", "patience", "batch_size", "deid_hidden", "deid_layers",
                     "adv_hidden", "p1_epochs", "p2_epochs", "p3_epochs", "dann_epochs", "fasttext_dim",
                     "fasttext_epochs"):
            if getattr(self, name) < 1:
                raise ValueError(f"friedrich parameter {name} must be >= 1, got {getattr(self, name)}")
        for name in ("attack_sentences", "attack_heldout", "attack_batch_size"):
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise ValueError(f"friedrich parameter {name} must be >= 1 or None, got {getattr(self, name)}")
        if self.frozen_epochs < 0:
            raise ValueError(f"friedrich frozen_epochs must be >= 0, got {self.frozen_epochs}")
        if self.d < 2 or self.d % 2:
            raise ValueError(f"friedrich representation size d must be even and >= 2, got {self.d}")
        if not self.lr > 0 or not self.noise_std > 0 or not (self.attack_lr is None or self.attack_lr > 0):
            raise ValueError("friedrich lr, attack_lr and noise_std must be > 0")


PROFILE_PARAMS: dict[str, FriedrichParams] = profiles(FriedrichParams, {
    "smoke": FriedrichParams(
        embeddings=("glove",),  # FastText on the abstracts costs ~30 s to train or load: cpu/paper only
        neighbours=(1, 100),
        adv_neighbours=(100,),
        n_seeds=1,
        adv_seeds=1,
        epochs=2,
        patience=1,
        deid_hidden=16,
        deid_layers=1,
        d=16,
        adv_hidden=8,
        p1_epochs=1,
        p2_epochs=1,
        p3_epochs=1,
        dann_epochs=2,
        frozen_epochs=1,
        max_train_sentences=100,
        max_dev_sentences=30,
        max_test_sentences=60,
        fasttext_documents=20,
        fasttext_epochs=1,
        fasttext_dim=16,
    ),
    "cpu": FriedrichParams(
        # notebook 05: 2 embeddings × 6 N × 2 seeds (paper: 10 N × 5 seeds)
        neighbours=(1, 10, 100, 200, 500, 1000),
        n_seeds=2,
        # notebook 06: GloVe only, 4 N, 3 seeds, K = 50 as in the paper (paper: both embeddings,
        # 7 N, 5 seeds); the controls are attacked at N = 100 (every seed). The frozen adversary
        # trains on the pairs of 1,000 PHI sentences of the whole training split (length-bucketed
        # batches of 32, Nadam lr 0.01) and is scored on 400 held-out PHI test sentences (~770
        # pairs): measured on the controls (seed 0), 400 sentences at lr 0.01 reached 0.73 (raw)
        # and 0.74 (P1), 1,000 reached 0.86 and 0.90, each ~40 CPU-s per attack
        adv_embeddings=("glove",),
        adv_neighbours=(10, 100, 500, 1000),
        control_neighbours=(100,),
        attack_sentences=1000,
        attack_heldout=400,
        attack_lr=1e-2,
        length_buckets=True,
        adv_seeds=3,
        epochs=6,
        patience=2,
        deid_hidden=64,
        deid_layers=1,
        d=50,
        adv_hidden=32,
        p1_epochs=4,
        p2_epochs=3,
        p3_epochs=3,
        dann_epochs=6,
        frozen_epochs=50,
        # PHI-rich training subset (the adversaries learn only from sentences with PHI): every PHI
        # sentence and 1 PHI-free one per 4, then 800 of them; test on the natural distribution
        negatives_per_positive=0.25,
        max_train_sentences=800,
        max_dev_sentences=200,
        max_test_sentences=600,
    ),
    "paper": FriedrichParams(),
})


def params_for(profile: str, **overrides: Any) -> FriedrichParams:
    """The profile's parameters with ``overrides`` (:meth:`StudyParams.resolve`)."""
    return FriedrichParams.resolve(profile, **overrides)
