"""Find real corpora on disk without ever copying them into the repository.

Search order for a data set called ``name`` (e.g. ``"physionet_deid_1.1"``):
1. an explicit path given by the caller;
2. ``$DEIDLIB_DATA_DIR/<name>``;
3. ``shared/data/<name>`` next to the repository checkout or any parent folder of it
   (the layout of this project's development and CI machines), then of the current
   working directory. ``DEIDLIB_DATA_SEARCH=env`` turns this parent-folder search off, so
   that only an explicit path and ``$DEIDLIB_DATA_DIR`` count (how a machine without the
   team's data folder sees the package; ``tests/test_fresh_machine.py`` runs the studies'
   set-up that way).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["find_data_dir", "PHYSIONET_DEID", "MEDICAL_ABSTRACTS", "EUROSTAT_HEALTHCARE"]

PHYSIONET_DEID = "physionet_deid_1.1"
MEDICAL_ABSTRACTS = "medical_abstracts_tc"
_CMS_HOSPITALS = "cms_hospital_general_info"
EUROSTAT_HEALTHCARE = "eurostat_healthcare"
#: environment variable: ``env`` limits the search to an explicit path and ``$DEIDLIB_DATA_DIR``
_SEARCH_ENV = "DEIDLIB_DATA_SEARCH"


def _parent_search_enabled() -> bool:
    """Whether ``shared/data`` beside the checkout or the working directory is searched
    (``$DEIDLIB_DATA_SEARCH`` unset or ``parents``; ``env`` turns it off)."""
    value = os.environ.get(_SEARCH_ENV, "parents").strip().lower() or "parents"
    if value not in ("parents", "env"):
        raise ValueError(f"{_SEARCH_ENV} must be 'parents' or 'env', got {value!r}")
    return value == "parents"


def _candidates(name: str):
    env = os.environ.get("DEIDLIB_DATA_DIR")
    if env:
        yield Path(env) / name
    if not _parent_search_enabled():
        return
    for start in (Path(__file__).resolve().parent, Path.cwd().resolve()):
        for parent in (start, *start.parents):
            yield parent / "shared" / "data" / name


def find_data_dir(name: str, explicit: str | os.PathLike | None = None) -> Path | None:
    """Return the folder of data set ``name``, or ``None`` when it is not on this machine.

    An ``explicit`` path that does not exist is an error (the user asked for it).
    """
    if explicit is not None:
        p = Path(explicit).expanduser()
        if not p.is_dir():
            raise FileNotFoundError(f"data directory {p} does not exist")
        return p
    for c in _candidates(name):
        if c.is_dir():
            return c
    return None
