"""The privacy ledger of a DP-SGD run (ahmed thesis §5.1.2, Algorithm 1, step 5): what a run
spent — unit, σ, q, steps, accountant, δ and the resulting ε (Opacus' accountants,
:mod:`.accounting`) — and, for a seeded run, the note that its guarantee does not hold against
anyone who holds the seed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from .accounting import epsilon

__all__ = ["SEEDED_NOTE", "DPPlan", "PrivacyLedger"]

#: what a ledger of a seeded run (``secure_rng=False``) says about its guarantee
SEEDED_NOTE = (
    "noise and lots were drawn from generators seeded with the recorded seed: the (ε, δ) guarantee "
    "does NOT hold against anyone who holds the seed (they can regenerate and subtract the noise)"
)


@dataclass(frozen=True)
class DPPlan:
    """What a DP-SGD run is set up to spend before its first step: the privacy unit, the
    number of units, the sampling rate ``q = batch_size / n_units``, the planned steps, σ
    (given, or calibrated to a target ε), the clipping norm ``C``, δ and the accountant."""

    unit: str
    n_units: int
    sample_rate: float
    steps: int
    noise_multiplier: float
    max_grad_norm: float
    delta: float
    accountant: str


@dataclass
class PrivacyLedger:
    """What a DP-SGD run spent: unit, σ, q, steps, accountant, δ and the resulting ε.
    ``history`` lists earlier phases [(σ, q, steps)] on the same units (e.g. pre-training)."""

    unit: str
    noise_multiplier: float
    sample_rate: float
    steps: int
    accountant: str
    delta: float
    max_grad_norm: float
    n_units: int
    expected_batch_size: float
    epsilon: float = math.inf
    target_epsilon: float | None = None
    history: list[tuple[float, float, int]] = field(default_factory=list)
    #: True when lots and noise came from the OS CSPRNG (``train_dp(secure=True)``, the default)
    secure_rng: bool = False

    @classmethod
    def open(cls, plan: DPPlan, *, target_epsilon: float | None = None,
             history: Sequence[tuple[float, float, int]] | None = None, secure_rng: bool = False) -> PrivacyLedger:
        """The ledger of a run about to start ``plan``: no step taken yet, ``history`` the earlier
        phases on the same units."""
        return cls(
            unit=plan.unit,
            noise_multiplier=float(plan.noise_multiplier),
            sample_rate=plan.sample_rate,
            steps=0,
            accountant=plan.accountant,
            delta=plan.delta,
            max_grad_norm=float(plan.max_grad_norm),
            n_units=plan.n_units,
            expected_batch_size=plan.sample_rate * plan.n_units,
            target_epsilon=target_epsilon,
            history=list(history or []),
            secure_rng=bool(secure_rng),
        )

    def spent(self, steps: int | None = None) -> float:
        """ε after ``steps`` steps (default: the ledger's steps), with the earlier phases."""
        s = self.steps if steps is None else steps
        if s == 0 and not self.history:
            return 0.0
        if self.noise_multiplier == 0 or not math.isfinite(self.max_grad_norm):
            return math.inf
        if s == 0:
            h = self.history
            return epsilon(h[-1][0], h[-1][1], h[-1][2], self.delta, self.accountant, history=h[:-1])
        return epsilon(
            self.noise_multiplier, self.sample_rate, s, self.delta, self.accountant, history=self.history
        )

    def to_dict(self) -> dict[str, Any]:
        """The fields, plus ``rng_note`` (:data:`SEEDED_NOTE`) when the run was seeded."""
        d = asdict(self)
        for k in ("epsilon", "max_grad_norm"):
            if not math.isfinite(d[k]):
                d[k] = str(d[k])
        if not self.secure_rng:
            d["rng_note"] = SEEDED_NOTE
        return d
