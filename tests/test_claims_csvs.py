"""Every claims CSV a notebook writes follows the one verdict rule of
:func:`deidlib.reporting.verdict` (stated in ``docs/verdicts.md``), checked from the CSV's own
columns (claim, paper, ours, interval, rule, verdict):

* a verdict of the vocabulary; ``not measured`` exactly where there is no number, and on every
  row under a profile too small to measure (smoke);
* a claimed effect (``same_sign`` rows; other rules when the rule names its ``no effect`` value)
  whose interval contains the no-effect value is never ``faithful``;
* one whose interval lies wholly on the other side of the no-effect value, or whose estimate lies
  on the other side while its interval excludes the paper's effect size, ``contradicts``.

Two tests read real CSVs: the smoke run of every notebook (executed once per session, shared with
``tests/test_notebooks.py``), and the committed ``figures/*/…_claims.csv``. The committed CSVs
come from runs made before the rule; only those regenerated under it are checked, and
:data:`REGENERATED_UNDER_RULE` lists them (empty until the figures are regenerated; a CSV joins
the list when its notebook is rerun at the cpu profile and its figures committed).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd
import pytest

from deidlib.notebooks import load_manifest
from deidlib.reporting import _UNMEASURED_PROFILES, _VERDICTS

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ROOT / "figures"
ENTRIES = load_manifest()

#: committed claims CSVs (relative to figures/) regenerated under the current verdict rule: each is
#: checked row by row. Grows as notebooks are rerun at the cpu profile and their figures committed.
REGENERATED_UNDER_RULE: tuple[str, ...] = ()

#: every committed claims CSV, listed or not: a new claims table must be added here (and to the
#: list above once regenerated under the rule), so none escapes the check unnoticed
COMMITTED_CLAIMS = frozenset({
    "01_festag_dssgd/festag_claims.csv", "02_ahmed_models/ahmed_claims.csv",
    "03_ahmed_utility/ahmed_utility_claims.csv", "04_ahmed_dp_ensemble/ahmed_dp_claims.csv",
    "05_friedrich_pseudonymization/friedrich_pseudo_claims.csv", "06_friedrich_adversarial/friedrich_adv_claims.csv",
    "07_alawad_registries/alawad_claims.csv", "08_tchouka_surrogates/tchouka_claims.csv",
    "09_privacy_frontier/audits_claims.csv", "10_operating_point/operating_point_claims.csv",
})


def _number(text) -> float | None:
    try:
        return float(str(text).replace("−", "-"))
    except ValueError:
        return None


def _interval(text) -> tuple[float, float] | None:
    m = re.fullmatch(r"\[(\S+), (\S+)\]", str(text).strip())
    return (float(m.group(1)), float(m.group(2))) if m else None


def _null(rule: str) -> float | None:
    """The no-effect value a row's rule text names (``same_sign``: 0)."""
    if rule.startswith("same sign"):
        return 0.0
    m = re.search(r"no effect = (\S+)", rule)
    return float(m.group(1)) if m else None


def _paper_side(paper, null: float) -> tuple[float | None, float | None]:
    """(side of the paper's effect, its size or None when the row states only a sign)."""
    p = _number(paper)
    if p is not None:
        return (1.0 if p > null else -1.0 if p < null else None), p
    text = str(paper).strip()
    return (1.0 if text[:1] in ">≥" else -1.0 if text[:1] in "<≤" else None), None


def row_problems(row: pd.Series, profile: str | None = None) -> list[str]:
    """What in one claims-CSV row breaks the verdict rule (empty: none)."""
    v = str(row["verdict"])
    if v not in _VERDICTS:
        return [f"verdict {v!r} is not one of {_VERDICTS}"]
    if profile in _UNMEASURED_PROFILES:
        return [] if v == "not measured" else [f"profile {profile} gives a verdict {v!r}, not 'not measured'"]
    x = _number(row["ours"])
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return [] if v == "not measured" else [f"no number, yet {v!r}"]
    null = _null(str(row["rule"]))
    iv = _interval(row["interval"]) if "interval" in row and isinstance(row["interval"], str) else None
    if null is None or iv is None:
        return []
    side, size = _paper_side(row.iloc[1], null)  # column 1: the paper's (or reference's) value
    lo, hi = iv
    problems = []
    if lo <= null <= hi and v == "faithful":
        problems.append(f"interval {iv} contains no effect ({null:g}), yet faithful")
    if side is not None:
        wholly_opposite = side * ((hi if side > 0 else lo) - null) < 0
        excluded = size is not None and side * (x - null) < 0 and not lo <= size <= hi
        if (wholly_opposite or excluded) and v != "contradicts":
            problems.append(f"estimate {x:g} in {iv} is on the other side of {null:g} from the paper, yet {v!r}")
    return problems


