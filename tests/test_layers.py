"""The layer order of deidlib (DESIGN.md, "Layers"): a package never imports one of its own
layer or above, and no modules import each other in a cycle.

The order is import-linter's contracts in ``pyproject.toml`` (``[tool.importlinter]``):
a ``layers`` contract over the packages of ``deidlib`` (exhaustive: a new package must be
placed), two inside ``models`` and ``synthetic.notes``, and ``acyclic_siblings``. Every
import counts (module top, inside functions, under ``TYPE_CHECKING``); imports done by name
at run time (``importlib.import_module`` in ``cli`` and in lazy ``__init__`` exports) are not
seen, so they must stay inside their own package or go downwards by design. ``lint-imports``
in the repository root prints the same report.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def lint_imports(root: Path = ROOT) -> subprocess.CompletedProcess:
    """``lint-imports`` on the ``deidlib`` package of ``root`` with its ``pyproject.toml``."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    code = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
    return subprocess.run([sys.executable, "-c", code, "--no-cache", str(root / "pyproject.toml")],
                          cwd=root, env=env, capture_output=True, text=True, timeout=300)


def test_every_contract_is_kept():
    r = lint_imports()
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert re.search(r"Contracts: (\d+) kept, 0 broken", r.stdout)


def test_every_package_of_design_md_is_in_the_contract():
    """DESIGN.md's table and the layers contract name the same units in the same order."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    block = text.split('id = "layers"', 1)[1].split("layers = [", 1)[1].split("]", 1)[0]
    contract = [set(re.findall(r"[\w_]+", line)) for line in re.findall(r'"([^"]+)"', block)][::-1]
    design = (ROOT / "DESIGN.md").read_text(encoding="utf-8").split("## Layers", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[2] for line in design.splitlines() if re.match(r"^\| \d+ \|", line)]
    table = [set(re.findall(r"`([\w_]+)`", part)) - {"__init__"}
             for row in rows for part in row.split(", then ")]  # "`cli`, then `__main__`": two layers
    table = [units for units in table if units]  # layer 0, the package root, is the container itself
    assert table == contract


@pytest.fixture
def copy_of_the_package(tmp_path):
    shutil.copytree(ROOT / "deidlib", tmp_path / "deidlib", ignore=shutil.ignore_patterns("__pycache__", "csrc"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def _append(path: Path, line: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + f"\n\ndef _injected():\n    {line}\n", encoding="utf-8")


def test_the_contract_sees_an_upward_import(copy_of_the_package):
    """corpus (layer 2) importing the generator (layer 3), inside a function: broken."""
    _append(copy_of_the_package / "deidlib" / "corpus" / "document.py", "from ..synthetic import generate  # noqa")
    r = lint_imports(copy_of_the_package)
    assert r.returncode != 0
    assert "deidlib.corpus.document -> deidlib.synthetic" in r.stdout


def test_the_contract_sees_a_cycle_between_siblings(copy_of_the_package):
    """features <-> taggers inside models (what the presets module ended): broken."""
    _append(copy_of_the_package / "deidlib" / "models" / "presets.py", "from .taggers import build_tagger  # noqa")
    r = lint_imports(copy_of_the_package)
    assert r.returncode != 0 and "BROKEN" in r.stdout
