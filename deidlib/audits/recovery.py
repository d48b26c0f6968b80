"""Recovering the original PHI word from word-level pseudonymization (Friedrich et al., ACL
2019, section 4: every PHI token replaced by a uniform draw among its N nearest neighbours in
a public embedding space, itself included; :func:`deidlib.privacy.pseudonymize.pseudonymize`).

The attacker reads a released PHI token ``p`` and holds the same public embeddings. Its
``guesses`` guesses, best first: ``p`` itself (the draw may return the original), then ``p``'s
nearest other words (the original is one of them when ``p`` is among the original's close
neighbours). The attack succeeds on a token if the original (compared by the embeddings' key,
lowercase for GloVe) is among the guesses. Tokens the pseudonymizer never replaces (tag ``O``,
and its ``skip`` set: punctuation and stop words) are not scored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..corpus.labels import TaggedSentence, gold_tags
from ..embeddings.neighbours import NeighbourIndex
from ..privacy.pseudonymize import default_skip

__all__ = ["neighbour_recovery"]


def neighbour_recovery(original: Sequence[TaggedSentence], released: Sequence[TaggedSentence],
                       index: NeighbourIndex, guesses: int = 10,
                       skip: Callable[[str], bool] | None = default_skip) -> dict[str, float]:
    """``{"tokens", "recovered", "unchanged"}``: the PHI tokens scored, the share whose
    original is among the attacker's ``guesses`` guesses, and the share released unchanged.
    ``released[i]`` is ``original[i]`` pseudonymized (same order: ``shuffle=False``)."""
    if len(original) != len(released):
        raise ValueError(f"{len(original)} original but {len(released)} released sentences (same order needed)")
    if guesses < 1:
        raise ValueError(f"guesses must be >= 1, got {guesses}")
    pairs = [(o, r) for so, sr in zip(original, released)
             for o, r, t in zip(so.words, sr.words, gold_tags(so)) if t != "O" and not (skip and skip(o))]
    if not pairs:
        return {"tokens": 0, "recovered": float("nan"), "unchanged": float("nan")}
    key = index.embeddings.key
    index.warm([r for _, r in pairs if index.has_vector(r)], max(guesses - 1, 1))
    hit = same = 0
    for o, r in pairs:
        cands = index.candidates(r, guesses) if guesses > 1 and index.has_vector(r) else [r]
        hit += key(o) in {key(c) for c in cands}
        same += key(o) == key(r)
    return {"tokens": len(pairs), "recovered": hit / len(pairs), "unchanged": same / len(pairs)}