def table_problems(csv: Path, profile: str | None = None) -> list[str]:
    t = pd.read_csv(csv, dtype=str, keep_default_na=False)
    assert list(t.columns[:1]) == ["claim"] and t.columns[-1] == "verdict", f"{csv.name} is not a claims table"
    return [f"{csv.name}: {r.claim[:70]}…: {p}" for _, r in t.iterrows() for p in row_problems(r, profile)]


# ---------------------------------------------------------------------- the checker itself


def _row(paper, ours, interval, rule, verdict) -> pd.Series:
    return pd.Series({"claim": "c", "paper": paper, "ours": ours, "interval": interval, "rule": rule,
                      "verdict": verdict})


def test_row_check_flags_the_rows_a_skeptic_would_not_sign():
    # the thesis' dropout row as committed before the rule: opposite sign, interval excludes +1
    assert row_problems(_row("1", "-0.1929", "[-1.15, 0.767]", "same sign as paper, beyond ±0.5", "partial"))
    assert not row_problems(_row("1", "-0.1929", "[-1.15, 0.767]", "same sign as paper, beyond ±0.5", "contradicts"))
    # an interval spanning zero read as faithful
    assert row_problems(_row("6.6", "2.1", "[-0.5, 4.7]", "same sign as paper, beyond ±1", "faithful"))
    assert row_problems(_row("3", "2.5", "[-0.5, 5.5]", "within ±1 (partial ±2); no effect = 0", "faithful"))
    assert not row_problems(_row("0.1", "0.2", "[-0.5, 0.9]", "within ±1 (partial ±2)", "faithful"))  # a tie
    # a sign-only claim wholly on the other side
    assert row_problems(_row("< 0", "0.05", "[0.01, 0.1]", "same sign as paper, beyond ±0.01", "partial"))
    assert not row_problems(_row("< 0", "0.0147", "[-0.092, 0.123]", "same sign as paper, beyond ±0.01", "partial"))
    # vocabulary, missing numbers, and a smoke run that judged
    assert row_problems(_row("1", "1", "", "≥ paper", "pass"))
    assert row_problems(_row("1", "–", "", "≥ paper", "faithful"))
    assert row_problems(_row("0.001", "0", "", "within ±0.02 (partial ±0.04)", "faithful"), profile="smoke")
    assert not row_problems(_row("0.001", "0", "", "within ±0.02 (partial ±0.04)", "not measured"), profile="smoke")


def test_row_check_agrees_with_the_verdict_rule_on_tables_it_computes():
    from deidlib.reporting import Claim, claims_table

    t = claims_table([
        Claim("dropout", 1.0, -0.19, "same_sign", 0.5, (-1.15, 0.767)),
        Claim("chars", 6.6, 2.1, "same_sign", 1.0, (-0.5, 4.7)),
        Claim("gain", 3.0, 2.5, "close", 1.0, (-0.5, 5.5), null=0.0),
        Claim("attack", -1.0, 0.0147, "same_sign", 0.01, (-0.092, 0.123), paper_text="< 0", sign_only=True),
        Claim("found", 0.8, 1.2, "same_sign", 0.5, (0.7, 1.7)),
    ])
    assert t.verdict.tolist() == ["contradicts", "partial", "partial", "partial", "faithful"]
    assert [p for _, r in t.iterrows() for p in row_problems(r)] == []


# ---------------------------------------------------------------------- the CSVs notebooks write


@pytest.mark.notebook
@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_smoke_claims_csvs_follow_the_rule(entry, smoke_notebook):
    """The claims CSVs of a smoke run: every row ``not measured`` (a smoke run is too small to
    measure a paper's claim), in the verdict vocabulary."""
    out = smoke_notebook(entry)  # executed once per session (shared with tests/test_notebooks.py)
    csvs = sorted(out.glob("*_claims.csv"))
    assert csvs, f"{entry.name} wrote no claims CSV"
    for csv in csvs:
        assert len(pd.read_csv(csv)) >= 1, f"{csv.name} has no rows"
        assert table_problems(csv, profile="smoke") == []


def test_committed_claims_csvs_regenerated_under_the_rule_follow_it():
    """The committed claims CSVs on :data:`REGENERATED_UNDER_RULE` (empty until the cpu-profile
    figures are regenerated; a CSV joins it when its notebook is rerun and committed) follow the
    rule row by row; every committed claims CSV is known to :data:`COMMITTED_CLAIMS`."""
    found = {str(p.relative_to(FIGURES)) for p in FIGURES.glob("*/*_claims.csv")}
    assert found == COMMITTED_CLAIMS, f"claims CSVs added or removed: {sorted(found ^ COMMITTED_CLAIMS)}"
    assert set(REGENERATED_UNDER_RULE) <= COMMITTED_CLAIMS
    problems = [p for name in REGENERATED_UNDER_RULE for p in table_problems(FIGURES / name)]
    assert problems == []
