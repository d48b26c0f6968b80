"""The contract between taggers (``deidlib.models``), the trainer (``deidlib.training``),
collaborative strategies and DP-SGD (``deidlib.collaborative``, ``deidlib.privacy``).

A *tagger* is a ``torch.nn.Module`` with a *featurizer* that turns tokenized, labelled
sentences into a :class:`Batch`; everything downstream sees only this interface.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Protocol, runtime_checkable

import torch

__all__ = ["Batch"]


@dataclass
class Batch:
    """A padded batch of sentences (B sentences, at most T tokens each).

    word_ids:    [B, T] long, word-vocabulary ids (0 = padding)
    mask:        [B, T] bool, True on real tokens
    labels:      [B, T] long label ids, -100 on padding (None at prediction time)
    casing_ids:  [B, T] long casing-feature ids (friedrich casing), or None
    char_ids:    [U, C] long, characters of the U *distinct* tokens of the batch (0 = pad)
    char_lengths:[U] long
    token_to_unique: [B, T] long, index into the U distinct tokens (padding -> 0)
    extra:       model-specific tensors (e.g. sub-word alignment), moved with ``to``
    """

    word_ids: torch.Tensor
    mask: torch.Tensor
    labels: torch.Tensor | None = None
    casing_ids: torch.Tensor | None = None
    char_ids: torch.Tensor | None = None
    char_lengths: torch.Tensor | None = None
    token_to_unique: torch.Tensor | None = None
    extra: dict[str, torch.Tensor] = field(default_factory=dict)

    @property
    def num_tokens(self) -> int:
        return int(self.mask.sum())

    @property
    def batch_size(self) -> int:
        return int(self.word_ids.shape[0])

    def to(self, device: torch.device | str) -> Batch:
        kw: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, torch.Tensor):
                v = v.to(device)
            elif f.name == "extra":
                v = {k: t.to(device) for k, t in v.items()}
            kw[f.name] = v
        return Batch(**kw)


@runtime_checkable
class FeaturizerProtocol(Protocol):
    """Owns the vocabularies (words, characters, labels) of one tagger."""

    labels: list[str]  # tag strings in id order, e.g. ["O", "B-DATE", "I-DATE", ...]

    def encode(self, tokens: Sequence[Sequence[str]], tags: Sequence[Sequence[str]] | None = None) -> Batch: ...

    def config(self) -> dict[str, Any]: ...


@runtime_checkable
class Tagger(Protocol):
    """What every tagger module offers (all of them are ``torch.nn.Module``)."""

    featurizer: FeaturizerProtocol

    def loss(self, batch: Batch) -> torch.Tensor:
        """Mean loss per sentence of the batch (CRF NLL or token cross-entropy)."""
        ...

    def predict(self, batch: Batch) -> list[list[int]]:
        """Best label id sequence per sentence (Viterbi for CRF, argmax otherwise), unpadded."""
        ...

    def config(self) -> dict[str, Any]:
        """JSON-able constructor arguments, so that ``build_tagger(**config)`` rebuilds it."""
        ...
