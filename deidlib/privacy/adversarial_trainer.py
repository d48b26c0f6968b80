"""Training of adversarially learned representations (Friedrich et al., ACL 2019, section 5.4):
one :class:`AdversarialTrainer` with per-component Nadam optimizers (Table 1; gradient norm
clipped to 1.0) and one epoch runner whose ``phase`` (:data:`~.adversarial_models.PHASES`) says
which components train on which loss; frozen components have ``requires_grad`` off and are never
stepped, so their parameters stay bit-identical.

* ``deid`` (P1): representation + de-identification head on l_deid;
* ``adv`` (P2, and the frozen-representation evaluation): adversaries on l_adv;
* ``branches`` (P3a): head + adversaries on l_deid + l_adv (disjoint gradients: the
  representation is frozen);
* ``repr`` (P3b, eq. 2): representation on l_deid + λ·|l_adv − l_random|;
* ``dann``: all three on l_deid + l_adv, with a gradient reversal layer between the
  representation and the adversaries (Ganin et al. 2016).

Real and fake pairs (section 5.3): for a training sentence x with at least one PHI token, the
fake x' replaces *one* PHI token by one of its N − 1 nearest other neighbours
(:func:`deidlib.privacy.pseudonymize.replace_one_phi`; a fresh draw every epoch). Every such
sentence yields both pairs (real: T1 (E(x), R₁(x)), T2 (R₁(x), R₂(x)), label 1; fake: T1
(E(x), R(x')), T2 (R₁(x), R(x')), label 0; independent noisy passes), so the pair set is
balanced and chance accuracy is exactly 50 %. ``bucket=True`` batches sentences of similar
length together (shuffled within equal lengths, batch order shuffled), so the padded LSTMs run as
many steps as the batch's longest sentence.

Guards (counted, never silent): a fake's replaced token is encoded as any token (zeros when its
case-matched form has no vector); a step whose gradient norm is not finite is not taken
(``skipped_steps``); a non-finite adversary output makes no step in training
(``nonfinite_batches``) and scores as a guess in evaluation (``nonfinite``).

Randomness: model initialisation and training run under ``torch.random.fork_rng`` seeded with
``seed``; batch order and fake pairs come from ``random.Random`` seeded from it
(:func:`deidlib.rng.derive_seed`). Same seed, same numbers on CPU.
"""

from __future__ import annotations

import copy
import math
import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from ..embeddings.neighbours import NeighbourIndex
from ..embeddings.public import PublicEmbeddings
from ..models.gradient_reversal import grad_reverse
from ..rng import derive_seed
from .adversarial_models import (
    COMPONENTS,
    L_RANDOM,
    PHASES,
    AdversarialModel,
    EncodedSentence,
    _lengths,
    _pad,
    adversary_loss,
    dann_loss,
    representation_loss,
)
from .pseudonymize import replace_one_phi

__all__ = ["AdversarialTrainer"]


