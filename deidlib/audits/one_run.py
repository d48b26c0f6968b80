"""Auditing DP-SGD with one training run (Steinke, Nasr & Jagielski 2023, "Privacy Auditing
with One (1) Training Run", NeurIPS).

The game (their Algorithm 1). ``m`` canaries; each is included in the training set
independently with probability 1/2 (S_i = +1 in, −1 out). One run of the *real*
:func:`deidlib.privacy.dpsgd.train_dp` (its sampler, per-unit clipping, noise and accountant)
trains on the non-canary sentences plus the included canaries. The auditor scores every
canary, guesses the ``k_plus`` highest scores IN and the ``k_minus`` lowest OUT (abstaining on
the rest), and counts the correct guesses ``v`` of its ``r = k_plus + k_minus``.

Their Theorem 5.2: if the mechanism is (ε, δ)-DP, ``v`` is stochastically dominated, up to a
δ-term, by Binomial(r, e^ε / (1 + e^ε)) — each guess is right with probability at most that
of ε-randomised response. :func:`_p_value` computes their bound on P[v correct or more] (the
algorithm of their appendix, "numerically computing the p-value"); :func:`_epsilon_one_run` is
the largest ε that this bound rejects at level ``alpha``: with confidence 1 − α, the true ε is
at least it. A lower bound above the accountant's ε proves that the accountant under-reports
(a privacy bug; :func:`deidlib.audits.epsilon.raise_if_violated`).

Canaries (white-box, "Dirac" gradient canaries: Nasr et al. 2021 §4, Nasr et al. 2023;
Steinke et al. §6 "white-box"). :class:`GradientCanaryTagger` wraps a real tagger and adds
one parameter coordinate per canary. Canary ``i`` is a one-word sentence (a word of its
own); its loss is ``−B · θ_c[i]`` and nothing else, so its per-unit gradient is ``−B·e_i``
(B ≫ C), which ``train_dp`` clips to ``−C·e_i`` — the worst-case unit of the DP-SGD
analysis. No other unit reaches ``θ_c``, so with plain SGD the canary's final coordinate is
``lr / L · Σ_t (C·[i in lot t] + N(0, σ²C²))``; the score is that coordinate. The audit thus
attacks exactly the code path of a training run (lots, clipping, noise scale, denominator,
number of steps) against the ledger the same run reports.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from scipy.stats import binom

from ..corpus.labels import TaggedSentence
from ..corpus.tokenize import Token
from ..models.taggers import BaseTagger
from ..privacy.accounting import epsilon as accountant_epsilon
from ..privacy.accounting import noise_for_epsilon
from .epsilon import AuditVerdict

__all__ = ["audit_train_dp_one_run"]


def _p_value(m: int, r: int, v: int, epsilon: float, delta: float) -> float:
    """Steinke, Nasr & Jagielski (2023), Theorem 5.2 (the appendix's p-value algorithm): an
    upper bound on P[at least ``v`` of ``r`` guesses correct] for an (ε, δ)-DP mechanism
    audited with ``m`` canaries. ``β = P[Binomial(r, q) ≥ v]`` with ``q = e^ε/(1+e^ε)``,
    ``α = max_{1≤i≤v} P[v−i ≤ Binomial(r, q) < v] / i``; the bound is ``min(1, β + 2mδ·α)``."""
    if not 0 <= v <= r <= m:
        raise ValueError(f"need 0 <= v <= r <= m, got v={v}, r={r}, m={m}")
    if not epsilon >= 0 or not 0 <= delta <= 1:
        raise ValueError(f"need epsilon >= 0 and 0 <= delta <= 1, got {epsilon}, {delta}")
    q = 1.0 / (1.0 + math.exp(-epsilon))
    beta = float(binom.sf(v - 1, r, q))
    if v == 0:
        return min(1.0, beta)
    i = np.arange(1, v + 1)
    alpha = float(np.max(np.cumsum(binom.pmf(v - i, r, q)) / i))  # cumsum[i-1] = P[v-i <= B < v]
    return min(1.0, beta + alpha * delta * 2 * m)


def _epsilon_one_run(m: int, r: int, v: int, delta: float, alpha: float = 0.05, *, iterations: int = 40) -> float:
    """The ε lower bound at confidence ``1 − alpha`` from ``v`` correct of ``r`` guesses on
    ``m`` canaries (Steinke, Nasr & Jagielski 2023, Theorem 5.2 and their appendix's
    ε-from-guesses search): the largest ε with ``p_value(m, r, v, ε, δ) < alpha``, by bisection
    (the p-value rises with ε). 0 when even ε = 0 is not rejected."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    if _p_value(m, r, v, 0.0, delta) >= alpha:
        return 0.0
    lo, hi = 0.0, 1.0
    while _p_value(m, r, v, hi, delta) < alpha:
        lo, hi = hi, hi + 1.0
        if hi > 100:  # e^100: no finite audit reaches it
            return math.inf
    for _ in range(iterations):
        mid = (lo + hi) / 2
        if _p_value(m, r, v, mid, delta) < alpha:
            lo = mid
        else:
            hi = mid
    return lo


def _canary_word(i: int) -> str:
    """A word of its own for canary ``i`` (letters only: the featurizer maps digits to 0)."""
    letters, n = [], i
    while True:
        letters.append("abcdefghijklmnopqrstuvwxyz"[n % 26])
        n //= 26
        if n == 0:
            break
    return "zqcanary" + "".join(reversed(letters))


class GradientCanaryTagger(torch.nn.Module):
    """A real tagger plus one parameter coordinate per canary ("Dirac" gradient canaries).

    A sentence whose first word is canary ``i``'s word (:func:`_canary_word`) has loss
    ``−scale · θ_c[i]`` (its tagger loss is dropped), so its gradient is ``−scale·e_i`` on
    ``canary`` and zero elsewhere; every other sentence keeps its tagger loss and does not
    reach ``canary``. Everything else (featurizer, emissions) is the wrapped tagger's."""

    def __init__(self, base: BaseTagger, canary_ids: Sequence[int], scale: float = 1e4):
        super().__init__()
        self.base = base
        self.featurizer = base.featurizer
        self.kind = f"{getattr(base, 'kind', 'tagger')}+gradient-canaries"
        self.recall_penalty = None  # the canary loss is linear: no batch-level weight
        self.scale = float(scale)
        self.canary = torch.nn.Parameter(torch.zeros(len(canary_ids)))
        slot = torch.full((len(base.featurizer.words),), -1, dtype=torch.long)
        slot[torch.as_tensor(list(canary_ids), dtype=torch.long)] = torch.arange(len(canary_ids))
        if len(set(canary_ids)) != len(canary_ids):
            raise ValueError("every canary needs a word id of its own")
        self.register_buffer("slot", slot)

    def emissions(self, batch):
        return self.base.emissions(batch)

    def sentence_losses(self, batch, em):
        tagger_loss = self.base.sentence_losses(batch, em)
        j = self.slot[batch.word_ids[:, 0]]
        is_canary = j >= 0
        canary_loss = -self.scale * self.canary[j.clamp(min=0)]
        return torch.where(is_canary, canary_loss, tagger_loss)


def _canary_sentence(i: int) -> TaggedSentence:
    """Canary ``i`` as a training sentence: its word alone, tagged O."""
    w = _canary_word(i)
    return TaggedSentence(f"canary-{i}", [Token(w, 0, len(w))], ["O"])


@dataclass(frozen=True)
class OneRunAudit(AuditVerdict):
    """One one-run audit: the run's ledger (accountant ε) and the ε lower bound; ``trials`` is 1
    (one training run)."""

    audit: str
    canaries: int
    canary_kind: str
    included: int
    guesses: int
    correct: int
    steps: int
    sample_rate: float
    claimed_noise_multiplier: float
    actual_noise_multiplier: float
    delta: float
    accountant: str
    accountant_epsilon: float
    epsilon_lower_bound: float
    confidence: float
    seconds: float
    trials: int = 1


def audit_train_dp_one_run(
    make_base: Callable[[Sequence[str]], BaseTagger],
    sentences: Sequence[TaggedSentence],
    *,
    canaries: int = 1000,
    k_plus: int | None = None,
    k_minus: int | None = None,
    target_epsilon: float = 8.0,
    steps: int = 1,
    delta: float = 1e-5,
    accountant: str = "rdp",
    max_grad_norm: float = 1.0,
    lr: float = 1.0,
    alpha: float = 0.05,
    seed: int = 0,
    secure: bool = False,
    actual_noise_multiplier: float | None = None,
    train_dp: Callable | None = None,
) -> OneRunAudit:
    """One run of ``train_dp`` (default: :func:`deidlib.privacy.dpsgd.train_dp`; a test passes a
    mutant) with ``canaries`` Dirac gradient canaries, each included with probability 1/2 (seeded
    coins), full batch (``batch_size`` = all units, q = 1) for ``steps`` steps, σ calibrated by
    ``train_dp`` to ``target_epsilon``, plain SGD. ``make_base(extra_words)`` builds the wrapped
    tagger, whose vocabulary must contain ``extra_words`` (the canary words). Guesses: the
    ``k_plus`` (default m/10) highest scores IN, the ``k_minus`` (default m/10) lowest OUT,
    fixed before the run. Returns the audit with the run's ledger ε.

    ``actual_noise_multiplier`` runs a deliberately broken mechanism: ``train_dp`` is given that
    σ while the claimed ε stays the accountant's ε of the σ calibrated for ``target_epsilon``
    (as :func:`deidlib.audits.epsilon.audit_dp_step`'s ``actual_noise_multiplier``)."""
    import time

    if train_dp is None:
        from ..privacy.dpsgd import train_dp as default_train_dp

        train_dp = default_train_dp
    m = int(canaries)
    kp = max(1, m // 10) if k_plus is None else int(k_plus)
    km = max(1, m // 10) if k_minus is None else int(k_minus)
    if m < 2 or kp + km > m or kp < 0 or km < 0:
        raise ValueError(f"need 2 <= canaries and k_plus + k_minus <= canaries (got {m}, {kp}, {km})")
    t0 = time.perf_counter()
    words = [_canary_word(i) for i in range(m)]
    base = make_base(words)
    fz = base.featurizer
    ids = [int(fz.encode([[w]], [["O"]]).word_ids[0, 0]) for w in words]
    if min(ids) <= 1 or len(set(ids)) != m:  # 0 = padding, 1 = unknown
        raise ValueError("make_base must give every canary word an id of its own (extra_words)")
    tagger = GradientCanaryTagger(base, ids)
    coins = np.random.default_rng(seed).random(m) < 0.5
    train = [*sentences, *(_canary_sentence(i) for i in np.flatnonzero(coins).tolist())]
    noise: dict[str, Any] = {"target_epsilon": target_epsilon} if actual_noise_multiplier is None else {
        "noise_multiplier": float(actual_noise_multiplier)}
    with torch.random.fork_rng(devices=[]):
        _, ledger = train_dp(tagger, train, None, None, epochs=steps, batch_size=len(train), delta=delta,
                             max_grad_norm=max_grad_norm, accountant=accountant, optimizer="sgd", lr=lr,
                             seed=seed, progress=False, eval_every=10**9, secure=secure, **noise)
    claimed_sigma, claimed_eps = float(ledger.noise_multiplier), float(ledger.epsilon)
    if actual_noise_multiplier is not None:
        claimed_sigma = noise_for_epsilon(target_epsilon, ledger.sample_rate, ledger.steps, ledger.delta,
                                          ledger.accountant)
        claimed_eps = accountant_epsilon(claimed_sigma, ledger.sample_rate, ledger.steps, ledger.delta,
                                         ledger.accountant)
    scores = tagger.canary.detach().double().numpy()
    order = np.argsort(-scores, kind="stable")
    correct = int(coins[order[:kp]].sum()) + int((~coins[order[m - km :]]).sum() if km else 0)
    lb = _epsilon_one_run(m, kp + km, correct, ledger.delta, alpha)
    return OneRunAudit(
        "one-run train_dp (Steinke et al. 2023)", m, "Dirac gradient canary (white-box)", int(coins.sum()),
        kp + km, correct, int(ledger.steps), float(ledger.sample_rate), claimed_sigma,
        float(ledger.noise_multiplier), float(ledger.delta), ledger.accountant, claimed_eps, float(lb), 1 - alpha,
        time.perf_counter() - t0,
    )
