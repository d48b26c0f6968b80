"""Running the alawad study (Alawad et al. 2020): single-registry, centralized and shared–private
CNNs (with and without the adversary) per seed, their scores, significance and equivalence
tests, per-class F1, the registry attacks and the upload log (``docs/studies/alawad.md``).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch

from ...collaborative.registries import Registry, abstract_registries, label_counts, synthetic_registries
from ...collaborative.registry_eval import (
    equivalence_bootstrap,
    extreme_classes,
    f1_micro_macro,
    mcnemar,
    paired_bootstrap,
    per_class_f1,
    registry_attack,
)
from ...collaborative.shared_private import (
    SHARED_PREFIXES,
    encode,
    predict,
    shared_features,
    train_centralized,
    train_shared_private,
    train_single_registry,
)
from ...models.cnn import pad_ids
from ..protocol import StudyResults
from .params import APPROACHES, CORPORA, AlawadParams

__all__ = ["AlawadResults", "run_study"]


def make_registries(params: AlawadParams, corpus: str = "synthetic", seed: int = 0,
                    data_dir: str | None = None) -> list[Registry]:
    """The registries of one seed (``corpus`` ``synthetic`` or ``abstracts``)."""
    if corpus == "synthetic":
        return synthetic_registries(params.n_registries, params.patients, seed=seed, label=params.label,
                                    concentration=params.concentration, test_fraction=params.test_fraction)
    if corpus == "abstracts":
        return abstract_registries(params.n_registries, seed=seed, concentration=params.abstracts_concentration,
                                   test_fraction=params.test_fraction, data_dir=data_dir,
                                   limit=params.abstracts_limit)
    raise ValueError(f"alawad needs labelled reports: corpus must be one of {', '.join(CORPORA)}, got {corpus!r}")


def _fingerprint(regs: Sequence[Registry]) -> str:
    h = hashlib.sha256()
    for r in regs:
        for part in (r.train_texts, r.test_texts):
            for t in part:
                h.update(t.encode())
                h.update(b"\0")
        h.update(repr((r.name, r.train_labels, r.test_labels, r.label_names)).encode())
    return h.hexdigest()


@dataclass
class AlawadResults(StudyResults):
    """What :func:`run_study` returns (JSON-able; the input of the tables and figures)."""

    study: str
    profile: str
    corpus: str
    params: dict[str, Any]  #: asdict(AlawadParams)
    seeds: list[int]
    approaches: list[str]
    label_names: list[str] = field(default_factory=list)
    #: per seed and registry: train/test reports, label counts, fingerprint
    data: list[dict[str, Any]] = field(default_factory=list)
    #: seed, approach, micro, macro, seconds
    scores: list[dict[str, Any]] = field(default_factory=list)
    #: seed, approach, class, train_count, test_count, f1, role
    per_class: list[dict[str, Any]] = field(default_factory=list)
    #: seed ("all" = pooled), a, b, metric, delta, p_bootstrap, mcnemar
    significance: list[dict[str, Any]] = field(default_factory=list)
    #: seed, approach, attacker, accuracy, chance, majority, n_test
    attack: list[dict[str, Any]] = field(default_factory=list)
    #: seed, approach, registry, hand_offs, tensors, values, private_tensors, layers
    uploads: list[dict[str, Any]] = field(default_factory=list)
    #: seed, a, b, metric, delta, lo, hi, margin, p_tost, equivalent
    equivalence: list[dict[str, Any]] = field(default_factory=list)


def _predictions(models, regs, cfg) -> np.ndarray:
    return np.concatenate([predict(m, encode(r.test_texts, cfg)) for m, r in zip(models, regs)])


@torch.no_grad()
def _encoder_features(model, regs, cfg) -> np.ndarray:
    model.eval()
    ids = [x for r in regs for x in encode(r.test_texts, cfg)]
    return np.concatenate([model.features(pad_ids(ids[i: i + 256], max(cfg.windows))).numpy()
                           for i in range(0, len(ids), 256)])


@torch.no_grad()
def _discriminator_accuracy(run, feats: np.ndarray, reg: np.ndarray) -> float:
    disc = run.models[0].discriminator.eval()  # every registry holds the same (downloaded) discriminator
    pred = disc(torch.from_numpy(feats.astype(np.float32))).argmax(-1).numpy()
    return float(np.mean(pred == reg))


def _attack_row(seed, approach, attacker, acc, chance, majority, n_test) -> dict[str, Any]:
    return {"seed": seed, "approach": approach, "attacker": attacker, "accuracy": acc, "chance": chance,
            "majority": majority, "n_test": n_test}


def _significance_rows(seed, y, preds, n_resamples, boot_seed) -> list[dict[str, Any]]:
    rows = []
    for a, b in (("single", "shared_private"), ("centralized", "shared_private"), ("single", "centralized"),
                 ("shared_private_no_adv", "shared_private")):
        if a not in preds or b not in preds:
            continue
        a_only, b_only, p_mc = mcnemar(y, preds[a], preds[b])
        for metric in ("micro", "macro"):
            d, p = paired_bootstrap(y, preds[a], preds[b], metric=metric, n_resamples=n_resamples, seed=boot_seed)
            rows.append({"seed": seed, "a": a, "b": b, "metric": metric, "delta": d, "p_bootstrap": p,
                         "a_only_correct": a_only, "b_only_correct": b_only, "p_mcnemar": p_mc})
    return rows


def _equivalence_rows(seed, y, preds, params, boot_seed) -> list[dict[str, Any]]:
    rows = []
    for a, b in (("centralized", "shared_private"), ("centralized", "shared_private_no_adv")):
        if a not in preds or b not in preds:
            continue
        for metric in ("micro", "macro"):
            e = equivalence_bootstrap(y, preds[a], preds[b], params.equivalence_margin, metric=metric,
                                      n_resamples=params.n_resamples, seed=boot_seed)
            rows.append({"seed": seed, "a": a, "b": b, "metric": metric, **e, "equivalent": e["p_tost"] < 0.05})
    return rows


def run_study(params: AlawadParams, *, corpus: str = "synthetic", data_dir: str | None = None,
              seeds: Sequence[int] | None = None, approaches: Sequence[str] = APPROACHES,
              progress: bool = True) -> AlawadResults:
    """Train and evaluate every approach for every seed (each seed re-draws the registries and
    re-initialises every model); returns :class:`AlawadResults`.

    ``params`` come from :func:`params_for` (resolved once, by the caller); ``seeds``
    defaults to ``0 .. n_seeds-1``.
    """
    if not isinstance(params, AlawadParams):
        raise TypeError("run_study takes resolved AlawadParams (alawad.params_for(profile, ...))")
    if corpus not in CORPORA:
        raise ValueError(f"alawad needs labelled reports: corpus must be one of {', '.join(CORPORA)}, got {corpus!r}")
    bad = [a for a in approaches if a not in APPROACHES]
    if bad:
        raise ValueError(f"unknown approaches {bad}; choose from {', '.join(APPROACHES)}")
    seeds = list(range(params.n_seeds)) if seeds is None else [int(s) for s in seeds]
    cfg = params.cnn()
    out = AlawadResults(study="alawad", profile=params.profile, corpus=corpus, params=asdict(params), seeds=seeds,
                        approaches=list(approaches))
    pooled_y: list[np.ndarray] = []
    pooled: dict[str, list[np.ndarray]] = {a: [] for a in approaches}
    steps = [(s, a) for s in seeds for a in approaches]
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(steps), desc="alawad", unit="model set")
    for seed in seeds:
        regs = make_registries(params, corpus, seed, data_dir)
        names = list(regs[0].label_names)
        out.label_names = names
        train_counts, test_counts = label_counts(regs), label_counts(regs, "test")
        fp = _fingerprint(regs)
        for i, r in enumerate(regs):
            out.data.append({"seed": seed, "registry": r.name, "train": len(r.train_texts),
                                "test": len(r.test_texts), "train_counts": train_counts[i].tolist(),
                                "test_counts": test_counts[i].tolist(), "fingerprint": fp})
        y = np.concatenate([r.test_labels for r in regs]).astype(np.int64)
        reg_of = np.concatenate([np.full(len(r.test_texts), i) for i, r in enumerate(regs)])
        chance = 1.0 / len(regs)
        majority = float(np.bincount(reg_of).max() / len(reg_of))
        pooled_train = train_counts.sum(0)
        # the floor of any task-useful representation: registries differ in label mix, so the class
        # alone names the registry this often (the registry with most training reports of the class)
        by_class = train_counts.argmax(0)
        out.attack.append(_attack_row(seed, "label_only", "most frequent registry of the true class",
                                         float(np.mean(by_class[y] == reg_of)), chance, majority, len(y)))
        ext = extreme_classes(pooled_train, params.min_support)
        preds: dict[str, np.ndarray] = {}
        for approach in approaches:
            if bar is not None:
                bar.set_postfix_str(f"seed {seed}, {approach}")
            t0 = time.perf_counter()
            if approach == "single":
                preds[approach] = _predictions(train_single_registry(regs, cfg, params.training(seed)), regs, cfg)
            elif approach == "centralized":
                model = train_centralized(regs, cfg, params.training(seed))
                preds[approach] = _predictions([model] * len(regs), regs, cfg)
                a = registry_attack(_encoder_features(model, regs, cfg), reg_of, epochs=params.attack_epochs,
                                    seed=seed)
                out.attack.append(_attack_row(seed, approach, "fresh classifier, frozen features", a.accuracy,
                                                 chance, a.majority, a.n_test))
            else:
                w = params.adv_weight if approach == "shared_private" else 0.0
                run = train_shared_private(regs, cfg, params.training(seed, adv_weight=w))
                preds[approach] = _predictions(run.models, regs, cfg)
                feats, fr = shared_features(run, regs, cfg)
                a = registry_attack(feats, fr, epochs=params.attack_epochs, seed=seed)
                out.attack.append(_attack_row(seed, approach, "fresh classifier, frozen features", a.accuracy,
                                                 chance, a.majority, a.n_test))
                out.attack.append(_attack_row(seed, approach, "trained discriminator",
                                                 _discriminator_accuracy(run, feats, fr), chance, majority, len(fr)))
                for r in regs:
                    recs = [rec for rec in run.uploads if rec.registry == r.name]
                    handed = sorted({n for rec in recs for n in rec.names})
                    out.uploads.append({
                        "seed": seed, "approach": approach, "registry": r.name, "hand_offs": len(recs),
                        "tensors": len(handed), "values": max((rec.n_values for rec in recs), default=0),
                        "private_tensors": sum(not n.startswith(SHARED_PREFIXES) for n in handed),
                        "layers": " ".join(sorted({n.split(".")[0] for n in handed}))})
            seconds = time.perf_counter() - t0
            f1 = f1_micro_macro(y, preds[approach])
            out.scores.append({"seed": seed, "approach": approach, **f1, "seconds": seconds})
            classes = [c for c in range(len(names)) if test_counts[:, c].sum() > 0]
            pc = per_class_f1(y, preds[approach], classes)
            for c in classes:
                role = ("most" if ext and c == ext[0] else "least" if ext and c == ext[1] else "")
                out.per_class.append({"seed": seed, "approach": approach, "class": names[c],
                                         "train_count": int(pooled_train[c]),
                                         "test_count": int(test_counts[:, c].sum()), "f1": pc[c], "role": role})
            pooled[approach].append(preds[approach])
            if bar is not None:
                bar.update(1)
        pooled_y.append(y)
        out.significance += _significance_rows(seed, y, preds, params.n_resamples, seed)
        out.equivalence += _equivalence_rows(seed, y, preds, params, seed)
    if len(seeds) > 1:
        y_all = np.concatenate(pooled_y)
        out.significance += _significance_rows("all", y_all, {a: np.concatenate(p) for a, p in pooled.items()},
                                                  params.n_resamples, seeds[0])
        out.equivalence += _equivalence_rows("all", y_all, {a: np.concatenate(p) for a, p in pooled.items()},
                                                params, seeds[0])
    if bar is not None:
        bar.close()
    return out
