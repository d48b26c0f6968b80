"""Notebook 06: adversarially learned representations (Friedrich et al., ACL 2019, section 5,
7.3; Figure 5) with :mod:`deidlib.privacy.adversarial`.

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
against them. :func:`attack_curve_figure` shows what limits it: the controls' held-out accuracy
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
from typing import Any, TypedDict

import matplotlib.pyplot as plt
import pandas as pd
from tqdm.auto import tqdm

from ...embeddings.neighbours import NeighbourIndex
from ...evaluation import binary_tag_prf
from ...plotting import style
from ...privacy.adversarial import (
    AdversarialModel,
    AdversarialTrainer,
    RepresentationModel,
    frozen_adversary_accuracy,
    train_dann,
    train_three_phase,
)
from ...rng import derive_seed
from .claims import PAPER_SHAPES, adv_shape_checks
from .common import FriedrichData, encode, identity_model, load_embeddings, prepare_data, train_deid
from .params import CONTROLS, FriedrichParams

__all__ = ["AdvResults", "CONTROLS", "adversarial_run", "attack_items", "control_runs", "summarize", "run_study",
           "figure5", "attack_curve_figure", "shape_checks", "scale_note"]

#: the Figure 5 statements next to ours (:func:`deidlib.studies.friedrich.claims.adv_shape_checks`)
shape_checks = adv_shape_checks

#: the two representations without privacy training that the attack is also run on


def _trainer(model, emb, index, train, dev, n, params, seed) -> AdversarialTrainer:
    # uniformly shuffled batches: length buckets cost the taggers' F1 (module docstring)
    return AdversarialTrainer(model, emb, index, train, dev, n_neighbours=n, batch_size=params.batch_size,
                              lr=params.lr, seed=seed, bucket=False)


_NO_ATTACK = {"adversary_accuracy": float("nan"), "adversary_train_accuracy": float("nan"), "adversary_pairs": 0,
              "adversary_train_pairs": 0, "adversary_skipped_steps": 0, "adversary_nonfinite_batches": 0,
              "adversary_nonfinite_eval": 0}


def attack_items(data: FriedrichData, emb) -> tuple[list, list]:
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
    model = AdversarialModel.build(emb.dim, _labels(), d=params.d, init_std=params.noise_std, noise=True,
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
    att = _attack(trainer, attack_items(data, emb), params) if attack else dict(_NO_ATTACK)
    att.pop("curve", None)
    return {"procedure": procedure, "n": n, "seed": seed, **score,
            "dev_adversary_accuracy": hist[-1]["dev"]["adv_acc"] if hist else float("nan"),
            **att, "epochs": len(hist),
            "stages": " ".join(h["stage"] for h in hist),
            "noise_std_in": float(rep.noise_in.std.mean().detach()), "noise_std_out": float(rep.noise_out.std.mean().detach()),
            "seconds": time.perf_counter() - t0}


def _labels():
    from .common import LABELS

    return LABELS


def control_runs(data: FriedrichData, emb, index: NeighbourIndex, params: FriedrichParams, *,
                 seed: int = 0) -> list[dict[str, Any]]:
    """The two controls (see the module docstring) of one seed: each trained once, attacked at
    every control N; each row's ``curve`` holds the held-out accuracy every K/5 epochs."""
    train, dev, test = encode(data.train, emb), encode(data.dev, emb), encode(data.test, emb)
    items = attack_items(data, emb)
    rows = []
    models = {
        "control raw": identity_model(emb.dim, params, seed=derive_seed(seed, "init")),
        "control P1": AdversarialModel.build(emb.dim, _labels(), d=params.d, noise=False,
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


def summarize(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean, min and max over seeds per (embedding, procedure, N) of F1 and adversary accuracy."""
    g = runs.groupby(["embedding", "procedure", "n"])
    out = g.agg(f1_mean=("f1", "mean"), f1_min=("f1", "min"), f1_max=("f1", "max"),
                adversary_mean=("adversary_accuracy", "mean"), adversary_min=("adversary_accuracy", "min"),
                adversary_max=("adversary_accuracy", "max"),
                adversary_train_mean=("adversary_train_accuracy", "mean"),
                adversary_pairs=("adversary_pairs", "mean"), adversary_train_pairs=("adversary_train_pairs", "mean"),
                seeds=("seed", "count")).reset_index()
    return out


class AdvResults(TypedDict):
    """What :func:`run_study` returns."""

    params: dict[str, Any]
    profile: str
    corpus: str
    seed: int
    sizes: dict[str, int]
    runs: pd.DataFrame  #: one row per (embedding, procedure or control, N, seed)
    summary: pd.DataFrame  #: Figure 5 analog
    #: the controls' held-out adversary accuracy every K/5 epochs (epoch, pairs_seen, accuracy)
    attack_curve: pd.DataFrame
    fingerprint: str
    seconds: float


def run_study(params: FriedrichParams, *, corpus: str = "synthetic", data_dir: str | None = None, seed: int = 0,
              progress: bool = False) -> AdvResults:
    """Everything of notebook 06 at the scale of ``params`` (resolved once by the caller)."""
    if not isinstance(params, FriedrichParams):
        raise TypeError("run_study takes resolved FriedrichParams (friedrich.params_for(profile, ...))")
    if not params.adv_neighbours:
        raise ValueError("the adversarial study needs at least one N in adv_neighbours")
    t0 = time.perf_counter()
    data = prepare_data(params, corpus=corpus, data_dir=data_dir, seed=seed)
    rows: list[dict[str, Any]] = []
    curves: list[dict[str, Any]] = []
    for e in params.adv_embeddings or params.embeddings:
        emb = load_embeddings(e, params, seed=seed)
        index = NeighbourIndex(emb)
        jobs = [(p, n, seed + k) for p in params.procedures for n in params.adv_neighbours
                for k in range(params.adv_seeds)]
        for p, n, s in tqdm(jobs, desc=f"adversarial {e}", disable=not progress):
            rows.append({"embedding": e, **adversarial_run(data, emb, index, n, params, procedure=p, seed=s)})
        if params.controls:
            for k in tqdm(range(params.adv_seeds), desc=f"controls {e}", disable=not progress):
                for r in control_runs(data, emb, index, params, seed=seed + k):
                    curves += [{"embedding": e, "procedure": r["procedure"], "n": r["n"], "seed": r["seed"], **c}
                               for c in r.pop("curve")]
                    rows.append({"embedding": e, **r})
    runs = pd.DataFrame(rows)
    out: AdvResults = {
        "params": asdict(params), "profile": params.profile, "corpus": corpus, "seed": seed,
        "sizes": {"train": len(data.train), "dev": len(data.dev), "test": len(data.test),
                  "attack_train": len(data.attack_train or data.train), "attack_test": len(data.attack_test or data.test)},
        "runs": runs, "summary": summarize(runs), "attack_curve": pd.DataFrame(curves),
        "fingerprint": data.fingerprint, "seconds": 0.0,
    }
    out["seconds"] = time.perf_counter() - t0
    return out


def scale_note(params: FriedrichParams, sizes: dict[str, int], corpus: str) -> str:
    att = (f"; adversary on {sizes['attack_train']} train / {sizes['attack_test']} held-out sentences"
           if "attack_train" in sizes else "")
    return (f"{params.profile} profile, {corpus}: {sizes['train']} train / {sizes['test']} test sentences, "
            f"P1/P2/P3 ≤{params.p1_epochs}/{params.p2_epochs}/{params.p3_epochs} epochs, DANN ≤{params.dann_epochs}, "
            f"K={params.frozen_epochs}, d={params.d}, {params.adv_seeds} seed{'s' if params.adv_seeds != 1 else ''}{att}")


_STYLE = {"three_phase": "o-", "dann": "s--", "control raw": "x:", "control P1": "+:"}


@style()
def figure5(res: AdvResults):
    """Left: F1 vs N per embedding and procedure (mean, min–max band over seeds, 95 % line);
    right: frozen-adversary test accuracy vs N (chance 0.5; the paper's DANN level 0.8)."""
    p = FriedrichParams(**res["params"])
    s = res["summary"]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4.2))
    for (e, proc), d in s.groupby(["embedding", "procedure"]):
        d = d.sort_values("n")
        ctl = proc.startswith("control")
        label = f"{e} {proc}"
        kw = dict(alpha=0.6, color="grey" if ctl else None)
        if not ctl:
            (line,) = a1.plot(d.n, d.f1_mean, _STYLE[proc], label=label)
            if (d.seeds > 1).any():
                a1.fill_between(d.n, d.f1_min.clip(lower=0), d.f1_max.clip(lower=0), alpha=0.2, color=line.get_color())
            kw = dict(color=line.get_color())
        (l2,) = a2.plot(d.n, d.adversary_mean, _STYLE[proc], label=label, **kw)
        if (d.seeds > 1).any():
            a2.fill_between(d.n, d.adversary_min.clip(lower=0), d.adversary_max.clip(lower=0), alpha=0.15, color=l2.get_color())
    a1.axhline(0.95, color="grey", ls="--", lw=1, label="95 % target F1")
    a1.set_ylabel("binary HIPAA token F1")
    a1.set_title("de-identification on the adversarial representation", fontsize=9)
    a2.axhline(0.5, color="k", ls="-", lw=0.8, label="chance (0.5)")
    a2.axhline(PAPER_SHAPES["dann_adversary_above"], color="tab:red", ls=":", lw=1,
               label="paper: DANN adversary > 0.8")
    a2.axvline(PAPER_SHAPES["three_phase_private_up_to"], color="grey", ls=":", lw=1,
               label="paper: three-phase at chance up to N=500")
    a2.set_ylim(0.3, 1.02)
    a2.set_ylabel("frozen-adversary accuracy (test pairs)")
    a2.set_title(f"adversary trained K={p.frozen_epochs} more epochs on the frozen representation", fontsize=9)
    for a in (a1, a2):
        a.set_xscale("log")
        a.set_xlabel("number of neighbours N")
        a.legend(fontsize=6)
    fig.suptitle("Figure 5 analog — " + scale_note(p, res["sizes"], res["corpus"]), fontsize=9)
    fig.tight_layout()
    return fig


@style()
def attack_curve_figure(res: AdvResults):
    """The controls' held-out frozen-adversary accuracy against the real/fake training pairs it
    has seen (every K/5 epochs; one line per seed): still rising at K means the attack is
    limited by its pairs and epochs, flat below 0.8 by the adversary itself."""
    p = FriedrichParams(**res["params"])
    c = res.get("attack_curve")
    fig, ax = plt.subplots(figsize=(6, 4))
    if c is not None and len(c):
        for (e, proc, n), d in c.groupby(["embedding", "procedure", "n"]):
            color = None
            for _, ds in d.groupby("seed"):
                (line,) = ax.plot(ds.pairs_seen, ds.accuracy, _STYLE.get(proc, "o-"), color=color, alpha=0.8,
                                  label=None if color else f"{e} {proc} N={n}")
                color = line.get_color()
    ax.axhline(0.5, color="k", lw=0.8, label="chance (0.5)")
    ax.axhline(PAPER_SHAPES["dann_adversary_above"], color="tab:red", ls=":", lw=1, label="yardstick 0.8")
    ax.set_ylim(0.3, 1.02)
    ax.set_xlabel("real/fake training pairs seen by the frozen adversary")
    ax.set_ylabel("held-out accuracy")
    ax.set_title(f"controls without privacy training: attack vs its training (K={p.frozen_epochs} epochs)\n"
                 + scale_note(p, res["sizes"], res["corpus"]), fontsize=8)
    ax.legend(fontsize=6)
    fig.tight_layout()
    return fig
