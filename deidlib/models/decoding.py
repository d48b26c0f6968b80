"""Recall-oriented decoding: a decision threshold on the PHI marginal.

A tagger's default decision (Viterbi path, or arg-max per token) is an F1-oriented operating
point. De-identification is judged by what it misses: a leaked name costs more than a
masked word. :func:`threshold_tags` marks a token as PHI when its posterior probability of
not being ``O``, ``p = 1 − P(y_t = O | x)``, reaches ``threshold`` (0.5 is close to the
default decision; lower thresholds trade precision for recall). The PHI type of a marked
token is the label with the largest marginal mass (summed over its B/I/E/S tags); runs of
consecutive marked tokens of one type become one chunk, re-encoded in the tagger's encoding
(so adjacent same-type entities merge; binary-token scores are unaffected by that).

This is a "decision threshold on the PHI marginal", which trades precision for recall; the thesis' δ_p (ahmed
§4.2, eq. 4.7–4.8) changes training instead, and an ensemble's k-of-n rule (ahmed §5.3)
changes the aggregation; the three are complementary.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import torch

from ..corpus.labels import encode_runs

__all__ = ["phi_probability", "threshold_tags"]


def _label(tag: str) -> str:
    return tag.partition("-")[2] or tag


def phi_probability(marginals: torch.Tensor, labels: Sequence[str]) -> torch.Tensor:
    """``1 − P(O)`` per token, from marginals ``[..., K]`` over ``labels``."""
    return 1.0 - marginals[..., list(labels).index("O")]


@lru_cache(maxsize=16)
def _types(labels: tuple[str, ...]) -> tuple[int, list[str], torch.Tensor, dict[str, int]]:
    """``(index of O, PHI type names, membership [K, types], tag -> index)`` of a label set,
    computed once per label set (a pass decides thousands of sentences with one)."""
    o = labels.index("O")
    names = sorted({_label(t) for t in labels if t != "O"})
    member = torch.zeros(len(labels), len(names))
    for k, t in enumerate(labels):
        if t != "O":
            member[k, names.index(_label(t))] = 1.0
    return o, names, member, {t: k for k, t in enumerate(labels)}


def threshold_tags(marginals: torch.Tensor, labels: Sequence[str], threshold: float, encoding: str) -> list[int]:
    """Tag ids for one sentence (marginals ``[T, K]``) decided by the PHI-marginal threshold."""
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"the PHI threshold must be in (0, 1], got {threshold}")
    o, names, member, index = _types(tuple(labels))
    if not names:
        return [o] * marginals.shape[0]
    mass = marginals @ member.to(dtype=marginals.dtype, device=marginals.device)  # [T, types]
    phi = (1.0 - marginals[:, o]) >= threshold
    kind = mass.argmax(-1).tolist()
    keys = [names[k] if p else None for k, p in zip(kind, phi.tolist())]
    return [index[t] for t in encode_runs(keys, encoding)]
