"""The models and losses of adversarially learned private representations (Friedrich et al.,
ACL 2019, section 5); trained by :mod:`deidlib.privacy.adversarial_trainer`, attacked by
:mod:`deidlib.privacy.adversarial`.

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

Losses (pure functions): ``l_deid`` = mean CRF negative log-likelihood per sentence;
``l_adv`` = binary cross-entropy of the averaged probability; ``l_random = log 2`` (the
random-guessing loss of a balanced binary task, footnote 2); eq. 2:
``l_repr = l_deid + λ·|l_adv − l_random|`` with λ = 1.

Embedding input: tokens without a vector (GloVe OOV) are fed as zeros (the casing feature still
describes them); the embeddings are not fine-tuned (the paper shares them as a fixed public
resource).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

from ..corpus.labels import TaggedSentence, gold_tags
from ..embeddings.chars import CASINGS, casing_id
from ..embeddings.public import PublicEmbeddings
from ..models.crf import CRF
from ..models.layers import RNNStack, _padded_ok, run_rnn, run_rnn_padded

__all__ = [
    "DeidHead",
    "PairAdversary",
    "Adversaries",
    "AdversarialModel",
    "EncodedSentence",
    "encode_sentences",
]

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
            tag_ids = np.array([li[t] for t in gold_tags(s)], dtype=np.int64)
        except KeyError as e:
            raise ValueError(f"tag {e.args[0]!r} is not in the label set") from None
        out.append(EncodedSentence(list(s.words), list(gold_tags(s)), embeddings.lookup(s.words),
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
