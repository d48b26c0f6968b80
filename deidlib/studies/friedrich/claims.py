"""The paper's numbers for the friedrich study, in this one place, and its "paper vs ours"
tables (Friedrich et al., ACL 2019: Table 2, Figures 4 and 5, sections 5.3, 7.2, 7.3 and 8).

:data:`PAPER_SHAPES` holds every published number the notebooks draw or compare with; the
``*_shape_checks`` tables put the paper's statement next to ours per embedding and N, and the
``*_paper_vs_ours`` claims tables (:func:`deidlib.reporting.claims_table`) give each statement a
verdict computed by :func:`deidlib.reporting.verdict`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ...reporting import Claim, claims_table, flat_table, table_value

__all__ = ["pseudo_shape_checks", "adv_shape_checks", "pseudo_paper_vs_ours", "adv_paper_vs_ours"]

#: the no-privacy controls of the adversarial study (section 5.3), each attack read against them:
#: raw word embeddings (R = E) and a noise-free BiLSTM representation trained on de-identification only
CONTROLS = ("control raw", "control P1")

#: the paper's reference shapes (section 7.2, 7.3; Figures 4 and 5), drawn in the figures
PAPER_SHAPES: dict[str, Any] = {
    # Figure 4 / section 7.2: "does not significantly reduce" F1 up to N = 200; "drop to around
    # 95 %" (absolute F1) at N = 500 and "around 90 %" at N = 1,000, from non-private ≈ 0.975:
    # as a fraction of the non-private F1 ≈ 0.974 and ≈ 0.923
    "pseudo_absolute_f1": {500: 0.95, 1000: 0.90},
    "pseudo_relative_f1": {1: 1.0, 200: 1.0, 500: 0.95 / 0.975, 1000: 0.90 / 0.975},
    # Table 2 (i2b2 2014, binary HIPAA token F1, mean of five runs)
    "table2": {
        "non-private FastText": 0.9767,
        "non-private GloVe": 0.9724,
        "non-private GloVe + casing": 0.9762,
        "pseudonymized N=100 FastText": 0.9675,
        "pseudonymized N=100 GloVe": 0.9642,
        "adversarial N=100 FastText": 0.9740,
        "adversarial N=100 GloVe": 0.9689,
    },
    # section 8: mean number of a PHI token's 100 nearest neighbours that contain it
    "subword": {"fasttext": 7.37, "glove": 0.44},
    # Figure 5 / section 7.3: three-phase adversary near chance (0.5) up to N = 500; DANN > 0.8
    "three_phase_adversary": 0.5,
    "three_phase_private_up_to": 500,
    "dann_adversary_above": 0.8,
}


def paper_relative(n: int) -> float:
    """The paper's Figure 4 shape as a fraction of the non-private F1 (piecewise linear in log N
    through the stated points; flat up to 200)."""
    pts = sorted(PAPER_SHAPES["pseudo_relative_f1"].items())
    xs, ys = np.log10([p[0] for p in pts]), [p[1] for p in pts]
    return float(np.interp(np.log10(n), xs, ys))


def pseudo_shape_checks(res: Mapping[str, Any]) -> pd.DataFrame:
    """The paper's Figure 4 statements next to ours, per embedding and N > 1 (F1 relative to
    the same embedding's N = 1 model, mean over seeds and, as ``ours_relative_min`` /
    ``ours_relative_max``, the seeds' range over the same N = 1 mean; the paper's relative value
    interpolated in log N)."""
    rows = []
    for e, d in res["summary"].groupby("embedding"):
        for _, r in d[d.n > 1].sort_values("n").iterrows():
            n = int(r.n)
            claim = ("no significant drop (flat up to N≈200)" if n <= 200 else
                     "F1 ≈ 0.95 at N=500 (from ≈0.975)" if n <= 500 else "F1 ≈ 0.90 at N=1000")
            scale = r.relative_to_n1 / r.f1_mean if r.f1_mean > 0 else float("nan")
            rows.append({"embedding": e, "n": n, "paper": claim, "paper_relative": paper_relative(n),
                         "ours_relative": r.relative_to_n1, "ours_f1": r.f1_mean,
                         "ours_relative_min": r.f1_min * scale if "f1_min" in r else float("nan"),
                         "ours_relative_max": r.f1_max * scale if "f1_max" in r else float("nan")})
    return pd.DataFrame(rows)


def _reading(acc: float, control: float) -> str:
    """A procedure's held-out accuracy read against the weaker control of its embedding."""
    chance, level = PAPER_SHAPES["three_phase_adversary"], PAPER_SHAPES["dann_adversary_above"]
    if control != control:  # NaN: no control run
        return "no control run: cannot be judged"
    if control < level:
        return f"attack too weak to judge: the controls reach {control:.2f} < {level}"
    if abs(acc - chance) <= 0.05:
        return "near chance while the controls are broken: private against this attack"
    if acc >= level:
        return "broken like the controls"
    return "leaks: between chance and the controls"