class AdversarialTrainer:
    """Runs epochs of one :data:`PHASES` phase over encoded sentences (see the module docstring)."""

    def __init__(
        self,
        model: AdversarialModel,
        embeddings: PublicEmbeddings,
        index: NeighbourIndex,
        train: Sequence[EncodedSentence],
        dev: Sequence[EncodedSentence],
        *,
        n_neighbours: int = 100,
        lam: float = 1.0,
        grl_scale: float = 1.0,
        batch_size: int = 32,
        lr: float = 2e-3,
        clip: float | None = 1.0,
        seed: int = 0,
        progress: bool = False,
        warm: bool = True,
        bucket: bool = False,
    ) -> None:
        if n_neighbours < 2:
            raise ValueError(f"the adversaries need N >= 2 neighbours to build fake pairs, got {n_neighbours}")
        if not train:
            raise ValueError("no training sentences")
        self.model, self.embeddings, self.index = model, embeddings, index
        self.train, self.dev = list(train), list(dev)
        self.n_neighbours, self.lam, self.grl_scale = n_neighbours, lam, grl_scale
        self.batch_size, self.clip, self.seed, self.progress = batch_size, clip, seed, progress
        self.lr, self.bucket = lr, bucket
        self.optimizers = {c: torch.optim.NAdam(model.component(c).parameters(), lr=lr)
                           for c in COMPONENTS if any(True for _ in model.component(c).parameters())}
        self.epochs_run = 0
        if warm:  # False: neighbours are looked up lazily (a de-identification-only trainer needs none)
            index.warm([w for s in self.train + self.dev for w, t in zip(s.words, s.tags) if t != "O"], n_neighbours)

    # -- pieces --------------------------------------------------------------------------

    def fakes(self, items: Sequence[EncodedSentence], rng: random.Random) -> list[tuple[EncodedSentence, np.ndarray]]:
        """(sentence, fake embeddings) for each sentence with a replaceable PHI token."""
        out = []
        for s in items:
            if not s.has_phi:
                continue
            r = replace_one_phi(s.words, s.tags, self.index, self.n_neighbours, rng)
            if r is None:
                continue
            words, pos = r
            fe = s.emb.copy()
            # encoded as any sentence: zeros where the (case-matched) neighbour has no vector
            fe[pos] = self.embeddings.lookup([words[pos]])[0]
            out.append((s, fe))
        return out

    def deid_loss(self, items: Sequence[EncodedSentence]) -> torch.Tensor:
        lengths = _lengths(items)
        emb, casing, tags = _pad([s.emb for s in items]), _pad([s.casing for s in items]), _pad([s.tag_ids for s in items])
        mask = torch.arange(emb.shape[1]).unsqueeze(0) < lengths.unsqueeze(1)
        rep = self.model.representation(emb, lengths)
        return self.model.deid.loss(rep, casing, tags, mask, lengths)

    def adversary_outputs(self, pairs, reverse: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
        """Averaged probabilities and targets [2P] of the real and fake pairs (section 5.3)."""
        items = [s for s, _ in pairs]
        P = len(items)
        lengths = _lengths(items)
        emb_x = _pad([s.emb for s in items])
        emb_f = _pad([f for _, f in pairs])
        reps = self.model.representation(torch.cat([emb_x, emb_x, emb_f]), lengths.repeat(3))
        if reverse:
            reps = grad_reverse(reps, self.grl_scale)
        r1, r2, rf = reps.split(P)
        prob = self.model.adversary(
            torch.cat([emb_x, emb_x]), torch.cat([r1, rf]), torch.cat([r1, r1]), torch.cat([r2, rf]), lengths.repeat(2)
        )
        target = torch.cat([torch.ones(P), torch.zeros(P)])
        return prob, target

    def _batches(self, items, rng: random.Random) -> list[list[EncodedSentence]]:
        order = list(range(len(items)))
        rng.shuffle(order)
        if self.bucket:  # sentences of similar length share a batch (ties in shuffled order); batches shuffled
            order.sort(key=lambda i: len(items[i].words))
            batches = [order[a : a + self.batch_size] for a in range(0, len(order), self.batch_size)]
            rng.shuffle(batches)
            return [[items[i] for i in b] for b in batches]
        return [[items[i] for i in order[a : a + self.batch_size]] for a in range(0, len(order), self.batch_size)]

    # -- one epoch -----------------------------------------------------------------------

    def run_epoch(self, phase: str) -> dict[str, Any]:
        """One pass over the training sentences in ``phase``; returns its ``phase`` and mean training losses."""
        if phase not in PHASES:
            raise ValueError(f"unknown phase {phase!r}; choose one of {', '.join(PHASES)}")
        trained = PHASES[phase]
        rng = random.Random(derive_seed(self.seed, "epoch", self.epochs_run))
        needs_deid = phase != "adv"
        needs_adv = phase != "deid"
        items = self.train if needs_deid else [s for s in self.train if s.has_phi]
        sums = {"deid": 0.0, "adv": 0.0, "acc": 0.0, "loss": 0.0}
        n = n_adv = n_pairs = skipped = nonfinite = 0
        saved = {c: [p.requires_grad for p in self.model.component(c).parameters()] for c in COMPONENTS}
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(derive_seed(self.seed, "torch", self.epochs_run))
            try:
                for c in COMPONENTS:
                    self.model.component(c).requires_grad_(c in trained)
                self.model.train()
                for batch in tqdm(self._batches(items, rng), desc=phase, leave=False, disable=not self.progress):
                    l_deid = self.deid_loss(batch) if needs_deid else None
                    pairs = self.fakes(batch, rng) if needs_adv else []
                    l_adv = None
                    if pairs:
                        prob, target = self.adversary_outputs(pairs, reverse=phase == "dann")
                        if not bool(torch.isfinite(prob).all()):  # no step on a non-finite output; counted
                            nonfinite += 1
                            continue
                        l_adv = adversary_loss(prob, target)
                        sums["acc"] += float(((prob > 0.5).float() == target).float().mean())
                        sums["adv"] += float(l_adv.detach())
                        n_adv += 1
                        n_pairs += len(target)
                    loss = self._phase_loss(phase, l_deid, l_adv)
                    if l_deid is not None:
                        sums["deid"] += float(l_deid.detach())
                    n += 1
                    if loss is None:
                        continue
                    sums["loss"] += float(loss.detach())
                    opts = [self.optimizers[c] for c in trained if c in self.optimizers]
                    for o in opts:
                        o.zero_grad(set_to_none=True)
                    if not loss.requires_grad:  # nothing trainable in this phase's graph
                        continue
                    loss.backward()
                    params = [p for c in trained for p in self.model.component(c).parameters() if p.grad is not None]
                    if not params:  # nothing trainable (a parameter-free representation in P3b)
                        continue
                    norm = torch.nn.utils.clip_grad_norm_(params, math.inf if self.clip is None else self.clip)
                    if not torch.isfinite(norm):  # an overflowing gradient: no step, the weights stay finite
                        skipped += 1
                        continue
                    for o in opts:
                        o.step()
            finally:
                for c in COMPONENTS:
                    for p, r in zip(self.model.component(c).parameters(), saved[c]):
                        p.requires_grad_(r)
        self.epochs_run += 1
        return {"phase": phase, "loss": sums["loss"] / max(n, 1), "deid": sums["deid"] / max(n, 1),
                "adv": sums["adv"] / max(n_adv, 1), "adv_acc": sums["acc"] / max(n_adv, 1), "pairs": n_pairs,
                "skipped_steps": skipped, "nonfinite_batches": nonfinite}

    def _phase_loss(self, phase, l_deid, l_adv):
        if phase == "deid":
            return l_deid
        if phase == "adv":
            return l_adv
        if l_adv is None:  # no sentence of this batch has a replaceable PHI token
            return l_deid
        if phase == "branches":
            return l_deid + l_adv
        if phase == "repr":
            return representation_loss(l_deid, l_adv, self.lam)
        return dann_loss(l_deid, l_adv)

    @torch.no_grad()
    def evaluate(self, items: Sequence[EncodedSentence] | None = None, *, seed_key: str = "eval") -> dict[str, float]:
        """Validation losses and adversary accuracy on ``items`` (default: dev). The fake pairs
        come from a fixed seed, so successive epochs are compared on the same pairs."""
        items = self.dev if items is None else list(items)
        if not items:
            raise ValueError("no sentences to evaluate on")
        rng = random.Random(derive_seed(self.seed, seed_key))
        self.model.eval()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(derive_seed(self.seed, seed_key, "torch"))
            ld, la, acc, n, npairs, bad = 0.0, 0.0, 0.0, 0, 0, 0
            for a in range(0, len(items), self.batch_size):
                batch = items[a : a + self.batch_size]
                ld += float(self.deid_loss(batch)) * len(batch)
                n += len(batch)
                pairs = self.fakes(batch, rng)
                if pairs:
                    prob, target = self.adversary_outputs(pairs)
                    bad += int((~torch.isfinite(prob)).sum())
                    prob = torch.nan_to_num(prob, nan=0.5)  # a non-finite output scores as a guess; counted
                    la += float(adversary_loss(prob, target)) * len(target)
                    acc += float(((prob > 0.5).float() == target).float().sum())
                    npairs += len(target)
        self.model.train()
        out = {"deid": ld / n, "adv": la / npairs if npairs else float("nan"),
               "adv_acc": acc / npairs if npairs else float("nan"), "pairs": npairs, "nonfinite": bad}
        out["repr"] = out["deid"] + self.lam * abs(out["adv"] - L_RANDOM) if npairs else float("nan")
        return out

    @torch.no_grad()
    def predict(self, items: Sequence[EncodedSentence]) -> list[list[str]]:
        """Tag sequences of the de-identification head on the (noisy) representation."""
        self.model.eval()
        out: list[list[str]] = []
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(derive_seed(self.seed, "predict"))
            for a in range(0, len(items), self.batch_size):
                batch = list(items[a : a + self.batch_size])
                lengths = _lengths(batch)
                emb, casing = _pad([s.emb for s in batch]), _pad([s.casing for s in batch])
                mask = torch.arange(emb.shape[1]).unsqueeze(0) < lengths.unsqueeze(1)
                rep = self.model.representation(emb, lengths)
                for ids in self.model.deid.predict(rep, casing, mask, lengths):
                    out.append([self.model.deid.labels[i] for i in ids])
        self.model.train()
        return out

    def state(self, components: Sequence[str] = COMPONENTS) -> dict[str, dict]:
        return {c: copy.deepcopy(self.model.component(c).state_dict()) for c in components}

    def load(self, state: dict[str, dict]) -> None:
        for c, sd in state.items():
            self.model.component(c).load_state_dict(sd)
