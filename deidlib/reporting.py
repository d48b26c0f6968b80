"""What every notebook writes: tables (CSV, optional markdown), annotated HTML of a
synthetic note, and :class:`~deidlib.results.Result` records with provenance.

Notebooks call these instead of writing files themselves, so every study's outputs have the
same shape: ``out_dir/<name>.csv`` (the manifest's ``tables``, copied next to the figures
by ``deidlib reproduce``), ``out_dir/<name>.md`` for tables quoted in documentation, and
``out_dir/<study>_result.json``.
"""

from __future__ import annotations

import html
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .results import Result, atomic_write_text, save_result

__all__ = [
    "write_table", "to_markdown", "annotated_html", "write_result", "write_json", "json_ready", "Claim",
    "claims_table", "claims_for_profile", "verdict_counts", "flat_table", "table_value", "run_folder",
]


def to_markdown(df: pd.DataFrame, digits: int = 2) -> str:
    """A GitHub markdown table; ``X_mean``/``X_sd`` column pairs become ``mean ± sd`` (``X_min``/
    ``X_max`` next to an ``X_mean`` are left out);
    booleans ✓/×, missing values –, floats with ``digits`` decimals."""
    cols = list(df.columns)
    out_cols: list[str] = []
    cells: list[list[str]] = [[] for _ in range(len(df))]

    def fmt(v) -> str:
        if isinstance(v, (bool, np.bool_)):
            return "✓" if v else "×"
        if isinstance(v, (int, np.integer)):
            return str(int(v))
        if isinstance(v, (float, np.floating)):
            return "–" if math.isnan(v) else f"{v:.{digits}f}"
        return "–" if v is None else str(v)

    for c in cols:
        if c.endswith("_sd") and c[:-3] + "_mean" in cols:
            continue
        if c.endswith(("_min", "_max")) and c[:-4] + "_mean" in cols:
            continue  # the range is in the CSV and the figures; the markdown shows mean ± sd
        if c.endswith("_mean") and c[:-5] + "_sd" in cols:
            out_cols.append(c[:-5])
            for i, (m, s) in enumerate(zip(df[c], df[c[:-5] + "_sd"])):
                cells[i].append(
                    fmt(m)
                    if s is None or (isinstance(s, float) and math.isnan(s))
                    else f"{fmt(m)} ± {fmt(s)}"
                )
        else:
            out_cols.append(str(c))
            for i, v in enumerate(df[c]):
                cells[i].append(fmt(v))
    lines = ["| " + " | ".join(out_cols) + " |", "|" + "|".join("---" for _ in out_cols) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in cells]
    return "\n".join(lines)


