"""Per-sentence losses of a trained tagger: the one statistic every tagger attack reads.

The loss of a sentence with its gold tags, ``L = −log p(tags | words)`` (CRF NLL, or the
summed token cross-entropy of a softmax tagger, ``BaseTagger.sentence_losses``), is the
tagger's analogue of a language model's log-perplexity (Carlini et al. 2019, §3.1).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from ..corpus.labels import TaggedSentence

__all__ = ["sentence_losses"]


@torch.no_grad()
def sentence_losses(tagger, sentences: Sequence[TaggedSentence], *, batch_size: int = 64) -> np.ndarray:
    """``L_i`` of every sentence (eval mode, no dropout), in input order."""
    if not sentences:
        return np.zeros(0)
    if any(s.tags is None for s in sentences):
        raise ValueError("every sentence needs gold tags to be scored")
    was_training = tagger.training
    tagger.eval()
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i].tokens))
    out = np.zeros(len(sentences))
    fz = tagger.featurizer
    try:
        for k in range(0, len(order), batch_size):
            idx = order[k : k + batch_size]
            batch = fz.encode([sentences[i].words for i in idx], [sentences[i].tags for i in idx])
            batch = batch.to(next(tagger.parameters()).device)
            out[idx] = tagger.sentence_losses(batch).double().cpu().numpy()
    finally:
        tagger.train(was_training)
    return out
