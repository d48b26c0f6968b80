"""High-level entry point: from corpus splits to a trained tagger."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..corpus.labels import tag_set, tagged_sentences
from ..corpus.splits import CorpusSplits
from ..models.features import Featurizer
from ..models.taggers import build_tagger
from .trainer import History, train

__all__ = ["fit_tagger", "prepare_tagger"]


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
    word vectors come from the *training* documents only.

    ``embeddings``: ``"word2vec"``/``"fasttext"`` (trained with gensim on the training
    tokens, cached), a path to vectors (word2vec/GloVe format), or ``None`` (random init).
    ``vocabulary``: the word list to use instead of the training words (already normalised,
    e.g. a DP vocabulary, :func:`deidlib.privacy.vocabulary.dp_vocabulary`, or public words).
    """
    sents = tagged_sentences(train_docs, scheme, encoding, tokenizer)
    if vocabulary is not None:
        fz = Featurizer(["<pad>", "<unk>", *dict.fromkeys(w for w in vocabulary if w not in ("<pad>", "<unk>"))],
                        tag_set(scheme, encoding))
    else:
        fz = Featurizer.build([s.words for s in sents], tag_set(scheme, encoding), min_count=min_count)
    matrix = None
    if embeddings:
        from ..embeddings import embedding_matrix, load_vectors, train_word_vectors
        from ..models.taggers import PRESETS

        dim = hparams.get("word_dim", PRESETS[kind]["word_dim"])
        if embeddings in ("word2vec", "fasttext"):
            kv = train_word_vectors(
                [[fz.word_key(w) for w in s.words] for s in sents],
                method=embeddings,
                dim=dim,
                epochs=embedding_epochs,
                seed=seed,
            )
        else:
            kv = load_vectors(embeddings)
            if kv.vector_size != dim:
                hparams["word_dim"] = kv.vector_size
        matrix, _ = embedding_matrix(fz.words, kv, seed=seed)
    tagger = build_tagger(kind, fz, seed=seed, embeddings=matrix, **hparams)
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