def write_table(
    df: pd.DataFrame,
    name: str,
    out_dir: str | os.PathLike,
    *,
    index: bool | None = None,
    markdown: bool = False,
    digits: int = 2,
) -> Path:
    """Write ``out_dir/name.csv`` (and ``name.md`` with :func:`to_markdown` when ``markdown``);
    return the CSV path. ``index``: write the row index (``None``: unless it is a plain
    ``RangeIndex``, i.e. only when it carries names such as the experiment)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if index is None:
        index = not isinstance(df.index, pd.RangeIndex)
    path = out / f"{name}.csv"
    df.to_csv(path, index=index)
    if markdown:
        atomic_write_text(out / f"{name}.md", to_markdown(df, digits) + "\n")
    return path


def run_folder(out_dir: str | os.PathLike | None, profile: str, name: str) -> Path:
    """The folder a notebook writes into, created: ``out_dir`` when given (relative to the working
    directory), else ``runs/<profile>/<name>`` of the checkout the package runs from (the folder
    holding ``notebooks/``), so that a notebook run from any folder, or by papermill with
    ``-p profile smoke``, writes where ``deidlib reproduce`` does and under its own profile. An
    installed package without a checkout writes to ``./runs/<profile>/<name>``."""
    if out_dir is None:
        checkout = Path(__file__).resolve().parent.parent
        base = checkout if (checkout / "notebooks").is_dir() else Path.cwd()
        out = base / "runs" / profile / name
    else:
        out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return out


def annotated_html(doc, max_chars: int = 3000) -> str:
    """The note as HTML with PHI highlighted and labelled (``category/subtype`` on hover).

    It shows raw note text: callers use it on synthetic documents only (notebooks 00 and 08 do).
    """
    out, pos = [], 0
    for s in doc.spans:
        if s.start >= max_chars:
            break
        out.append(html.escape(doc.text[pos : s.start]))
        out.append(
            f'<mark title="{s.category}/{s.subtype}" style="background:#ffe08a">{html.escape(doc.text[s.start:s.end])}'
            f'<sub style="color:#a15c00">{s.subtype}</sub></mark>'
        )
        pos = s.end
    out.append(html.escape(doc.text[pos:max_chars]))
    return '<pre style="white-space:pre-wrap;font-size:85%">' + "".join(out) + "</pre>"


def json_ready(v: Any) -> Any:
    """A JSON-able copy: DataFrames as records, mappings (a study's results among them) as dicts
    with string keys, tuples as lists, non-finite floats as strings (``"inf"``), NumPy scalars as
    Python numbers."""
    if isinstance(v, pd.DataFrame):
        return json_ready(v.reset_index().to_dict(orient="records"))
    if isinstance(v, Mapping):
        return {str(k): json_ready(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [json_ready(x) for x in v]
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    return v


def write_json(obj: Any, path: str | os.PathLike, *, indent: int | None = 1) -> Path:
    """``obj`` (through :func:`json_ready`) as JSON, written atomically."""
    return atomic_write_text(path, json.dumps(json_ready(obj), indent=indent, default=str))


def write_result(
    out_dir: str | os.PathLike,
    study: str,
    name: str,
    *,
    params: dict[str, Any],
    metrics: dict[str, Any],
    seeds: list[int],
    data_fingerprint: str = "",
    privacy_ledger: dict[str, Any] | None = None,
    filename: str | None = None,
) -> Path:
    """Save a :class:`~deidlib.results.Result` (version, git SHA, data fingerprint and, for
    DP studies, the privacy ledger) as ``out_dir/<filename or study_result.json>``."""
    result = Result(
        study=study,
        name=name,
        params=json_ready(params),
        metrics=json_ready(metrics),
        seeds=[int(s) for s in seeds],
        data_fingerprint=data_fingerprint,
        privacy_ledger=json_ready(privacy_ledger) if privacy_ledger is not None else None,
    )
    return save_result(result, Path(out_dir) / (filename or f"{study}_result.json"))


# ---------------------------------------------------------------------- claims and verdicts

#: the verdicts :func:`verdict` can return
_VERDICTS = ("faithful", "partial", "contradicts", "not measured")
#: comparison rules of a :class:`Claim`
RULES = ("close", "at_least", "at_most", "same_sign")
#: profiles too small to measure a paper's claim: their claims tables say ``not measured``
#: on every row (:func:`claims_for_profile`)
_UNMEASURED_PROFILES = frozenset({"smoke"})


@dataclass(frozen=True)
class Claim:
    """One published (or promised) statement next to this run's number.

    ``rule`` says how ``ours`` is compared with ``paper``:

    * ``close``: ours within ``tol`` of paper → faithful; within ``2·tol`` → partial;
    * ``at_least`` / ``at_most``: ours on the claimed side of paper → faithful; short of it by at
      most ``tol`` → partial;
    * ``same_sign``: ``paper`` is a difference whose sign is the claim; ours beyond ``tol`` on that
      side → faithful; within ``±tol`` (no clear difference) → partial; beyond ``tol`` on the other
      side → contradicts.

    ``interval`` (ours' min–max over seeds or a confidence interval): when it reaches the faithful
    region a failing point estimate is ``partial`` instead of ``contradicts``. ``null`` is the
    no-effect value of a claimed effect (``same_sign``: always 0; other rules: ``None`` unless
    given, e.g. ``0.0`` for a ``close`` claim on a difference); :func:`verdict` states what it
    changes. ``ours`` None or NaN: ``not measured``. ``paper_text`` replaces the printed paper
    value (e.g. ``"> 0"``); ``sign_only``: the paper states only the effect's sign (``paper`` is
    then a stand-in such as 1.0, never an effect size an interval could exclude).
    """

    claim: str
    paper: float
    ours: float | None
    rule: str = "close"
    tol: float = 0.0
    interval: tuple[float, float] | None = None
    paper_text: str | None = None
    null: float | None = None
    sign_only: bool = False

    def __post_init__(self):
        if self.rule not in RULES:
            raise ValueError(f"unknown rule {self.rule!r}; expected one of {', '.join(RULES)}")
        if not self.tol >= 0:
            raise ValueError(f"tol must be ≥ 0, got {self.tol}")
        if self.interval is not None and not any(_missing(v) for v in self.interval) \
                and float(self.interval[0]) > float(self.interval[1]):
            raise ValueError(f"interval must be (low, high), got {self.interval}")


def _missing(x) -> bool:
    return x is None or (isinstance(x, (float, np.floating)) and math.isnan(x))


def _effect_null(c: Claim) -> float | None:
    """The no-effect value the verdict tests ``c``'s interval against: 0 for ``same_sign``,
    ``c.null`` otherwise; ``None`` when the claim states no effect (no null given, or a ``close``
    claim whose paper value lies within ``tol`` of it: a claimed tie may span its null)."""
    n = 0.0 if c.rule == "same_sign" else c.null
    if n is None or _missing(c.paper):
        return None
    if c.rule == "close" and abs(float(c.paper) - n) <= c.tol:
        return None
    return float(n)


def _rule_verdict(c: Claim, x: float, lo: float, hi: float) -> str:
    """The verdict of ``c``'s comparison rule alone (tolerance bands, interval reaching the faithful
    region)."""
    p, t = float(c.paper), float(c.tol)
    if c.rule == "close":
        gap = abs(x - p)
        if gap <= t:
            return "faithful"
        return "partial" if gap <= 2 * t or lo - t <= p <= hi + t else "contradicts"
    if c.rule == "at_least":
        if x >= p:
            return "faithful"
        return "partial" if x >= p - t or hi >= p else "contradicts"
    if c.rule == "at_most":
        if x <= p:
            return "faithful"
        return "partial" if x <= p + t or lo <= p else "contradicts"
    s = 1.0 if p >= 0 else -1.0  # same_sign
    if s * x > t:
        return "faithful"
    favourable = hi if s > 0 else lo  # the interval's end on the claimed side
    if abs(x) <= t or s * favourable > t:
        return "partial"
    return "contradicts"


def verdict(c: Claim) -> str:
    """``faithful`` / ``partial`` / ``contradicts`` / ``not measured`` from the numbers of ``c``:
    the one verdict rule of every claims table (legend: ``docs/verdicts.md``).

    1. ``ours`` or ``paper`` missing → ``not measured`` (a profile too small to measure gives it
       on every row: :func:`claims_for_profile`).
    2. A claimed effect (:func:`_effect_null` not ``None``; the paper on side ``s`` of the null)
       whose estimate lies on the side opposite ``s`` and whose interval excludes the paper's
       effect → ``contradicts``, whatever the tolerance (so does an interval wholly on the
       opposite side of the null; for a ``sign_only`` claim, only that).
    3. Otherwise the comparison rule of :class:`Claim` (``_rule_verdict``), except that an
       interval containing the null of a claimed effect is never ``faithful`` (at most
       ``partial``).

    Without ``interval`` the point estimate is its own interval for rule 3 only; rule 2 needs a
    measured spread. A comparison that holds by construction is not a claim: it belongs in a
    test, not a claims table. Guarded by ``tests/test_reporting.py``.
    """
    if c.ours is None or c.paper is None or _missing(c.ours) or _missing(c.paper):
        return "not measured"
    x, p = float(c.ours), float(c.paper)
    if math.isfinite(x) and math.isfinite(p) and abs(x - p) <= 1e-9 * max(1.0, abs(p)):
        x = p  # equal up to float rounding (an exact computation that meets its bound)
    interval = c.interval if c.interval is not None and not any(_missing(v) for v in c.interval) else None
    has_interval = interval is not None
    lo, hi = map(float, interval) if interval is not None else (x, x)
    n = _effect_null(c)
    if n is not None and p != n:
        s = 1.0 if p > n else -1.0
        excluded = not c.sign_only and s * (x - n) < 0 and not lo <= p <= hi
        if has_interval and (s * (hi - n if s > 0 else lo - n) < 0 or excluded):
            return "contradicts"  # the other side of no effect, the paper's effect excluded
        v = _rule_verdict(c, x, lo, hi)
        return "partial" if v == "faithful" and lo <= n <= hi else v
    return _rule_verdict(c, x, lo, hi)


def _rule_text(c: Claim) -> str:
    t = f"{c.tol:g}"
    if c.tol == 0 and c.rule in ("at_least", "at_most"):
        text = "≥ paper" if c.rule == "at_least" else "≤ paper"
    else:
        text = {"close": f"within ±{t} (partial ±{2 * c.tol:g})",
                "at_least": f"≥ paper (partial: ≥ paper − {t})",
                "at_most": f"≤ paper (partial: ≤ paper + {t})",
                "same_sign": f"same sign as paper, beyond ±{t}"}[c.rule]
    n = _effect_null(c)
    if c.rule != "same_sign" and n is not None:
        text += f"; no effect = {n:g}"
    return text


def claims_for_profile(table: pd.DataFrame, profile: str) -> pd.DataFrame:
    """``table`` (a :func:`claims_table`) as the notebook of ``profile`` shows it: under a profile
    too small to measure a paper's claim (:data:`_UNMEASURED_PROFILES`, the smoke profile) every
    verdict is ``not measured`` (its numbers stay, printed for the plumbing, never judged)."""
    if profile not in _UNMEASURED_PROFILES:
        return table
    return table.assign(verdict="not measured")


def claims_table(claims: list[Claim], reference: str = "paper") -> pd.DataFrame:
    """One row per claim: ``claim``, ``<reference>`` (the published or claimed value), ``ours``,
    ``interval``, ``rule`` and ``verdict`` (computed by :func:`verdict`, never typed)."""
    rows = []
    for c in claims:
        iv = "" if c.interval is None or any(_missing(v) for v in c.interval) else \
            f"[{c.interval[0]:.3g}, {c.interval[1]:.3g}]"
        rows.append({"claim": c.claim, reference: c.paper_text or f"{c.paper:.4g}",
                     "ours": "–" if c.ours is None or _missing(c.ours) else f"{float(c.ours):.4g}",
                     "interval": iv, "rule": _rule_text(c), "verdict": verdict(c)})
    return pd.DataFrame(rows, columns=["claim", reference, "ours", "interval", "rule", "verdict"])


def flat_table(df: pd.DataFrame | None) -> pd.DataFrame:
    """``df`` with a named index turned into columns (``None``: an empty table), so that a claim
    can look its rows up by column with :func:`table_value`."""
    if df is None:
        return pd.DataFrame()
    return df if isinstance(df.index, pd.RangeIndex) else df.reset_index()


def table_value(df: pd.DataFrame, col: str, **where: Any) -> float:
    """The value of ``col`` in the first row matching ``where`` (column = value); NaN when there is
    none, so that a claim on a part the run skipped reads ``not measured``."""
    if df.empty or col not in df:
        return math.nan
    m = pd.Series(True, index=df.index)
    for k, v in where.items():
        if k not in df:
            return math.nan
        m &= df[k] == v
    return float(df.loc[m, col].iloc[0]) if m.any() else math.nan


def verdict_counts(table: pd.DataFrame) -> str:
    """``"3 faithful, 1 partial, …"`` for a :func:`claims_table` (the notebooks print it)."""
    n = table.verdict.value_counts()
    return ", ".join(f"{int(n[v])} {v}" for v in _VERDICTS if v in n) or "no claims"
