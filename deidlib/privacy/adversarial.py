"""Adversarially learned private representations (Friedrich et al., ACL 2019, section 5).

Components (section 5.1, Figure 2):

* :class:`RepresentationModel` (section 5.2, eq. 1): ``R = N_out + BiLSTM(E + N_in)`` with
  Gaussian noise of zero mean and a *trainable standard deviation per dimension* on the input
  embeddings (``N_in``, embedding size) and on the output (``N_out``, size ``d``). The BiLSTM
  has ``d/2`` units per direction so that ``R`` has ``d`` dimensions (d ∈ {50, 100, 300} in the
  paper; any even d here). σ = softplus(ρ) keeps the deviations positive (the authors' code
  learns σ directly); ε ~ N(0, I) is reparameterised (``R = μ + σ ⊙ ε``), so σ receives
  gradients. Noise is applied in training *and* at use: it is the random element against
  attack A2 (look-up tables of exact representations). It comes from torch's seeded PRNG
  (not a CSPRNG) and makes no differential-privacy claim.
* :class:`DeidHead`: the de-identification model of section 3 (BiLSTM-CRF, Table 1: 2 layers ×
  128 units per direction, variational dropout 0.25 between layers, dropout 0.5 after the LSTM)
  on the representation plus the one-hot casing feature (Reimers & Gurevych 2017), with
  :class:`deidlib.models.crf.CRF` (constrained BIO/BIOES transitions).
* :class:`Adversaries` (section 5.3): T1 — a BiLSTM over the concatenated (embedding sequence,
  representation sequence) decides whether both come from the same sentence; T2 — a BiLSTM over
  two representation sequences and their per-token cosine similarities decides the same. Each
  ends in one sigmoid unit; "to use the two adversaries [...] we average their outputs" (the
  probabilities). The second representation comes from the same model (shared weights) with
  fresh noise.

Real and fake pairs (section 5.3): for a training sentence x with at least one PHI token, the
fake x' replaces *one* PHI token by one of its N − 1 nearest other neighbours
(:func:`deidlib.privacy.pseudonymize.replace_one_phi`; a fresh draw every epoch). Every such
sentence yields both pairs, so the pair set is balanced and chance accuracy is exactly 50 %:

* real: T1 (E(x), R₁(x)), T2 (R₁(x), R₂(x)) — label 1;
* fake: T1 (E(x), R(x')), T2 (R₁(x), R(x')) — label 0;

where R₁, R₂ and R(x') are independent noisy passes.

Losses (pure functions): ``l_deid`` = mean CRF negative log-likelihood per sentence;
``l_adv`` = binary cross-entropy of the averaged probability; ``l_random = log 2`` (the
random-guessing loss of a balanced binary task, footnote 2); eq. 2:
``l_repr = l_deid + λ·|l_adv − l_random|`` with λ = 1.

Training procedures (section 5.4), one :class:`AdversarialTrainer` with per-component Nadam
optimizers (Table 1; gradient norm clipped to 1.0) and one epoch runner whose ``phase`` says
which components train on which loss (frozen components have ``requires_grad`` off and are
never stepped, so their parameters stay bit-identical):

* ``deid`` (P1): representation + de-identification head on l_deid;
* ``adv`` (P2, and the frozen-representation evaluation): adversaries on l_adv;
* ``branches`` (P3a): head + adversaries on l_deid + l_adv (disjoint gradients: the
  representation is frozen);
* ``repr`` (P3b, eq. 2): representation on l_deid + λ·|l_adv − l_random|;
* ``dann``: all three on l_deid + l_adv, with a gradient reversal layer between the
  representation and the adversaries (Ganin et al. 2016).

:func:`train_three_phase` (Feutry et al. 2018): P1 until the validation l_deid stops improving
(``patience``), P2 until the validation l_adv stops improving, then P3 alternating (a) and (b)
for one epoch each, early-stopped on the validation l_repr measured after (b) ("the early
stopping time for the third phase is determined using only the combined validation loss from
Phase P3b"). :func:`train_dann`: all components conjointly, early-stopped on the same
validation l_repr (a choice: the DANN sum l_deid + l_adv falls whenever the adversary improves,
so it cannot tell a private representation from a leaky one). Each procedure restores the best
validation state of what it trained (a choice; Keras' checkpoints in the authors' code).

:func:`frozen_adversary_accuracy` (Elazar & Goldberg 2018; section 2.2 and 7.2): keep training
the adversaries on the *frozen* representation for K more epochs (:data:`FROZEN_EPOCHS` = 50,
Figure 5 and section 8; 20 in the DANN statement of section 7.3) on a copy of the model, and
report their accuracy on held-out pairs; the model passed in is not changed. The adversaries may
train on their own pool of sentences (``train_items``, e.g. more sentences of the training split
than the representation saw: an attacker with more data); :func:`attack_sentences` keeps the
sentences with PHI and drops every held-out sentence whose words equal a training sentence, so
no held-out pair comes from a sentence the adversary trained on. ``lr`` / ``batch_size`` set the
adversaries' own learning rate and batch size for the attack. Such an attack needs many pairs
and a large enough learning rate: on the synthetic corpus (GloVe 50-d, adversary hidden 32,
K = 50, length-bucketed batches of 32) raw embeddings (R = E) are told from a one-token
neighbour swap at 0.73 held-out accuracy with the pairs of 400 sentences at lr 0.01 (0.71 at
lr 0.002; a noise-free BiLSTM representation 0.74 and 0.62) and at 0.86 with 1,000 sentences
at lr 0.01 (the BiLSTM 0.90) — a fake differs from its real sentence in one
token, and the BiLSTM's final states learn to keep that one position slowly — so any "near
chance" result must be read against unprotected controls attacked the same way (notebook 06).

The adversaries (:class:`PairAdversary`) run torch's fused LSTM kernel on the padded batch
(:func:`deidlib.models.layers.run_rnn_padded`: the same final states as packed sequences, whose
generic per-step loop is slower on CPU). ``bucket=True`` batches sentences of similar length together (shuffled within
equal lengths, batch order shuffled): the padded LSTMs then run as many steps as the batch's
longest sentence, about 0.6 of the CPU time of uniformly shuffled batches for the frozen adversary
on the synthetic corpus.

Guards (counted, never silent): a fake's replaced token is encoded as any token (zeros when its
case-matched form has no vector, e.g. a neighbour ``straße`` written ``STRASSE``); a step whose
gradient norm is not finite is not taken (``skipped_steps``); a non-finite adversary output makes
no step in training (``nonfinite_batches``) and scores as a guess in evaluation (``nonfinite``).

Randomness: model initialisation and training run under ``torch.random.fork_rng`` seeded with
``seed``; batch order and fake pairs come from ``random.Random`` seeded from it
(:func:`deidlib.rng.derive_seed`). Same seed, same numbers on CPU.

Embedding input: tokens without a vector (GloVe OOV) are fed as zeros (the casing feature still
describes them); the embeddings are not fine-tuned (the paper shares them as a fixed public
resource).
"""

