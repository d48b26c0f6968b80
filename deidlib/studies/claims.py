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

__all__ = ["ahmed_models", "ahmed_dp", "tchouka", "audits"]

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


# ---------------------------------------------------------------------- 04 ahmed dp ensemble


def _ensemble_gaps(df: pd.DataFrame, ensemble: str, members: str, col: str) -> list[float]:
    """Per target: ``col`` of the ensemble row containing ``ensemble`` minus the best member's (pp)."""
    gaps = []
    if df.empty:
        return gaps
    for _, d in df.groupby("target"):
        ens = d[d.model.str.contains(ensemble, regex=False)]
        mem = d[d.model.str.startswith(members)] if members else d[~d.model.str.startswith("ensemble")]
        if len(ens) and len(mem):
            gaps.append(100 * (float(ens[col].iloc[0]) - float(mem[col].max())))
    return gaps


def _mean_claim(text, paper, gaps, rule, tol, paper_text=None) -> Claim:
    return Claim(text, paper, sum(gaps) / len(gaps) if gaps else NAN, rule, tol,
                 (min(gaps), max(gaps)) if len(gaps) > 1 else None, paper_text)


def _dp_cost_claims(costs: pd.DataFrame | None) -> list[Claim]:
    """Table 5.3's "DP costs about one point" from :func:`deidlib.studies.ahmed_dp.dp_costs` (pp;
    interval: min–max over the DP seeds)."""
    c = _flat(costs)

    def row(name):
        r = c[c["cost"] == name] if "cost" in c else c.iloc[:0]
        if not len(r):
            return NAN, None
        r = r.iloc[0]
        return float(r["mean"]), ((float(r["min"]), float(r["max"])) if int(r["n"]) > 1 else None)

    total, total_iv = row("non-private SAT − DP SAT")
    alone, alone_iv = row("recipe without DP − DP SAT")
    return [
        Claim("DP costs the self-attention tagger about one point of F1: non-private SAT − DP SAT at ε ≈ 8 "
              "(i2b2: 98.2 in Table 4.2 vs 97.5 at ε 9.15 in Table 5.3)", 98.22 - 97.53, total, "close", 1.0,
              total_iv),
        Claim("DP-SGD alone costs about one point: the DP model's F1 without noise − with DP at ε ≈ 8 "
              "(nursing notes, Table 5.3: 80.5 at ε 343 vs 79.6 at ε 8.41)", 80.508 - 79.583, alone, "close", 1.0,
              alone_iv),
    ]


def ahmed_dp(scenario_a: pd.DataFrame | None, scenario_b: pd.DataFrame | None,
             dp_costs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Ahmed, section 5.3: scenario A (Table 5.1) and B (Table 5.2); differences in percentage points,
    mean over target sites (interval: min–max over targets); with ``dp_costs``
    (:func:`deidlib.studies.ahmed_dp.dp_costs`) also Table 5.3's DP cost of the self-attention tagger
    (``not measured`` without)."""
    a, b = _flat(scenario_a), _flat(scenario_b)
    return claims_table([
        _mean_claim("minimality ensemble recall above its best member, scenario A (Table 5.1a: 68.057 vs 66.725)",
                    68.057 - 66.725, _ensemble_gaps(a, "minimality", "", "recall"), "same_sign", 0.5),
        _mean_claim("minimality ensemble precision below its best member, scenario A (Table 5.1c text: −0.162)",
                    -0.162, _ensemble_gaps(a, "minimality", "", "precision"), "same_sign", 0.1),
        _mean_claim("ensemble(all) recall above the site's own DP model, scenario B (section 5.3: 'always "
                    "significantly better')", 1.0, _ensemble_gaps(b, "minimality", "own", "recall"), "same_sign", 0.5,
                    "> 0"),
        *_dp_cost_claims(dp_costs),
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
