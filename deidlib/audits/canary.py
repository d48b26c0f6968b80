"""Canary exposure of a PHI tagger (Carlini, Liu, Erlingsson, Kos & Song 2019, "The Secret
Sharer", §3–4, Definition 4 (rank) and Definition 5 (exposure)).

A *canary* is a sentence of a fixed format with a random secret in a PHI slot ("Patient
Varoteli was admitted to ward 3", the secret being the fake name). It is inserted ``k`` times
into a site's training sentences (the insertion is keyed by ``k`` so that canaries with
different ``k`` coexist in one model). After training, every candidate of the secret's space
is put into the format and scored by the tagger; the exposure is

    exposure = log2 |R| − log2 rank(secret),

with ``R`` the candidate set and the rank 1 for the best-scored candidate. Choices:

* **Score.** ``−L`` of the canary sentence with the candidate in the slot and the canary's
  gold tags (:func:`deidlib.audits.scoring.sentence_losses`): a tagger is no language model,
  so what it can memorise is that *this* word, in this context, is PHI.
* **Candidate space.** Random pseudo-names (three syllables from a fixed alphabet, ~10⁶
  names); instead of the full space, a random sample of ``n_candidates − 1`` names plus the
  secret (the paper's §4.2 "estimating exposure" by sampling, without the extrapolation).
  Exposure thus tops out at ``log2 n_candidates``.
* **Vocabulary.** Every candidate is put into the featurizer's word list (:func:`canary_words`
  as ``extra_words``), so that all candidates have a (random, untrained) embedding: otherwise
  the secret is the only candidate in the vocabulary and the *vocabulary* — not the
  weights — would give it away (a real leak of a tagger built from training words, which
  :mod:`deidlib.privacy.vocabulary` addresses; this audit measures the weights).
* **Ties** count one half (``rank = 1 + #better + #tied/2``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..corpus.labels import TaggedSentence
from ..corpus.tokenize import Token
from .scoring import sentence_losses

__all__ = ["make_canaries", "canary_words", "insert_canaries", "canary_exposure"]

_ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "kr", "st", "tr", "sh", "th")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ou")

#: sentence formats of the canaries: (words, index of the secret)
FORMATS: tuple[tuple[tuple[str, ...], int], ...] = (
    (("Patient", "{}", "was", "admitted", "to", "the", "ward", "overnight", "."), 1),
    (("Seen", "today", "by", "Dr", "{}", "for", "follow", "-", "up", "."), 4),
    (("Family", "contact", ":", "{}", ",", "daughter", ",", "called", "."), 3),
)


def _pseudo_name(rng: np.random.Generator) -> str:
    """A random capitalised three-syllable name (140³ ≈ 2.7·10⁶ possible)."""
    s = "".join(_ONSETS[rng.integers(len(_ONSETS))] + _VOWELS[rng.integers(len(_VOWELS))] for _ in range(3))
    return s.capitalize()


@dataclass(frozen=True)
class Canary:
    """One canary: its format, its secret, the other candidates, and how often it is inserted."""

    words: tuple[str, ...]
    slot: int
    secret: str
    candidates: tuple[str, ...]  # the secret is not among them
    copies: int

    def sentence(self, value: str | None = None, doc_id: str = "canary") -> TaggedSentence:
        """The canary with ``value`` (default: the secret) in the slot; the slot is tagged B-PHI."""
        words = list(self.words)
        words[self.slot] = self.secret if value is None else value
        toks, pos = [], 0
        for w in words:
            toks.append(Token(w, pos, pos + len(w)))
            pos += len(w) + 1
        tags = ["B-PHI" if i == self.slot else "O" for i in range(len(words))]
        return TaggedSentence(doc_id, toks, tags)


def make_canaries(copies: Sequence[int], per_setting: int, n_candidates: int, seed: int) -> list[Canary]:
    """``per_setting`` canaries for every insertion count in ``copies``, each with its own
    secret and ``n_candidates − 1`` other random names (all distinct)."""
    if n_candidates < 2 or per_setting < 1 or any(int(k) < 0 for k in copies):
        raise ValueError("need n_candidates >= 2, per_setting >= 1 and copies >= 0")
    rng = np.random.default_rng(seed)
    used: set[str] = set()
    out: list[Canary] = []
    for k in copies:
        for _ in range(per_setting):
            names: list[str] = []
            while len(names) < n_candidates:
                n = _pseudo_name(rng)
                if n not in used:
                    used.add(n)
                    names.append(n)
            words, slot = FORMATS[(len(out)) % len(FORMATS)]
            out.append(Canary(words, slot, names[0], tuple(names[1:]), int(k)))
    return out


def canary_words(canaries: Sequence[Canary]) -> list[str]:
    """Every secret and candidate: the public word list the featurizer must contain."""
    return [w for c in canaries for w in (c.secret, *c.candidates)]


def insert_canaries(sentences: Sequence[TaggedSentence], canaries: Sequence[Canary], seed: int
                    ) -> list[TaggedSentence]:
    """The training sentences with ``c.copies`` copies of every canary at random positions."""
    out = list(sentences)
    for i, c in enumerate(canaries):
        out.extend(c.sentence(doc_id=f"canary-{i}") for _ in range(c.copies))
    order = np.random.default_rng(seed).permutation(len(out))
    return [out[i] for i in order]


def exposure(secret_score: float, candidate_scores: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """``(rank, exposure)`` of the secret among ``candidate_scores`` (higher = more likely),
    Definition 4/5 of Carlini et al. with ties counted one half."""
    c = np.asarray(candidate_scores, float)
    rank = 1.0 + float((c > secret_score).sum()) + 0.5 * float((c == secret_score).sum())
    return rank, math.log2(c.size + 1) - math.log2(rank)


def canary_exposure(tagger, canaries: Sequence[Canary]) -> list[dict]:
    """One row per canary: copies, rank and exposure under ``tagger`` (score −L)."""
    rows = []
    for i, c in enumerate(canaries):
        sents = [c.sentence()] + [c.sentence(v) for v in c.candidates]
        scores = -sentence_losses(tagger, sents)
        rank, exp = exposure(float(scores[0]), scores[1:])
        rows.append({"canary": i, "copies": c.copies, "candidates": len(c.candidates) + 1, "rank": rank,
                     "exposure": exp, "max_exposure": math.log2(len(c.candidates) + 1)})
    return rows
