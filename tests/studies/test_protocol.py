"""The study package protocol (deidlib.studies.protocol): every package under deidlib/studies/
has the five files and a ``run_study`` annotated to return a dataclass, and a study's results
read as attributes and as the mapping the tables and the JSON writer take."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import typing
from pathlib import Path

import pytest

import deidlib.studies
from deidlib.reporting import json_ready
from deidlib.studies.protocol import _STUDY_FILES, StudyResults

STUDIES_DIR = Path(deidlib.studies.__file__).parent
#: modules of deidlib/studies/ that are shared helpers, not studies
HELPERS = {"__init__", "params", "protocol", "labels", "seed_stats"}


def _packages() -> list[str]:
    return sorted(p.name for p in STUDIES_DIR.iterdir() if (p / "__init__.py").is_file())


def test_a_study_is_a_package():
    modules = {p.stem for p in STUDIES_DIR.glob("*.py")} - HELPERS
    assert not modules, f"a study is a package, not a module: {sorted(modules)}"
    assert {"festag", "ahmed_models", "friedrich", "tchouka"} <= set(_packages())


@pytest.mark.parametrize("study", _packages())
def test_every_study_package_has_the_five_files_and_a_typed_run_study(study):
    missing = [f for f in _STUDY_FILES if not (STUDIES_DIR / study / f).is_file()]
    assert not missing, f"deidlib/studies/{study}/ lacks {missing}"
    pkg = importlib.import_module(f"deidlib.studies.{study}")
    run = importlib.import_module(f"deidlib.studies.{study}.run")
    assert pkg.run_study is run.run_study, "the package re-exports run.run_study"
    returned = typing.get_type_hints(run.run_study)["return"]
    assert dataclasses.is_dataclass(returned) and issubclass(returned, StudyResults)
    assert returned.__name__ in pkg.__all__ and "params_for" in pkg.__all__
    params = inspect.signature(run.run_study).parameters
    assert next(iter(params)) == "params"
    for name in pkg.__all__:
        assert hasattr(pkg, name), f"{study}.__all__ names {name}, which it does not define"
    for module in (STUDIES_DIR / study).glob("*.py"):
        mod = importlib.import_module(f"deidlib.studies.{study}.{module.stem}".removesuffix(".__init__"))
        assert isinstance(getattr(mod, "__all__", None), list), f"{mod.__name__} has no explicit __all__"
        assert all(hasattr(mod, name) for name in mod.__all__), f"{mod.__name__}.__all__ names what it lacks"


def _exported(study: str) -> set[str]:
    """Every name in an ``__all__`` of the package ``study`` (its ``__init__`` and its modules)."""
    names: set[str] = set()
    for module in (STUDIES_DIR / study).glob("*.py"):
        names |= set(importlib.import_module(f"deidlib.studies.{study}.{module.stem}".removesuffix(".__init__")).__all__)
    return names


def test_the_last_three_converted_studies_keep_a_narrow_public_api():
    # ahmed_models, friedrich and tchouka export what notebooks, other packages and docs call:
    # at most 45 names together; everything else is reached through its module
    exported = _exported("ahmed_models") | _exported("friedrich") | _exported("tchouka")
    assert len(exported) <= 45, sorted(exported)
    assert {"params_for", "run_study", "AhmedResults", "FriedrichResults", "TchoukaResults"} <= exported


@dataclasses.dataclass
class _Results(StudyResults):
    study: str
    runs: list = dataclasses.field(default_factory=list)


def test_results_read_as_attributes_and_as_the_former_dict():
    r = _Results("x", [{"seed": 0, "f1": float("inf")}])
    assert r.runs is r["runs"] and list(r) == ["study", "runs"] and len(r) == 2
    assert dict(r) == {"study": "x", "runs": r.runs} and r.get("nope") is None
    with pytest.raises(KeyError):
        r["nope"]
    # the JSON of the results is the JSON of the dict they replace
    assert json.dumps(json_ready(r)) == json.dumps(json_ready(dict(r)))
    assert json.loads(json.dumps(json_ready([r])))[0]["runs"][0]["f1"] == "inf"
