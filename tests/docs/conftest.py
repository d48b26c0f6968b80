"""Fixtures of the documentation-site tests: executed smoke notebooks and the site built from them.

The smoke notebooks come from the session fixture ``smoke_notebook`` (tests/conftest.py): each
is executed once per test session, by whichever of this fixture and ``tests/test_notebooks.py``
asks first, on any xdist worker, unless the checkout's ``runs/smoke`` already holds every one
(``make smoke``), which is then used as it is. ``DEIDLIB_DOCS_SMOKE_RUNS=DIR`` names another folder of
executed smoke notebooks. The site stages the executed cpu notebooks kept in ``figures/`` where
there are any, as ``make docs`` does, and the smoke run for the other pages.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def load_sitetools():
    spec = importlib.util.spec_from_file_location("deidlib_docs_sitetools", ROOT / "docs" / "sitetools.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="session")
def sitetools():
    return load_sitetools()


def docs_tree(dest: Path) -> Path:
    """A copy of docs/ under ``dest`` with every other top-level entry of the checkout linked
    beside it, so that the pages' relative includes (``../DESIGN.md``) resolve; the build and
    staging folders stay out of the checkout."""
    dest.mkdir(parents=True, exist_ok=True)
    for entry in ROOT.iterdir():
        if entry.name == "docs":
            shutil.copytree(entry, dest / "docs", ignore=shutil.ignore_patterns("_build", "notebooks", "api", "__pycache__"))
        elif not entry.name.startswith(".") and entry.name != "runs":
            (dest / entry.name).symlink_to(entry)
    return dest / "docs"


@pytest.fixture(scope="session")
def smoke_runs(tmp_path_factory, sitetools, smoke_notebook):
    """A folder whose ``smoke/`` holds every manifest notebook executed under the smoke profile."""
    given = os.environ.get("DEIDLIB_DOCS_SMOKE_RUNS")
    entries = sitetools._manifest()
    root = tmp_path_factory.mktemp("smoke-runs")
    if not given and not sitetools.missing_runs(ROOT / "runs" / "smoke", entries):
        given = str(ROOT / "runs" / "smoke")  # after `make smoke`: no notebook executed again
    if given:
        runs = Path(given).resolve()
        missing = sitetools.missing_runs(runs, entries)
        assert not missing, f"DEIDLIB_DOCS_SMOKE_RUNS={given} lacks executed notebooks {missing}"
        (root / "smoke").symlink_to(runs)
        return root
    (root / "smoke").mkdir()
    for e in entries:  # each executed once per session, shared with tests/test_notebooks.py
        (root / "smoke" / e.name).symlink_to(smoke_notebook(e))
    return root


@pytest.fixture(scope="session")
def built_site(tmp_path_factory, smoke_runs, sitetools):
    """The site built with ``sphinx -b html`` as ``make docs`` builds it (the cpu notebooks kept in
    ``figures/``, the smoke run for the others): (html folder, sphinx log, {page: profile staged})."""
    pytest.importorskip("sphinx", reason="the docs extra (sphinx, myst-nb, furo) is not installed")
    pytest.importorskip("myst_nb", reason="the docs extra (sphinx, myst-nb, furo) is not installed")
    pytest.importorskip("furo", reason="the docs extra (sphinx, myst-nb, furo) is not installed")
    src = docs_tree(tmp_path_factory.mktemp("site") / "checkout")
    staged = sitetools.stage("cpu", smoke_runs, src / "notebooks", fallback="smoke", execute=False,
                             stored_dir=ROOT / "figures")
    assert set(staged.values()) <= {"cpu", "smoke"}
    html = src / "_build" / "html"
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", str(src), str(html)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"sphinx failed:\n{proc.stderr[-3000:]}"
    return html, proc.stderr, staged
