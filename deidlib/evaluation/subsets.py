"""Scores split by character ranges of the text: binary-token counts inside and outside given
ranges (e.g. the misspelled tokens of :func:`deidlib.synthetic.misspell.misspell_documents`).
Guarded by ``tests/synthetic/test_misspell.py``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..corpus.document import Document
from .keys import token_keys
from .scorer import prf

__all__ = ["misspelled_token_counts"]

def misspelled_token_counts(gold_docs: Sequence[Document], system_docs: Iterable[Document],
                            ranges: dict[str, list[tuple[int, int]]]) -> dict[str, dict[str, float]]:
    """Binary-token TP/FP/FN and P/R/F1 of the scorer's token keys whose first character lies in a
    misspelled token (``"misspelled"``) or not (``"intact"``); the groups add up to the binary
    token counts of the whole split."""
    system = {d.id: d for d in system_docs}
    counts = {"misspelled": [0, 0, 0], "intact": [0, 0, 0]}
    for g in gold_docs:
        s = system.get(g.id)
        gk = token_keys(g.spans, True)
        sk = token_keys(s.spans, True) if s is not None else set()
        rs = ranges.get(g.id, [])
        for keys, slot in ((gk & sk, 0), (sk - gk, 1), (gk - sk, 2)):
            for a, _ in keys:
                name = "misspelled" if any(lo <= a < hi for lo, hi in rs) else "intact"
                counts[name][slot] += 1
    out = {}
    for k, (tp, fp, fn) in counts.items():
        p = prf(tp, fp, fn)
        out[k] = {"tp": tp, "fp": fp, "fn": fn, "precision": p.precision, "recall": p.recall, "f1": p.f1}
    return out
