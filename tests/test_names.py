"""Every class defined in the library has a name no other library module uses for a class
(two ``History`` or two ``PrivacyLedger`` classes made imports ambiguous to read; the
studies' data classes are ``FestagData``, ``AhmedData``, ``FriedrichData``)."""

import ast
from collections import defaultdict
from pathlib import Path

DEIDLIB = Path(__file__).resolve().parents[1] / "deidlib"


def class_definitions(root: Path = DEIDLIB, exclude: tuple[str, ...] = ()) -> dict[str, list[str]]:
    """Class name -> the modules (paths relative to ``root``'s parent) that define it at top level."""
    where: dict[str, list[str]] = defaultdict(list)
    for f in sorted(root.rglob("*.py")):
        if f.relative_to(root).parts[0] in exclude:
            continue
        for node in ast.parse(f.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef):
                where[node.name].append(str(f.relative_to(root.parent)))
    return where


def test_class_names_are_unique():
    assert {n: m for n, m in class_definitions().items() if len(m) > 1} == {}


def test_the_check_sees_a_duplicate(tmp_path):
    (tmp_path / "deidlib" / "a").mkdir(parents=True)
    (tmp_path / "deidlib" / "x.py").write_text("class History:\n    pass\n")
    (tmp_path / "deidlib" / "a" / "y.py").write_text("class History:\n    pass\nclass Other:\n    pass\n")
    assert {n: m for n, m in class_definitions(tmp_path / "deidlib").items() if len(m) > 1} == {
        "History": ["deidlib/a/y.py", "deidlib/x.py"]
    }
