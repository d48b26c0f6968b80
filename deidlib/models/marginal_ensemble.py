"""An ensemble of taggers that averages their PHI posteriors (for a recall-oriented operating point).

Each member computes its posterior tag marginals ``P(y_t = k | x)`` (CRF forward-backward,
or softmax; :meth:`deidlib.models.taggers.BaseTagger.marginals`); the ensemble's marginal is
their mean, and its decision is a threshold on the averaged PHI marginal ``1 - P(O)``
(:func:`deidlib.models.decoding.threshold_tags`; 0.5 unless a threshold is given or saved
with the ensemble). Averaging posteriors is the classic way to get better-ranked scores from
several networks trained from different initialisations (Lakshminarayanan et al. 2017,
"Simple and scalable predictive uncertainty estimation using deep ensembles", §2.4): a token
one member is over-confident about is pulled toward what the others say, so a threshold low
enough for high recall marks fewer non-PHI tokens.

This is not the thesis' DP ensemble (:mod:`deidlib.privacy.ensemble`, ahmed ch. 5), which
aggregates the binary *votes* of published DP models by a k-of-n rule and may combine
members with different label sets; here every member must have the same label set (same
scheme and encoding) and the same tokenization mode, and what is averaged is a probability.

The ensemble is a drop-in tagger for :mod:`deidlib.training.predict` (``predict_tags``,
``predict_documents``, ``operating_points``): its featurizer encodes a sentence once per
member (each member keeps its own vocabulary) into an :class:`EnsembleBatch`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from .protocol import Batch

__all__ = ["MarginalEnsemble", "DEFAULT_ENSEMBLE_THRESHOLD"]

#: the ensemble's own decision: a token is PHI when the averaged P(PHI) reaches 0.5
DEFAULT_ENSEMBLE_THRESHOLD = 0.5


@dataclass
class EnsembleBatch:
    """One encoded batch per member, for the same sentences (so one mask)."""

    batches: list[Batch]

    @property
    def mask(self) -> torch.Tensor:
        return self.batches[0].mask

    def to(self, device) -> EnsembleBatch:
        return EnsembleBatch([b.to(device) for b in self.batches])


class EnsembleFeaturizer:
    """Encodes sentences with every member's own featurizer; ``labels`` are the first member's."""

    def __init__(self, featurizers: Sequence[Any]):
        self.members = list(featurizers)
        self.labels: list[str] = list(self.members[0].labels)

    def encode(self, tokens, tags=None) -> EnsembleBatch:
        if tags is not None:
            raise ValueError("an ensemble is not trained: encode sentences without tags")
        return EnsembleBatch([f.encode(tokens) for f in self.members])

    def config(self) -> dict[str, Any]:
        return {"members": [f.config() for f in self.members]}


class MarginalEnsemble(nn.Module):
    """Mean of the members' marginals; decision by a threshold on the mean P(PHI).

    ``members`` must share their label set (any order: each member's marginals are permuted
    to the first member's label order) and their task's scheme, encoding and tokenization
    mode; otherwise ``ValueError``. ``phi_threshold`` (None: 0.5) is the saved decision.
    """

    kind = "ensemble"

    def __init__(self, members: Sequence[Any], phi_threshold: float | None = None):
        super().__init__()
        if len(members) < 1:
            raise ValueError("an ensemble needs at least one member")
        self.members = nn.ModuleList(members)
        labels = list(members[0].featurizer.labels)
        self._order: list[list[int]] = []
        for i, m in enumerate(members):
            ml = list(m.featurizer.labels)
            if sorted(ml) != sorted(labels):
                raise ValueError(f"member {i} has labels {ml}, member 0 has {labels}: members must share their label set")
            self._order.append([ml.index(t) for t in labels])
        task0 = {k: v for k, v in getattr(members[0], "task", {}).items() if k != "phi_threshold"}
        for i, m in enumerate(members[1:], 1):
            t = getattr(m, "task", {})
            for key in ("scheme", "encoding", "mode"):
                if t.get(key) != task0.get(key):
                    raise ValueError(f"member {i} has {key}={t.get(key)!r}, member 0 has {task0.get(key)!r}")
        if phi_threshold is not None and not 0.0 < phi_threshold <= 1.0:
            raise ValueError(f"the PHI threshold must be in (0, 1], got {phi_threshold}")
        self.featurizer = EnsembleFeaturizer([m.featurizer for m in members])
        self.task = {**task0, "phi_threshold": phi_threshold}

    @torch.no_grad()
    def marginals(self, batch: EnsembleBatch) -> torch.Tensor:
        """Mean posterior tag probabilities over the members, [B, T, K] in the first member's label order."""
        if len(batch.batches) != len(self.members):
            raise ValueError(f"{len(batch.batches)} encoded batches for {len(self.members)} members")
        total: torch.Tensor | None = None
        members: list[Any] = list(self.members)  # taggers: each has marginals(batch)
        for m, b, order in zip(members, batch.batches, self._order):
            p = m.marginals(b)[..., order]
            total = p if total is None else total + p
        if total is None:  # __init__ rejects an empty ensemble
            raise ValueError("an ensemble needs at least one member")
        return total / len(self.members)

    @torch.no_grad()
    def predict(self, batch: EnsembleBatch, phi_threshold: float | None = None,
                encoding: str | None = None) -> list[list[int]]:
        """Tag ids per sentence by the threshold on the mean P(PHI): ``phi_threshold``, or the
        ensemble's own decision :data:`DEFAULT_ENSEMBLE_THRESHOLD`. (A threshold saved in
        ``task["phi_threshold"]`` reaches here through
        :func:`deidlib.training.predict_documents`, as for any tagger.)"""
        from .decoding import threshold_tags

        th = DEFAULT_ENSEMBLE_THRESHOLD if phi_threshold is None else phi_threshold
        enc = encoding or self.task.get("encoding", "BIO")
        m = self.marginals(batch)
        return [threshold_tags(m[b, :n], self.featurizer.labels, th, enc)
                for b, n in enumerate(batch.mask.sum(1).tolist())]
