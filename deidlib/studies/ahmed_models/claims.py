"""The "paper vs ours" claims of the ahmed_models study (Ahmed 2020 thesis, Tables 4.2–4.4, binary
token %, differences in percentage points): the thesis' numbers, this run's number for each and a
verdict computed by :func:`deidlib.reporting.verdict`, never typed by hand; with the paired effects
over seeds (:func:`~.effects.paired_effects`) the verdict also reads the paired test.
"""

from __future__ import annotations

import math

import pandas as pd

from ...reporting import Claim, claims_table, flat_table, table_value

__all__ = ["paper_vs_ours"]

NAN = math.nan
_flat = flat_table
_one = table_value


def _with_paired_test(rule_verdict: str, paired: str) -> str:
    """The claims-table verdict of an effect once its paired test over seeds is known."""
    if paired == "reversed":
        return "contradicts"
    if paired == "not distinguishable from zero" and rule_verdict == "faithful":
        return "partial"
    return rule_verdict


def paper_vs_ours(t42: pd.DataFrame | None, t43: pd.DataFrame | None, t44: pd.DataFrame | None,
                 effects: pd.DataFrame | None = None) -> pd.DataFrame:
    """Ahmed (MSc thesis), Tables 4.2–4.4 (binary token %, differences in percentage points):
    the tables of :mod:`deidlib.studies.ahmed_models` (``None`` when not run).

    With ``effects`` (:func:`deidlib.studies.ahmed_models.paired_effects`) every claim is read
    from it instead: ``ours`` is the mean paired difference over seeds, ``interval`` its 95 % t
    interval, and the columns ``seeds``, ``p (paired t)`` and ``paired test`` (``found`` / ``not
    distinguishable from zero`` / ``reversed``) are added. The verdict then also reads the paired
    test: a point estimate on the paper's side whose paired test cannot tell it from zero is
    ``partial``, never ``faithful``; a paired test that finds the opposite effect is
    ``contradicts`` (:func:`_with_paired_test`)."""
    if effects is not None and len(effects):
        e = effects.reset_index(drop=True)
        t = claims_table([
            Claim(r.claim, float(r.paper), r["mean"], r.rule, float(r.tol),
                  (r.lo, r.hi), r.paper_text if isinstance(r.paper_text, str) else None,
                  sign_only=isinstance(r.paper_text, str))  # "> 0": the thesis states the sign only
            for _, r in e.iterrows()
        ])
        at = list(t.columns).index("verdict")  # the verdict stays the last column
        t.insert(at, "seeds", e["n"].astype(int))
        t.insert(at + 1, "p (paired t)", [f"{p:.3g}" if p == p else "–" for p in e["p"]])
        t.insert(at + 2, "paired test", e["verdict"])
        t["verdict"] = [_with_paired_test(v, pt) for v, pt in zip(t["verdict"], e["verdict"])]
        return t
    t42, t43, t44 = _flat(t42), _flat(t43), _flat(t44)
    sat_gap = NAN
    if not t42.empty:
        # the self-attention tagger is the pre-trained encoder (kind "minilm"); the from-scratch
        # transformer row is neither it nor an RNN
        sat = t42[t42.kind == "minilm"].F1_mean
        rnn = t42[~t42.kind.isin(["minilm", "transformer"])].F1_mean
        if len(sat) and len(rnn):
            sat_gap = float(sat.max() - rnn.max())

    def f1(config):
        return _one(t43, "F1_mean", config=config)

    return claims_table([
        Claim("self-attention beats the best RNN tagger: F1 gap (Table 4.2, Nursing Notes: 85.9 vs 77.0)",
              85.9 - 77.0, sat_gap, "same_sign", 1.0),
        Claim("character embeddings help the GRU-CRF (dropout 0.5): F1 with − without (Table 4.3, i2b2: 97.3 vs 90.7)",
              97.3 - 90.7, f1("gru-crf-d0.5") - f1("gru-nochar-crf-d0.5"), "same_sign", 1.0),
        Claim("a CRF output beats softmax for the GRU: F1 CRF − softmax (Table 4.3, i2b2: 97.3 vs 96.5)",
              97.3 - 96.5, f1("gru-crf-d0.5") - f1("gru-softmax-d0.5"), "same_sign", 0.5),
        Claim("CRF and softmax tie for self-attention: F1 CRF − softmax (Table 4.3, i2b2: 98.2 vs 98.1)",
              98.2 - 98.1, f1("sat-crf-d0.25") - f1("sat-softmax-d0.25"), "close", 1.0),
        Claim("recall penalty δ_p = 10 raises recall over δ_p = 1 (Table 4.4, i2b2: 97.5 vs 97.1)",
              97.5 - 97.1, _one(t44, "R_mean", delta_p=10.0) - _one(t44, "R_mean", delta_p=1.0), "same_sign", 0.2),
    ])
