"""Single-registry, centralized and shared–private training of the multi-window CNN across
registries (Alawad et al. 2020 highlight, "Adversarial Training for Privacy-Preserving Deep
Learning Model Distribution", Research Details bullets 2-3 and Overview).

The highlight states: registry-specific layers per registry and shared layers for all; the
shared layers are trained adversarially to learn registry-agnostic features; only
registry-invariant parameters are shared, never raw data nor registry-specific parameters;
the shared layers are distributed by cyclical weight transfer; compared with single-registry
models and a centrally trained model. It is silent on the rest; the choices made here, from
the works it builds on:

* **Architecture**: Liu, Qiu & Huang's shared–private model (ACL 2017, §3, SP-MTL): per
  registry a private :class:`~deidlib.models.cnn.MultiWindowEncoder` and a shared one; the
  registry's head reads ``[private; shared]`` (Liu eq. 11).
* **A common input space**: the shared encoder reads frozen public word vectors, identical in
  every registry (a trained shared embedding would reveal a registry's words); ids from the
  public hash :func:`~deidlib.models.cnn.hashed_ids`.
* **Adversary**: a registry discriminator on the shared features; the encoder's term (weight
  ``adv_weight``, 0: the no-adversary control) is ``confusion`` (default; Tzeng et al. 2015,
  eq. 4-5) or ``reversal`` (Liu §4.1 eq. 13; Ganin et al. 2016, through
  :mod:`deidlib.models.gradient_reversal`), whose unbounded objective a fresh attacker beats.
* **Distribution**: cyclical weight transfer (Chang et al., JAMIA 2018) of the shared encoder
  and the discriminator; the discriminator accumulates its gradient over a cycle and steps
  once at its end (a class-balanced loss; never batches of shared features).
* **Difference loss** (optional, ``orth_weight``; Bousmalis et al. 2016 eq. 5) off by default.
* **Hand-offs** recorded as :class:`UploadRecord`: the parameters under
  :data:`SHARED_PREFIXES` and the discriminator's gradient accumulator, nothing else.

Each choice in full, with the measurement behind ``confusion``: docs/design/collaborative.md.

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
    "ADVERSARIES", "SHARED_PREFIXES", "CNNConfig", "RegistryTraining", "encode", "predict",
    "train_single_registry", "train_centralized", "train_shared_private", "shared_features",
]

log = logging.getLogger(__name__)

#: the shared encoder's adversarial objectives (see the module docstring)
ADVERSARIES = ("confusion", "reversal")

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
    """Optimisation: ``epochs`` passes over the data for every approach; shared–private hands
    its shared layers on after ``visit_batches`` batches (see the module docstring)."""

    epochs: int = 5
    visit_batches: int = 1
    batch_size: int = 32
    lr: float = 1e-3
    adv_weight: float = 0.1
    orth_weight: float = 0.0
    disc_hidden: int = 64
    #: the shared encoder's adversarial objective: "confusion" or "reversal" (module docstring)
    adversary: str = "confusion"
    #: the discriminator's learning rate is lr × disc_lr_scale
    disc_lr_scale: float = 1.0
    seed: int = 0

    def __post_init__(self) -> None:
        if min(self.epochs, self.visit_batches, self.batch_size) < 1:
            raise ValueError("epochs, visit_batches and batch_size must be >= 1")
        if self.lr <= 0 or self.adv_weight < 0 or self.orth_weight < 0 or self.disc_lr_scale <= 0:
            raise ValueError("lr and disc_lr_scale must be > 0 and adv_weight, orth_weight >= 0")
        if self.adversary not in ADVERSARIES:
            raise ValueError(f"adversary must be one of {', '.join(ADVERSARIES)}, got {self.adversary!r}")


@dataclass(frozen=True)
class UploadRecord:
    """What one registry handed to the next at the end of its visit in one cycle."""

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
    """One registry's model: frozen public word vectors feeding the shared encoder, a private
    embedding feeding the private encoder, a private head on ``[private; shared]``, and the
    (shared) registry discriminator behind gradient reversal."""

    public_vectors: torch.Tensor  # a buffer: the frozen public word vectors

    def __init__(self, cfg: CNNConfig, n_classes: int, n_registries: int, disc_hidden: int = 64,
                 adv_weight: float = 0.1) -> None:
        super().__init__()
        self.embedding = nn.Embedding(cfg.n_buckets, cfg.emb_dim, padding_idx=0)
        self.register_buffer("public_vectors", self.embedding.weight.detach().clone())
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
        shared = self.shared_encoder(F.embedding(ids, self.public_vectors, padding_idx=0), lengths)
        return shared, self.private_encoder(self.embedding(ids), lengths)

    def forward(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Class logits, registry logits (through the reversal), shared and private features."""
        shared, private = self.encode(ids)
        logits = self.head(self.dropout(torch.cat([private, shared], dim=-1)))
        return logits, self.discriminator(self.reverse(shared)), shared, private


