"""Parameters of the operating-point study: one tagger (the GRU-CRF of ``deidlib train``, Ahmed
2020 ch. 4 sizes) trained with the profile's epochs, the threshold grid it is traced on and the
recall its dev-chosen threshold must reach.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ..params import StudyParams, profiles

__all__ = ["params_for"]

#: PHI-marginal thresholds traced (high to low)
THRESHOLDS = (0.9, 0.7, 0.5, 0.4, 0.3, 0.2, 0.15, 0.1, 0.07, 0.05, 0.03, 0.02, 0.01, 0.005, 0.002, 0.001)


@dataclass(frozen=True)
class OperatingPointParams(StudyParams):
    STUDY: ClassVar[str] = "operating_point"

    model: str = "gru"
    epochs: int = 14
    patience: int | None = 4
    lr_decay: float = 0.15
    batch_size: int = 16
    #: tagger hyperparameters (None: the preset's sizes)
    hparams: dict[str, Any] | None = None
    #: recall the dev-chosen threshold must reach
    target_recall: float = 0.92

    def check(self) -> None:
        if self.epochs < 1 or self.batch_size < 1:
            raise ValueError("epochs and batch_size must be >= 1")
        if not 0 < self.target_recall <= 1:
            raise ValueError(f"target_recall must be in (0, 1], got {self.target_recall}")


PROFILE_PARAMS = profiles(OperatingPointParams, {
    "smoke": OperatingPointParams(
        epochs=2, patience=None, lr_decay=0.0, batch_size=8,
        hparams={"word_dim": 16, "char_emb_dim": 8, "char_hidden": 8, "hidden": 16, "ff_dim": 16},
    ),
    "cpu": OperatingPointParams(epochs=8, patience=3),
    "paper": OperatingPointParams(),
})


def params_for(profile: str, **overrides: Any) -> OperatingPointParams:
    return OperatingPointParams.resolve(profile, **overrides)
