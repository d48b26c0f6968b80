"""The shape every study package has, and the base of its results.

A study is a package ``deidlib/studies/<study>/`` with the files of :data:`_STUDY_FILES`:
``params.py`` (its :class:`~deidlib.studies.params.StudyParams` dataclass, the profile table
and ``params_for``), ``run.py`` (``run_study(params, ...) -> <Study>Results``), ``tables.py``,
``figures.py`` and ``claims.py`` (the paper's numbers, in that one place, and the "paper vs
ours" claims built with :mod:`deidlib.reporting`). Its ``__init__`` re-exports the public
names, so a notebook writes ``festag.run_study(...)``. ``tests/studies/test_protocol.py``
checks every package against this.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from typing import Any

__all__ = ["StudyResults"]

#: the modules every study package holds
_STUDY_FILES = ("params.py", "run.py", "tables.py", "figures.py", "claims.py")


@dataclass
class StudyResults(Mapping):
    """Base of a study's typed results: read the fields as attributes (``results.runs``).

    The results also read as a mapping of their field names (``results["runs"]``, ``dict(results)``),
    which is how the tables of every study, and code written when results were plain dicts, take
    them; :func:`deidlib.reporting.write_json` writes the same JSON as for that dict.
    """

    def __getitem__(self, key: str) -> Any:
        if key not in self._names():
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())

    def _names(self) -> tuple[str, ...]:
        return tuple(f.name for f in fields(self))
