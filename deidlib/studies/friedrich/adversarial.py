"""The adversarial experiment's part: adversarially learned representations (Friedrich et al.,
ACL 2019, section 5, 7.3; Figure 5) with :mod:`deidlib.privacy.adversarial`.

For each embedding, each N (the invariance requirement: a fake pair replaces one PHI token by
one of its N − 1 nearest other words) and each seed, :func:`adversarial_run` trains the
representation R = N_out + BiLSTM(E + N_in) (d dimensions), the BiLSTM-CRF head and the two
adversaries with three-phase training (Feutry et al.) or DANN, then reports

* the head's binary token F1 on the raw test sentences (Figure 5, left);
* the frozen-representation attack (Elazar & Goldberg 2018): the adversaries keep training on
  the frozen representation for K = ``frozen_epochs`` more epochs; their accuracy on pairs
  built from the test sentences (chance 0.5) and on the training pairs of the last epoch
  (section 8 speaks of the training data) (Figure 5, right).

Controls (``controls=True``, every seed): the same attack on two representations that were
never trained against an adversary — ``control raw`` (R = E, the public vectors themselves)
and ``control P1`` (a noise-free BiLSTM representation trained on de-identification only). If
the attack does not beat chance clearly on them (the yardstick: 0.8), its budget (K, pairs,
adversary size) is too small to call any procedure private: every "near chance" result is read
against them. :func:`~.figures.attack_curve_figure` shows what limits it: the controls' held-out accuracy
every K/5 epochs against the training pairs seen.

The frozen adversary trains on the pairs of ``attack_sentences`` PHI sentences drawn from the
whole training split and is scored on ``attack_heldout`` PHI sentences of the test split, none of
them one it trained on (:func:`~deidlib.privacy.adversarial.attack_sentences`), with its own
learning rate and batch size (``attack_lr``, ``attack_batch_size``) and length-bucketed batches
(``length_buckets``); the taggers always train on uniformly shuffled batches. What makes the
attack strong enough, the rejected cached attack and the measurements behind both:
``docs/studies/friedrich.md``.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Any

from ...embeddings.neighbours import NeighbourIndex
from ...evaluation import binary_tag_prf
from ...privacy.adversarial import (
    AdversarialModel,
    AdversarialTrainer,
    frozen_adversary_accuracy,
    train_dann,
    train_three_phase,
)
from ...privacy.adversarial_models import RepresentationModel
from ...rng import derive_seed
from .common import LABELS, FriedrichData, encode, identity_model, train_deid
from .params import FriedrichParams

__all__ = ["adversarial_run", "control_runs"]

#: the two representations without privacy training that the attack is also run on


def _trainer(model, emb, index, train, dev, n, params, seed) -> AdversarialTrainer:
    # uniformly shuffled batches: length buckets cost the taggers' F1 (module docstring)
    return AdversarialTrainer(model, emb, index, train, dev, n_neighbours=n, batch_size=params.batch_size,
                              lr=params.lr, seed=seed, bucket=False)


_NO_ATTACK = {"adversary_accuracy": float("nan"), "adversary_train_accuracy": float("nan"), "adversary_pairs": 0,
              "adversary_train_pairs": 0, "adversary_skipped_steps": 0, "adversary_nonfinite_batches": 0,
              "adversary_nonfinite_eval": 0}


def _attack_items(data: FriedrichData, emb) -> tuple[list, list]:
    """Encoded sentences of the frozen adversary: its training pool (``attack_sentences`` drawn
    from the whole training split, else the representation's training sentences) and its
    held-out pool (``attack_heldout`` drawn from the whole test split, else the test sentences)."""
    return encode(data.attack_train or data.train, emb), encode(data.attack_test or data.test, emb)


def _attack(trainer: AdversarialTrainer, items, params: FriedrichParams, *, curve: bool = False) -> dict[str, Any]:
    train, heldout = items
    fz = frozen_adversary_accuracy(trainer, heldout, epochs=params.frozen_epochs, train_items=train,
                                   eval_every=max(params.frozen_epochs // 5, 1) if curve else None,
                                   bucket=params.length_buckets, lr=params.attack_lr,
                                   batch_size=params.attack_batch_size)
    return {"adversary_accuracy": fz["accuracy"], "adversary_train_accuracy": fz["train_accuracy"],
            "adversary_pairs": fz["pairs"], "adversary_train_pairs": fz["train_pairs"],
            "adversary_skipped_steps": fz["skipped_steps"], "adversary_nonfinite_batches": fz["nonfinite_batches"],
            "adversary_nonfinite_eval": fz["nonfinite_eval"], "curve": fz["curve"]}


def adversarial_run(data: FriedrichData, emb, index: NeighbourIndex, n: int, params: FriedrichParams, *,
                    procedure: str = "three_phase", seed: int = 0, attack: bool = True) -> dict[str, Any]:
    """One (procedure, N, seed) point: train, score the head on raw test text, attack the frozen
    representation (``attack=False``: no attack, accuracies NaN — Table 2 needs the F1 only)."""
    t0 = time.perf_counter()
    train, dev, test = encode(data.train, emb), encode(data.dev, emb), encode(data.test, emb)
    model = AdversarialModel.build(emb.dim, LABELS, d=params.d, init_std=params.noise_std, noise=True,
                                   deid_hidden=params.deid_hidden, deid_layers=params.deid_layers,
                                   adv_hidden=params.adv_hidden, seed=derive_seed(seed, "init"))
    trainer = _trainer(model, emb, index, train, dev, n, params, seed)
    if procedure == "three_phase":
        hist = train_three_phase(trainer, p1_epochs=params.p1_epochs, p2_epochs=params.p2_epochs,
                                 p3_epochs=params.p3_epochs, patience=params.patience)
    elif procedure == "dann":
        hist = train_dann(trainer, epochs=params.dann_epochs, patience=params.patience)
    else:
        raise ValueError(f"unknown procedure {procedure!r}; choose three_phase or dann")
    score = asdict(binary_tag_prf([s.tags for s in test], trainer.predict(test)))
    rep = model.representation
    if not isinstance(rep, RepresentationModel):  # AdversarialModel.build makes one
        raise TypeError(f"expected a noisy representation model, got {type(rep).__name__}")
    att = _attack(trainer, _attack_items(data, emb), params) if attack else dict(_NO_ATTACK)
    att.pop("curve", None)
    return {"procedure": procedure, "n": n, "seed": seed, **score,
            "dev_adversary_accuracy": hist[-1]["dev"]["adv_acc"] if hist else float("nan"),
            **att, "epochs": len(hist),
            "stages": " ".join(h["stage"] for h in hist),
            "noise_std_in": float(rep.noise_in.std.mean().detach()), "noise_std_out": float(rep.noise_out.std.mean().detach()),
            "seconds": time.perf_counter() - t0}


def control_runs(data: FriedrichData, emb, index: NeighbourIndex, params: FriedrichParams, *,
                 seed: int = 0) -> list[dict[str, Any]]:
    """The two controls (see the module docstring) of one seed: each trained once, attacked at
    every control N; each row's ``curve`` holds the held-out accuracy every K/5 epochs."""
    train, dev, test = encode(data.train, emb), encode(data.dev, emb), encode(data.test, emb)
    items = _attack_items(data, emb)
    rows = []
    models = {
        "control raw": identity_model(emb.dim, params, seed=derive_seed(seed, "init")),
        "control P1": AdversarialModel.build(emb.dim, LABELS, d=params.d, noise=False,
                                             deid_hidden=params.deid_hidden, deid_layers=params.deid_layers,
                                             adv_hidden=params.adv_hidden, seed=derive_seed(seed, "init")),
    }
    for name, model in models.items():
        t0 = time.perf_counter()
        trainer, info = train_deid(model, emb, index, train, dev, params, seed=seed)
        score = asdict(binary_tag_prf([s.tags for s in test], trainer.predict(test)))
        base = time.perf_counter() - t0
        for n in params.control_neighbours or params.adv_neighbours:
            t1 = time.perf_counter()
            attack = _attack(_trainer(model, emb, index, train, dev, n, params, seed), items, params, curve=True)
            rows.append({"procedure": name, "n": n, "seed": seed, **score, "dev_adversary_accuracy": float("nan"),
                         **attack, "epochs": info["epochs"], "stages": "deid",
                         "noise_std_in": 0.0, "noise_std_out": 0.0, "seconds": base + time.perf_counter() - t1})
    return rows