def _adversarial_loss(model: SharedPrivateCNN, shared: torch.Tensor, reg_logits: torch.Tensor,
                      target: torch.Tensor, train: RegistryTraining) -> torch.Tensor:
    """The discriminator's registry cross-entropy plus the shared encoder's adversarial term
    (``reversal``: the same cross-entropy through the gradient reversal, scaled by λ inside
    the layer; ``confusion``: λ · CE(D(shared), uniform) through a frozen copy of D, the
    discriminator itself seeing only detached features)."""
    if train.adversary == "reversal":
        return F.cross_entropy(reg_logits, target)
    disc = model.discriminator
    frozen = {n: p.detach() for n, p in disc.named_parameters()}
    uniform_ce = -F.log_softmax(torch.func.functional_call(disc, frozen, (shared,)), dim=-1).mean()
    return F.cross_entropy(disc(shared.detach()), target) + train.adv_weight * uniform_ce


def _difference_loss(shared: torch.Tensor, private: torch.Tensor) -> torch.Tensor:
    """Bousmalis et al. 2016 eq. 5, ``‖Sᵀ P‖²_F`` on row-L2-normalised features, / batch size."""
    s = F.normalize(shared, dim=1)
    p = F.normalize(private, dim=1)
    return (s.t() @ p).pow(2).sum() / shared.shape[0]


def shared_state(model: SharedPrivateCNN) -> dict[str, torch.Tensor]:
    """Detached copies of exactly the parameters under :data:`SHARED_PREFIXES` (the upload)."""
    return {k: v.detach().clone() for k, v in model.state_dict().items() if k.startswith(SHARED_PREFIXES)}


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


