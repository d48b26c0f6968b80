"""The shape of the package's code: no module of ``deidlib/`` over 600 lines and no module
docstring over 40 lines (measurements, rejected variants and history belong in
``docs/design/`` and ``docs/studies/`` pages, not in docstrings; DESIGN.md, "Conventions")."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "deidlib"
MAX_MODULE_LINES = 600
MAX_DOCSTRING_LINES = 40


def module_lines(source: str) -> int:
    """Lines of a module's source, as ``wc -l`` counts them (a last line without newline counts)."""
    return len(source.splitlines())


def docstring_lines(source: str) -> int:
    """Lines of the module docstring, from its opening to its closing quotes (0 when none)."""
    tree = ast.parse(source)
    first = tree.body[0] if tree.body else None
    if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)):
        return 0
    return first.end_lineno - first.lineno + 1


def too_long(limit_of, limit: int) -> list[str]:
    """``path: n lines`` for every module of the package over ``limit`` by ``limit_of``."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        n = limit_of(path.read_text(encoding="utf-8"))
        if n > limit:
            out.append(f"{path.relative_to(PACKAGE.parent)}: {n} lines")
    return out


def test_no_module_exceeds_600_lines():
    long = too_long(module_lines, MAX_MODULE_LINES)
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them by responsibility):\n" + "\n".join(long)


def test_no_module_docstring_exceeds_40_lines():
    long = too_long(docstring_lines, MAX_DOCSTRING_LINES)
    assert not long, (f"module docstrings over {MAX_DOCSTRING_LINES} lines (keep what the module is for, its paper "
                      "and its choices; move the rest to docs/design/ or docs/studies/):\n" + "\n".join(long))


@pytest.mark.parametrize("source, lines, doc", [
    ('"""One line."""\n\nx = 1\n', 3, 1),
    ('"""Two\nlines.\n"""\n', 3, 3),
    ("x = 1\n", 1, 0),
    ("", 0, 0),
    ("# a comment\n'''Docstring after a comment.'''\n", 2, 1),
])
def test_the_counts_are_those_of_the_source(source, lines, doc):
    assert module_lines(source) == lines
    assert docstring_lines(source) == doc


def test_a_long_module_or_docstring_is_reported(tmp_path, monkeypatch):
    (tmp_path / "long.py").write_text('"""' + "doc\n" * 41 + '"""\n' + "x = 1\n" * 600, encoding="utf-8")
    (tmp_path / "short.py").write_text('"""Short."""\n', encoding="utf-8")
    monkeypatch.setitem(globals(), "PACKAGE", tmp_path)
    assert [r.split(":")[0] for r in too_long(module_lines, MAX_MODULE_LINES)] == [f"{tmp_path.name}/long.py"]
    assert too_long(docstring_lines, MAX_DOCSTRING_LINES) == [f"{tmp_path.name}/long.py: 42 lines"]


#: the packages whose public API is budgeted here, and the budget (unique names over their __all__ lists)
API_PACKAGES = ("privacy", "surrogates", "commands", "pipeline")
MAX_API_NAMES = 120


def exported_names(folder: Path) -> set[str]:
    """The names of every ``__all__`` list of the modules under ``folder`` (read from the source)."""
    names: set[str] = set()
    for path in sorted(folder.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
                names.update(ast.literal_eval(node.value))
    return names


def test_the_public_api_of_privacy_surrogates_commands_and_pipeline_stays_within_its_budget():
    names = set().union(*(exported_names(PACKAGE / p) for p in API_PACKAGES))
    assert len(names) <= MAX_API_NAMES, (
        f"{len(names)} names in the __all__ lists of {', '.join(API_PACKAGES)} (at most {MAX_API_NAMES}): keep there "
        "what users, notebooks, other packages, benchmarks and docs use; a name used only in its module starts with _")
    assert not any(n.startswith("_") for n in names), sorted(n for n in names if n.startswith("_"))


def test_the_api_count_reads_every_all_list(tmp_path):
    (tmp_path / "a.py").write_text('__all__ = ["x", "y"]\n', encoding="utf-8")
    (tmp_path / "b.py").write_text('"""Doc."""\n__all__ = ["y", "z"]\nx = 1\n', encoding="utf-8")
    (tmp_path / "c.py").write_text("x = 1\n", encoding="utf-8")
    assert exported_names(tmp_path) == {"x", "y", "z"}
