"""Find real corpora on disk without ever copying them into the repository.

Search order for a data set called ``name`` (e.g. ``"physionet_deid_1.1"``):
1. an explicit path given by the caller;
2. ``$DEIDLIB_DATA_DIR/<name>``;
3. ``shared/data/<name>`` next to the repository checkout or any parent folder of it
   (the layout of this project's development and CI machines), then of the current
   working directory.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["find_data_dir", "PHYSIONET_DEID", "MEDICAL_ABSTRACTS", "CMS_HOSPITALS", "EUROSTAT_HEALTHCARE"]

PHYSIONET_DEID = "physionet_deid_1.1"
MEDICAL_ABSTRACTS = "medical_abstracts_tc"
CMS_HOSPITALS = "cms_hospital_general_info"
EUROSTAT_HEALTHCARE = "eurostat_healthcare"


def _candidates(name: str):
    env = os.environ.get("DEIDLIB_DATA_DIR")
    if env:
        yield Path(env) / name
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
