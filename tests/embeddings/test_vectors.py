"""gensim vectors: determinism, content-hash cache hit, file loading, OOV fallback."""

from __future__ import annotations

import numpy as np
import pytest

from deidlib.embeddings import embedding_matrix, load_vectors, normalize_token, train_word_vectors

SENTS = [["the", "patient", "was", "seen", "by", "dr", "smith", "on", "00/00/0000"]] * 20 + [
    ["smith", "called", "the", "patient"]] * 10


@pytest.mark.parametrize("method", ["word2vec", "fasttext"])
def test_training_is_deterministic_and_cached(tmp_path, method):
    a = train_word_vectors(SENTS, method=method, dim=8, epochs=2, seed=1, cache=tmp_path / "a")
    b = train_word_vectors(SENTS, method=method, dim=8, epochs=2, seed=1, cache=False)
    assert np.array_equal(a.vectors, b.vectors)
    files = list((tmp_path / "a").glob(f"{method}-*.kv"))
    assert len(files) == 1
    mtime = files[0].stat().st_mtime_ns
    c = train_word_vectors(SENTS, method=method, dim=8, epochs=2, seed=1, cache=tmp_path / "a")  # cache hit
    assert np.array_equal(a.vectors, c.vectors) and files[0].stat().st_mtime_ns == mtime
    d = train_word_vectors(SENTS[:25], method=method, dim=8, epochs=2, seed=1, cache=tmp_path / "a")  # other content
    assert len(list((tmp_path / "a").glob(f"{method}-*.kv"))) == 2 and d is not None
    e = train_word_vectors(SENTS, method=method, dim=8, epochs=2, seed=2, cache=False)
    assert not np.array_equal(a.vectors, e.vectors)


def test_env_cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("DEIDLIB_CACHE_DIR", str(tmp_path))
    train_word_vectors(SENTS, dim=4, epochs=1)
    assert len(list(tmp_path.glob("word2vec-*.kv"))) == 1


def test_bad_method():
    with pytest.raises(ValueError, match="word2vec"):
        train_word_vectors(SENTS, method="glove")


def _kv():
    from gensim.models import KeyedVectors

    kv = KeyedVectors(3)
    kv.add_vectors(["Smith", "boston", "00/00/0000"], np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=np.float32))
    return kv


def test_embedding_matrix_oov_fallback():
    words = ["<pad>", "<unk>", "Smith", "Boston", "12/01/2010", "zebra"]
    m, stats = embedding_matrix(words, _kv(), seed=0)
    assert m.shape == (6, 3) and m.dtype == np.float32
    assert np.array_equal(m[0], np.zeros(3))
    assert np.array_equal(m[2], [1, 0, 0])  # exact
    assert np.array_equal(m[3], [0, 1, 0])  # lowercase
    assert np.array_equal(m[4], [0, 0, 1])  # digits -> 0
    assert stats["exact"] == 1 and stats["fallback"] == 2 and stats["random"] == 1
    assert stats["coverage"] == pytest.approx(3 / 4)
    m2, _ = embedding_matrix(words, _kv(), seed=0)
    m3, _ = embedding_matrix(words, _kv(), seed=1)
    assert np.array_equal(m, m2) and not np.array_equal(m[5], m3[5])


@pytest.mark.parametrize("fmt", ["w2v_text", "w2v_bin", "glove"])
def test_load_vector_files(tmp_path, fmt):
    kv = _kv()
    if fmt == "glove":
        p = tmp_path / "g.txt"
        p.write_text("".join(f"{w} {' '.join(map(str, kv[w]))}\n" for w in kv.index_to_key))
    else:
        p = tmp_path / ("v.bin" if fmt == "w2v_bin" else "v.txt")
        kv.save_word2vec_format(str(p), binary=fmt == "w2v_bin")
    got = load_vectors(p)
    assert got.index_to_key == kv.index_to_key and np.allclose(got.vectors, kv.vectors)
    with pytest.raises(FileNotFoundError):
        load_vectors(tmp_path / "missing.txt")


def test_normalize_token():
    assert normalize_token("Dr.Smith-12") == "dr.smith-00"
    assert normalize_token("AB1", lowercase=False) == "AB0"
    assert normalize_token("AB1", digits=False) == "ab1"
