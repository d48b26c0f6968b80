"""Adversarially learned private representations (Friedrich et al., ACL 2019, section 5): the
training procedures and the frozen-representation attack. The models and losses live in
:mod:`.adversarial_models`, the epoch runner in :mod:`.adversarial_trainer`; every public name of
the three is importable from here.

:func:`train_three_phase` (Feutry et al. 2018): P1 until the validation l_deid stops improving
(``patience``), P2 until the validation l_adv stops improving, then P3 alternating (a) and (b)
for one epoch each, early-stopped on the validation l_repr measured after (b) ("the early
stopping time for the third phase is determined using only the combined validation loss from
Phase P3b"). :func:`train_dann`: all components conjointly, early-stopped on the same
validation l_repr (a choice: the DANN sum l_deid + l_adv falls whenever the adversary improves,
so it cannot tell a private representation from a leaky one). Each procedure restores the best
validation state of what it trained (a choice; Keras' checkpoints in the authors' code).

:func:`frozen_adversary_accuracy` (Elazar & Goldberg 2018; section 2.2 and 7.2): keep training
the adversaries on the *frozen* representation for K more epochs (:data:`_FROZEN_EPOCHS` = 50,
Figure 5 and section 8; 20 in the DANN statement of section 7.3) on a copy of the model, and
report their accuracy on held-out pairs; the model passed in is not changed. The adversaries may
train on their own pool of sentences (``train_items``, e.g. more sentences of the training split
than the representation saw: an attacker with more data); :func:`attack_sentences` keeps the
sentences with PHI and drops every held-out sentence whose words equal a training sentence, so
no held-out pair comes from a sentence the adversary trained on. ``lr`` / ``batch_size`` set the
adversaries' own learning rate and batch size for the attack. Such an attack needs many pairs
and a large enough learning rate (a fake differs from its real
sentence in one token), so any "near chance" result must be read against unprotected controls
attacked the same way (notebook 06; the measurements are in ``docs/studies/friedrich.md``).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Sequence

import torch
from tqdm.auto import tqdm

from ..rng import derive_seed
from ..training.stopping import EarlyStopping
from .adversarial_models import (
    PHASES,
    AdversarialModel,
    Adversaries,
    DeidHead,
    EncodedSentence,
    PairAdversary,
    encode_sentences,
)
from .adversarial_trainer import AdversarialTrainer

__all__ = [
    "DeidHead",
    "PairAdversary",
    "Adversaries",
    "AdversarialModel",
    "EncodedSentence",
    "encode_sentences",
    "AdversarialTrainer",
    "train_three_phase",
    "train_dann",
    "attack_sentences",
    "frozen_adversary_accuracy",
]

#: K, epochs of the adversaries on the frozen representation (Figure 5 and section 8: "an additional 50 epochs")
_FROZEN_EPOCHS = 50


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
    epochs: int = _FROZEN_EPOCHS,
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
                reset = getattr(m, "reset_parameters", None)
                if callable(reset):
                    reset()
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