def adv_shape_checks(res: Mapping[str, Any]) -> pd.DataFrame:
    """The paper's Figure 5 / section 7.3 statements next to ours, per embedding and N (mean and
    min–max over seeds of the frozen adversary's held-out accuracy); ``control_accuracy`` is the
    weaker control's mean of the same embedding and ``reading`` each procedure row read against
    it (:func:`_reading`: near chance means private only where the controls are attacked ≥ 0.8)."""
    s = res["summary"]
    ctl = s[s.procedure.isin(CONTROLS)].groupby("embedding").adversary_mean.min()
    rows = []
    for _, r in s.iterrows():
        control = float(ctl.get(r.embedding, float("nan")))
        if r.procedure == "three_phase":
            claim = "near chance (0.5)" if r.n <= PAPER_SHAPES["three_phase_private_up_to"] else "above chance (unstable for N > 500)"
        elif r.procedure == "dann":
            claim = "> 0.8"
        else:
            claim = "no privacy training: the adversary learns the task (section 5.3); our yardstick ≥ 0.8"
        rows.append({"embedding": r.embedding, "procedure": r.procedure, "n": r.n, "paper": claim,
                     "adversary_accuracy": r.adversary_mean, "adversary_min": r.adversary_min,
                     "adversary_max": r.adversary_max, "seeds": r.seeds, "f1": r.f1_mean,
                     "control_accuracy": control,
                     "reading": "control" if r.procedure in CONTROLS else _reading(float(r.adversary_mean), control)})
    return pd.DataFrame(rows)


def _seed_range(t: pd.DataFrame, lo: str, hi: str, **where: Any) -> tuple[float, float] | None:
    """``(lo, hi)`` columns of the row matching ``where`` (``None`` when absent or NaN)."""
    a, b = table_value(t, lo, **where), table_value(t, hi, **where)
    return None if a != a or b != b else (a, b)


def _difference_range(a: tuple[float, float] | None, b: tuple[float, float] | None) -> tuple[float, float] | None:
    """The range of ``A − B`` when A and B each range over their seeds: ``(min A − max B, max A − min B)``."""
    return None if a is None or b is None else (a[0] - b[1], a[1] - b[0])


def _relative(sh: pd.DataFrame, emb: str, n: int) -> tuple[float, tuple[float, float] | None]:
    return (table_value(sh, "ours_relative", embedding=emb, n=n),
            _seed_range(sh, "ours_relative_min", "ours_relative_max", embedding=emb, n=n))


