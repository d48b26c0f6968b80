"""The product speaks of the product only: no development history outside CHANGELOG.md.

README, documentation pages, DESIGN.md, the package's code (docstrings and comments), the
notebooks, the benchmarks and the tests state what holds and which test guards it. References
to the project's internal tracker ("issue" and a number), to work stops ("stop" and a number)
or to commits (an abbreviated hash) point to a history no reader can see and go stale; they belong in
CHANGELOG.md, which this test does not scan.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: files and folders of the product (relative to the repository root); CHANGELOG.md is history
SCANNED = ["README.md", "DESIGN.md", "data/README.md", "notebooks", "deidlib", "tests", "benchmarks",
           "scripts", "docs", "Makefile", "pyproject.toml", "environment.yml", ".ci"]
SUFFIXES = {".py", ".ipynb", ".md", ".toml", ".yml", ".yaml", ".txt", ".cfg", ".rst", ""}
SKIPPED_PARTS = {"_build", "_staging", "__pycache__", ".ipynb_checkpoints"}

PATTERNS = {
    "tracker reference": re.compile(r"\b(?:issues?|tickets?)\s*#?\d+\b", re.IGNORECASE),
    "work-stop reference": re.compile(r"\bstops?\s+\d+(?:\s*[-–,/]\s*\d+)*\b", re.IGNORECASE),
    "work-session reference": re.compile(r"\b(?:this|that|earlier|previous|next|work)\s+(?:session|round)\b",
                                         re.IGNORECASE),
    "commit reference": re.compile(r"\b(?:commit|commits|main at|HEAD at|fresh clone of)\s+[0-9a-f]{7,40}\b",
                                   re.IGNORECASE),
}


def _files() -> list[Path]:
    out = []
    for name in SCANNED:
        p = ROOT / name
        if p.is_file():
            out.append(p)
        elif p.is_dir():
            out.extend(f for f in sorted(p.rglob("*")) if f.is_file() and f.suffix in SUFFIXES
                       and not SKIPPED_PARTS & set(f.relative_to(ROOT).parts))
    return [f for f in out if f.name != "CHANGELOG.md" and f.resolve() != Path(__file__).resolve()]


def find_history(text: str) -> list[tuple[str, str]]:
    """``(kind, matched text)`` for every development-history reference in ``text``."""
    return [(kind, m.group(0)) for kind, rx in PATTERNS.items() for m in rx.finditer(text)]


@pytest.mark.parametrize("text, kind", [
    ("Until stop 25 the CRF used ...", "work-stop reference"),
    ("(see stops 21-25)", "work-stop reference"),
    ("DP recipes beyond the thesis (issue 14)", "tracker reference"),
    ("fixed in issue #40", "tracker reference"),
    ("regenerated on a fresh clone of 2a5d3c5", "commit reference"),
    ("measured in this session", "work-session reference"),
    ("did not fit this round's budget", "work-session reference"),
])
def test_history_patterns_catch_each_kind(text, kind):
    assert kind in {k for k, _ in find_history(text)}


@pytest.mark.parametrize("text", [
    "the trainer stops after 5 epochs without improvement",
    "early stopping on the dev split",
    "Sentinel lymph node #1",
    "colour #1f77b4",
    "sha256 of the file",
])
def test_history_patterns_spare_ordinary_text(text):
    assert find_history(text) == []


def test_product_holds_no_development_history():
    """No README, docs, DESIGN, code, notebook, benchmark or test names an issue, a stop, a session or a commit."""
    hits = []
    for f in _files():
        try:
            text = f.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for lineno, line in enumerate(text.splitlines(), 1):
            for kind, match in find_history(line):
                hits.append(f"{f.relative_to(ROOT)}:{lineno}: {kind}: {match!r}")
    assert not hits, "development history belongs in CHANGELOG.md:\n" + "\n".join(hits)
