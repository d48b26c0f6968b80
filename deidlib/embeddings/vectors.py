"""Word vectors: gensim Word2Vec/FastText trained on the training split only, cached by
content hash; loading word2vec/GloVe files; embedding matrices with OOV fallback.

Determinism: gensim is trained with ``workers=1`` and a fixed ``seed`` (with several
worker threads gensim's results depend on thread scheduling), so the same tokens and
parameters give the same vectors; the cache key hashes tokens and parameters.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from ..cache import cache_dir
from ..rng import as_generator

__all__ = ["train_word_vectors", "load_vectors", "embedding_matrix", "normalize_token"]

_DIGITS = re.compile(r"\d")


def normalize_token(token: str, lowercase: bool = True, digits: bool = True) -> str:
    """The word-vocabulary key of a token: lowercased, digits mapped to 0 (options)."""
    if lowercase:
        token = token.lower()
    if digits:
        token = _DIGITS.sub("0", token)
    return token


def train_word_vectors(
    sentences: Sequence[Sequence[str]],
    *,
    method: str = "word2vec",
    dim: int = 100,
    window: int = 5,
    min_count: int = 1,
    epochs: int = 5,
    sg: int = 1,
    seed: int = 0,
    bucket: int | None = None,
    cache: bool | str | Path = True,
):
    """Train gensim vectors on tokenized *training* sentences; returns ``KeyedVectors``.

    Pass only training-split sentences: the studies never let dev/test text into the
    embeddings. ``cache=True`` stores the vectors under :func:`deidlib.cache.cache_dir` keyed by a
    SHA-256 of the sentences and parameters (a second call loads them). ``bucket``: rows of
    FastText's hashed character n-gram table (None: gensim's 2,000,000; FastText only).
    """
    from gensim.models import FastText, Word2Vec

    if method not in ("word2vec", "fasttext"):
        raise ValueError(f"method must be 'word2vec' or 'fasttext', not {method!r}")
    if bucket is not None and (method != "fasttext" or bucket < 1):
        raise ValueError(f"bucket is a positive FastText parameter, got bucket={bucket} for {method}")
    params = dict(method=method, dim=dim, window=window, min_count=min_count, epochs=epochs, sg=sg, seed=seed)
    if bucket is not None:
        params["bucket"] = bucket
    path = None
    if cache:
        h = hashlib.sha256(json.dumps(params, sort_keys=True).encode())
        for s in sentences:
            h.update("\x1f".join(s).encode())
            h.update(b"\x1e")
        root = cache_dir() if cache is True else Path(cache)
        path = root / f"{method}-{h.hexdigest()[:24]}.kv"
        if path.is_file():
            from gensim.models import KeyedVectors

            return KeyedVectors.load(str(path))
    cls = Word2Vec if method == "word2vec" else FastText
    extra = {} if bucket is None else {"bucket": bucket}
    model = cls(
        sentences=[list(s) for s in sentences],
        vector_size=dim,
        window=window,
        min_count=min_count,
        epochs=epochs,
        sg=sg,
        seed=seed,
        workers=1,
        **extra,
    )
    kv = model.wv
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")  # per process: notebooks may run side by side
        kv.save(str(tmp), separately=[])  # one file, so the atomic rename moves all arrays (FastText n-grams!)
        os.replace(tmp, path)
    return kv


def load_vectors(path: str | os.PathLike, *, binary: bool | None = None, glove: bool | None = None):
    """Load word2vec text/binary or GloVe text vectors (GloVe files have no header line)."""
    from gensim.models import KeyedVectors

    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{p}: no such vector file")
    if p.suffix == ".kv":
        return KeyedVectors.load(str(p))
    if binary is None:
        binary = p.suffix == ".bin"
    if glove is None and not binary:
        with open(p, encoding="utf-8", errors="replace") as f:
            first = f.readline().split()
        glove = not (len(first) == 2 and all(x.isdigit() for x in first))
    return KeyedVectors.load_word2vec_format(str(p), binary=binary, no_header=bool(glove))


def embedding_matrix(
    words: Sequence[str], kv, *, seed: int = 0, scale: float | None = None, specials: Iterable[int] = (0, 1)
) -> tuple[np.ndarray, dict]:
    """Matrix ``[len(words), kv.vector_size]`` for a vocabulary, with OOV fallback:
    exact key, lowercase, digits→0, both; else a seeded random vector (normal with the
    vectors' own standard deviation). Rows in ``specials`` (padding 0, UNK 1) are zero /
    random. Returns the matrix and coverage counts."""
    rng = as_generator(seed)
    dim = kv.vector_size
    std = float(scale if scale is not None else np.std(kv.vectors)) if len(kv) else 0.1
    m = rng.normal(0.0, std, size=(len(words), dim)).astype(np.float32)
    stats: dict[str, float] = {"exact": 0, "fallback": 0, "random": 0}  # counts, then "coverage"
    special = set(specials)
    for i, w in enumerate(words):
        if i in special:
            continue
        for j, key in enumerate((w, w.lower(), normalize_token(w, False), normalize_token(w))):
            if key in kv.key_to_index:
                m[i] = kv[key]
                stats["exact" if j == 0 else "fallback"] += 1
                break
        else:
            stats["random"] += 1
    if 0 in special:
        m[0] = 0.0
    n = max(1, len(words) - len(special))
    stats["coverage"] = (stats["exact"] + stats["fallback"]) / n
    return m, stats