def _flat_up_to(sh: pd.DataFrame, emb: str, n_max: int = 200) -> tuple[float, tuple[float, float] | None, str]:
    """The lowest relative F1 over 1 < N ≤ ``n_max`` (the point that could break Figure 4's "no
    significant drop up to N ≈ 200"; the curve is not monotone, so the lowest, not the last), its
    seed range and its N."""
    if sh.empty or "n" not in sh:
        return math.nan, None, ""
    d = sh[(sh.embedding == emb) & (sh.n > 1) & (sh.n <= n_max)]
    if not len(d):
        return math.nan, None, ""
    r = d.sort_values("ours_relative").iloc[0]
    return (float(r.ours_relative), _relative(sh, emb, int(r.n))[1], f", lowest at N = {int(r.n)}")


def pseudo_paper_vs_ours(table2: pd.DataFrame | None, shape: pd.DataFrame | None,
                     subword: pd.DataFrame | None) -> pd.DataFrame:
    """Friedrich et al., Table 2, Figure 4 and section 8: ``res["table2"]``,
    :func:`pseudo_shape_checks` and ``res["subword"]``.

    Intervals are the seeds' ranges (Table 2: ``f1_min`` / ``f1_max``, a difference's range as
    :func:`_difference_range`; Figure 4: ``ours_relative_min`` / ``_max``). Figure 4's curve is
    not monotone at our scale, so its N = 1000 row is read with its seed range and "flat up to
    N ≈ 200" with the lowest point of N ≤ 200, not the last."""
    t2, sh, sw = flat_table(table2), flat_table(shape), flat_table(subword)
    p2 = PAPER_SHAPES["table2"]
    claims = []
    for emb, name in (("fasttext", "FastText"), ("glove", "GloVe")):
        base = f"non-private {name}"
        for kind, where in (("pseudonymized N=100", "section 7.2"), ("adversarial N=100", "section 7.3")):
            row = f"{kind} {name}"
            claims.append(Claim(
                f"{kind} costs little F1 ({name}): {kind} − non-private (Table 2, {where}: {p2[row]} vs {p2[base]})",
                p2[row] - p2[base], table_value(t2, "f1_mean", model=row) - table_value(t2, "f1_mean", model=base), "close",
                0.02, _difference_range(_seed_range(t2, "f1_min", "f1_max", model=row),
                                        _seed_range(t2, "f1_min", "f1_max", model=base))))
        low, low_range, at = _flat_up_to(sh, emb)
        claims.append(Claim(
            f"pseudonymization does not reduce F1 up to N ≈ 200: relative F1 ({name}{at}; Figure 4, section 7.2)",
            PAPER_SHAPES["pseudo_relative_f1"][200], low, "close", 0.03, low_range))
        rel, rel_range = _relative(sh, emb, 1000)
        claims.append(Claim(
            f"pseudonymization N=1000 keeps ≈ 0.90 / 0.975 of the non-private F1 ({name}; Figure 4, section 7.2)",
            PAPER_SHAPES["pseudo_relative_f1"][1000], rel, "close", 0.03, rel_range))
    claims.append(Claim(
        "FastText neighbours contain the PHI token far more often than GloVe's: FastText − GloVe (section 8: 7.37 vs 0.44)",
        PAPER_SHAPES["subword"]["fasttext"] - PAPER_SHAPES["subword"]["glove"],
        table_value(sw, "mean_containing", embedding="fasttext") - table_value(sw, "mean_containing", embedding="glove"),
        "same_sign", 0.5))
    claims.append(Claim(
        f"FastText and GloVe give about the same non-private F1: non-private FastText − GloVe + casing (Table 2: "
        f"{p2['non-private FastText']} vs {p2['non-private GloVe + casing']})",
        p2["non-private FastText"] - p2["non-private GloVe + casing"],
        table_value(t2, "f1_mean", model="non-private FastText") - table_value(t2, "f1_mean", model="non-private GloVe + casing"),
        "close", 0.02, _difference_range(_seed_range(t2, "f1_min", "f1_max", model="non-private FastText"),
                                         _seed_range(t2, "f1_min", "f1_max", model="non-private GloVe + casing"))))
    return claims_table(claims)


