"""High-level entry point: from corpus splits to a trained tagger.

:func:`build_inputs` is the one place where a tagger's inputs are set up — the featurizer
(vocabulary from *training* tokens only), the word vectors and the embedding matrix — for
:func:`prepare_tagger` and for every study (festag, ahmed, ahmed_dp).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..corpus.labels import tag_set, tagged_sentences
from ..corpus.splits import CorpusSplits
from ..embeddings import embedding_matrix, load_vectors, train_word_vectors
from ..models import PRESETS, Featurizer, build_featurizer, build_tagger
from ..models.presets import encoder_of
from .trainer import History, train

__all__ = ["build_inputs", "word_embeddings", "fit_tagger", "prepare_tagger"]

#: what word2vec/fastText vectors are trained on: ``"normalized"`` — the featurizer's word
#: keys (lowercased, digits → 0: the tokens the vocabulary holds); ``"raw"`` — the tokens as
#: written (the festag study's choice; :func:`~deidlib.embeddings.embedding_matrix` then
#: falls back from a vocabulary key to its lowercase/digit-normalised forms)
_VECTOR_KEYS = ("normalized", "raw")


@dataclass
class TaggerInputs:
    """A featurizer and the matching word-embedding matrix (``None``: random init)."""

    featurizer: Featurizer
    embeddings: np.ndarray | None
    word_dim: int


def word_embeddings(
    featurizer: Featurizer,
    token_lists: Sequence[Sequence[str]],
    *,
    vectors: str | None = "word2vec",
    dim: int,
    keys: str = "normalized",
    epochs: int = 5,
    seed: int = 0,
    cache: bool = True,
) -> np.ndarray | None:
    """The ``[vocabulary, dim]`` embedding matrix of ``featurizer`` (``None`` when
    ``vectors`` is ``None``).

    ``vectors``: ``"word2vec"``/``"fasttext"`` — gensim vectors trained on ``token_lists``
    (pass *training* tokens only), as :data:`_VECTOR_KEYS` ``keys`` says; or a path to
    word2vec/GloVe vectors (their own dimension wins over ``dim``). ``cache``: keep trained
    vectors on disk (:func:`~deidlib.embeddings.train_word_vectors`; never for real text).
    Rows of words without a vector are seeded random (:func:`~deidlib.embeddings.embedding_matrix`).
    """
    if not vectors:
        return None
    if keys not in _VECTOR_KEYS:
        raise ValueError(f"keys must be one of {_VECTOR_KEYS}, got {keys!r}")
    if vectors in ("word2vec", "fasttext"):
        sents = token_lists if keys == "raw" else [[featurizer.word_key(w) for w in s] for s in token_lists]
        kv = train_word_vectors(sents, method=vectors, dim=dim, epochs=epochs, seed=seed, cache=cache)
    else:
        kv = load_vectors(vectors)
    matrix, _ = embedding_matrix(featurizer.words, kv, seed=seed)
    return matrix


def build_inputs(
    kind: str,
    token_lists: Sequence[Sequence[str]],
    labels: Sequence[str],
    *,
    word_dim: int | None = None,
    vectors: str | None = "word2vec",
    keys: str = "normalized",
    vector_epochs: int = 5,
    seed: int = 0,
    cache: bool = True,
    vocabulary: Sequence[str] | None = None,
    **featurizer_kw: Any,
) -> TaggerInputs:
    """Featurizer (:func:`~deidlib.models.build_featurizer`: vocabulary of ``token_lists``,
    ``featurizer_kw`` such as ``min_count``/``max_vocab``/``lowercase``; or exactly ``vocabulary``,
    a given word list, when not ``None``) and word embeddings
    (:func:`word_embeddings`) for a tagger ``kind``; ``word_dim`` defaults to the kind's preset."""
    fz = build_featurizer(kind, token_lists, labels=labels, vocabulary=vocabulary, **featurizer_kw)
    dim = int(word_dim if word_dim is not None else PRESETS[kind]["word_dim"])
    matrix = word_embeddings(fz, token_lists, vectors=vectors, dim=dim, keys=keys, epochs=vector_epochs,
                             seed=seed, cache=cache)
    return TaggerInputs(fz, matrix, dim if matrix is None else int(matrix.shape[1]))


def prepare_tagger(
    kind: str,
    train_docs,
    *,
    scheme: str = "i2b2",
    encoding: str = "BIO",
    tokenizer: str = "default",
    embeddings: str | None = "word2vec",
    embedding_epochs: int = 5,
    min_count: int = 2,
    seed: int = 0,
    vocabulary: Sequence[str] | None = None,
    **hparams: Any,
):
    """Tagged training sentences and an untrained tagger whose vocabulary and (optional)
    word vectors come from the *training* documents only (:func:`build_inputs`).

    ``embeddings``: ``"word2vec"``/``"fasttext"`` (trained with gensim on the training
    tokens' normalised keys, cached), a path to vectors (word2vec/GloVe format), or ``None``
    (random init). ``vocabulary``: the word list to use instead of the training words
    (already normalised, e.g. a DP vocabulary, :func:`deidlib.privacy.vocabulary.dp_vocabulary`,
    or public words). ``hparams["lowercase_chars"]`` is taken out for the featurizer
    (:class:`~deidlib.models.Featurizer`: the character encoder reads lower case). An encoder
    kind (``minilm``) gets no word vectors and no word vocabulary (``embeddings`` and
    ``vocabulary`` are unused; :class:`~deidlib.models.features.EncoderFeaturizer`).
    """
    sents = tagged_sentences(train_docs, scheme, encoding, tokenizer)
    lowercase_chars = bool(hparams.pop("lowercase_chars", False))  # a featurizer option (Featurizer)
    fz_kw: dict[str, Any] = {}
    encoder = encoder_of(kind, hparams)
    if encoder is not None:  # an encoder tagger: public sub-word pieces, no word vectors
        fz_kw["encoder"], embeddings = encoder, None
    inputs = build_inputs(kind, [s.words for s in sents], tag_set(scheme, encoding), word_dim=hparams.get("word_dim"),
                          vectors=embeddings, vector_epochs=embedding_epochs, seed=seed, min_count=min_count,
                          vocabulary=vocabulary, lowercase_chars=lowercase_chars, **fz_kw)
    if inputs.word_dim != hparams.get("word_dim", PRESETS[kind]["word_dim"]):
        hparams["word_dim"] = inputs.word_dim  # loaded vectors of another dimension
    tagger = build_tagger(kind, inputs.featurizer, seed=seed, embeddings=inputs.embeddings, **hparams)
    tagger.task = {"scheme": scheme, "encoding": encoding, "mode": tokenizer}
    return sents, tagger


def fit_tagger(
    kind: str,
    splits: CorpusSplits,
    *,
    scheme: str = "i2b2",
    encoding: str = "BIO",
    tokenizer: str = "default",
    embeddings: str | None = "word2vec",
    hparams: dict[str, Any] | None = None,
    seed: int = 0,
    evaluate_test: bool = True,
    **train_kw: Any,
) -> tuple[Any, History]:
    """Build featurizer, embeddings and tagger from ``splits.train``, then :func:`train`."""
    sents, tagger = prepare_tagger(
        kind,
        splits.train,
        scheme=scheme,
        encoding=encoding,
        tokenizer=tokenizer,
        embeddings=embeddings,
        seed=seed,
        **(hparams or {}),
    )
    hist = train(
        tagger, sents, splits.dev or None, splits.test if evaluate_test else None, seed=seed, **train_kw
    )
    return tagger, hist
