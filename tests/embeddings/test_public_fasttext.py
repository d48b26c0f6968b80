"""The FastText row of the friedrich study: 300-d gensim FastText trained on the public text it
names (medical abstracts, the Wikipedia sample of the gensim wheel), subword vectors for unseen
words, and no network access. Trained on a few documents with one epoch (never the full corpus)."""

import socket
import urllib.request

import numpy as np
import pytest

from deidlib.corpus.locate import MEDICAL_ABSTRACTS, find_data_dir
from deidlib.embeddings.public import _PUBLIC_SOURCES, _public_corpus, _read_wikipedia_sample, fasttext_public

TINY = dict(epochs=1, max_documents=3, bucket=5000)


def _cos(a, b):
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("network access while loading vectors")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(urllib.request, "urlopen", refuse)


def test_friedrich_fasttext_row_is_300d_public_fasttext(monkeypatch):
    from deidlib.studies import friedrich
    from deidlib.studies.friedrich import common

    seen = {}
    monkeypatch.setattr(common, "fasttext_public", lambda **kw: seen.update(kw) or "ft")
    for profile in ("cpu", "paper"):
        assert common.load_embeddings("fasttext", friedrich.params_for(profile)) == "ft"
        assert seen["dim"] == 300 and seen["max_documents"] is None  # the whole public corpus, as the paper's 300 d
        assert "sources" not in seen  # the default: every public source
    assert _PUBLIC_SOURCES == ("abstracts", "wikipedia")


def test_fasttext_vectors_are_300d_and_trained_on_the_stated_source(tmp_path):
    ft = fasttext_public(dim=300, sources=("wikipedia",), cache=tmp_path, **TINY)
    _, stats = _public_corpus(("wikipedia",), max_documents=3)
    assert ft.dim == 300 and ft.vectors.shape == (len(ft), 300) and ft.name == "fasttext-public-300d"
    assert ft.source == f"gensim FastText on wikipedia (3 documents, {stats['wikipedia']['tokens']:,} tokens)"
    assert stats["wikipedia"]["tokens"] > 10_000
    assert "anarchism" in ft.index  # the sample's first article: the words come from that text
    if find_data_dir(MEDICAL_ABSTRACTS) is not None:
        abstracts = fasttext_public(dim=300, sources=("abstracts",), cache=tmp_path, **TINY)
        assert "anarchism" not in abstracts.index and abstracts.source.startswith("gensim FastText on abstracts (3 ")


def test_unseen_word_gets_a_subword_vector_near_its_morphological_neighbour(tmp_path):
    ft = fasttext_public(dim=64, sources=("wikipedia",), cache=tmp_path, **TINY)
    oov = "anarchismus"
    assert ft.row(oov) is None  # not a vocabulary word
    v = ft.vector(oov)
    assert v is not None and v.shape == (64,) and np.abs(v).sum() > 0
    anarchism = ft.vectors[ft.row("anarchism")]
    assert _cos(v, anarchism) > 0.5
    sims = ft.vectors @ v / (np.linalg.norm(ft.vectors, axis=1) * np.linalg.norm(v))
    top = [ft.words[i] for i in np.argsort(-sims)[:10]]
    assert "anarchism" in top, top


def test_fasttext_loading_never_touches_the_network(tmp_path, no_network):
    trained = fasttext_public(dim=16, sources=("wikipedia",), cache=tmp_path, **TINY)
    cached = fasttext_public(dim=16, sources=("wikipedia",), cache=tmp_path, **TINY)  # from the disk cache
    np.testing.assert_array_equal(cached.vectors, trained.vectors)
    assert len(list(tmp_path.glob("fasttext-*.kv"))) == 1


def test_wikipedia_sample_is_read_from_a_local_file_only(tmp_path, no_network):
    assert len(_read_wikipedia_sample(max_articles=2)) == 2
    with pytest.raises(FileNotFoundError, match="no such Wikipedia dump"):
        _read_wikipedia_sample(tmp_path / "enwiki.xml.bz2")  # missing: an error, never a download


def test_public_corpus_cuts_documents_into_pieces_gensim_keeps_whole():
    pieces, stats = _public_corpus(("wikipedia",), max_documents=2)
    assert max(map(len, pieces)) <= 1000 < stats["wikipedia"]["tokens"]  # gensim truncates at 10,000
    assert sum(map(len, pieces)) == stats["wikipedia"]["tokens"]
    assert all(t == t.lower() for p in pieces for t in p)
    with pytest.raises(ValueError, match="public sources must be among"):
        _public_corpus(("commoncrawl",))


def test_without_the_abstracts_fasttext_trains_on_the_wikipedia_sample_and_says_so(tmp_path, monkeypatch):
    from deidlib.corpus.locate import _SEARCH_ENV

    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("DEIDLIB_DATA_DIR", str(empty))
    monkeypatch.setenv(_SEARCH_ENV, "env")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match=MEDICAL_ABSTRACTS):
        _public_corpus(_PUBLIC_SOURCES, max_documents=3)
    ft = fasttext_public(dim=16, cache=tmp_path / "cache", **TINY)  # every source asked for, one present
    _, wiki = _public_corpus(("wikipedia",), max_documents=3)
    assert ft.source == (f"gensim FastText on wikipedia (3 documents, {wiki['wikipedia']['tokens']:,} tokens); "
                         "fallback: abstracts not found on this machine (see data/README.md), trained on wikipedia only")
    assert "anarchism" in ft.index
    with pytest.raises(FileNotFoundError, match="none of the public sources"):
        _public_corpus(("abstracts",), skip_missing=True)
