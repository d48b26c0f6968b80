"""BLEU-1/2/3 of de-identified against original text (Ahmed thesis §4.3.2, Table 4.5).

The thesis treats de-identification as translation of the original note into the sanitized
one and reports corpus BLEU for n = 1, 2, 3. It does not give the weights; we use the
standard cumulative uniform weights (BLEU-n = BP * geometric mean of the 1..n-gram
precisions), ``nltk.translate.bleu_score.corpus_bleu`` with one reference per document
(the original) and the de-identified document as the hypothesis, no smoothing. Tokens come
from :func:`deidlib.corpus.tokenize` (case kept). Removal shortens the hypothesis, so the
brevity penalty is part of the score, as in the thesis (GT removal scores lowest).
"""

from __future__ import annotations

from collections.abc import Sequence

from nltk.translate.bleu_score import corpus_bleu

from deidlib.corpus.tokenize import tokenize

__all__ = ["bleu_scores"]

#: cumulative uniform weights for BLEU-1, BLEU-2, BLEU-3
_WEIGHTS = {1: (1.0,), 2: (0.5, 0.5), 3: (1 / 3, 1 / 3, 1 / 3)}


def _toks(text: str) -> list[str]:
    return [t.text for t in tokenize(text)]


def bleu_scores(originals: Sequence[str], deidentified: Sequence[str], ns: Sequence[int] = (1, 2, 3)) -> dict[str, float]:
    """``{"BLEU-1": .., "BLEU-2": .., "BLEU-3": ..}`` of ``deidentified`` against ``originals``.

    Documents pair up by position; an empty corpus or a length mismatch is a ``ValueError``.
    """
    if len(originals) != len(deidentified):
        raise ValueError(f"{len(originals)} originals but {len(deidentified)} de-identified texts")
    if not originals:
        raise ValueError("BLEU needs at least one document")
    bad = [n for n in ns if n not in _WEIGHTS]
    if bad:
        raise ValueError(f"BLEU-n only for n in {sorted(_WEIGHTS)}, got {bad}")
    refs = [[_toks(o)] for o in originals]
    hyps = [_toks(d) for d in deidentified]
    return {f"BLEU-{n}": float(corpus_bleu(refs, hyps, weights=_WEIGHTS[n])) for n in ns}