def _train_classifier(ids: Sequence[Sequence[int]], labels: Sequence[int], n_classes: int, cfg: CNNConfig,
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
    return [_train_classifier(encode(r.train_texts, cfg), r.train_labels, n_classes, cfg, train,
                             seed_key=f"single-{r.name}") for r in registries]


def train_centralized(registries: Sequence[Registry], cfg: CNNConfig, train: RegistryTraining) -> MultiWindowCNN:
    """One model on the pooled training reports of all registries (the non-private reference)."""
    ids = [x for r in registries for x in encode(r.train_texts, cfg)]
    labels = [y for r in registries for y in r.train_labels]
    return _train_classifier(ids, labels, len(registries[0].label_names), cfg, train, seed_key="centralized")


@dataclass
class SharedPrivateRun:
    """The registries' models after the last cycle (all holding the same shared layers), the
    log of every hand-off, and the final shared state."""

    models: list[SharedPrivateCNN]
    uploads: list[UploadRecord]
    server_state: dict[str, torch.Tensor]


def _stream(n: int, batch_size: int, seed: int):
    """Endless reshuffled batches of ``range(n)`` (a fresh permutation per pass)."""
    epoch = 0
    while True:
        yield from _batches(n, batch_size, derive_seed(seed, "pass", epoch))
        epoch += 1


def train_shared_private(registries: Sequence[Registry], cfg: CNNConfig, train: RegistryTraining,
                         *, progress: bool = False) -> SharedPrivateRun:
    """Cyclical weight transfer of the shared layers among in-process registries (see the
    module docstring for every choice)."""
    n_reg, n_classes = len(registries), len(registries[0].label_names)
    if n_reg < 2:
        raise ValueError(f"shared-private training needs at least 2 registries, got {n_reg}")
    data = [(encode(r.train_texts, cfg), torch.as_tensor(list(r.train_labels), dtype=torch.long)) for r in registries]
    if any(not len(ids) for ids, _ in data):
        raise ValueError("every registry needs at least one training report")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(derive_seed(train.seed, "shared-private-public"))
        public = SharedPrivateCNN(cfg, n_classes, n_reg, train.disc_hidden, train.adv_weight)
    models = []
    for r in range(n_reg):
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(derive_seed(train.seed, "shared-private-init", r))
            m = SharedPrivateCNN(cfg, n_classes, n_reg, train.disc_hidden, train.adv_weight)
        with torch.no_grad():  # the public word vectors, and the private embedding's starting point
            m.public_vectors.copy_(public.public_vectors)
            m.embedding.weight.copy_(public.public_vectors)
        # the shared layers are one travelling object: whichever registry holds them trains them
        m.shared_encoder, m.discriminator = public.shared_encoder, public.discriminator
        models.append(m)
    private_opts = [torch.optim.Adam([p for n, p in m.named_parameters() if not n.startswith(SHARED_PREFIXES)],
                                     lr=train.lr) for m in models]
    enc_opt = torch.optim.Adam(public.shared_encoder.parameters(), lr=train.lr)
    disc_opt = torch.optim.Adam(public.discriminator.parameters(), lr=train.lr * train.disc_lr_scale)
    streams = [_stream(len(ids), train.batch_size, derive_seed(train.seed, "sp-stream", r))
               for r, (ids, _) in enumerate(data)]
    mean_batches = float(np.mean([-(-len(ids) // train.batch_size) for ids, _ in data]))
    n_cycles = train.epochs * int(np.ceil(mean_batches / train.visit_batches))
    uploads: list[UploadRecord] = []
    cycles = range(n_cycles)
    if progress:
        from tqdm.auto import tqdm

        cycles = tqdm(cycles, desc="shared-private cycles", unit="cycle")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(derive_seed(train.seed, "shared-private-train"))
        disc_opt.zero_grad()
        for cyc in cycles:
            for r, (model, opt) in enumerate(zip(models, private_opts)):
                ids, y = data[r]
                model.train()
                for _ in range(train.visit_batches):
                    b = next(streams[r])
                    logits, reg_logits, shared, private = model(pad_ids([ids[i] for i in b], _min_len(cfg)))
                    target = torch.full((len(b),), r, dtype=torch.long)
                    loss = F.cross_entropy(logits, y[b]) + _adversarial_loss(model, shared, reg_logits, target, train)
                    if train.orth_weight > 0:
                        loss = loss + train.orth_weight * _difference_loss(shared, private)
                    opt.zero_grad()
                    enc_opt.zero_grad()  # the discriminator's gradient keeps accumulating over the cycle
                    loss.backward()
                    opt.step()
                    enc_opt.step()
                up = shared_state(model)
                rec = UploadRecord(cyc, registries[r].name, tuple(up), sum(v.numel() for v in up.values()))
                log.debug("cycle %d: %s hands on %d tensors, %d values: %s", cyc, rec.registry, len(rec.names),
                          rec.n_values, ", ".join(rec.names))
                uploads.append(rec)
            disc_opt.step()  # one step on the gradient of the cycle's loss over every registry's label
            disc_opt.zero_grad()
    log.info("shared-private: %d cycles over %d registries, %d hand-offs of %d values each", n_cycles, n_reg,
             len(uploads), uploads[-1].n_values if uploads else 0)
    return SharedPrivateRun(models, uploads, shared_state(models[0]))


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
