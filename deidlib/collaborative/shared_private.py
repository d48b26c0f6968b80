"""Single-registry, centralized and shared–private training of the multi-window CNN across
registries (Alawad et al. 2020 highlight, "Adversarial Training for Privacy-Preserving Deep
Learning Model Distribution", Research Details bullets 2-3 and Overview).

The highlight states: registry-specific layers per registry and shared layers for all; the
shared layers are trained adversarially to learn registry-agnostic features; only
registry-invariant parameters are shared, never raw data nor registry-specific parameters;
compared with single-registry models and a centrally trained model. It is silent on the rest;
the choices made here, from the works it builds on:

* **Architecture** (Liu, Qiu & Huang, "Adversarial Multi-task Learning for Text
  Classification", ACL 2017, section 3, the shared–private model SP-MTL): per registry a
  private :class:`~deidlib.models.cnn.MultiWindowEncoder` and a shared one read the same
  embedded words; the registry's classifier head reads ``[private; shared]`` (Liu eq. 11).
* **Adversary** (Liu section 4.1, eq. 13; Ganin et al., JMLR 2016, DANN, eq. 13-14): a
  registry discriminator (one hidden layer) on the shared features behind a gradient
  reversal layer (:mod:`deidlib.models.gradient_reversal`), scale ``adv_weight`` (Ganin's λ).
  One backward pass of ``CE(task) + CE(registry)`` trains the discriminator to identify the
  registry and the shared encoder to defeat it.
* **Difference loss** (optional, ``orth_weight`` > 0; Bousmalis et al., "Domain Separation
  Networks", NeurIPS 2016, eq. 5; Liu eq. 15): ``‖Sᵀ P‖²_F`` between the batch's shared and
  private features, rows L2-normalised (as the DSN reference code does) and divided by the
  batch size; off by default because the highlight does not mention it.
* **Distribution** (the highlight's "model distribution"; McMahan et al. 2017 FedAvg for the
  averaging): in each round every registry downloads the server's shared state, trains
  ``local_epochs`` on its own reports and uploads ONLY the parameters under
  :data:`SHARED_PREFIXES` (shared encoder and discriminator; the discriminator must be shared
  because each registry alone sees a single registry label). The server averages uploads
  weighted by training-set size. Every upload is recorded as an :class:`UploadRecord` (round,
  registry, parameter names, number of values) and logged at INFO.
* **Vocabulary and embedding rows**: ids come from the public hash
  :func:`~deidlib.models.cnn.hashed_ids` (no word list built from any registry). The
  embedding table, private encoder and head are registry-specific and never uploaded: which
  rows of an embedding move, and how, reveals which words a registry's reports contain (the
  highlight: a distributed vocabulary with its word vectors is a leak). Every registry
  *starts* its embedding from the same public table (drawn from the run's seed, in the place
  of public pre-trained word vectors) and then trains it privately; with independently drawn
  tables the shared features would differ per registry from the first step and name the
  registry to any observer (measured with ``benchmarks/alawad_smoke.py``).
* After the last round every registry loads the final average, so all registries hold the
  same shared layers; each evaluates its own model on its own test reports.

Single-registry and centralized baselines train a plain
:class:`~deidlib.models.cnn.MultiWindowCNN` (one per registry; one on the pooled training
reports) with the same sizes, optimiser and number of passes over the data.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from ..models.cnn import MultiWindowCNN, MultiWindowEncoder, hashed_ids, pad_ids
from ..models.gradient_reversal import GradientReversal
from ..rng import derive_seed
from .registries import Registry

__all__ = [
    "SHARED_PREFIXES",
    "CNNConfig",
    "RegistryTraining",
    "UploadRecord",
    "SharedPrivateCNN",
    "SharedPrivateRun",
    "encode",
    "difference_loss",
    "shared_state",
    "average_states",
    "predict",
    "train_classifier",
    "train_single_registry",
    "train_centralized",
    "train_shared_private",
    "shared_features",
]

log = logging.getLogger(__name__)

#: parameter-name prefixes of :class:`SharedPrivateCNN` that leave a registry; nothing else does.
SHARED_PREFIXES = ("shared_encoder.", "discriminator.")


@dataclass(frozen=True)
class CNNConfig:
    """Model sizes (see :mod:`deidlib.models.cnn` for the defaults' sources)."""

    n_buckets: int = 2**15
    emb_dim: int = 300
    windows: tuple[int, ...] = (3, 4, 5)
    filters: int = 100
    dropout: float = 0.5
    max_len: int = 600


@dataclass(frozen=True)
class RegistryTraining:
    """Optimisation: ``epochs`` passes for the baselines; ``rounds × local_epochs`` passes for
    shared–private (make them equal for a fair comparison)."""

    epochs: int = 5
    rounds: int = 5
    local_epochs: int = 1
    batch_size: int = 32
    lr: float = 1e-3
    adv_weight: float = 0.1
    orth_weight: float = 0.0
    disc_hidden: int = 64
    seed: int = 0

    def __post_init__(self) -> None:
        if min(self.epochs, self.rounds, self.local_epochs, self.batch_size) < 1:
            raise ValueError("epochs, rounds, local_epochs and batch_size must be >= 1")
        if self.lr <= 0 or self.adv_weight < 0 or self.orth_weight < 0:
            raise ValueError("lr must be > 0 and adv_weight, orth_weight >= 0")


@dataclass(frozen=True)
class UploadRecord:
    """What one registry sent to the server in one round."""

    round: int
    registry: str
    names: tuple[str, ...]
    n_values: int


def encode(texts: Sequence[str], cfg: CNNConfig) -> list[list[int]]:
    """Hashed ids of each text (public hash; no vocabulary)."""
    return [hashed_ids(t, cfg.n_buckets, cfg.max_len) for t in texts]


def _batches(n: int, batch_size: int, seed: int) -> list[np.ndarray]:
    order = np.random.default_rng(seed).permutation(n)
    return [order[i: i + batch_size] for i in range(0, n, batch_size)]


def _min_len(cfg: CNNConfig) -> int:
    return max(cfg.windows)


class SharedPrivateCNN(nn.Module):
    """One registry's model: private embedding, private and shared encoders, private head on
    ``[private; shared]``, and the (shared) registry discriminator behind gradient reversal."""

    def __init__(self, cfg: CNNConfig, n_classes: int, n_registries: int, disc_hidden: int = 64,
                 adv_weight: float = 0.1) -> None:
        super().__init__()
        self.embedding = nn.Embedding(cfg.n_buckets, cfg.emb_dim, padding_idx=0)
        self.private_encoder = MultiWindowEncoder(cfg.emb_dim, cfg.windows, cfg.filters)
        self.shared_encoder = MultiWindowEncoder(cfg.emb_dim, cfg.windows, cfg.filters)
        d = self.shared_encoder.out_dim
        self.dropout = nn.Dropout(cfg.dropout)
        self.head = nn.Linear(2 * d, n_classes)
        self.reverse = GradientReversal(adv_weight)
        self.discriminator = nn.Sequential(nn.Linear(d, disc_hidden), nn.ReLU(), nn.Linear(disc_hidden, n_registries))

    def encode(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(shared, private)`` features of a padded id batch."""
        lengths = (ids != 0).sum(dim=1)
        x = self.embedding(ids)
        return self.shared_encoder(x, lengths), self.private_encoder(x, lengths)

    def forward(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Class logits, registry logits (through the reversal), shared and private features."""
        shared, private = self.encode(ids)
        logits = self.head(self.dropout(torch.cat([private, shared], dim=-1)))
        return logits, self.discriminator(self.reverse(shared)), shared, private


def difference_loss(shared: torch.Tensor, private: torch.Tensor) -> torch.Tensor:
    """Bousmalis et al. 2016 eq. 5, ``‖Sᵀ P‖²_F`` on row-L2-normalised features, / batch size."""
    s = F.normalize(shared, dim=1)
    p = F.normalize(private, dim=1)
    return (s.t() @ p).pow(2).sum() / shared.shape[0]


def shared_state(model: SharedPrivateCNN) -> dict[str, torch.Tensor]:
    """Detached copies of exactly the parameters under :data:`SHARED_PREFIXES` (the upload)."""
    return {k: v.detach().clone() for k, v in model.state_dict().items() if k.startswith(SHARED_PREFIXES)}


def average_states(states: Sequence[dict[str, torch.Tensor]], weights: Sequence[float]) -> dict[str, torch.Tensor]:
    """Weighted average of uploads (FedAvg, McMahan et al. 2017 Algorithm 1); keys must agree."""
    keys = set(states[0])
    if any(set(s) != keys for s in states) or len(states) != len(weights):
        raise ValueError("uploads must have the same parameter names, one weight each")
    w = torch.tensor([float(x) for x in weights], dtype=torch.float64)
    w = w / w.sum()
    return {k: sum(wi * s[k].double() for wi, s in zip(w, states)).to(states[0][k].dtype) for k in states[0]}


def _load_shared(model: SharedPrivateCNN, state: dict[str, torch.Tensor]) -> None:
    if not all(k.startswith(SHARED_PREFIXES) for k in state):
        raise ValueError("a download may only hold shared parameters")
    missing, unexpected = model.load_state_dict(state, strict=False)
    if unexpected or any(k.startswith(SHARED_PREFIXES) for k in missing):
        raise ValueError(f"download does not match the shared layers: {unexpected or missing}")


@torch.no_grad()
def predict(model: nn.Module, ids: Sequence[Sequence[int]], batch_size: int = 256, min_len: int = 5) -> np.ndarray:
    """Argmax class of each id list (eval mode; restores the previous mode)."""
    was = model.training
    model.eval()
    out = []
    for i in range(0, len(ids), batch_size):
        logits = model(pad_ids(ids[i: i + batch_size], min_len))
        logits = logits[0] if isinstance(logits, tuple) else logits
        out.append(logits.argmax(-1).numpy())
    model.train(was)
    return np.concatenate(out) if out else np.zeros(0, dtype=int)


def train_classifier(ids: Sequence[Sequence[int]], labels: Sequence[int], n_classes: int, cfg: CNNConfig,
                     train: RegistryTraining, *, seed_key: str = "classifier") -> MultiWindowCNN:
    """A plain :class:`MultiWindowCNN` trained with Adam and cross-entropy for ``train.epochs``."""
    if len(ids) != len(labels) or not len(ids):
        raise ValueError(f"need as many labels as documents (> 0), got {len(labels)} and {len(ids)}")
    seed = derive_seed(train.seed, seed_key)
    y_all = torch.as_tensor(list(labels), dtype=torch.long)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = MultiWindowCNN(cfg.n_buckets, n_classes, emb_dim=cfg.emb_dim, windows=cfg.windows,
                               filters=cfg.filters, dropout=cfg.dropout)
        opt = torch.optim.Adam(model.parameters(), lr=train.lr)
        model.train()
        for epoch in range(train.epochs):
            for b in _batches(len(ids), train.batch_size, derive_seed(seed, "epoch", epoch)):
                loss = F.cross_entropy(model(pad_ids([ids[i] for i in b], _min_len(cfg))), y_all[b])
                opt.zero_grad()
                loss.backward()
                opt.step()
    return model


def train_single_registry(registries: Sequence[Registry], cfg: CNNConfig, train: RegistryTraining
                          ) -> list[MultiWindowCNN]:
    """One model per registry, each trained on its own reports only."""
    n_classes = len(registries[0].label_names)
    return [train_classifier(encode(r.train_texts, cfg), r.train_labels, n_classes, cfg, train,
                             seed_key=f"single-{r.name}") for r in registries]


def train_centralized(registries: Sequence[Registry], cfg: CNNConfig, train: RegistryTraining) -> MultiWindowCNN:
    """One model on the pooled training reports of all registries (the non-private reference)."""
    ids = [x for r in registries for x in encode(r.train_texts, cfg)]
    labels = [y for r in registries for y in r.train_labels]
    return train_classifier(ids, labels, len(registries[0].label_names), cfg, train, seed_key="centralized")


@dataclass
class SharedPrivateRun:
    """The registries' models after the last round and the log of every upload."""

    models: list[SharedPrivateCNN]
    uploads: list[UploadRecord]
    server_state: dict[str, torch.Tensor]


def train_shared_private(registries: Sequence[Registry], cfg: CNNConfig, train: RegistryTraining,
                         *, progress: bool = False) -> SharedPrivateRun:
    """Simulate the registries in-process (see the module docstring for every choice)."""
    n_reg, n_classes = len(registries), len(registries[0].label_names)
    if n_reg < 2:
        raise ValueError(f"shared-private training needs at least 2 registries, got {n_reg}")
    data = [(encode(r.train_texts, cfg), torch.as_tensor(list(r.train_labels), dtype=torch.long)) for r in registries]
    if any(not len(ids) for ids, _ in data):
        raise ValueError("every registry needs at least one training report")
    models, opts = [], []
    for r in range(n_reg):
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(derive_seed(train.seed, "shared-private-init", r))
            m = SharedPrivateCNN(cfg, n_classes, n_reg, train.disc_hidden, train.adv_weight)
        models.append(m)
        opts.append(torch.optim.Adam(m.parameters(), lr=train.lr))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(derive_seed(train.seed, "shared-private-server"))
        public = SharedPrivateCNN(cfg, n_classes, n_reg, train.disc_hidden, train.adv_weight)
    server = shared_state(public)
    with torch.no_grad():  # a public starting point for every registry's (private) embedding
        for m in models:
            m.embedding.weight.copy_(public.embedding.weight)
    uploads: list[UploadRecord] = []
    rounds = range(train.rounds)
    if progress:
        from tqdm.auto import tqdm

        rounds = tqdm(rounds, desc="shared-private rounds", unit="round")
    for rnd in rounds:
        states, weights = [], []
        for r, (model, opt) in enumerate(zip(models, opts)):
            _load_shared(model, server)
            ids, y = data[r]
            target = torch.full((train.batch_size,), r, dtype=torch.long)
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(derive_seed(train.seed, "shared-private-local", rnd, r))
                model.train()
                for e in range(train.local_epochs):
                    for b in _batches(len(ids), train.batch_size, derive_seed(train.seed, "sp-epoch", rnd, r, e)):
                        logits, reg_logits, shared, private = model(pad_ids([ids[i] for i in b], _min_len(cfg)))
                        loss = F.cross_entropy(logits, y[b]) + F.cross_entropy(reg_logits, target[: len(b)])
                        if train.orth_weight > 0:
                            loss = loss + train.orth_weight * difference_loss(shared, private)
                        opt.zero_grad()
                        loss.backward()
                        opt.step()
            up = shared_state(model)
            rec = UploadRecord(rnd, registries[r].name, tuple(up), sum(v.numel() for v in up.values()))
            log.info("round %d: %s uploads %d tensors, %d values: %s", rnd, rec.registry, len(rec.names),
                     rec.n_values, ", ".join(rec.names))
            uploads.append(rec)
            states.append(up)
            weights.append(len(ids))
        server = average_states(states, weights)
    for model in models:
        _load_shared(model, server)
    return SharedPrivateRun(models, uploads, server)


@torch.no_grad()
def shared_features(run: SharedPrivateRun, registries: Sequence[Registry], cfg: CNNConfig,
                    split: str = "test") -> tuple[np.ndarray, np.ndarray]:
    """Shared-encoder features each registry computes for its own reports, with registry ids
    (what an observer of the shared representation sees)."""
    feats, regs = [], []
    for r, (model, reg) in enumerate(zip(run.models, registries)):
        ids = encode(getattr(reg, f"{split}_texts"), cfg)
        if not ids:
            continue
        was = model.training
        model.eval()
        for i in range(0, len(ids), 256):
            feats.append(model.encode(pad_ids(ids[i: i + 256], _min_len(cfg)))[0].numpy())
        model.train(was)
        regs.append(np.full(len(ids), r))
    return np.concatenate(feats), np.concatenate(regs)
