"""The frontier's tables: one row per method, setting, attack family and seed
(:func:`seed_table`), and their mean with the min–max over seeds (:func:`frontier_table`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

__all__ = []


def _part(res: Any, name: str) -> list[dict[str, Any]]:
    """The records of one part of a run: ``res`` is :func:`~.run.run_study`'s results or a mapping
    of its parts (a part it lacks has no records)."""
    if isinstance(res, Mapping):
        return res.get(name, [])
    return getattr(res, name, [])


def _exposure_metric(canaries: list[dict]) -> str:
    return f"exposure (bits) of the k={max(c['copies'] for c in canaries)} canaries"


#: the utility of every row but alawad's (``utility_metric``)
UTILITY = "binary-token F1 (test)"
#: alawad's utility: its task is the subsite classification of pathology reports, not de-identification
_ALAWAD_UTILITY = "micro F1 (subsite classification, test)"
_FRIEDRICH = {"three_phase": ("adversarial representation (friedrich §5)", "three-phase, N={n}"),
              "control P1": ("non-private (friedrich §5)", "control P1 (BiLSTM, de-id only)"),
              "control raw": ("raw public vectors (friedrich §5 control)", "control raw (R = GloVe)")}
_ALAWAD = {"shared_private": ("shared layers (alawad)", "shared–private CNN, λ={w:g}"),
           "shared_private_no_adv": ("shared layers, no adversary (alawad)", "λ=0 (control)"),
           "centralized": ("non-private (alawad)", "centralized CNN (whole encoder)")}


def _representation_seed_rows(res: Any) -> list[dict[str, Any]]:
    rows = []
    for r in _part(res, "representations"):
        method, setting = _FRIEDRICH[r["procedure"]]
        rows.append({"method": method, "setting": setting.format(n=r["n"]), "seed": r["seed"], "epsilon": math.nan,
                     "utility_f1": r["f1"], "utility_metric": UTILITY, "family": "representation (real/fake pairs)",
                     "attack": "frozen-representation adversary (held-out real/fake pairs)",
                     "attack_metric": "accuracy on held-out real/fake pairs", "attack_success": r["adversary_accuracy"],
                     "attack_chance": 0.5, "status": "measured"})
    for r in _part(res, "shared_layers"):
        method, setting = _ALAWAD[r["approach"]]
        rows.append({"method": method, "setting": setting.format(w=r["adv_weight"]), "seed": r["seed"],
                     "epsilon": math.nan, "utility_f1": r["micro"], "utility_metric": _ALAWAD_UTILITY,
                     "family": "representation (registry)",
                     "attack": "fresh registry classifier on the frozen shared features",
                     "attack_metric": "registry accuracy (held-out reports)", "attack_success": r["registry_accuracy"],
                     "attack_chance": r["chance"], "attack_floor": r["class_label_floor"], "status": "measured"})
    return rows


def seed_table(res: Any) -> pd.DataFrame:
    """One row per method, setting, attack family and seed: the utility (``utility_metric``:
    binary-token F1, alawad's subsite micro F1) and the attack's success in that family's metric
    (``attack_metric``; ``attack_chance`` and ``attack_floor`` where the attack has them)."""
    rows = []
    for m in _part(res, "membership"):
        base = {"method": m["method"], "setting": m["setting"], "seed": m.get("seed", 0), "epsilon": m["epsilon"],
                "utility_f1": m["utility"]["f1"], "status": "measured"}
        sent = [r for r in m["membership"] if r["level"] == "sentence"]
        best = max(sent, key=lambda r: r["tpr@1%"])
        pat = [r for r in m["membership"] if r["level"] == "patient"]
        rows.append({**base, "family": "membership", "attack": "membership per sentence (loss, offline LiRA)",
                     "attack_metric": "TPR@1%FPR", "attack_success": best["tpr@1%"],
                     "strongest_attack": best["attack"], "tpr@0.1%": max(r["tpr@0.1%"] for r in sent),
                     "auc": max(r["auc"] for r in sent), "patient_auc": max(r["auc"] for r in pat),
                     "references": m.get("references", math.nan)})
        if m["canaries"]:
            k = max(c["copies"] for c in m["canaries"])
            rows.append({**base, "family": "canary exposure", "attack": "canary exposure (rank of the secret)",
                         "attack_metric": _exposure_metric(m["canaries"]),
                         "attack_success": float(np.mean([c["exposure"] for c in m["canaries"] if c["copies"] == k])),
                         "max_exposure": max(c["max_exposure"] for c in m["canaries"])})
    for d in _part(res, "dssgd"):
        dp = math.isfinite(d["dp_epsilon_per_upload"])
        rows.append({"method": "DSSGD + DP upload" if dp else "DSSGD", "seed": d.get("seed", 0),
                     "setting": f"θ_u={d['theta_u']:g}" + (f", ε/upload={d['dp_epsilon_per_upload']:g}" if dp else ""),
                     "epsilon": d["dp_epsilon_per_upload"] if dp else math.inf, "utility_f1": d["f1"],
                     "family": "reconstruction", "attack": "word reconstruction (site 1, first upload)",
                     "attack_metric": "F1 of recovered words", "attack_success": d["reconstruction_f1"],
                     "status": "measured"})
    for p in _part(res, "pseudonyms"):
        rows.append({"method": "pseudonymization", "setting": f"N={p['n']}", "seed": p.get("seed", 0),
                     "epsilon": math.nan, "utility_f1": p["f1"], "family": "word recovery",
                     "attack": "original PHI word from its pseudonym (nearest neighbours)",
                     "attack_metric": "share of PHI words recovered", "attack_success": p["recovery_recovered"],
                     "status": "measured"})
    for s in _part(res, "surrogates"):
        if s["memo_scope"].startswith("none"):
            continue
        rows.append({"method": "surrogates", "setting": f"ε={s['epsilon']:g}, memo={s['memo_scope']}",
                     "seed": s.get("seed", 0), "epsilon": s["epsilon"], "utility_f1": s["f1"], "family": "linkage",
                     "attack": "note linkage (names/places)", "attack_metric": "F1 of same-patient note pairs",
                     "attack_success": s["linkage_f1"], "status": "measured"})
    rows += _representation_seed_rows(res)
    df = pd.DataFrame(rows)
    if len(df):
        df["utility_metric"] = df["utility_metric"].fillna(UTILITY) if "utility_metric" in df else UTILITY
    return df


def frontier_table(res: Any) -> pd.DataFrame:
    """One row per method, setting and attack family: mean over seeds of the utility and of
    the attack's success, with their min–max over seeds (``*_lo``, ``*_hi``)."""
    st = seed_table(res)
    rows = []
    if len(st):
        keys = ["method", "setting", "family", "attack", "attack_metric", "utility_metric", "status"]
        extra = [c for c in ("tpr@0.1%", "auc", "patient_auc", "max_exposure", "references", "attack_chance",
                             "attack_floor") if c in st]
        for key, g in st.groupby(keys, sort=False, dropna=False):
            row = dict(zip(keys, key))
            row.update({"seeds": len(g), "epsilon": float(g.epsilon.mean()),
                        "utility_f1": float(g.utility_f1.mean()), "utility_lo": float(g.utility_f1.min()),
                        "utility_hi": float(g.utility_f1.max()), "attack_success": float(g.attack_success.mean()),
                        "attack_lo": float(g.attack_success.min()), "attack_hi": float(g.attack_success.max())})
            row.update({c: float(g[c].mean()) for c in extra})
            if "strongest_attack" in g and g.strongest_attack.notna().any():
                row["strongest_attack"] = "/".join(sorted(set(g.strongest_attack.dropna())))
            rows.append(row)
    return pd.DataFrame(rows)
