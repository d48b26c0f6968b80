"""A differentially private word vocabulary for DP-SGD taggers.

A tagger's word list ships with the model (``model/config.json``); built from the training
text it names the training PHI (rare surnames, IDs) whatever DP-SGD guarantees for the
weights. :func:`dp_vocabulary` releases a vocabulary by Gaussian *partition selection*
(differentially private set union: Korolova et al. 2009, WWW, §4; Gopi et al. 2020, ICML,
"Differentially Private Set Union", §3 with the Gaussian policy; Wilson et al. 2020, PoPETs,
"Differentially Private SQL with Bounded User Contribution", §3):

1. Bounded contribution: every privacy unit (a sentence, or a patient with all of their
   sentences: the unit of the DP-SGD run) contributes each of its distinct normalised words
   once, and at most ``k = max_words_per_unit`` of them (a uniformly random k-subset drawn
   independently per unit when it has more).
2. Counts ``c_w`` = number of units that contribute ``w``; noisy counts
   ``ĉ_w = c_w + N(0, σ_v²)`` with ``σ_v = noise_multiplier · √k`` for every word with
   ``c_w > 0``.
3. Release the words with ``ĉ_w > τ``, ``τ = 1 + σ_v · Φ̄⁻¹(δ_τ / k)``, ordered by noisy count
   (post-processing).

Guarantee (add/remove one unit u; its words in both data sets' supports and those only in
the larger one, at most k in all). On the words both data sets have, the counts differ by at
most 1 in at most k coordinates (L2 sensitivity √k), so releasing them is a Gaussian mechanism
with noise multiplier ``noise_multiplier`` (σ_v / √k): the accountant phase
``(noise_multiplier, q = 1, steps = 1)``, composed adaptively with DP-SGD by the same
accountant (:meth:`VocabularyRelease.accountant_phase`, passed to ``train_dp(history=...)``).
A word only u has (count exactly 1) is released with probability ``Φ̄((τ−1)/σ_v)``, so one of
them is with probability at most ``δ_τ``; that event E is independent of everything else.
If the composition (vocabulary's Gaussian part + DP-SGD) is (ε_A, δ_A)-DP, the whole release
satisfies ``P[M(D′) ∈ S] <= e^{ε_A} P[M(D) ∈ S] + δ_A + δ_τ`` (D′ = D + u: split on E) and
``P[M(D) ∈ S] <= e^{ε_A} P[M(D′) ∈ S] / (1 − δ_τ) + δ_A`` (on the complement of E, whose
probability is at least 1 − δ_τ, the larger data set's release equals the Gaussian part's),
i.e. it is ``(ε_A + ln(1/(1 − δ_τ)), δ_A + δ_τ)``-DP (:func:`total_guarantee`).

Choices: ``k = 8`` and ``noise_multiplier = 4`` by default (on its own ε ≈ 0.94 at δ = 1e-5
with PRV); the threshold makes a word need roughly ``1 + 5.2·σ_v`` ≈ 60 units at δ_τ = 1e-6 —
rare words, the PHI among them, map to ``<unk>`` (the character encoder still sees their
form). Floating-point effects of sampling the Gaussian are not addressed (as in DP-SGD,
:mod:`.secure`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from ..embeddings.vectors import normalize_token
from .secure import SecureRandom

__all__ = ["VocabularyRelease", "dp_vocabulary", "total_guarantee"]


@dataclass(frozen=True)
class VocabularyRelease:
    """The released words and the parameters of the mechanism that chose them."""

    words: list[str]
    unit: str
    n_units: int
    max_words_per_unit: int
    noise_multiplier: float  # σ_v / √k: the Gaussian phase for the accountant
    noise_std: float  # σ_v, on the counts
    threshold: float  # τ
    delta_threshold: float  # δ_τ: probability that a word of one unit alone is released

    def accountant_phase(self) -> tuple[float, float, int]:
        """The Gaussian part as an accountant phase (σ, q, steps) = (noise_multiplier, 1, 1)."""
        return (self.noise_multiplier, 1.0, 1)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["size"] = len(d.pop("words"))
        return d


def _threshold_for(noise_std: float, max_words_per_unit: int, delta_threshold: float) -> float:
    """τ such that each of a unit's at most k words of count 1 passes with probability
    ``δ_τ / k``: ``τ = 1 + σ_v · Φ̄⁻¹(δ_τ / k)``."""
    from scipy.stats import norm

    return 1.0 + noise_std * float(norm.isf(delta_threshold / max_words_per_unit))


def _uniform(rng, n: int) -> np.ndarray:
    return rng.uniform(n) if isinstance(rng, SecureRandom) else rng.random(n)


def _normal(rng, n: int) -> np.ndarray:
    return rng.standard_normal(n)  # SecureRandom and numpy Generators share this method


def dp_vocabulary(
    unit_tokens: Sequence[Sequence[str]],
    *,
    unit: str = "sentence",
    noise_multiplier: float = 4.0,
    max_words_per_unit: int = 8,
    delta_threshold: float = 1e-6,
    rng=None,
    lowercase: bool = True,
    normalize_digits: bool = True,
) -> VocabularyRelease:
    """DP word vocabulary (module docstring) from the tokens of each privacy unit
    (``unit_tokens[i]``: all tokens of unit i). ``rng``: a
    :class:`~deidlib.privacy.secure.SecureRandom` (default: a new one, OS CSPRNG) or a seeded
    ``numpy.random.Generator`` (reproducible; the guarantee then does not hold against anyone
    holding the seed). Words are normalised as the featurizer does (``normalize_token``)."""
    if not noise_multiplier > 0:
        raise ValueError(f"vocabulary noise multiplier must be > 0, got {noise_multiplier}")
    if int(max_words_per_unit) != max_words_per_unit or max_words_per_unit < 1:
        raise ValueError(f"max words per unit must be a positive integer, got {max_words_per_unit}")
    if not 0 < delta_threshold < 1:
        raise ValueError(f"delta_threshold must lie in (0, 1), got {delta_threshold}")
    rng = SecureRandom() if rng is None else rng
    k = int(max_words_per_unit)
    counts: Counter = Counter()
    for toks in unit_tokens:
        words = sorted({normalize_token(t, lowercase, normalize_digits) for t in toks})
        if len(words) > k:
            order = np.argsort(_uniform(rng, len(words)), kind="stable")[:k]
            words = [words[i] for i in order]
        counts.update(words)
    std = noise_multiplier * math.sqrt(k)
    tau = _threshold_for(std, k, delta_threshold)
    cand = sorted(counts)
    noisy = np.array([counts[w] for w in cand], dtype=np.float64) + std * _normal(rng, len(cand))
    keep = [(float(c), w) for c, w in zip(noisy, cand) if c > tau]
    words = [w for _, w in sorted(keep, key=lambda x: (-x[0], x[1]))]
    return VocabularyRelease(words, unit, len(unit_tokens), k, float(noise_multiplier), std, tau,
                             float(delta_threshold))


def total_guarantee(epsilon_composed: float, delta_composed: float, delta_threshold: float) -> tuple[float, float]:
    """(ε, δ) of the whole release from the accountant's (ε_A, δ_A) for the vocabulary's
    Gaussian part composed with DP-SGD: ``(ε_A + ln(1/(1 − δ_τ)), δ_A + δ_τ)`` (module docstring)."""
    return epsilon_composed - math.log1p(-delta_threshold), delta_composed + delta_threshold
