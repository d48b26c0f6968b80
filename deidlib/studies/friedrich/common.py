"""Data, embeddings, the non-private de-identification model and the score shared by the two
friedrich notebooks (Friedrich et al., ACL 2019).

Choices where the paper leaves room (all visible in the parameters):

* **Labels and score.** Binary PHI/non-PHI tags (BIO) over the HIPAA spans only
  (:func:`deidlib.evaluation.hipaa_filter`; non-HIPAA categories such as PROFESSION are
  dropped from the documents before tagging, training and scoring), aggressive tokenization
  (section 6). The score is the binary token F1 over the sentence tags, i.e. a token is a true
  positive when gold and prediction both call it PHI
  (:func:`deidlib.evaluation.binary_tag_prf`) — the "token-based
  binary HIPAA F1" of section 6 computed on our tokens rather than by the i2b2 script.
* **Model.** The section-3 de-identification model is :class:`deidlib.privacy.adversarial.DeidHead`
  (BiLSTM-CRF + one-hot casing, Nadam, gradient norm 1) directly on the public word vectors:
  :class:`_IdentityRepresentation` stands in for the representation model, so the non-private,
  pseudonymized and adversarial rows of Table 2 share one head and one trainer
  (:class:`~deidlib.privacy.adversarial.AdversarialTrainer`, phase ``deid``). The input
  embedding dropout of Table 1 (0.1) is not applied (the head has none). Training stops
  after ``epochs`` or when the dev binary F1 (ties: the dev l_deid) has not improved for
  ``patience`` epochs (epochs in which the head still tags no dev token as PHI do not count); the
  best dev state is restored (:func:`train_deid` says why F1 and not the loss alone).
* **Embeddings.** GloVe 6B 50-d from its package; 300-d FastText trained with gensim on public
  English text (the medical abstracts and the Wikipedia sample gensim ships, about 1.2 M tokens
  against the paper's Common Crawl; :mod:`deidlib.embeddings.public` says why no pretrained
  package and why not the training split).
  Both are public: neighbours of a PHI token are public words.
* **Splits.** The corpus' train/dev/test; ``max_*_sentences`` take seeded subsets (after
  ``negatives_per_positive`` on the training split, if set). Test sentences are never
  pseudonymized (section 4: "test on raw text").
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from torch import nn

from ...corpus.labels import TaggedSentence, downsample_negatives, gold_tags, tag_set, tagged_sentences
from ...corpus.splits import subsample
from ...datasets import load_corpus
from ...embeddings.neighbours import NeighbourIndex
from ...embeddings.public import PublicEmbeddings, fasttext_public, load_glove
from ...evaluation import binary_tag_prf, hipaa_filter
from ...privacy.adversarial import (
    AdversarialModel,
    AdversarialTrainer,
    Adversaries,
    DeidHead,
    EncodedSentence,
    encode_sentences,
)
from ...results import fingerprint_documents
from ...rng import derive_seed
from ...training.stopping import EarlyStopping
from .params import FriedrichParams

__all__ = ["prepare_data", "load_embeddings"]

SCHEME, ENCODING = "binary", "BIO"
LABELS = tag_set(SCHEME, ENCODING)
#: dev F1 values this close tie (then the dev l_deid decides); a loss must fall by more than this
_F1_TIE, _LOSS_DELTA = 1e-9, 1e-6


@dataclass
class FriedrichData:
    """Tagged sentences of the three splits (HIPAA PHI, binary BIO, aggressive tokens)."""

    train: list[TaggedSentence]
    dev: list[TaggedSentence]
    test: list[TaggedSentence]
    corpus: str
    fingerprint: str
    #: sentences with PHI of the whole training / test split for the frozen adversary's pairs
    #: (``attack_sentences`` / ``attack_heldout``; empty: use ``train`` / ``test``)
    attack_train: list[TaggedSentence] = field(default_factory=list)
    attack_test: list[TaggedSentence] = field(default_factory=list)


def _hipaa(docs):
    from dataclasses import replace

    return [replace(d, spans=hipaa_filter(d.spans)) for d in docs]


def _sentences(docs) -> list[TaggedSentence]:
    return [s for s in tagged_sentences(_hipaa(docs), SCHEME, ENCODING, "aggressive") if s.tokens]


def prepare_data(params: FriedrichParams, *, corpus: str = "synthetic", data_dir: str | None = None,
                 seed: int = 0) -> FriedrichData:
    """Load ``corpus`` (the synthetic one at the profile's size, or a real one) and cap it."""
    sp = load_corpus(corpus, data_dir=data_dir, profile=params.profile, seed=seed)
    train = all_train = _sentences(sp.train)
    if params.negatives_per_positive is not None:
        train = downsample_negatives(train, params.negatives_per_positive, derive_seed(seed, "friedrich-neg"))
    train = subsample(train, params.max_train_sentences, derive_seed(seed, "friedrich-train"))
    dev = subsample(_sentences(sp.dev), params.max_dev_sentences, derive_seed(seed, "friedrich-dev"))
    all_test = _sentences(sp.test)
    test = subsample(all_test, params.max_test_sentences, derive_seed(seed, "friedrich-test"))
    if not train or not dev or not test:
        raise ValueError(f"{corpus}: a split has no sentences (train {len(train)}, dev {len(dev)}, test {len(test)})")
    fp = fingerprint_documents([*sp.train, *sp.dev, *sp.test])

    def phi(sents, n, key):
        return [] if n is None else subsample([s for s in sents if any(t != "O" for t in s.tags)], n,
                                              derive_seed(seed, key))

    return FriedrichData(train, dev, test, corpus, fp, phi(all_train, params.attack_sentences, "friedrich-attack-train"),
                         phi(all_test, params.attack_heldout, "friedrich-attack-test"))


def load_embeddings(name: str, params: FriedrichParams, *, seed: int = 0, data_dir: str | None = None) -> PublicEmbeddings:
    """``"glove"`` (the installed GloVe 6B 50-d) or ``"fasttext"`` (gensim FastText on the public
    abstracts and the Wikipedia sample, :func:`~deidlib.embeddings.public.fasttext_public`, cached on disk)."""
    if name == "glove":
        return load_glove()
    if name == "fasttext":
        return fasttext_public(dim=params.fasttext_dim, epochs=params.fasttext_epochs, seed=seed,
                               max_documents=params.fasttext_documents, data_dir=data_dir)
    raise ValueError(f"unknown embeddings {name!r}; choose glove or fasttext")


def phi_tokens(sentences: Sequence[TaggedSentence]) -> list[str]:
    """Every PHI token (with repetitions) of ``sentences``."""
    return [w for s in sentences for w, t in zip(s.words, gold_tags(s)) if t != "O"]


class _IdentityRepresentation(nn.Module):
    """``R = E``: no representation model (the non-private section-3 model reads the public
    vectors directly; also the raw-embedding control of the adversarial study)."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.out_dim = dim

    def forward(self, emb: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        return emb


def identity_model(emb_dim: int, params: FriedrichParams, *, casing: bool = True, seed: int = 0) -> AdversarialModel:
    """Head (and adversaries, for the raw-embedding control) on ``R = E``; seeded init."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        deid = DeidHead(emb_dim, LABELS, hidden=params.deid_hidden, layers=params.deid_layers, casing=casing)
        adv = Adversaries(emb_dim, emb_dim, params.adv_hidden)
    return AdversarialModel(_IdentityRepresentation(emb_dim), deid, adv)


@torch.no_grad()
def _dev_deid_loss(trainer: AdversarialTrainer, items: Sequence[EncodedSentence]) -> float:
    trainer.model.eval()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(derive_seed(trainer.seed, "dev-deid"))
        total = sum(float(trainer.deid_loss(items[a:a + trainer.batch_size])) * len(items[a:a + trainer.batch_size])
                    for a in range(0, len(items), trainer.batch_size))
    trainer.model.train()
    return total / max(len(items), 1)


def train_deid(
    model: AdversarialModel,
    embeddings: PublicEmbeddings,
    index: NeighbourIndex,
    train: Sequence[EncodedSentence],
    dev: Sequence[EncodedSentence],
    params: FriedrichParams,
    *,
    seed: int = 0,
) -> tuple[AdversarialTrainer, dict]:
    """Train representation + head on l_deid only (phase ``deid``), early-stopped on the dev split
    by the library's one rule (:class:`~deidlib.training.stopping.EarlyStopping`); the best dev
    state is restored.

    "Best" is the highest dev binary token F1 (:func:`~deidlib.evaluation.binary_tag_prf`, the score
    the study reports), ties (e.g. F1 0 in the all-O phase) broken by the lower dev l_deid; an epoch that improves neither
    counts towards ``patience`` only once the head tags some dev token as PHI. Why not the dev loss
    alone, as before: on a corpus where ~4 % of sentences hold PHI (the nursing notes) the
    BiLSTM-CRF first learns to tag everything O, its dev loss lowest there, and the loss rises for an
    epoch or two when it starts tagging PHI; stopping and restoring on the loss kept the all-O state
    (test F1 0 - 0.12 in 4 of 36 nursing runs, stopped after 3-4 epochs). The paper (section 7)
    names the monitored validation loss only for the adversarial phases.
    Returns the trainer and {"epochs", "dev_f1", "dev_loss" (of the restored state),
    "stalled_all_o" (epochs not counted for being all-O), "seconds"}."""
    t0 = time.perf_counter()
    trainer = AdversarialTrainer(model, embeddings, index, train, dev, n_neighbours=2, batch_size=params.batch_size,
                                 lr=params.lr, seed=seed, warm=False)
    gold = [s.tags for s in trainer.dev]
    rule = EarlyStopping(params.patience, "max", min_delta=_F1_TIE, tie_delta=_LOSS_DELTA)
    state, epochs, stalled_all_o = None, 0, 0
    for _ in range(params.epochs):
        trainer.run_epoch("deid")
        epochs += 1
        pred = trainer.predict(trainer.dev)
        tags_phi = any(t != "O" for tags in pred for t in tags)
        f1, loss = binary_tag_prf(gold, pred).f1, _dev_deid_loss(trainer, trainer.dev)
        fired = rule.update(f1, tie=loss, counts=tags_phi)
        if rule.improved:
            state = trainer.state(("representation", "deid"))
        elif not tags_phi:
            stalled_all_o += 1
        if fired:
            break
    if state is not None:
        trainer.load(state)
    return trainer, {"epochs": epochs, "dev_f1": rule.best, "dev_loss": rule.best_tie, "stalled_all_o": stalled_all_o,
                     "seconds": time.perf_counter() - t0}


def encode(sentences: Sequence[TaggedSentence], embeddings: PublicEmbeddings) -> list[EncodedSentence]:
    return encode_sentences(sentences, embeddings, LABELS)
