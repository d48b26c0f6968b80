"""The study's tables: Table 5.3 analog and the thesis' sequence counts, Tables 5.1/5.2
(scenarios A and B, the k-of-n rules), Table A.3 (fine-tuning) and the DP costs of Table 5.3's
self-attention tagger."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from ...evaluation import binary_token_prf
from ...privacy.ensemble import aggregate_documents, rule_scores
from ...training import predict_documents
from .accounting import table_5_3, thesis_sequence_counts
from .data import SiteData
from .members import _prf, _published_member
from .params import DPParams

__all__ = ["dp_costs"]


def epsilon_table(sizes: dict[str, int], params: DPParams | None = None, accountants=("prv", "rdp", "gdp")):
    """Table 5.3 analog as a DataFrame: ε per data set (number of training sequences), σ and
    accountant, with the thesis' batch size 16, 100 epochs and δ = 1e-5."""
    params = params or DPParams()
    rows = table_5_3(
        sizes, params.table_noises, batch_size=16, epochs=100, delta=1e-5, accountants=tuple(accountants)
    )
    df = pd.DataFrame([r.to_dict() for r in rows])
    return df.pivot_table(index=["dataset", "n", "noise_multiplier"], columns="accountant", values="epsilon")


def thesis_sequence_table(accountants=("rdp",)):
    """For each row of the thesis' Table 5.3, the N (training sequences) reproducing its ε."""
    return pd.DataFrame(thesis_sequence_counts(tuple(accountants))).drop(columns=["note"])



def scenario_tables(
    sites: Sequence[SiteData],
    members: dict[str, dict[str, Any]],
    rules=(("minimality", None), ("majority", None)),
):
    """Tables 5.1 (scenario A) and 5.2 (scenario B) analogs, one row per (target site, model).

    Scenario A: for each target site, the members trained on the *other* sites alone and
    their ensemble under each rule. Scenario B: the target's own member alone, and the
    ensemble of all members. Also the precision/recall of every k-of-n rule (scenario B)."""
    preds = {
        name: {s.name: predict_documents(m["tagger"], s.test) for s in sites} for name, m in members.items()
    }
    a_rows, b_rows, k_rows = [], [], []

    def score(docs, gold):
        p, r, f = binary_token_prf(gold, docs)
        return {"precision": p, "recall": r, "f1": f}

    for t in sites:
        others = [n for n in members if n != t.name]
        for n in others:
            a_rows.append({"target": t.name, "model": n, **score(preds[n][t.name], t.test)})
        for rule, k in rules:
            agg = aggregate_documents([preds[n][t.name] for n in others], rule, k=k)
            a_rows.append(
                {"target": t.name, "model": f"ensemble({'+'.join(others)}) {rule}", **score(agg, t.test)}
            )
        if t.name in members:
            b_rows.append(
                {"target": t.name, "model": f"own {t.name}", **score(preds[t.name][t.name], t.test)}
            )
        names = list(members)
        for rule, k in rules:
            agg = aggregate_documents([preds[n][t.name] for n in names], rule, k=k)
            b_rows.append({"target": t.name, "model": f"ensemble(all) {rule}", **score(agg, t.test)})
        for rname, (p, r, f) in rule_scores(t.test, [preds[n][t.name] for n in names]).items():
            k_rows.append({"target": t.name, "rule": rname, "precision": p, "recall": r, "f1": f})
    return pd.DataFrame(a_rows), pd.DataFrame(b_rows), pd.DataFrame(k_rows)


def fine_tuning_table(
    sites: Sequence[SiteData],
    members: dict[str, dict[str, Any]],
    params: DPParams,
    *,
    seed: int = 0,
    progress: bool = False,
):
    """Appendix A.3 analog: for each target site, a DP model pre-trained on each other site,
    fine-tuned with DP-SGD on the target's training data (the members' recipe when
    ``member_recipe`` is set); ε of the fine-tuning phase (the target's data enter only there)."""
    rows = []
    for t in sites:
        others = [n for n in members if n != t.name][: params.fine_tune_per_target]
        for n in others:
            ft = _published_member(t.train, None, params, seed=seed, base=members[n]["tagger"], progress=progress)
            rows.append(
                {
                    "target": t.name,
                    "model": f"init-{n}",
                    "epsilon": ft["ledger"].epsilon,
                    **_prf(ft["tagger"], t.test),
                }
            )
    return pd.DataFrame(rows)



def dp_costs(sat_dp: pd.DataFrame) -> pd.DataFrame:
    """The DP costs of :func:`sat_dp_cost`'s rows in F1 percentage points: ``non-private SAT − DP SAT``
    and ``recipe without DP − DP SAT``, per DP seed (the non-private SAT's mean over its seeds;
    the recipe paired on the seed), as mean, min and max over the DP seeds and their number."""
    if sat_dp is None or not len(sat_dp):
        return pd.DataFrame(columns=["cost", "mean", "min", "max", "n"])
    f1 = {role: d.set_index("seed").f1 * 100 for role, d in sat_dp.groupby("role")}
    dp = f1.get("DP SAT", pd.Series(dtype=float))
    out = []
    for cost, ref in (("non-private SAT − DP SAT", "non-private SAT"), ("recipe without DP − DP SAT",
                                                                        "recipe without DP")):
        r = f1.get(ref)
        if r is None or not len(dp):
            continue
        gaps = (float(r.mean()) - dp) if ref == "non-private SAT" else (r - dp).dropna()
        out.append({"cost": cost, "mean": float(gaps.mean()), "min": float(gaps.min()), "max": float(gaps.max()),
                    "n": int(len(gaps))})
    return pd.DataFrame(out)
