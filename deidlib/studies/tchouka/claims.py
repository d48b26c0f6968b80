"""The "paper vs ours" claims of the tchouka study (Tchouka et al. 2023): the privacy statements
of sections 2 and 4 checked by :func:`~.privacy.guarantee_checks` and the NER quality of section
3.4 (Table 2); verdicts computed by :func:`deidlib.reporting.verdict`, never typed by hand.
"""

from __future__ import annotations

import math

import pandas as pd

from ...reporting import Claim, claims_table, flat_table, table_value

__all__ = ["paper_vs_ours"]

NAN = math.nan
_flat = flat_table
_one = table_value


#: mechanisms of :func:`deidlib.studies.tchouka.privacy.guarantee_checks` whose privacy the paper states:
#: row-name prefix → (claim, rule). ``at_most``: the max log-ratio stays within ε·d (private);
#: ``at_least``: it exceeds ε·d (the paper's section 2 argues the uniform shift is not private).
_TCHOUKA = {
    "dp (": ("date Laplace mechanism is ε·d-private (Definition 3, section 4.1)", "at_most"),
    "ldp (": ("date LDP inside a time category is ε-private (section 4.1, after Tchouka et al. 2022)", "at_most"),
    "shift (": ("a uniform date shift is not private: one known date reveals the others (section 2.2)", "at_least"),
    "paper Algorithm 1 (": ("Algorithm 1 (city substitution) is ε·d-private (section 4.2: 'verifies ε.d-privacy')",
                            "at_most"),
}


def paper_vs_ours(checks: pd.DataFrame, table2: pd.DataFrame | None = None) -> pd.DataFrame:
    """Tchouka et al.: the privacy statements checked by
    :func:`deidlib.studies.tchouka.privacy.guarantee_checks` (paper value: the bound ε·d; ours: the exact
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
