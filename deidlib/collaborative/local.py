"""One local epoch of plain (fully) stochastic gradient descent.

Festag & Spreckelsen (JMIR Form Res 2020), DSSGD section: "In the fully stochastic
version, every gradient is computed over only one sample at a time" and
``p_j = p_j - η·∂E/∂p_j`` with a fixed learning rate (η = 0.9 in all their experiments).
:class:`SGDTrainer` does exactly that, over mini-batches of ``batch_size`` (1 = the
paper) in an order shuffled by a seed the caller passes in, optionally stopping after
``max_steps`` steps (workers with different amounts of local work). ``grad_clip``
(off by default, as in the paper) clips each step's gradient norm — NeuroNER
(Dernoncourt et al.) clips at 5; a study that turns it on says so.

The trainer only needs a ``loss(model, batch) -> scalar tensor`` and, optionally, an
``encode(examples) -> batch`` function; :func:`tagger_trainer` builds one for any
:class:`~deidlib.models.protocol.Tagger` (``featurizer.encode`` + ``model.loss``).
Dropout draws from torch's RNG, which is forked and seeded per epoch so that global
state is neither read nor changed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

__all__ = ["SGDTrainer", "tagger_trainer", "TAGGER_LOSSES"]


class SGDTrainer:
    """Plain SGD over a site's examples: ``p ← p − lr·∇loss`` after every batch."""

    def __init__(
        self,
        loss: Callable[[nn.Module, Any], torch.Tensor],
        *,
        lr: float = 0.9,
        batch_size: int = 1,
        encode: Callable[[nn.Module, Sequence[Any]], Any] | None = None,
        device: str | torch.device = "cpu",
        cache_encodings: bool = True,
        grad_clip: float | None = None,
    ):
        if not lr > 0:
            raise ValueError(f"learning rate must be > 0, got {lr}")
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.loss = loss
        self.lr = float(lr)
        self.batch_size = int(batch_size)
        self.encode = encode
        self.device = torch.device(device)
        self.cache_encodings = cache_encodings
        if grad_clip is not None and not grad_clip > 0:
            raise ValueError(f"grad_clip must be > 0 or None, got {grad_clip}")
        self.grad_clip = grad_clip
        self._cache: dict[int, tuple[Any, Any]] = {}

    def _batch(self, model: nn.Module, examples: Sequence[Any]) -> Any:
        if self.encode is None:
            return list(examples)
        if self.cache_encodings and len(examples) == 1:
            key = id(examples[0])
            hit = self._cache.get(key)
            if hit is None or hit[0] is not examples[0]:
                hit = (examples[0], self._to(self.encode(model, examples)))
                self._cache[key] = hit
            return hit[1]
        return self._to(self.encode(model, examples))

    def _to(self, batch: Any) -> Any:
        return batch.to(self.device) if hasattr(batch, "to") else batch

    def __call__(
        self, model: nn.Module, examples: Sequence[Any], *, seed: int, max_steps: int | None = None
    ) -> dict[str, float]:
        """Train ``model`` in place for one epoch (or ``max_steps`` steps); mean loss and steps."""
        n = len(examples)
        if n == 0:
            raise ValueError("cannot train on an empty data set")
        order = np.random.default_rng(seed).permutation(n)
        steps = math.ceil(n / self.batch_size)
        if max_steps is not None:
            if max_steps < 0:
                raise ValueError(f"max_steps must be >= 0, got {max_steps}")
            steps = min(steps, int(max_steps))
        params = [p for p in model.parameters() if p.requires_grad]
        opt = torch.optim.SGD(params, lr=self.lr, momentum=0.0, weight_decay=0.0)
        model.train()
        total = 0.0
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed & 0x7FFF_FFFF_FFFF_FFFF)
            for s in range(steps):
                chunk = [examples[i] for i in order[s * self.batch_size : (s + 1) * self.batch_size]]
                opt.zero_grad(set_to_none=True)
                loss = self.loss(model, self._batch(model, chunk))
                loss.backward()
                if self.grad_clip is not None:
                    torch.nn.utils.clip_grad_norm_(params, self.grad_clip)
                opt.step()
                total += float(loss.detach())
        return {"loss": total / max(steps, 1), "steps": float(steps)}


# the helpers below take any tagger module (featurizer, loss, sentence_losses: models.protocol.Tagger)
def _tagger_encode(model: Any, sentences: Sequence[Any]) -> Any:
    toks = [[t.text if hasattr(t, "text") else t for t in s.tokens] for s in sentences]
    return model.featurizer.encode(toks, [list(s.tags) for s in sentences])


def _tagger_loss(model: Any, batch: Any) -> torch.Tensor:
    return model.loss(batch)


def _token_mean_loss(model: Any, batch: Any) -> torch.Tensor:
    losses = model.sentence_losses(batch)
    if getattr(model, "crf", None) is None:
        losses = losses / batch.mask.sum(1).clamp(min=1).to(losses.dtype)
    return losses.mean()


#: per-batch losses of :func:`tagger_trainer` (``loss=``)
TAGGER_LOSSES = ("sentence", "token_mean")


def tagger_trainer(
    *, lr: float = 0.9, batch_size: int = 1, device: str = "cpu", grad_clip: float | None = None,
    loss: str = "sentence",
) -> SGDTrainer:
    """Plain-SGD trainer for a protocol :class:`~deidlib.models.protocol.Tagger` on
    :class:`~deidlib.corpus.labels.TaggedSentence` examples.

    ``loss="sentence"``: the tagger's own loss (per sentence the summed token cross-entropy
    or the CRF negative log-likelihood, averaged over the batch). ``loss="token_mean"``:
    NeuroNER's (Dernoncourt et al. 2017, ``entity_lstm.py``), on which festag's learning rate
    0.9 was set: a softmax tagger's cross-entropy is averaged over the sentence's tokens
    (``tf.reduce_mean`` over the one sentence of a step), a CRF tagger keeps the sentence's
    NLL; then averaged over the batch. With the summed loss, lr 0.9 is a step about one
    sentence length (~15 tokens) larger than the paper's.
    """
    if loss not in TAGGER_LOSSES:
        raise ValueError(f"loss must be one of {TAGGER_LOSSES}, got {loss!r}")
    fn = _tagger_loss if loss == "sentence" else _token_mean_loss
    return SGDTrainer(fn, lr=lr, batch_size=batch_size, encode=_tagger_encode, device=device, grad_clip=grad_clip)