from __future__ import annotations

import copy
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

from ..corpus.labels import TaggedSentence
from ..embeddings.chars import CASINGS, casing_id
from ..embeddings.neighbours import NeighbourIndex
from ..embeddings.public import PublicEmbeddings
from ..models.crf import CRF
from ..models.gradient_reversal import grad_reverse
from ..models.layers import RNNStack
from ..rng import derive_seed
from ..training.stopping import EarlyStopping
from .pseudonymize import replace_one_phi

__all__ = [
    "L_RANDOM",
    "PHASES",
    "TrainableGaussianNoise",
    "RepresentationModel",
    "DeidHead",
    "PairAdversary",
    "Adversaries",
    "AdversarialModel",
    "EncodedSentence",
    "encode_sentences",
    "adversary_loss",
    "representation_loss",
    "dann_loss",
    "AdversarialTrainer",
    "train_three_phase",
    "train_dann",
    "FROZEN_EPOCHS",
    "attack_sentences",
    "frozen_adversary_accuracy",
]

#: K, epochs of the adversaries on the frozen representation (Figure 5 and section 8: "an additional 50 epochs")
FROZEN_EPOCHS = 50
#: binary cross-entropy of random guessing on a balanced binary task: −log ½ (footnote 2)
L_RANDOM = math.log(2.0)
#: phase -> components trained (see the module docstring)
PHASES = {
    "deid": ("representation", "deid"),
    "adv": ("adversary",),
    "branches": ("deid", "adversary"),
    "repr": ("representation",),
    "dann": ("representation", "deid", "adversary"),
}
COMPONENTS = ("representation", "deid", "adversary")


