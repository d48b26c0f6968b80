"""The "paper vs ours" claims of the alawad study (Alawad et al. 2020, highlight: abstract,
overview and conclusion). The highlight states orderings and significance, not numbers: the
claims read this run's F1 gaps, the paired-bootstrap and McNemar p-values, the TOST equivalence
p-value and the fresh attacker's registry accuracy. Verdicts come from
:func:`deidlib.reporting.verdict`, never typed by hand.
"""

from __future__ import annotations

import pandas as pd

from ...reporting import Claim, claims_table, flat_table, table_value

__all__ = ["paper_vs_ours"]


def paper_vs_ours(f1: pd.DataFrame, significance: pd.DataFrame, pooled_seed: str,
                  equivalence: pd.DataFrame | None = None, attack: pd.DataFrame | None = None) -> pd.DataFrame:
    """The claims table of the highlight (abstract, overview and conclusion): :func:`~.tables.f1_table`
    (index approach), :func:`~.tables.significance_table`, :func:`~.tables.equivalence_table` and
    :func:`~.tables.attack_table`; ``pooled_seed`` is the seed label whose
    tests are read (``"all"`` with several seeds)."""
    f = flat_table(f1)
    sig, eq, att = flat_table(significance), flat_table(equivalence), flat_table(attack)
    if not sig.empty:
        sig = sig[sig.seed.astype(str) == str(pooled_seed)]
    if not eq.empty:
        eq = eq[eq.seed.astype(str) == str(pooled_seed)]

    def gap(a, b, metric):
        return table_value(f, f"{metric}_mean", approach=a) - table_value(f, f"{metric}_mean", approach=b)

    claims = []
    for metric in ("micro", "macro"):
        claims.append(Claim(f"shared-private beats single-registry models, {metric} F1: shared-private − single "
                            "(abstract: 'significantly outperforms')", 1.0, gap("shared_private", "single", metric),
                            "same_sign", 0.01, paper_text="> 0", sign_only=True))
        claims.append(Claim(f"... and significantly: paired-bootstrap p, {metric} F1 (seed {pooled_seed})", 0.05,
                            table_value(sig, "p_bootstrap", a="single", b="shared_private", metric=metric),
                            "at_most", 0.0, paper_text="< 0.05"))
    for metric in ("micro", "macro"):
        margin = table_value(eq, "margin", a="centralized", b="shared_private", metric=metric)
        m = "" if margin != margin else f" ±{margin:g}"
        claims.append(Claim(f"shared-private equivalent to the centralized model within{m} {metric} F1: TOST p "
                            f"(seed {pooled_seed}; abstract: 'statistically indistinguishable')", 0.05,
                            table_value(eq, "p_tost", a="centralized", b="shared_private", metric=metric), "at_most", 0.0,
                            paper_text="< 0.05"))
    claims.append(Claim(f"centralized vs shared-private not significantly different: McNemar p (seed {pooled_seed}; "
                        "abstract)", 0.05, table_value(sig, "p_mcnemar", a="centralized", b="shared_private", metric="micro"),
                        "at_least", 0.04, paper_text="≥ 0.05"))
    fresh = "fresh classifier, frozen features"

    def acc(approach, col="accuracy_mean"):
        return table_value(att, col, approach=approach, attacker=fresh)

    # interval: the range of the difference over the seeds' min–max of each side
    lo = acc("shared_private", "accuracy_min") - acc("shared_private_no_adv", "accuracy_max")
    hi = acc("shared_private", "accuracy_max") - acc("shared_private_no_adv", "accuracy_min")
    claims.append(Claim("adversarial training makes the shared features registry-agnostic: a fresh attacker's registry "
                        "accuracy, shared-private − no-adversary control (overview; interval: seeds' range)", -1.0,
                        acc("shared_private") - acc("shared_private_no_adv"), "same_sign", 0.01,
                        (lo, hi), paper_text="< 0", sign_only=True))
    return claims_table(claims)
