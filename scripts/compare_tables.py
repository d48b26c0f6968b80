"""Compare every CSV/markdown table of two `deidlib reproduce` run folders (e.g. runs/smoke of two
checkouts): the check behind "a refactoring changes no result".

    python scripts/compare_tables.py BEFORE_RUNS_DIR AFTER_RUNS_DIR

Columns that measure wall-clock time (a name containing 'seconds', or an '_s_'/'_s' part) are
dropped before comparing; every other cell must be identical as text. Exit code 1 on any
difference. Run both sides with the same ../shared/data present: notebook 08 reads public
hospital tables from it when it is there.
"""

import re
import sys
from pathlib import Path

import pandas as pd


def timing(c: str) -> bool:
    return "seconds" in c.lower() or re.search(r"(^|_)s(_|$)", c.strip()) is not None


a, b = Path(sys.argv[1]), Path(sys.argv[2])
fa = sorted(p.relative_to(a) for p in a.rglob("*") if p.suffix in (".csv", ".md"))
fb = sorted(p.relative_to(b) for p in b.rglob("*") if p.suffix in (".csv", ".md"))
bad = 0
if fa != fb:
    print("file sets differ:", set(fa) ^ set(fb))
    bad += 1
for rel in fa:
    if rel not in fb:
        continue
    if rel.suffix == ".csv":
        da = pd.read_csv(a / rel, dtype=str, keep_default_na=False)
        db = pd.read_csv(b / rel, dtype=str, keep_default_na=False)
        drop = [c for c in da.columns if timing(c)]
        if list(da.columns) != list(db.columns) or not da.drop(columns=drop).equals(db.drop(columns=drop, errors="ignore")):
            print("DIFFERS:", rel)
            bad += 1
        else:
            print("same:", rel, f"({len(da)} rows; timing columns ignored: {drop})" if drop else f"({len(da)} rows)")
    else:
        la, lb = (a / rel).read_text().splitlines(), (b / rel).read_text().splitlines()
        # drop timing columns of markdown tables too
        hdr = [h.strip() for h in la[0].strip("|").split("|")] if la else []
        keep = [i for i, h in enumerate(hdr) if not timing(h)]
        la, lb = ([[c.strip() for i, c in enumerate(row.strip("|").split("|")) if i in keep] for row in ls]
                  for ls in (la, lb))
        if la != lb:
            print("DIFFERS:", rel)
            bad += 1
        else:
            print("same:", rel)
print("ALL IDENTICAL" if not bad else f"{bad} DIFFERENCES")
sys.exit(1 if bad else 0)
