"""alawad claims: the "paper vs ours" verdicts read the pooled rows and the attack."""

from __future__ import annotations

import pandas as pd

from deidlib.studies import alawad


def _verdicts(t: pd.DataFrame) -> list[str]:
    assert list(t.columns)[0] == "claim" and t.columns[-1] == "verdict"
    return t.verdict.tolist()


def test_alawad_claims_read_the_pooled_rows_and_the_attack():
    f1 = pd.DataFrame({"micro_mean": [0.6, 0.9, 0.89], "macro_mean": [0.4, 0.8, 0.79]},
                      index=pd.Index(["single", "centralized", "shared_private"], name="approach"))
    sig = pd.DataFrame({"seed": ["0", "all"] * 3, "a": ["centralized"] * 2 + ["single"] * 4,
                        "b": ["shared_private"] * 6, "metric": ["micro"] * 4 + ["macro"] * 2,
                        "p_mcnemar": [0.001, 0.4] + [0.0] * 4, "p_bootstrap": [0.5, 0.5, 0.3, 0.01, 0.3, 0.02]})
    eq = pd.DataFrame({"seed": ["all", "all"], "a": ["centralized"] * 2, "b": ["shared_private"] * 2,
                       "metric": ["micro", "macro"], "margin": [0.03, 0.03], "p_tost": [0.01, 0.2]})
    att = pd.DataFrame({"approach": ["shared_private", "shared_private_no_adv"], "attacker":
                        ["fresh classifier, frozen features"] * 2, "accuracy_mean": [0.5, 0.7]})
    v = _verdicts(alawad.paper_vs_ours(f1, sig, "all", eq, att))
    assert v == ["faithful"] * 5 + ["contradicts", "faithful", "faithful"]  # macro TOST p 0.2 fails
    v0 = _verdicts(alawad.paper_vs_ours(f1, sig, "0", eq, att))
    assert v0[1] == "contradicts" and v0[4:6] == ["not measured"] * 2 and v0[6] == "contradicts"
    att.loc[0, "accuracy_mean"] = 0.8  # the adversary made the registry easier to find
    assert _verdicts(alawad.paper_vs_ours(f1, sig, "all", eq, att))[-1] == "contradicts"


def test_alawad_attack_row_reads_the_seeds_range():
    """The committed run: shared-private 0.68 (seeds 0.60–0.76) against the no-adversary control;
    a difference whose seed range spans zero is not a contradiction, one wholly above zero is."""
    f1 = pd.DataFrame({"micro_mean": [0.6], "macro_mean": [0.4]}, index=pd.Index(["single"], name="approach"))
    att = pd.DataFrame({"approach": ["shared_private", "shared_private_no_adv"],
                        "attacker": ["fresh classifier, frozen features"] * 2, "accuracy_mean": [0.681, 0.666],
                        "accuracy_min": [0.598, 0.640], "accuracy_max": [0.763, 0.690]})
    row = alawad.paper_vs_ours(f1, pd.DataFrame(), "all", None, att).iloc[-1]
    assert row.interval == "[-0.092, 0.123]" and row.verdict == "partial"
    att["accuracy_min"] = [0.75, 0.60]
    att["accuracy_max"] = [0.80, 0.65]
    att["accuracy_mean"] = [0.77, 0.62]
    assert alawad.paper_vs_ours(f1, pd.DataFrame(), "all", None, att).iloc[-1].verdict == "contradicts"
