"""One entry point for every corpus a study can run on.

``load_corpus("synthetic")`` (the embedded default) generates the seeded synthetic
corpus at the profile's size and splits it by patient; ``"physionet"`` reads the
PhysioNet deid nursing notes (document-level split as in the ahmed thesis by default,
or by patient); ``"i2b2"`` reads i2b2 2014 XML from ``data_dir`` (``train/dev/test``
folders, or one flat folder split by patient).
"""

from __future__ import annotations

from functools import lru_cache

from .locate import PHYSIONET_DEID, find_data_dir
from .splits import (
    THESIS_NURSING_FRACTIONS,
    CorpusSplits,
    read_split_dirs,
    split_by_document,
    split_by_patient,
)

__all__ = ["load_corpus", "CORPORA", "synthetic_documents"]

CORPORA = ("synthetic", "physionet", "i2b2")


@lru_cache(maxsize=8)
def _synthetic(patients: int, sites: int, seed: int) -> tuple:
    from ..synthetic import generate

    return tuple(generate(patients=patients, sites=sites, seed=seed))


def synthetic_documents(profile: str = "smoke", seed: int = 0, patients: int | None = None, sites: int | None = None):
    """The synthetic corpus of a profile (memoized in-process; treat it as read-only)."""
    from ..profiles import get_profile

    p = get_profile(profile)
    return list(_synthetic(patients or p.patients, sites or p.sites, seed))


@lru_cache(maxsize=2)
def _physionet(path: str) -> tuple:
    from .physionet import read_physionet

    return tuple(read_physionet(path))


def load_corpus(
    corpus: str = "synthetic",
    data_dir: str | None = None,
    profile: str = "smoke",
    seed: int = 0,
    split: str | None = None,
    patients: int | None = None,
    sites: int | None = None,
) -> CorpusSplits:
    """Train/dev/test documents of ``corpus``.

    split: ``"patient"`` (70/10/20 by patient; default for synthetic and i2b2) or
    ``"document"`` (default for physionet: the thesis' 1,948/486 notes, with 10% of the
    training notes held out as dev — the thesis does not describe a dev set; choice).
    """
    if corpus not in CORPORA:
        raise ValueError(f"unknown corpus {corpus!r}; choose one of {', '.join(CORPORA)}")
    if corpus == "synthetic":
        docs = synthetic_documents(profile, seed, patients, sites)
        if split == "document":
            return split_by_document(docs, (0.7, 0.1, 0.2), seed=seed, name="synthetic")
        return split_by_patient(docs, seed=seed, name="synthetic")
    if corpus == "physionet":
        d = find_data_dir(PHYSIONET_DEID, data_dir)
        if d is None:
            raise FileNotFoundError(
                "PhysioNet deid 1.1 not found: pass data_dir or set DEIDLIB_DATA_DIR (see data/README.md)"
            )
        docs = list(_physionet(str(d)))
        if split in (None, "document"):
            s = split_by_document(docs, THESIS_NURSING_FRACTIONS, seed=seed)
            inner = split_by_document(s.train, (0.9, 0.1), seed=seed)
            return CorpusSplits(inner.train, inner.test, s.test, "physionet")
        return split_by_patient(docs, seed=seed, name="physionet")
    if data_dir is None:
        raise FileNotFoundError("corpus 'i2b2' needs data_dir: a folder with train/ dev/ test/ of i2b2 2014 XML files")
    return read_split_dirs(data_dir, seed=seed)
