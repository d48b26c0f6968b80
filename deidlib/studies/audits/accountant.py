"""Audits of the DP-SGD accountant's ε: the white-box one-step audit at every σ of the study and
the one-run audit of ``train_dp`` (Steinke, Nasr & Jagielski 2023), each with a deliberately broken
mechanism that must exceed its claim; a correct mechanism whose lower bound beats its ε raises."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...audits import audit_dp_step, audit_train_dp_one_run, raise_if_violated
from ...privacy.accounting import noise_for_epsilon
from ...rng import derive_seed
from .data import AuditData, _featurizer, make_tagger
from .params import AuditParams

__all__ = []


def one_run_audit(data: AuditData, params: AuditParams, target_epsilon: float, *, seed: int = 0,
                  actual_noise: float | None = None, train_dp_fn=None) -> dict[str, Any]:
    """The one-run audit of :func:`~deidlib.privacy.dpsgd.train_dp` (Steinke, Nasr & Jagielski
    2023; :func:`deidlib.audits.one_run.audit_train_dp_one_run`): the first ``one_run_sentences``
    population sentences plus ``one_run_canaries`` Dirac gradient canaries (each in with
    probability 1/2), one full-batch run of ``one_run_steps`` steps at the σ calibrated to
    ``target_epsilon`` (params' δ, accountant and C; seeded). ``actual_noise`` (a fraction of the
    calibrated σ) runs a deliberately broken mechanism; ``train_dp_fn`` replaces ``train_dp``
    (a test passes a mutant)."""
    base = data.sentences[: params.one_run_sentences]

    def make_base(extra_words):
        fz = _featurizer([s.words for s in base], extra_words)
        return make_tagger(fz, params, derive_seed(seed, "one-run-init"))

    a = audit_train_dp_one_run(
        make_base, base, canaries=params.one_run_canaries, target_epsilon=target_epsilon,
        steps=params.one_run_steps, delta=params.delta, accountant=params.accountant,
        max_grad_norm=params.max_grad_norm, seed=derive_seed(seed, "one-run", target_epsilon, actual_noise or 0.0),
        actual_noise_multiplier=actual_noise, train_dp=train_dp_fn)
    return a.to_dict()


def epsilon_audits(data: AuditData, params: AuditParams, *, seed: int = 0) -> pd.DataFrame:
    """One-step white-box audits at every σ (and one broken mechanism), the one-run audits of
    ``train_dp`` (and one broken run); raises if a correct mechanism's lower bound exceeds its
    accountant ε (a bug, :func:`deidlib.audits.epsilon.raise_if_violated`)."""
    rows = []
    for s in params.dp_noises:
        a = audit_dp_step(s, trials=params.step_audit_trials, delta=params.delta, accountant="rdp",
                          seed=derive_seed(seed, "audit-step", s))
        rows.append({"audit": "one DP-SGD step (gradient canary)", **a.to_dict(), "broken": False})
    # the broken mechanism claims the largest σ (smallest ε): with 2×1000 trials the audit can
    # prove at most ≈ 5.6, so a claim above that could not be caught whatever the noise
    s = max(params.dp_noises)
    a = audit_dp_step(s, actual_noise_multiplier=s / 10, trials=params.step_audit_trials, delta=params.delta,
                      accountant="rdp", seed=derive_seed(seed, "audit-broken"))
    rows.append({"audit": "one DP-SGD step, noise 10x too small (deliberately broken)", **a.to_dict(),
                 "broken": True})
    for eps in params.one_run_epsilons:
        rows.append({**one_run_audit(data, params, eps, seed=seed), "broken": False})
    eps = params.one_run_broken_epsilon
    sigma = noise_for_epsilon(eps, 1.0, params.one_run_steps, params.delta, params.accountant)
    b = one_run_audit(data, params, eps, seed=seed, actual_noise=sigma / 10)
    rows.append({**b, "audit": b["audit"] + ", noise 10x too small (deliberately broken)", "broken": True})
    df = pd.DataFrame(rows)
    raise_if_violated(df.to_dict("records"))
    return df
