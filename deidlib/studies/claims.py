"""The "paper vs ours" tables of the studies not yet converted to study packages (a study
package has its own ``claims.py``, :mod:`deidlib.studies.protocol`): the published statements
each reproduces, this run's number for each, and a verdict computed by :func:`deidlib.reporting.verdict` (never typed by hand).

Every function takes the tables its notebook already shows and returns
:func:`deidlib.reporting.claims_table`; a part the run did not measure (smaller profile, skipped
table) gives ``not measured``. Paper values are quoted from the papers (table or section in the
claim text). Most claims compare *differences* (A − B, with − without): absolute scores depend on
the corpus and the scale of the run, the paper's ordering and gaps are what a reproduction can test.
Guarded by ``tests/studies/test_claims.py``.
"""

from __future__ import annotations

import math

import pandas as pd

from ..reporting import Claim, claims_table, flat_table, table_value

__all__ = ["ahmed_models", "tchouka", "audits"]

NAN = math.nan


_flat = flat_table
_one = table_value


# ---------------------------------------------------------------------- 02 ahmed models


def _with_paired_test(rule_verdict: str, paired: str) -> str:
    """The claims-table verdict of an effect once its paired test over seeds is known."""
    if paired == "reversed":
        return "contradicts"
    if paired == "not distinguishable from zero" and rule_verdict == "faithful":
        return "partial"
    return rule_verdict


def ahmed_models(t42: pd.DataFrame | None, t43: pd.DataFrame | None, t44: pd.DataFrame | None,
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
                  (r.lo, r.hi), r.paper_text if isinstance(r.paper_text, str) else None)
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


# ---------------------------------------------------------------------- 08 tchouka

#: mechanisms of :func:`deidlib.studies.tchouka.guarantee_checks` whose privacy the paper states:
#: row-name prefix → (claim, rule). ``at_most``: the max log-ratio stays within ε·d (private);
#: ``at_least``: it exceeds ε·d (the paper's section 2 argues the uniform shift is not private).
_TCHOUKA = {
    "dp (": ("date Laplace mechanism is ε·d-private (Definition 3, section 4.1)", "at_most"),
    "ldp (": ("date LDP inside a time category is ε-private (section 4.1, after Tchouka et al. 2022)", "at_most"),
    "shift (": ("a uniform date shift is not private: one known date reveals the others (section 2.2)", "at_least"),
    "paper Algorithm 1 (": ("Algorithm 1 (city substitution) is ε·d-private (section 4.2: 'verifies ε.d-privacy')",
                            "at_most"),
}


def tchouka(checks: pd.DataFrame, table2: pd.DataFrame | None = None) -> pd.DataFrame:
    """Tchouka et al.: the privacy statements checked by
    :func:`deidlib.studies.tchouka.guarantee_checks` (paper value: the bound ε·d; ours: the exact
    maximum log-ratio of the output laws, or the empirical one where no exact value exists), and,
    with ``table2`` (:func:`deidlib.studies.tchouka.ner.table2`), the NER-quality statement of
    section 3.4: the proposed NER's overall micro F1 (Table 2, 97.4) against the overall F1 of the
    tagger that feeds our surrogates."""
    ch = _flat(checks)
    claims = []
    for prefix, (text, rule) in _TCHOUKA.items():
        rows = ch[ch.mechanism.astype(str).str.startswith(prefix)] if not ch.empty else ch
        if not len(rows):
            claims.append(Claim(text, NAN, NAN, rule))
            continue
        for _, r in rows.iterrows():
            ours = r.exact_max_log_ratio if not pd.isna(r.exact_max_log_ratio) else r.empirical_max_log_ratio
            claims.append(Claim(f"{text}: max log-ratio, {r.mechanism}", float(r.bound), float(ours), rule,
                                1e-6, paper_text=f"ε·d = {float(r.bound):.3g}"))
    if table2 is not None:
        t2 = _flat(table2)
        claims.append(Claim(
            "the NER feeding the surrogates reaches the paper's overall micro F1 (section 3.4, Table 2, "
            "'PROPOSAL' Overall: 'at the level of those in English')",
            _one(t2, "paper_proposal_f1", label="Overall"), _one(t2, "f1", label="Overall"), "at_least", 0.02))
    return claims_table(claims)


# ---------------------------------------------------------------------- 09 audits


def audits(epsilon_audits: pd.DataFrame) -> pd.DataFrame:
    """Notebook 09's package claims: an audited ε lower bound (95 % confidence) never exceeds the
    accountant's ε for a correct mechanism, and exceeds it for the deliberately broken one. The
    reference column is the accountant's ε."""
    e = _flat(epsilon_audits)
    claims = []
    for _, r in e.iterrows():
        broken = bool(r.broken)
        claims.append(Claim(
            f"{r.audit}, σ = {r.claimed_noise_multiplier:g}: audited ε lower bound "
            + ("exceeds the accountant's ε (the audit catches the bug)" if broken else "≤ the accountant's ε"),
            float(r.accountant_epsilon), float(r.epsilon_lower_bound), "at_least" if broken else "at_most", 0.0))
    return claims_table(claims, reference="accountant ε")
