"""Automatic word-level pseudonymization (Friedrich et al., ACL 2019, section 4) and the
subword statistic of section 8.

Section 4: "Before training, we shuffle the training sentences and replace all PHI tokens with
a random choice of a fixed number N of their closest neighbors in an embedding space
(including the token itself), as determined by cosine distance in a pre-computed embedding
matrix." :func:`pseudonymize` does exactly that over tagged sentences: every PHI token (tag
≠ ``O``) is replaced by a uniform draw from :meth:`NeighbourIndex.candidates` (the token
followed by its N − 1 nearest other words), independently per occurrence; tags are kept.

Choices where the paper is silent (each an argument):

* ``skip`` — which PHI tokens are never replaced. Default :func:`default_skip`: tokens made of
  punctuation only (the ``/`` of an aggressively tokenized date) and English stop words
  (scikit-learn's list; the ``of`` in a hospital name), as the authors' released code does.
  Skipped tokens carry no identifying content by themselves.
* ``oov`` — PHI tokens without a vector (only GloVe has them: FastText embeds any string).
  ``"random"`` (default): a uniform draw from the whole vocabulary, i.e. the N = |V| limit
  that section 4 calls perfect anonymization for that token. ``"keep"``: leave the token
  unchanged, which is what the authors' code does (``exclude_unknown``) — rare surnames are
  exactly the tokens GloVe lacks, so ``"keep"`` leaks them; it is there to reproduce the paper.
  The counts of both cases are returned in :class:`PseudonymizationStats`.
* ``keep_case`` (default True) — GloVe's vocabulary is lowercase; a replacement gets the
  original token's casing shape (``Smith → Jones``, ``SMITH → JONES``), so the Reimers &
  Gurevych casing feature that the de-identification model receives (section 3) stays
  consistent with the PHI label. The shape of the original is already visible to the model.

Released output: sentences come back shuffled, with ``doc_id`` ``"pseudo-<i>"`` and token
offsets into the space-joined pseudonymized sentence, so nothing points back to the source
document (section 8 warns that re-assembling documents from shuffled sentences is a risk).
Randomness: ``seed=None`` (the default) draws the shuffle and the replacements from the
operating system's CSPRNG (:class:`secrets.SystemRandom`) — pseudonymized sentences are
meant to be shared; an ``int`` seed (studies) makes the output reproducible and predictable.

The guarantee is the paper's and no more: each PHI token is moved to one of N words, with no
minimum perturbation (a draw may return the token itself; section 8 shows a real name that
survived), nothing about non-PHI context, and none for PHI the annotation missed.
"""

from __future__ import annotations

import random
import re
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..corpus.labels import TaggedSentence, gold_tags
from ..corpus.tokenize import Token
from ..embeddings.neighbours import NeighbourIndex

__all__ = [
    "PseudonymizationStats",
    "default_skip",
    "pseudonymize",
    "pseudonymize_words",
    "subword_statistic",
]

_OOV_CHOICES = ("random", "keep")
_PUNCT = re.compile(r"^[\W_]+$")