def adv_paper_vs_ours(shape: pd.DataFrame | None) -> pd.DataFrame:
    """Friedrich et al., Figure 5 / sections 5.3, 7.3 and 8: frozen-adversary held-out accuracy from
    :func:`adv_shape_checks` (mean over seeds; ``adversary_min``
    / ``adversary_max``, when present, are the interval). Per embedding: the three-phase row of
    N ≤ 500 farthest from chance ("near chance up to N = 500"), the rise of the adversary's
    accuracy from the largest N ≤ 500 to the largest N > 500 ("always able to break" it above 500;
    a representation already broken at 500 does not show it), the DANN row with the lowest accuracy ("in all cases
    ... above 80 %"), and the two controls without privacy training against the yardstick 0.8
    (section 5.3: the adversaries "learn the adversarial tasks on ... raw word embeddings")."""
    sh = flat_table(shape)
    up_to, chance, dann_level = (PAPER_SHAPES["three_phase_private_up_to"], PAPER_SHAPES["three_phase_adversary"],
                                 PAPER_SHAPES["dann_adversary_above"])

    def pick(d, proc, key, largest=True, where=None):
        d = d[d.procedure == proc] if len(d) else d
        if len(d) and where is not None:
            d = d[where(d)]
        return d.sort_values(key).iloc[-1 if largest else 0] if len(d) else None

    def val(r, col="adversary_accuracy"):
        return math.nan if r is None or col not in r else float(r[col])

    def span(r):
        return None if r is None or "adversary_min" not in r else (val(r, "adversary_min"), val(r, "adversary_max"))

    def at(r):
        return "" if r is None else f", N = {int(r.n)}"

    claims = []
    for emb in (sorted(sh.embedding.unique()) if not sh.empty else ["fasttext", "glove"]):
        d = sh[sh.embedding == emb] if not sh.empty else sh
        tp = pick(d.assign(gap=(d.adversary_accuracy - chance).abs()) if len(d) else d, "three_phase", "gap",
                  where=lambda x: x.n <= up_to)
        tp_hi = pick(d, "three_phase", "n", where=lambda x: x.n > up_to)
        dann = pick(d, "dann", "adversary_accuracy", largest=False)
        claims.append(Claim(
            f"three-phase adversarial training keeps the adversary near chance up to N = 500 ({emb}{at(tp)}, "
            "the N ≤ 500 farthest from chance; Figure 5, section 7.3)",
            chance, val(tp), "close", 0.05, span(tp)))
        tp_at = pick(d, "three_phase", "n", where=lambda x: x.n <= up_to)
        claims.append(Claim(
            f"three-phase breaks only above N = 500: adversary accuracy at N > 500 − at N ≤ 500 "
            f"({emb}{at(tp_hi)}{'' if tp_at is None else f' vs N = {int(tp_at.n)}'}; Figure 5, section 8: "
            "near chance, then broken)", 1.0, val(tp_hi) - val(tp_at), "same_sign", 0.05,
            None if span(tp_hi) is None or span(tp_at) is None else (span(tp_hi)[0] - span(tp_at)[1],
                                                                     span(tp_hi)[1] - span(tp_at)[0]),
            paper_text="> 0", sign_only=True))
        claims.append(Claim(
            f"the DANN representation leaves the adversary above 0.8 in all cases ({emb}{at(dann)}, its lowest row; "
            "section 7.3)", dann_level, val(dann), "at_least", 0.05, span(dann)))
        for ctl, text in (("control raw", "raw word embeddings (R = E)"),
                          ("control P1", "a noise-free BiLSTM representation trained on de-identification only")):
            r = pick(d, ctl, "adversary_accuracy", largest=False)
            claims.append(Claim(
                f"yardstick: the adversary learns the task on {text} ({emb}{at(r)}; section 5.3 "
                "'able to learn the adversarial tasks ... on raw word embeddings')",
                dann_level, val(r), "at_least", 0.05, span(r), paper_text="learns it (ours: ≥ 0.8)"))
    return claims_table(claims)
