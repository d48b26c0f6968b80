"""The frontier's statements: which methods a frontier lacks (:func:`missing_methods`) and, per
method and setting, what it protects, what each attack found and its F1 cost against its
non-private reference (:func:`method_statements`); and the package's claims on the ε audits
(:func:`paper_vs_ours`, verdicts by :func:`deidlib.reporting.verdict`)."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ...reporting import Claim, claims_table, flat_table
from ..seed_stats import paired_effect
from .methods import METHODS, PROTECTS, REFERENCES
from .params import AuditParams
from .tables import seed_table

__all__ = ["missing_methods", "paper_vs_ours"]

_flat = flat_table


def missing_methods(frontier: pd.DataFrame, seeds: int, recipe: str = AuditParams.dp_recipe) -> list[str]:
    """The methods of :data:`METHODS` that ``frontier`` lacks in their family, or holds on fewer
    than ``seeds`` seeds in one of their settings (empty: the frontier is complete)."""
    out = []
    for method, family in METHODS:
        name = method.format(recipe=recipe)
        rows = frontier[(frontier.method == name) & (frontier.family == family)] if len(frontier) else frontier
        if not len(rows) or (rows.seeds < seeds).any():
            out.append(f"{name} ({family})")
    return out


def _reference(method: str) -> str:
    """The non-private row whose F1 a method's F1 cost is measured against."""
    if method in REFERENCES:
        return REFERENCES[method]
    if method.endswith(" recipe)"):
        return "non-private (" + method.split("(", 1)[1]
    if "(" in method:
        return "non-private (" + method.split("(", 1)[1]
    return f"non-private ({AuditParams.kind})"


def _protects(method: str) -> tuple[str, str]:
    if method in PROTECTS:
        return PROTECTS[method]
    for key, v in PROTECTS.items():
        head, _, tail = key.partition("{recipe}")
        if tail and method.startswith(head) and method.endswith(tail):
            return v
    return ("not stated", "not stated")


def _fmt(mean: float, lo: float, hi: float, digits: int = 3) -> str:
    if not math.isfinite(mean):
        return "—"
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo == hi:
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} [{lo:.{digits}f}–{hi:.{digits}f}]"


def method_statements(res: Any) -> pd.DataFrame:
    """Per method and setting, from the run's numbers: what it protects (unit, threat), what
    each attack found (mean [min–max over seeds]), its F1 and its F1 cost against its
    non-private reference (mean paired difference over seeds with its 95 % t interval,
    :func:`deidlib.studies.seed_stats.paired_effect`), in the row's own utility metric (alawad:
    the micro F1 of its subsite classification). A reference with one setting is that setting;
    an attack with a chance level or a floor states it next to its result."""
    st = seed_table(res)
    if not len(st):
        return pd.DataFrame(columns=["method", "setting", "protects", "threat", "attack found", "F1", "F1 cost",
                                     "reference", "utility"])
    f1 = st.drop_duplicates(["method", "setting", "seed"]).set_index(["method", "setting", "seed"]).utility_f1.sort_index()
    settings = st.groupby("method", sort=False).setting.unique()
    rows = []
    for (method, setting), g in st.groupby(["method", "setting"], sort=False):
        found = []
        for (attack, metric), a in g.groupby(["attack", "attack_metric"], sort=False):
            text = f"{attack}: {metric} {_fmt(a.attack_success.mean(), a.attack_success.min(), a.attack_success.max())}"
            levels = [f"{name} {a[col].mean():.3f}" for col, name in (("attack_chance", "chance"),
                                                                      ("attack_floor", "class-label floor"))
                      if col in a and a[col].notna().any()]
            found.append(text + (f" ({', '.join(levels)})" if levels else ""))
        mine = f1.loc[(method, setting)]
        ref = _reference(method)
        cost, ref_name = "—", "—"
        if ref != method and ref in settings and len(settings[ref]) == 1:
            r = f1.loc[(ref, settings[ref][0])]
            common = sorted(set(mine.index) & set(r.index))
            e = paired_effect([r[s] for s in common], [mine[s] for s in common])
            cost, ref_name = f"{_fmt(e['mean'], e['lo'], e['hi'])} (n={e['n']})", ref
        unit, threat = _protects(method)
        rows.append({"method": method, "setting": setting, "protects": unit, "threat": threat,
                     "attack found": "; ".join(found), "F1": _fmt(mine.mean(), mine.min(), mine.max()),
                     "F1 cost": cost, "reference": ref_name, "utility": g.utility_metric.iloc[0]})
    return pd.DataFrame(rows)


def paper_vs_ours(epsilon_audits: pd.DataFrame) -> pd.DataFrame:
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