def default_skip(token: str) -> bool:
    """True for punctuation-only tokens and English stop words (never replaced)."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return bool(_PUNCT.match(token)) or token.lower() in ENGLISH_STOP_WORDS


def _match_case(word: str, like: str) -> str:
    """``word`` with the casing shape of ``like`` (all upper, initial upper, else unchanged)."""
    letters = [c for c in like if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return word.upper()
    if like[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


@dataclass
class PseudonymizationStats:
    """Counts over PHI tokens: replaced by a neighbour draw, skipped (``skip``), without a
    vector (handled by ``oov``), and draws that returned the token itself."""

    phi_tokens: int = 0
    replaced: int = 0
    skipped: int = 0
    oov: int = 0
    unchanged_draws: int = 0


def _rng(seed: int | random.Random | None) -> random.Random:
    if seed is None:
        return secrets.SystemRandom()
    if isinstance(seed, random.Random):
        return seed
    return random.Random(int(seed))


def pseudonymize_words(
    words: Sequence[str],
    tags: Sequence[str],
    index: NeighbourIndex,
    n_neighbours: int,
    rng: random.Random,
    *,
    skip: Callable[[str], bool] | None = default_skip,
    oov: str = "random",
    keep_case: bool = True,
    stats: PseudonymizationStats | None = None,
) -> list[str]:
    """One sentence: each PHI word replaced by a uniform draw among its N candidates."""
    if oov not in _OOV_CHOICES:
        raise ValueError(f"oov must be one of {', '.join(_OOV_CHOICES)}, got {oov!r}")
    if len(words) != len(tags):
        raise ValueError(f"{len(words)} words but {len(tags)} tags")
    st = stats if stats is not None else PseudonymizationStats()
    out = list(words)
    vocab = index.embeddings.words
    for i, (w, t) in enumerate(zip(words, tags)):
        if t == "O":
            continue
        st.phi_tokens += 1
        if skip is not None and skip(w):
            st.skipped += 1
            continue
        if not index.has_vector(w):
            st.oov += 1
            if oov == "random":
                new = vocab[rng.randrange(len(vocab))]
                out[i] = _match_case(new, w) if keep_case else new
            continue
        cands = index.candidates(w, n_neighbours)
        j = rng.randrange(len(cands))
        st.replaced += 1
        if j == 0:
            st.unchanged_draws += 1
            continue
        out[i] = _match_case(cands[j], w) if keep_case else cands[j]
    return out


def _release(words: Sequence[str], tags: Sequence[str], i: int) -> TaggedSentence:
    toks, pos = [], 0
    for w in words:
        toks.append(Token(w, pos, pos + len(w)))
        pos += len(w) + 1
    return TaggedSentence(f"pseudo-{i}", toks, list(tags))


def pseudonymize(
    sentences: Sequence[TaggedSentence],
    index: NeighbourIndex,
    n_neighbours: int,
    seed: int | random.Random | None = None,
    *,
    shuffle: bool = True,
    skip: Callable[[str], bool] | None = default_skip,
    oov: str = "random",
    keep_case: bool = True,
) -> tuple[list[TaggedSentence], PseudonymizationStats]:
    """Shuffle ``sentences`` and replace their PHI tokens (section 4); returns the new
    sentences (tags unchanged) and the counts. ``n_neighbours`` = the paper's N (1 = no
    pseudonymization). See the module docstring for ``skip``, ``oov``, ``keep_case``, ``seed``."""
    if n_neighbours < 1:
        raise ValueError(f"the number of neighbours N must be >= 1, got {n_neighbours}")
    if oov not in _OOV_CHOICES:
        raise ValueError(f"oov must be one of {', '.join(_OOV_CHOICES)}, got {oov!r}")
    rng = _rng(seed)
    order = list(range(len(sentences)))
    if shuffle:
        rng.shuffle(order)
    phi = [w for s in sentences for w, t in zip(s.words, gold_tags(s)) if t != "O"]
    if n_neighbours > 1:
        index.warm(phi, n_neighbours)
    stats = PseudonymizationStats()
    out = []
    for k, i in enumerate(order):
        s = sentences[i]
        if s.tags is None:
            raise ValueError(f"sentence {i} has no tags: pseudonymization needs gold PHI labels")
        words = pseudonymize_words(s.words, s.tags, index, n_neighbours, rng, skip=skip, oov=oov,
                                   keep_case=keep_case, stats=stats)
        out.append(_release(words, s.tags, k))
    return out, stats


def replace_one_phi(
    words: Sequence[str],
    tags: Sequence[str],
    index: NeighbourIndex,
    n_neighbours: int,
    rng: random.Random,
    *,
    skip: Callable[[str], bool] | None = default_skip,
    keep_case: bool = True,
) -> tuple[list[str], int] | None:
    """A *fake* sentence for the adversaries (section 5.3: "limiting the number of replaced
    PHI tokens to one per sentence"): one eligible PHI token (uniformly chosen among those with
    a vector and not skipped) is replaced by one of its N − 1 nearest *other* words, so the
    fake always differs from the original. Returns (words, position), or ``None`` when the
    sentence has no eligible PHI token or ``n_neighbours < 2``."""
    if n_neighbours < 2:
        return None
    pos = [i for i, (w, t) in enumerate(zip(words, tags))
           if t != "O" and not (skip is not None and skip(w)) and index.has_vector(w)]
    if not pos:
        return None
    i = pos[rng.randrange(len(pos))]
    cands = index.candidates(words[i], n_neighbours)[1:]
    new = cands[rng.randrange(len(cands))]
    out = list(words)
    out[i] = _match_case(new, words[i]) if keep_case else new
    if out[i] == words[i]:  # a neighbour that differs only in case from the original
        return None
    return out, i


def subword_statistic(tokens: Sequence[str], index: NeighbourIndex, n: int = 100) -> dict[str, float]:
    """Section 8: for each distinct token with a vector, how many of its ``n`` nearest
    neighbours contain the token as a substring (case-insensitive; the token's own row is not
    counted; tokens are distinct by their embedding key, i.e. lowercased). Returns the mean over distinct tokens (paper, i2b2 PHI, N = 100: FastText 7.37,
    GloVe 0.44), the number of tokens counted and of tokens without a vector."""
    distinct = sorted({index.embeddings.key(t) for t in tokens})  # "Ann" and "ann" are one GloVe word
    with_vec = [t for t in distinct if index.has_vector(t)]
    index.warm(with_vec, n)
    counts = []
    for t in with_vec:
        low = t.lower()
        neigh, _ = index.nearest(t, n)
        counts.append(sum(low in w.lower() for w in neigh))
    return {
        "mean": float(np.mean(counts)) if counts else float("nan"),
        "tokens": len(with_vec),
        "without_vector": len(distinct) - len(with_vec),
        "n": n,
    }