# ----------------------------------------------------------------------------- losses


def adversary_loss(prob: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Binary cross-entropy of the adversaries' averaged probability (section 5.3)."""
    return F.binary_cross_entropy(prob.clamp(1e-7, 1 - 1e-7), target.to(prob.dtype))


def representation_loss(l_deid: torch.Tensor, l_adv: torch.Tensor, lam: float = 1.0) -> torch.Tensor:
    """Eq. 2: ``l_deid + λ·|l_adv − l_random|`` (Feutry et al. 2018; λ = 1 in the paper)."""
    return l_deid + lam * (l_adv - L_RANDOM).abs()


def dann_loss(l_deid: torch.Tensor, l_adv: torch.Tensor) -> torch.Tensor:
    """DANN's conjoint objective, the sum of losses (section 5.4); the gradient reversal
    layer in the adversary branch turns the adversary's gradient against the representation."""
    return l_deid + l_adv


# ----------------------------------------------------------------------------- modules


def _inv_softplus(y: float) -> float:
    return y + math.log(-math.expm1(-y))


class TrainableGaussianNoise(nn.Module):
    """``x + σ ⊙ ε``, ε ~ N(0, I), σ = softplus(ρ) ∈ R^dim trainable (section 5.2)."""

    def __init__(self, dim: int, init_std: float = 0.1, enabled: bool = True) -> None:
        super().__init__()
        if init_std <= 0:
            raise ValueError(f"the initial noise standard deviation must be > 0, got {init_std}")
        self.rho = nn.Parameter(torch.full((dim,), _inv_softplus(init_std)))
        self.enabled = enabled

    @property
    def std(self) -> torch.Tensor:
        return F.softplus(self.rho)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.enabled:
            return x
        return x + self.std * torch.randn_like(x)


class RepresentationModel(nn.Module):
    """Eq. 1: ``R = N_out + BiLSTM(E + N_in)``; R has ``d`` dimensions (d/2 per direction)."""

    def __init__(self, emb_dim: int, d: int = 50, init_std: float = 0.1, noise: bool = True) -> None:
        super().__init__()
        if d < 2 or d % 2:
            raise ValueError(f"the representation size d must be even and >= 2, got {d}")
        self.noise_in = TrainableGaussianNoise(emb_dim, init_std, noise)
        self.lstm = nn.LSTM(emb_dim, d // 2, batch_first=True, bidirectional=True)
        self.noise_out = TrainableGaussianNoise(d, init_std, noise)
        self.out_dim = d

    def forward(self, emb: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        from ..models.layers import run_rnn

        return self.noise_out(run_rnn(self.lstm, self.noise_in(emb), lengths))


class DeidHead(nn.Module):
    """BiLSTM-CRF on ``[R; one-hot casing]`` (section 3, Table 1; section 5.1 "It retains the
    casing feature as an auxiliary input")."""

    def __init__(
        self,
        in_dim: int,
        labels: Sequence[str],
        *,
        hidden: int = 128,
        layers: int = 2,
        casing: bool = True,
        between_dropout: float = 0.25,
        output_dropout: float = 0.5,
    ) -> None:
        super().__init__()
        self.casing = casing
        self.labels = list(labels)
        self.rnn = RNNStack(in_dim + (len(CASINGS) if casing else 0), ("lstm",) * layers, hidden, between_dropout)
        self.drop = nn.Dropout(output_dropout)
        self.out = nn.Linear(self.rnn.out_dim, len(self.labels))
        self.crf = CRF(len(self.labels), self.labels)

    def emissions(self, rep: torch.Tensor, casing_ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        x = rep
        if self.casing:
            x = torch.cat([x, F.one_hot(casing_ids, len(CASINGS)).to(rep.dtype)], dim=-1)
        return self.out(self.drop(self.rnn(x, lengths)))

    def loss(self, rep, casing_ids, tags, mask, lengths) -> torch.Tensor:
        return self.crf.nll(self.emissions(rep, casing_ids, lengths), tags, mask)

    def predict(self, rep, casing_ids, mask, lengths) -> list[list[int]]:
        return self.crf.decode(self.emissions(rep, casing_ids, lengths), mask)


class PairAdversary(nn.Module):
    """A BiLSTM over a sequence of paired features; its final forward and backward states feed
    one output unit (a logit)."""

    def __init__(self, in_dim: int, hidden: int = 64) -> None:
        super().__init__()
        self.lstm = nn.LSTM(in_dim, hidden, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, 1)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        from ..models.layers import _padded_ok, run_rnn_padded

        if _padded_ok(self.lstm):  # the fused kernel on the padded batch: same final states, ~2x faster on CPU
            _, h = run_rnn_padded(self.lstm, x, lengths)
        else:
            packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
            _, (h, _) = self.lstm(packed)
        return self.out(torch.cat([h[-2], h[-1]], dim=1)).squeeze(1)


class Adversaries(nn.Module):
    """T1 and T2 of section 5.3; :meth:`forward` returns the averaged probability [P]."""

    def __init__(self, rep_dim: int, emb_dim: int, hidden: int = 64) -> None:
        super().__init__()
        self.t1 = PairAdversary(emb_dim + rep_dim, hidden)
        self.t2 = PairAdversary(2 * rep_dim + 1, hidden)

    def forward(self, emb, rep_t1, rep_a, rep_b, lengths) -> torch.Tensor:
        p1 = torch.sigmoid(self.t1(torch.cat([emb, rep_t1], dim=-1), lengths))
        cos = F.cosine_similarity(rep_a, rep_b, dim=-1, eps=1e-8).unsqueeze(-1)
        p2 = torch.sigmoid(self.t2(torch.cat([rep_a, rep_b, cos], dim=-1), lengths))
        return (p1 + p2) / 2


class AdversarialModel(nn.Module):
    """Representation + de-identification head + adversaries (Figure 2)."""

    def __init__(self, representation: nn.Module, deid: DeidHead, adversary: Adversaries) -> None:
        super().__init__()
        self.representation = representation
        self.deid = deid
        self.adversary = adversary

    @classmethod
    def build(
        cls,
        emb_dim: int,
        labels: Sequence[str],
        *,
        d: int = 50,
        init_std: float = 0.1,
        noise: bool = True,
        deid_hidden: int = 128,
        deid_layers: int = 2,
        adv_hidden: int = 64,
        casing: bool = True,
        seed: int = 0,
    ) -> AdversarialModel:
        """Parameters drawn under a forked torch RNG seeded with ``seed``."""
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            rep = RepresentationModel(emb_dim, d, init_std, noise)
            deid = DeidHead(d, labels, hidden=deid_hidden, layers=deid_layers, casing=casing)
            adv = Adversaries(d, emb_dim, adv_hidden)
        return cls(rep, deid, adv)

    def component(self, name: str) -> nn.Module:
        if name not in COMPONENTS:
            raise ValueError(f"unknown component {name!r}; choose one of {', '.join(COMPONENTS)}")
        return getattr(self, name)


# ----------------------------------------------------------------------------- data


@dataclass
class EncodedSentence:
    """A sentence as the models see it: words, tags, embeddings [T, D], casing and tag ids."""

    words: list[str]
    tags: list[str]
    emb: np.ndarray
    casing: np.ndarray
    tag_ids: np.ndarray
    has_phi: bool = field(init=False)

    def __post_init__(self) -> None:
        self.has_phi = any(t != "O" for t in self.tags)


def encode_sentences(
    sentences: Sequence[TaggedSentence], embeddings: PublicEmbeddings, labels: Sequence[str]
) -> list[EncodedSentence]:
    """Look up embeddings (zeros for tokens without a vector), casing and tag ids."""
    li = {t: i for i, t in enumerate(labels)}
    out = []
    for s in sentences:
        if not s.tokens:
            continue
        try:
            tag_ids = np.array([li[t] for t in s.tags], dtype=np.int64)
        except KeyError as e:
            raise ValueError(f"tag {e.args[0]!r} is not in the label set") from None
        out.append(EncodedSentence(list(s.words), list(s.tags), embeddings.lookup(s.words),
                                   np.array([casing_id(w) for w in s.words], dtype=np.int64), tag_ids))
    return out


def _pad(arrays: Sequence[np.ndarray]) -> torch.Tensor:
    T = max(len(a) for a in arrays)
    out = np.zeros((len(arrays), T, *arrays[0].shape[1:]), dtype=arrays[0].dtype)
    for i, a in enumerate(arrays):
        out[i, : len(a)] = a
    return torch.from_numpy(out)


def _lengths(items: Sequence[EncodedSentence]) -> torch.Tensor:
    return torch.tensor([len(s.words) for s in items], dtype=torch.long)


# ----------------------------------------------------------------------------- trainer


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

    def run_epoch(self, phase: str) -> dict[str, float]:
        """One pass over the training sentences in ``phase``; returns mean training losses."""
        from tqdm.auto import tqdm

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


# ----------------------------------------------------------------------------- procedures


def _stopping(patience: int) -> EarlyStopping:
    """The library's early-stopping rule on a validation loss (improvement: lower by > 1e-6)."""
    return EarlyStopping(patience, "min", min_delta=1e-6)


def _phase_until_stop(trainer, phase, monitor, max_epochs, patience, history, label) -> None:
    """Run ``phase`` until the validation ``monitor`` has not improved for ``patience`` epochs;
    restore the best state of the trained components."""
    rule, best_state = _stopping(patience), None
    for _ in range(max_epochs):
        tr = trainer.run_epoch(phase)
        val = trainer.evaluate()
        history.append({"stage": label, "train": tr, "dev": val})
        stop = rule.update(val[monitor])
        if rule.improved:
            best_state = trainer.state(PHASES[phase])
        if stop:
            break
    if best_state is not None:
        trainer.load(best_state)


def train_three_phase(
    trainer: AdversarialTrainer,
    *,
    p1_epochs: int = 10,
    p2_epochs: int = 10,
    p3_epochs: int = 10,
    patience: int = 2,
) -> list[dict]:
    """Feutry et al.'s procedure (section 5.4, Figure 3): P1, P2, then P3 = (a) branches,
    (b) representation, alternating one epoch each; P3 stops on the validation l_repr after
    (b). Returns the per-epoch history (training means and validation metrics)."""
    from tqdm.auto import tqdm

    history: list[dict] = []
    _phase_until_stop(trainer, "deid", "deid", p1_epochs, patience, history, "P1")
    _phase_until_stop(trainer, "adv", "adv", p2_epochs, patience, history, "P2")
    rule, best_state = _stopping(patience), trainer.state()
    for _ in tqdm(range(p3_epochs), desc="P3", leave=False, disable=not trainer.progress):
        history.append({"stage": "P3a", "train": trainer.run_epoch("branches"), "dev": trainer.evaluate()})
        tr = trainer.run_epoch("repr")
        val = trainer.evaluate()
        history.append({"stage": "P3b", "train": tr, "dev": val})
        stop = rule.update(val["repr"])
        if rule.improved:
            best_state = trainer.state()
        if stop:
            break
    trainer.load(best_state)
    return history


def train_dann(trainer: AdversarialTrainer, *, epochs: int = 10, patience: int = 2) -> list[dict]:
    """DANN (Ganin et al. 2016; section 5.4): all components conjointly on l_deid + l_adv with
    gradient reversal; early-stopped on the validation l_repr (see the module docstring)."""
    history: list[dict] = []
    _phase_until_stop(trainer, "dann", "repr", epochs, patience, history, "DANN")
    return history


def attack_sentences(
    train_pool: Sequence[EncodedSentence],
    heldout_pool: Sequence[EncodedSentence],
    *,
    n_train: int | None = None,
    n_heldout: int | None = None,
    seed: int = 0,
) -> tuple[list[EncodedSentence], list[EncodedSentence]]:
    """The sentences whose real/fake pairs the frozen adversary trains on and is scored on.

    Only sentences with a PHI token make pairs (section 5.3). ``n_train`` / ``n_heldout`` cap each
    side by a seeded draw (None: all). A held-out sentence whose word sequence is also a training
    sentence is dropped (templated corpora repeat short lines such as a name header), so no
    held-out pair is built from a sentence the adversary trained on."""
    rng = random.Random(derive_seed(seed, "attack sentences"))
    train = [s for s in train_pool if s.has_phi]
    if n_train is not None and n_train < len(train):
        train = [train[i] for i in sorted(rng.sample(range(len(train)), n_train))]
    seen = {tuple(s.words) for s in train}
    heldout = [s for s in heldout_pool if s.has_phi and tuple(s.words) not in seen]
    if n_heldout is not None and n_heldout < len(heldout):
        heldout = [heldout[i] for i in sorted(rng.sample(range(len(heldout)), n_heldout))]
    return train, heldout


def frozen_adversary_accuracy(
    trainer: AdversarialTrainer,
    eval_items: Sequence[EncodedSentence],
    *,
    epochs: int = FROZEN_EPOCHS,
    fresh: bool = False,
    seed: int | None = None,
    train_items: Sequence[EncodedSentence] | None = None,
    eval_every: int | None = None,
    bucket: bool | None = None,
    lr: float | None = None,
    batch_size: int | None = None,
) -> dict:
    """Train the adversaries on the frozen representation for ``epochs`` more epochs (on a
    copy; ``fresh=True`` re-initialises them first, Elazar & Goldberg's new classifier) and
    return their accuracy on held-out pairs from ``eval_items`` (chance: 0.5) with the history.

    The adversaries train on the pairs of ``train_items`` (default: the trainer's training
    sentences; a fresh fake per sentence and epoch); evaluation sentences whose words equal a
    training sentence are left out (:func:`attack_sentences`). ``eval_every`` k also scores the
    held-out pairs after every k-th epoch (``curve``: epoch, training pairs seen, accuracy).
    ``bucket``: length-bucketed batches for the adversaries (None: as ``trainer``); ``lr`` /
    ``batch_size``: the adversaries' Nadam learning rate and batch size in the attack (None: the
    trainer's)."""
    if epochs < 0:
        raise ValueError(f"the frozen adversary needs epochs >= 0, got {epochs}")
    model = copy.deepcopy(trainer.model)
    s = trainer.seed if seed is None else seed
    if fresh:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(derive_seed(s, "fresh adversary"))
            for m in model.adversary.modules():
                if hasattr(m, "reset_parameters"):
                    m.reset_parameters()
    train, heldout = attack_sentences(trainer.train if train_items is None else train_items, eval_items)
    if not train:
        raise ValueError("no training sentence with a PHI token for the frozen adversary")
    if not heldout:
        raise ValueError("no held-out sentence with a PHI token (outside the adversary's training sentences)")
    t = AdversarialTrainer(model, trainer.embeddings, trainer.index, train, trainer.dev,
                           n_neighbours=trainer.n_neighbours, lam=trainer.lam,
                           batch_size=trainer.batch_size if batch_size is None else batch_size,
                           lr=trainer.lr if lr is None else lr, clip=trainer.clip,
                           bucket=trainer.bucket if bucket is None else bucket,
                           seed=derive_seed(s, "frozen"), progress=trainer.progress)
    history, curve, seen = [], [], 0
    for e in range(1, epochs + 1):
        history.append(t.run_epoch("adv"))
        seen += history[-1]["pairs"]
        if eval_every and (e % eval_every == 0 or e == epochs):
            curve.append({"epoch": e, "pairs_seen": seen,
                          "accuracy": t.evaluate(heldout, seed_key="frozen-eval")["adv_acc"]})
    final = t.evaluate(heldout, seed_key="frozen-eval")
    return {"accuracy": final["adv_acc"], "pairs": final["pairs"], "loss": final["adv"],
            "train_accuracy": history[-1]["adv_acc"] if history else float("nan"),
            "train_pairs": history[-1]["pairs"] if history else 0, "history": history, "curve": curve,
            "skipped_steps": sum(h["skipped_steps"] for h in history),
            "nonfinite_batches": sum(h["nonfinite_batches"] for h in history), "nonfinite_eval": final["nonfinite"]}

