"""Mixed precision on a CUDA device: the pre-trained encoder of an encoder tagger runs in bf16
autocast while it is fine-tuned or used for prediction; everything else stays float32.

What runs in bf16. Only the transformer encoder's forward pass (its matrix products: nearly
all of a MiniLM tagger's FLOPs), through :attr:`EncoderTagger.compute_dtype`, which
:func:`mixed_precision` sets for the duration of a training or prediction pass. The encoder's
states are cast back to float32 before the head, so the head, the CRF (whose forward
algorithm runs in scaled probability space, :mod:`deidlib.models.crf`, and would lose its
float32 accuracy in bf16), the loss, the gradients and the optimizer state are float32, and
the weights stay float32 (autocast casts copies). Micikevicius et al. 2018 (mixed precision
training) and Kalamkar et al. 2019 (bf16: float32's exponent range, so no loss scaling).

Where it applies (``auto``): a CUDA device that supports bf16, and a tagger with a trainable
encoder. A frozen encoder's vectors are cached (:class:`EncoderTagger`) and shared between
taggers, so they are computed once, in float32. DP-SGD (:mod:`deidlib.privacy.dpsgd`) never
calls this: its per-unit gradients and clipping stay float32. On the CPU nothing changes, so
CPU results are bit-identical with or without this module. ``benchmarks/device_check.py``
compares dev F1 with and without (training, and prediction from the same weights), and
:func:`full_precision` turns it off for such side-by-side runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch

__all__ = []

_ENABLED = [True]


def autocast_dtype(tagger, device) -> torch.dtype | None:
    """bf16 when ``tagger`` has a trainable encoder (``compute_dtype`` attribute, not frozen),
    ``device`` is a CUDA device with bf16 support and :func:`full_precision` is not active;
    otherwise ``None`` (float32)."""
    dev = torch.device(device)
    if not _ENABLED[0] or dev.type != "cuda" or not hasattr(tagger, "compute_dtype"):
        return None
    if getattr(tagger, "frozen", False) or not torch.cuda.is_bf16_supported():
        return None
    return torch.bfloat16


@contextmanager
def mixed_precision(tagger, device) -> Iterator[torch.dtype | None]:
    """Run ``tagger``'s encoder in :func:`autocast_dtype` inside the block (yields it)."""
    dtype = autocast_dtype(tagger, device)
    if dtype is None:
        yield None
        return
    before = tagger.compute_dtype
    tagger.compute_dtype = dtype
    try:
        yield dtype
    finally:
        tagger.compute_dtype = before


@contextmanager
def full_precision() -> Iterator[None]:
    """Inside the block :func:`mixed_precision` does nothing: float32 everywhere (for
    side-by-side comparisons)."""
    before = _ENABLED[0]
    _ENABLED[0] = False
    try:
        yield
    finally:
        _ENABLED[0] = before
