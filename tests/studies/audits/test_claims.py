"""The audits claims (deidlib.studies.audits.claims.paper_vs_ours): an audited ε lower bound stays
under the accountant's ε for a correct mechanism, and the deliberately broken one must be caught."""

from __future__ import annotations

import pandas as pd

from deidlib.studies import audits as au


def _verdicts(t: pd.DataFrame) -> list[str]:
    assert list(t.columns)[0] == "claim" and t.columns[-1] == "verdict"
    return t.verdict.tolist()


def test_audits_claims_expect_the_broken_mechanism_to_be_caught():
    e = pd.DataFrame({"audit": ["step", "step, broken"], "claimed_noise_multiplier": [1.0, 2.0],
                      "accountant_epsilon": [4.7, 2.2], "epsilon_lower_bound": [1.5, 5.2], "broken": [False, True]})
    t = au.paper_vs_ours(e)
    assert list(t.columns)[1] == "accountant ε"
    assert _verdicts(t) == ["faithful", "faithful"]
    e.loc[1, "epsilon_lower_bound"] = 0.3  # the audit missed the bug
    assert _verdicts(au.paper_vs_ours(e))[1] == "contradicts"
