"""One entry point for every corpus a study can run on: :func:`load_corpus`.

This module sits above :mod:`deidlib.corpus` (readers, splits), :mod:`deidlib.synthetic`
(the generator) and :mod:`deidlib.profiles` (corpus sizes), so none of those imports it
(see DESIGN.md, "Layers").

* ``"synthetic"`` (the embedded default): :func:`deidlib.synthetic.generate` at the
  profile's size (:func:`deidlib.profiles.get_profile`), split by patient 70/10/20.
  Generation is memoized in-process on (patients, sites, seed).
* ``"physionet"``: the PhysioNet deid 1.1 nursing notes
  (:func:`deidlib.corpus.physionet.read_physionet`), found by
  :func:`deidlib.corpus.locate.find_data_dir` (``data_dir``, ``$DEIDLIB_DATA_DIR``,
  ``shared/data``). Default split ``"document"`` as in the ahmed thesis (section 5:
  80:20 into 1,948 training and 486 test notes; "the training set was split 80:20 for
  training and validation", so dev = floor(0.2 * 1,948) = 389 of the training notes,
  train = 1,559), or ``"patient"`` (70/10/20 by patient).
* ``"mixed"``: the synthetic sites plus the PhysioNet nursing notes as one more site
  (``doc.site == "physionet"``), each split by patient 70/10/20 (synthetic patients are
  ``PPP``, PhysioNet patients their own ids, so a patient stays in one split);
  ``heterogeneity`` applies to the synthetic sites.
* ``"i2b2"``: i2b2 2014 XML from ``data_dir`` (or ``$DEIDLIB_DATA_DIR/i2b2_2014``):
  ``train/ dev/ test/`` folders (or the official release's folder names), or one flat
  folder split by patient; see :func:`deidlib.corpus.splits.read_split_dirs`.

Returned documents are fresh copies (the cached corpus cannot be changed by a caller).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from .corpus.document import Document
from .corpus.i2b2 import read_i2b2_dir
from .corpus.locate import PHYSIONET_DEID, find_data_dir
from .corpus.physionet import read_physionet
from .corpus.splits import (
    THESIS_NURSING_FRACTIONS,
    CorpusSplits,
    has_split_dirs,
    read_split_dirs,
    split_by_document,
    split_by_patient,
)
from .profiles import get_profile
from .synthetic import DEFAULT_HETEROGENEITY, generate

__all__ = ["load_corpus", "I2B2_2014", "synthetic_documents"]

CORPORA = ("synthetic", "physionet", "i2b2", "mixed")
_SPLITS = ("patient", "document")
#: folder name of the i2b2 2014 corpus under ``$DEIDLIB_DATA_DIR``
I2B2_2014 = "i2b2_2014"
#: fractions (train, dev, test) for patient splits and synthetic document splits
DEFAULT_FRACTIONS = (0.7, 0.1, 0.2)


def _copy(d: Document) -> Document:
    return Document(d.id, d.text, list(d.spans), d.patient_id, d.site, dict(d.metadata))


@lru_cache(maxsize=8)
def _synthetic(patients: int, sites: int, seed: int, note_scale: tuple = (),
               heterogeneity: float = DEFAULT_HETEROGENEITY, extra_note_types: tuple = ()) -> tuple[Document, ...]:
    return tuple(generate(patients=patients, sites=sites, seed=seed, note_scale=dict(note_scale) or None,
                          heterogeneity=heterogeneity, extra_note_types=dict(extra_note_types) or None))


def synthetic_documents(
    profile: str = "smoke", seed: int = 0, patients: int | None = None, sites: int | None = None,
    note_scale: dict[str, float] | None = None, heterogeneity: float | None = None,
    extra_note_types: dict[str, float] | None = None,
) -> list[Document]:
    """The synthetic corpus of a profile (sizes, note-type weights, extra note types and site
    heterogeneity overridable, see :func:`deidlib.synthetic.generate`), memoized in-process."""
    p = get_profile(profile)
    scale = tuple(sorted((note_scale or {}).items()))
    extra = tuple(sorted((extra_note_types or {}).items()))
    h = DEFAULT_HETEROGENEITY if heterogeneity is None else float(heterogeneity)
    return [_copy(d) for d in _synthetic(patients or p.patients, sites or p.sites, int(seed), scale, h, extra)]


@lru_cache(maxsize=2)
def _physionet(path: str) -> tuple[Document, ...]:
    return tuple(read_physionet(path))


def load_corpus(
    corpus: str = "synthetic",
    data_dir: str | Path | None = None,
    profile: str = "smoke",
    seed: int = 0,
    split: str | None = None,
    patients: int | None = None,
    sites: int | None = None,
    note_scale: dict[str, float] | None = None,
    heterogeneity: float | None = None,
    extra_note_types: dict[str, float] | None = None,
) -> CorpusSplits:
    """Train/dev/test documents of ``corpus``.

    Args:
        corpus: ``"synthetic"``, ``"physionet"``, ``"i2b2"`` or ``"mixed"`` (synthetic sites + PhysioNet).
        data_dir: folder of a real corpus (see the module docstring for the search order).
        profile: synthetic corpus size (``smoke`` / ``cpu`` / ``paper``).
        seed: generation and split seed.
        split: ``"patient"`` or ``"document"``; ``None`` means the corpus' default
            (``"document"`` for physionet, ``"patient"`` otherwise). For ``"i2b2"`` with
            train/test folders the folders decide and ``split`` is ignored.
        patients, sites: override the profile's synthetic corpus size.
        note_scale: synthetic only: multiply every site's weight of these note types
            (``{"icu_nursing_note": 3}``); ignored for real corpora.
        heterogeneity: synthetic only: how different the sites are, in [0, 1]
            (``None``: :data:`deidlib.synthetic.DEFAULT_HETEROGENEITY`); ignored for real corpora.
        extra_note_types: synthetic only: note types no site writes by default, with their weights
            (``{"dictated_discharge": 0.3}``, :data:`deidlib.synthetic.GUIDELINE_NOTE_TYPES`); ignored
            for real corpora.

    Raises:
        ValueError: unknown corpus or split.
        FileNotFoundError: a real corpus that is not on this machine (see data/README.md).
    """
    if corpus not in CORPORA:
        raise ValueError(f"unknown corpus {corpus!r}; choose one of {', '.join(CORPORA)}")
    if split is not None and split not in _SPLITS:
        raise ValueError(f"unknown split {split!r}; choose one of {', '.join(_SPLITS)}")
    if corpus == "synthetic":
        docs = synthetic_documents(profile, seed, patients, sites, note_scale, heterogeneity, extra_note_types)
        if split == "document":
            return split_by_document(docs, DEFAULT_FRACTIONS, seed=seed, name="synthetic")
        return split_by_patient(docs, DEFAULT_FRACTIONS, seed=seed, name="synthetic")
    if corpus == "mixed":
        syn = load_corpus("synthetic", profile=profile, seed=seed, patients=patients, sites=sites,
                          note_scale=note_scale, heterogeneity=heterogeneity)
        real = load_corpus("physionet", data_dir, seed=seed, split="patient")
        if {d.patient_id for d in syn.train + syn.dev + syn.test} & {d.patient_id for d in real.train + real.dev + real.test}:
            raise ValueError("mixed corpus: synthetic and PhysioNet patient ids collide")
        def by_id(a, b):
            return sorted(a + b, key=lambda d: d.id)

        return CorpusSplits(by_id(syn.train, real.train), by_id(syn.dev, real.dev), by_id(syn.test, real.test), "mixed")
    if corpus == "physionet":
        d = find_data_dir(PHYSIONET_DEID, data_dir)
        if d is None:
            raise FileNotFoundError(
                f"PhysioNet deid 1.1 not found: pass data_dir, or set DEIDLIB_DATA_DIR to a folder containing "
                f"{PHYSIONET_DEID}/ (see data/README.md for how to obtain it)"
            )
        docs = [_copy(x) for x in _physionet(str(Path(d).resolve()))]
        if split in (None, "document"):
            outer = split_by_document(docs, THESIS_NURSING_FRACTIONS, seed=seed)
            inner = split_by_document(outer.train, (0.8, 0.2), seed=seed)
            return CorpusSplits(inner.train, inner.test, outer.test, "physionet")
        return split_by_patient(docs, DEFAULT_FRACTIONS, seed=seed, name="physionet")
    d = find_data_dir(I2B2_2014, data_dir)
    if d is None:
        raise FileNotFoundError(
            "corpus 'i2b2' needs data_dir (or DEIDLIB_DATA_DIR containing i2b2_2014/): a folder with "
            "train/ dev/ test/ subfolders of i2b2 2014 XML files, or one flat folder of them (see data/README.md)"
        )
    if split == "document":
        flat = Path(d)
        docs = [] if has_split_dirs(flat) else read_i2b2_dir(flat, recursive=True)
        if not docs:
            raise ValueError(f"{flat}: split='document' needs a flat folder of XML files (or one of site "
                             "subfolders as 'deidlib synth' writes), not train/ dev/ test/ folders")
        return split_by_document(docs, DEFAULT_FRACTIONS, seed=seed, name=flat.name)
    return read_split_dirs(d, seed=seed, fractions=DEFAULT_FRACTIONS)
