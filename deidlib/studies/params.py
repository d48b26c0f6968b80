"""One way to get a study's parameters: the profile's row, then the caller's overrides, checked.

Every study keeps its knobs in a frozen dataclass that derives from :class:`StudyParams`
and registers its per-profile table (``smoke``/``cpu``/``paper``) with :func:`profiles`.
Notebooks and the CLI call :meth:`StudyParams.resolve` *once* and hand the result to the
study's ``run_study(params, ...)``; nothing resolves parameters a second time.

:meth:`~StudyParams.resolve` rules (the same for every study):

* ``None`` overrides are ignored (a notebook's ``None`` means "the profile's value");
* an unknown name is a one-line :class:`ValueError` that lists the known names;
* a value whose type does not fit the field's annotation is a one-line :class:`ValueError`
  (``int`` is accepted where ``float`` is annotated; a list where a tuple is annotated is
  turned into a tuple);
* dict-valued fields named in ``MERGED`` are merged key by key into the profile's dict
  (override one tagger size without restating the others);
* the study's :meth:`~StudyParams.check` then validates ranges.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass, fields, replace
from typing import Any, ClassVar, TypeVar

__all__ = ["StudyParams", "profiles"]

P = TypeVar("P", bound="StudyParams")


@dataclass(frozen=True)
class StudyParams:
    """Base of every study's parameter dataclass (see the module docstring)."""

    #: the profile the parameters were resolved from (set by :meth:`resolve`)
    profile: str = "paper"

    #: study name used in error messages
    STUDY: ClassVar[str] = "study"
    #: dict-valued fields whose overrides are merged into the profile's dict
    MERGED: ClassVar[tuple[str, ...]] = ()
    #: the per-profile table (filled by :func:`profiles`)
    PROFILES: ClassVar[dict[str, Any]] = {}

    @classmethod
    def resolve(cls: type[P], profile: str, **overrides: Any) -> P:
        """The profile's parameters with ``overrides`` applied and checked."""
        try:
            base = cls.PROFILES[profile]
        except KeyError:
            raise ValueError(f"unknown profile {profile!r}; choose one of {', '.join(cls.PROFILES)}") from None
        kw = {k: v for k, v in overrides.items() if v is not None}
        names = [f.name for f in fields(cls) if f.name != "profile"]
        unknown = sorted(set(kw) - set(names))
        if unknown:
            raise ValueError(f"unknown {cls.STUDY} parameters: {unknown}; known: {', '.join(names)}")
        hints = typing.get_type_hints(cls)
        for name, value in list(kw.items()):
            if name in cls.MERGED and isinstance(value, dict):
                value = base._merge(name, value)
            value = _coerce(value, hints[name])
            if not _type_fits(value, hints[name]):
                raise ValueError(
                    f"{cls.STUDY} parameter {name} must be {_type_name(hints[name])}, got {value!r}"
                )
            kw[name] = value
        p = replace(base, profile=profile, **kw)
        p.check()
        return p

    def _merge(self, name: str, value: dict) -> dict:
        """Override keys of the dict field ``name`` (studies with nested dicts refine this)."""
        return {**getattr(self, name), **value}

    def check(self) -> None:
        """Range checks of the study (raise ValueError); none by default."""


def profiles(cls: type[P], table: dict[str, P]) -> dict[str, P]:
    """Register ``table`` as ``cls``'s per-profile parameters; return it (module constant)."""
    cls.PROFILES = table
    return table


def _coerce(value: Any, tp: Any) -> Any:
    """A list for a tuple-annotated field becomes a tuple (of floats for ``tuple[float, ...]``)."""
    for t in _members(tp):
        if typing.get_origin(t) is tuple and isinstance(value, (list, tuple)):
            args = typing.get_args(t)
            if len(args) == 2 and args[1] is Ellipsis and args[0] is float:
                try:
                    return tuple(float(x) for x in value)
                except (TypeError, ValueError):
                    return value
            return tuple(value)
    return value


def _members(tp: Any) -> tuple[Any, ...]:
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        return typing.get_args(tp)
    return (tp,)


def _type_fits(value: Any, tp: Any) -> bool:
    """Whether ``value`` fits the annotation ``tp`` (shallow: containers by their origin)."""
    for t in _members(tp):
        if t is Any:
            return True
        if t is type(None):
            if value is None:
                return True
            continue
        origin = typing.get_origin(t) or t
        if origin is float and isinstance(value, (int, float)) and not isinstance(value, bool):
            return True
        if origin is int and isinstance(value, int) and not isinstance(value, bool):
            return True
        if origin not in (float, int) and isinstance(origin, type) and isinstance(value, origin):
            return True
    return False


def _type_name(tp: Any) -> str:
    return " or ".join(getattr(t, "__name__", str(t)) if t is not type(None) else "None" for t in _members(tp))
