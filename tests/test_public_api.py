"""The public API (DESIGN.md, "Public API"): the names of the ``__all__`` lists of deidlib's modules,
at most 500 of them, each defined where it is listed, and the book's API reference
(docs/api.md) documents exactly that set."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import re
from pathlib import Path

import pytest

import deidlib

ROOT = Path(__file__).resolve().parents[1]
API_PAGE = ROOT / "docs" / "api.md"
MAX_PUBLIC_NAMES = 500
#: an autosummary row of the API page: three spaces, a dotted path under deidlib
ROW = re.compile(r"^   (deidlib(?:\.\w+)+)$", re.M)


@pytest.fixture(scope="module")
def exports() -> dict[str, list[str]]:
    """Every importable module of deidlib that has an ``__all__`` -> that list (``__main__`` aside)."""
    found = {"deidlib": list(deidlib.__all__)}
    for info in pkgutil.walk_packages(deidlib.__path__, "deidlib."):
        if info.name.rsplit(".", 1)[-1] != "__main__":
            module = importlib.import_module(info.name)
            if hasattr(module, "__all__"):
                found[info.name] = list(module.__all__)
    return found


def _sitetools():
    spec = importlib.util.spec_from_file_location("deidlib_docs_sitetools", ROOT / "docs" / "sitetools.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _resolve(path: str):
    """The object at dotted ``path``: the longest importable module prefix, then attributes."""
    parts = path.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except ModuleNotFoundError:
            continue
        for attr in parts[k:]:
            obj = getattr(obj, attr)
        return obj
    raise LookupError(path)


def test_at_most_500_unique_names_are_exported(exports):
    names = set().union(*map(set, exports.values()))
    assert len(names) <= MAX_PUBLIC_NAMES, (
        f"{len(names)} unique names in the __all__ lists of deidlib, over {MAX_PUBLIC_NAMES}: a name only its "
        "own module uses takes a leading underscore, one only its package uses leaves __all__")


def test_every_all_entry_exists_in_its_module_and_is_public(exports):
    missing = [f"{m}.{n}" for m, names in exports.items() for n in names if not hasattr(importlib.import_module(m), n)]
    assert not missing, f"__all__ names what its module lacks: {missing}"
    private = [f"{m}.{n}" for m, names in exports.items() for n in names if n.startswith("_") and n != "__version__"]
    assert not private, f"an __all__ entry has a leading underscore: {private}"


def test_the_api_page_documents_exactly_the_exported_names(exports):
    documented = ROW.findall(API_PAGE.read_text(encoding="utf-8"))
    assert len(documented) == len(set(documented)), "a name is documented twice"
    # every row is an __all__ entry of the module it names
    not_exported = [p for p in documented if p.rsplit(".", 1)[1] not in exports.get(p.rsplit(".", 1)[0], ())]
    assert not not_exported, f"the API page documents names no __all__ lists: {not_exported}"
    # every __all__ entry is documented: under its own module or a package above it that exports the same object
    by_name: dict[str, list] = {}
    for p in documented:
        by_name.setdefault(p.rsplit(".", 1)[1], []).append(_resolve(p))
    undocumented = [f"{m}.{n}" for m, names in exports.items() for n in names
                    if not any(obj is getattr(importlib.import_module(m), n) for obj in by_name.get(n, ()))]
    assert not undocumented, f"exported but not on the API page: {undocumented}"


def test_the_api_page_is_the_one_the_all_lists_give():
    assert API_PAGE.read_text(encoding="utf-8") == _sitetools().api_page(), \
        "docs/api.md is out of date: run `python docs/sitetools.py api`"


def test_a_name_a_package_exports_is_documented_under_the_package_not_its_submodule(exports):
    documented = set(ROW.findall(API_PAGE.read_text(encoding="utf-8")))
    assert "deidlib.training.fit_tagger" in documented and "deidlib.training.api.fit_tagger" not in documented
    assert "deidlib.corpus.Document" in documented and "deidlib.corpus.document.Document" not in documented
