"""Alawad et al. 2020 (highlight "Adversarial Training for Privacy-Preserving Deep Learning
Model Distribution"): a multi-window CNN classifies pathology reports by subsite, trained
per registry (single-registry), on the pooled reports (centralized) and as a shared–private
model whose shared layers are trained adversarially against a registry discriminator and
are the only parameters that leave a registry.

Notebook ``07_alawad_registries`` calls :func:`run_study` and plots :func:`figure_f1`,
:func:`figure_per_class` and :func:`figure_attack`; the tables come from :func:`f1_table`,
:func:`significance_table`, :func:`per_class_table`, :func:`attack_table`,
:func:`uploads_table` and :func:`registries_table`. All models, training and evaluation
live in the library (:mod:`deidlib.models.cnn`, :mod:`deidlib.collaborative.registries`,
:mod:`deidlib.collaborative.shared_private`, :mod:`deidlib.collaborative.registry_eval`);
their docstrings give every choice the highlight leaves open.

What the study adds, and its choices:

* **Approaches.** ``single`` (one CNN per registry on its own reports), ``centralized`` (one
  CNN on the pooled reports: the non-private reference), ``shared_private`` (adversary with
  ``adv_weight``) and ``shared_private_no_adv`` (the same with ``adv_weight = 0``: the
  control that shows what the adversary itself changes). Every approach makes the same
  number of passes over its data (``epochs``); shared–private moves its shared layers by
  cyclical weight transfer, handing them on after ``visit_batches`` batches.
* **Scores.** Each registry's model predicts its own test reports (centralized: the one
  model predicts all); micro/macro F1 over all registries' test reports together (the
  highlight reports one micro and one macro F1 per approach).
* **Significance.** Paired bootstrap (Koehn 2004) of micro and macro F1 and McNemar's exact
  test, per seed and on the reports of all seeds together (pairs are (seed, report)).
* **Equivalence.** "Statistically indistinguishable from centralized" is tested as
  equivalence (TOST on the pooled paired bootstrap) within ``equivalence_margin`` F1
  (default 0.03: a difference smaller than that is called no difference), micro and macro.
* **Per class.** F1 of every class with its pooled training count; the *most* and *least*
  represented classes are those with the most / fewest training reports among classes with
  ``>= min_support`` (the highlight: 100; the profiles scale it with the data).
* **Privacy evidence.** (1) The trained registry discriminator (shared, downloaded by every
  registry) applied to the shared features of the test reports; (2) a fresh attacker trained
  on the *frozen* shared features of half of the test reports, tested on the other half
  (:func:`~deidlib.collaborative.registry_eval.registry_attack`); both next to chance
  ``1/n_registries``, the majority-registry rate and the *class-label floor*: the accuracy of
  naming the registry from a report's true class alone (registries differ in label mix, so
  features that serve the task carry this much registry information whatever the adversary
  does) (a trained discriminator at the majority
  rate is a bug signal, flagged by :func:`discriminator_check`). For ``centralized`` the attack reads its
  whole encoder (what distributing that model would expose); single-registry models share
  nothing.
* **What leaves a registry.** Every hand-off of the shared layers, summarised per registry
  (hand-offs, tensors, values), with the count of handed-on tensors outside the shared layers
  (computed from the names, never assumed).
* **Corpora.** ``synthetic`` (default): the generator's pathology reports, one registry per
  generator site (:func:`~deidlib.collaborative.registries.synthetic_registries`);
  ``abstracts``: ``medical_abstracts_tc`` split into pseudo-registries by the label-skewed
  Dirichlet rule of :func:`~deidlib.collaborative.registries.abstract_registries` (real,
  public text; 5 classes).
"""

from __future__ import annotations

import hashlib
import textwrap
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, TypedDict

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch

from ..collaborative.registries import Registry, abstract_registries, label_counts, synthetic_registries
from ..collaborative.registry_eval import (
    equivalence_bootstrap,
    extreme_classes,
    f1_micro_macro,
    mcnemar,
    paired_bootstrap,
    per_class_f1,
    registry_attack,
)
from ..collaborative.shared_private import (
    ADVERSARIES,
    SHARED_PREFIXES,
    CNNConfig,
    RegistryTraining,
    encode,
    predict,
    shared_features,
    train_centralized,
    train_shared_private,
    train_single_registry,
)
from ..models.cnn import pad_ids
from ..plotting import style
from .params import StudyParams, profiles

__all__ = [
    "APPROACHES",
    "CORPORA",
    "AlawadParams",
    "AlawadResults",
    "PROFILE_PARAMS",
    "params_for",
    "make_registries",
    "run_study",
    "f1_table",
    "significance_table",
    "equivalence_table",
    "discriminator_check",
    "per_class_table",
    "attack_table",
    "class_size_table",
    "uploads_table",
    "registries_table",
    "figure_f1",
    "figure_per_class",
    "figure_attack",
    "scale_note",
]

APPROACHES = ("single", "centralized", "shared_private", "shared_private_no_adv")
LABELS = {"single": "single-registry", "centralized": "centralized", "shared_private": "shared–private",
          "shared_private_no_adv": "shared–private, no adversary", "label_only": "the class label alone"}
COLORS = {"single": "tab:red", "centralized": "black", "shared_private": "tab:green",
          "shared_private_no_adv": "tab:olive", "label_only": "tab:grey"}
CORPORA = ("synthetic", "abstracts")


@dataclass(frozen=True)
class AlawadParams(StudyParams):
    """All knobs of the study (defaults = the paper's setup where it states one)."""

    STUDY: ClassVar[str] = "alawad"

    #: registries (the paper: 2, LTR and KCR)
    n_registries: int = 2
    #: synthetic: cancer patients generated (one pathology report each, before prevalence thinning)
    patients: int = 20000
    #: synthetic label field: "subsite" (30 ICD-O-3 codes) or "primary_site" (6)
    label: str = "subsite"
    #: Dirichlet concentration of the registries' label prevalence (small = strong skew)
    concentration: float = 5.0
    #: abstracts: concentration of the label-skewed partition; cap on abstracts read (None: all)
    abstracts_concentration: float = 0.5
    abstracts_limit: int | None = None
    test_fraction: float = 0.3
    #: CNN sizes (Kim 2014 defaults; see deidlib.models.cnn)
    n_buckets: int = 2**15
    emb_dim: int = 300
    filters: int = 100
    dropout: float = 0.5
    max_len: int = 600
    #: optimisation (Adam); shared–private hands its shared layers on after visit_batches batches
    epochs: int = 10
    visit_batches: int = 1
    batch_size: int = 64
    lr: float = 1e-3
    #: weight λ of the shared encoder's adversarial term and the optional difference loss weight
    adv_weight: float = 1.0
    orth_weight: float = 0.0
    disc_hidden: int = 64
    #: the shared encoder's adversarial objective ("confusion" or "reversal") and the discriminator's lr scale
    adversary: str = "confusion"
    disc_lr_scale: float = 1.0
    #: classes with at least this many pooled training reports qualify as most/least represented
    min_support: int = 100
    n_seeds: int = 3
    n_resamples: int = 1000
    attack_epochs: int = 50
    #: TOST margin (F1) of "statistically indistinguishable from centralized"
    equivalence_margin: float = 0.03

    def check(self) -> None:
        if self.n_registries < 2:
            raise ValueError(f"alawad needs at least 2 registries, got {self.n_registries}")
        if self.label not in ("subsite", "primary_site"):
            raise ValueError(f"label must be 'subsite' or 'primary_site', got {self.label!r}")
        if min(self.epochs, self.visit_batches) < 1:
            raise ValueError(f"epochs and visit_batches must be >= 1, got {self.epochs} and {self.visit_batches}")
        if self.adversary not in ADVERSARIES:
            raise ValueError(f"adversary must be one of {', '.join(ADVERSARIES)}, got {self.adversary!r}")
        if not self.equivalence_margin > 0:
            raise ValueError(f"equivalence_margin must be > 0, got {self.equivalence_margin}")
        if min(self.patients, self.n_seeds, self.n_resamples, self.attack_epochs, self.batch_size) < 1:
            raise ValueError("patients, n_seeds, n_resamples, attack_epochs and batch_size must be >= 1")
        if self.min_support < 1:
            raise ValueError(f"min_support must be >= 1, got {self.min_support}")

    def cnn(self) -> CNNConfig:
        return CNNConfig(n_buckets=self.n_buckets, emb_dim=self.emb_dim, filters=self.filters,
                         dropout=self.dropout, max_len=self.max_len)

    def training(self, seed: int, adv_weight: float | None = None) -> RegistryTraining:
        return RegistryTraining(epochs=self.epochs, visit_batches=self.visit_batches, batch_size=self.batch_size, lr=self.lr,
                                adv_weight=self.adv_weight if adv_weight is None else adv_weight,
                                orth_weight=self.orth_weight, disc_hidden=self.disc_hidden, adversary=self.adversary,
                                disc_lr_scale=self.disc_lr_scale, seed=seed)


PROFILE_PARAMS: dict[str, AlawadParams] = profiles(AlawadParams, {
    "smoke": AlawadParams(n_registries=3, patients=500, n_buckets=2**12, emb_dim=16, filters=8, max_len=200,
                          epochs=2, batch_size=32, lr=2e-3, min_support=5, n_seeds=1, n_resamples=100,
                          attack_epochs=5, abstracts_limit=300),
    "cpu": AlawadParams(n_registries=3, patients=6000, n_buckets=2**14, emb_dim=64, filters=32, max_len=400,
                        epochs=10, batch_size=32, lr=5e-3, min_support=50, n_seeds=3, n_resamples=1000,
                        attack_epochs=30),
    "paper": AlawadParams(),
})


def params_for(profile: str, **overrides: Any) -> AlawadParams:
    """The profile's parameters with ``overrides`` (:meth:`StudyParams.resolve`)."""
    return AlawadParams.resolve(profile, **overrides)


# ----------------------------------------------------------------------------- data


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


# --------------------------------------------------------------------------- study


class AlawadResults(TypedDict):
    """What :func:`run_study` returns (JSON-able; the input of the tables and figures)."""

    study: str
    profile: str
    corpus: str
    params: dict[str, Any]  #: asdict(AlawadParams)
    seeds: list[int]
    approaches: list[str]
    label_names: list[str]
    data: list[dict[str, Any]]  #: per seed and registry: train/test reports, label counts, fingerprint
    scores: list[dict[str, Any]]  #: seed, approach, micro, macro, seconds
    per_class: list[dict[str, Any]]  #: seed, approach, class, train_count, test_count, f1, role
    significance: list[dict[str, Any]]  #: seed ("all" = pooled), a, b, metric, delta, p_bootstrap, mcnemar
    attack: list[dict[str, Any]]  #: seed, approach, attacker, accuracy, chance, majority, n_test
    uploads: list[dict[str, Any]]  #: seed, approach, registry, hand_offs, tensors, values, private_tensors, layers
    equivalence: list[dict[str, Any]]  #: seed, a, b, metric, delta, lo, hi, margin, p_tost, equivalent


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
    re-initialises every model); returns a JSON-able dict (see :class:`AlawadResults`).

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
    out: AlawadResults = {"study": "alawad", "profile": params.profile, "corpus": corpus, "params": asdict(params),
                          "seeds": seeds, "approaches": list(approaches), "label_names": [], "data": [],
                          "scores": [], "per_class": [], "significance": [], "attack": [], "uploads": [],
                          "equivalence": []}
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
        out["label_names"] = names
        train_counts, test_counts = label_counts(regs), label_counts(regs, "test")
        fp = _fingerprint(regs)
        for i, r in enumerate(regs):
            out["data"].append({"seed": seed, "registry": r.name, "train": len(r.train_texts),
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
        out["attack"].append(_attack_row(seed, "label_only", "most frequent registry of the true class",
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
                out["attack"].append(_attack_row(seed, approach, "fresh classifier, frozen features", a.accuracy,
                                                 chance, a.majority, a.n_test))
            else:
                w = params.adv_weight if approach == "shared_private" else 0.0
                run = train_shared_private(regs, cfg, params.training(seed, adv_weight=w))
                preds[approach] = _predictions(run.models, regs, cfg)
                feats, fr = shared_features(run, regs, cfg)
                a = registry_attack(feats, fr, epochs=params.attack_epochs, seed=seed)
                out["attack"].append(_attack_row(seed, approach, "fresh classifier, frozen features", a.accuracy,
                                                 chance, a.majority, a.n_test))
                out["attack"].append(_attack_row(seed, approach, "trained discriminator",
                                                 _discriminator_accuracy(run, feats, fr), chance, majority, len(fr)))
                for r in regs:
                    recs = [rec for rec in run.uploads if rec.registry == r.name]
                    handed = sorted({n for rec in recs for n in rec.names})
                    out["uploads"].append({
                        "seed": seed, "approach": approach, "registry": r.name, "hand_offs": len(recs),
                        "tensors": len(handed), "values": max((rec.n_values for rec in recs), default=0),
                        "private_tensors": sum(not n.startswith(SHARED_PREFIXES) for n in handed),
                        "layers": " ".join(sorted({n.split(".")[0] for n in handed}))})
            seconds = time.perf_counter() - t0
            f1 = f1_micro_macro(y, preds[approach])
            out["scores"].append({"seed": seed, "approach": approach, **f1, "seconds": seconds})
            classes = [c for c in range(len(names)) if test_counts[:, c].sum() > 0]
            pc = per_class_f1(y, preds[approach], classes)
            for c in classes:
                role = ("most" if ext and c == ext[0] else "least" if ext and c == ext[1] else "")
                out["per_class"].append({"seed": seed, "approach": approach, "class": names[c],
                                         "train_count": int(pooled_train[c]),
                                         "test_count": int(test_counts[:, c].sum()), "f1": pc[c], "role": role})
            pooled[approach].append(preds[approach])
            if bar is not None:
                bar.update(1)
        pooled_y.append(y)
        out["significance"] += _significance_rows(seed, y, preds, params.n_resamples, seed)
        out["equivalence"] += _equivalence_rows(seed, y, preds, params, seed)
    if len(seeds) > 1:
        y_all = np.concatenate(pooled_y)
        out["significance"] += _significance_rows("all", y_all, {a: np.concatenate(p) for a, p in pooled.items()},
                                                  params.n_resamples, seeds[0])
        out["equivalence"] += _equivalence_rows("all", y_all, {a: np.concatenate(p) for a, p in pooled.items()},
                                                params, seeds[0])
    if bar is not None:
        bar.close()
    return out


# ------------------------------------------------------------------------- tables


def scale_note(results: dict[str, Any]) -> str:
    """One line with the scale of a run: reports, registries, classes, epochs, seeds."""
    d = pd.DataFrame(results["data"])
    per = d.groupby("seed")[["train", "test"]].sum().mean()
    p = results["params"]
    return (f"{results['corpus']}, profile {results['profile']}: {p['n_registries']} registries, "
            f"~{per['train']:.0f} train / {per['test']:.0f} test reports per seed, {len(results['label_names'])} "
            f"classes, {p['epochs']} epochs, hand-off every {p['visit_batches']} batch(es), seeds {results['seeds']}")


def f1_table(results: dict[str, Any]) -> pd.DataFrame:
    """Micro/macro F1 per approach: mean, min and max over seeds (and mean seconds)."""
    df = pd.DataFrame(results["scores"])
    g = df.groupby("approach", sort=False)
    t = pd.DataFrame({"micro_mean": g.micro.mean(), "micro_min": g.micro.min(), "micro_max": g.micro.max(),
                      "macro_mean": g.macro.mean(), "macro_min": g.macro.min(), "macro_max": g.macro.max(),
                      "seconds": g.seconds.mean(), "n_seeds": g.size()})
    return t.reindex([a for a in results["approaches"]])


def significance_table(results: dict[str, Any]) -> pd.DataFrame:
    """Δ = F1(b) − F1(a), paired-bootstrap and McNemar p-values, per seed and pooled (seed ``all``)."""
    return pd.DataFrame(results["significance"])


def equivalence_table(results: dict[str, Any]) -> pd.DataFrame:
    """TOST of F1(b) − F1(a) within ± ``equivalence_margin``: δ, its 90 % bootstrap interval,
    p and the verdict (equivalent when p < 0.05), per seed and pooled (seed ``all``)."""
    return pd.DataFrame(results.get("equivalence", []))


def discriminator_check(results: dict[str, Any], tolerance: float = 0.02) -> pd.DataFrame:
    """Per shared–private approach: the trained discriminator's registry accuracy (mean over
    seeds) next to the majority rate, with ``stuck`` = it does not beat the majority rate by
    ``tolerance``. Stuck in the no-adversary control is a bug signal (the discriminator
    should learn the registry when nothing fights it); stuck with the adversary on is what
    the adversary aims at only if the fresh attacker is also near the majority rate."""
    df = pd.DataFrame(results["attack"])
    if df.empty:
        return pd.DataFrame(columns=["approach", "discriminator", "fresh_attacker", "majority", "stuck"])
    rows = []
    floor = df[df.approach == "label_only"].accuracy.mean()
    for a, g in df.groupby("approach", sort=False):
        disc = g[g.attacker == "trained discriminator"]
        if disc.empty:
            continue
        fresh = g[g.attacker != "trained discriminator"]
        rows.append({"approach": a, "discriminator": disc.accuracy.mean(), "fresh_attacker": fresh.accuracy.mean(),
                     "majority": disc.majority.mean(), "class_label_floor": floor,
                     "stuck": bool(disc.accuracy.mean() <= disc.majority.mean() + tolerance)})
    return pd.DataFrame(rows)


def per_class_table(results: dict[str, Any], roles_only: bool = True) -> pd.DataFrame:
    """Per-class F1 (mean, min, max over seeds) of the most/least represented classes
    (``roles_only``) or of every class, one column block per approach."""
    df = pd.DataFrame(results["per_class"])
    if roles_only:
        df = df[df.role != ""]
    if df.empty:
        return pd.DataFrame(columns=["seed", "role", "class", "train_count"])
    wide = df.pivot_table(index=["seed", "role", "class", "train_count", "test_count"], columns="approach",
                          values="f1").reset_index()
    wide.columns.name = None
    return wide[["seed", "role", "class", "train_count", "test_count",
                 *[a for a in results["approaches"] if a in wide.columns]]]


def class_size_table(results: dict[str, Any], bins: int = 3) -> pd.DataFrame:
    """Mean per-class F1 of each approach over classes grouped by pooled training count
    (per seed: ``bins`` equal-count groups, rarest first), with each approach's gain over
    single-registry: the highlight's "gains largest on rare classes", measured."""
    df = pd.DataFrame(results["per_class"])
    if df.empty:
        return pd.DataFrame()
    base = df[df.approach == df.approach.iloc[0]][["seed", "class", "train_count"]].drop_duplicates()
    base["size_group"] = base.groupby("seed").train_count.transform(
        lambda c: pd.qcut(c.rank(method="first"), bins, labels=False)).astype(int)
    df = df.merge(base[["seed", "class", "size_group"]], on=["seed", "class"])
    t = df.pivot_table(index="size_group", columns="approach", values="f1", aggfunc="mean")
    t = t[[a for a in results["approaches"] if a in t.columns]]
    counts = df.groupby("size_group").train_count.agg(["min", "max"])
    t.insert(0, "train_count_range", [f"{counts.loc[g, 'min']}-{counts.loc[g, 'max']}" for g in t.index])
    if "single" in t.columns:
        for a in ("centralized", "shared_private", "shared_private_no_adv"):
            if a in t.columns:
                t[f"{a}_gain"] = t[a] - t["single"]
    names = {0: "rarest", bins - 1: "most frequent"}
    t.index = [f"{names.get(g, 'middle')} {g + 1}/{bins}" for g in t.index]
    t.index.name = "classes"
    t.columns.name = None
    return t


def attack_table(results: dict[str, Any]) -> pd.DataFrame:
    """Registry-identification accuracy (mean, min, max over seeds) next to chance and majority."""
    df = pd.DataFrame(results["attack"])
    if df.empty:
        return pd.DataFrame(columns=["approach", "attacker", "accuracy_mean", "chance", "majority"])
    g = df.groupby(["approach", "attacker"], sort=False)
    return pd.DataFrame({"accuracy_mean": g.accuracy.mean(), "accuracy_min": g.accuracy.min(),
                         "accuracy_max": g.accuracy.max(), "chance": g.chance.mean(), "majority": g.majority.mean(),
                         "n_test": g.n_test.mean()}).reset_index()


def uploads_table(results: dict[str, Any], seed: int | None = None) -> pd.DataFrame:
    """What each registry handed on, over all its hand-offs (first seed unless ``seed``);
    private_tensors must be 0."""
    df = pd.DataFrame(results["uploads"])
    if df.empty:
        return df
    return df[df.seed == (results["seeds"][0] if seed is None else seed)].reset_index(drop=True)


def registries_table(results: dict[str, Any]) -> pd.DataFrame:
    """Per seed and registry: train/test reports, classes present, the most frequent class and
    its share (how the registries differ in size and label prevalence)."""
    names = results["label_names"]
    rows = []
    for d in results["data"]:
        c = np.asarray(d["train_counts"])
        top = int(np.argmax(c))
        rows.append({"seed": d["seed"], "registry": d["registry"], "train": d["train"], "test": d["test"],
                     "classes_in_train": int((c > 0).sum()), "classes_with_5plus": int((c >= 5).sum()),
                     "top_class": names[top], "top_share": float(c[top] / max(1, c.sum()))})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------ figures


def _errorbar(ax, x, mean, lo, hi, color, label, width):
    # min–max over seeds; F1 and accuracies are >= 0, so the bars never go below 0
    ax.bar(x, mean, width, color=color, label=label,
           yerr=np.vstack([np.asarray(mean) - np.asarray(lo), np.asarray(hi) - np.asarray(mean)]), capsize=3)


@style()
def figure_f1(results: dict[str, Any]):
    """Micro and macro F1 per approach (bars: mean over seeds; error bars: min–max)."""
    t = f1_table(results)
    fig, ax = plt.subplots(figsize=(9.5, 4))
    x = np.arange(2)
    w = 0.8 / len(t)
    for i, (a, r) in enumerate(t.iterrows()):
        _errorbar(ax, x + (i - (len(t) - 1) / 2) * w, [r.micro_mean, r.macro_mean], [r.micro_min, r.macro_min],
                  [r.micro_max, r.macro_max], COLORS[a], LABELS[a], w)
    ax.set_xticks(x, ["micro F1", "macro F1"])
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("F1 on all registries' test reports")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)  # beside the bars, never on one
    ax.set_title(f"alawad: {scale_note(results)}\nbars: mean over seeds, error bars: min–max", fontsize=8)
    fig.tight_layout()
    return fig


@style()
def figure_per_class(results: dict[str, Any]):
    """Left: F1 of the most/least represented classes (≥ min_support training reports) per
    approach (mean, min–max over seeds). Right: every class's F1 gain over single-registry
    against its pooled training count (mean over seeds)."""
    df = pd.DataFrame(results["per_class"])
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4))
    roles = df[df.role != ""]
    if roles.empty:
        ax.text(0.5, 0.5, f"no class with >= {results['params']['min_support']} training reports",
                ha="center", va="center", transform=ax.transAxes)
    else:
        approaches = [a for a in results["approaches"] if a in set(roles.approach)]
        w = 0.8 / len(approaches)
        for i, a in enumerate(approaches):
            g = roles[roles.approach == a].groupby("role").f1
            order = [r for r in ("most", "least") if r in g.groups]
            _errorbar(ax, np.arange(len(order)) + (i - (len(approaches) - 1) / 2) * w, g.mean()[order],
                      g.min()[order], g.max()[order], COLORS[a], LABELS[a], w)
        classes = roles.groupby("role")["class"].agg(lambda s: ", ".join(sorted(set(s))))
        counts = roles.groupby("role").train_count.agg(["min", "max"])
        order = [r for r in ("most", "least") if r in classes.index]
        ax.set_xticks(np.arange(len(order)), [f"{r} represented\n{classes[r]}\n(train {counts.loc[r, 'min']}"
                                              f"–{counts.loc[r, 'max']})" for r in order], fontsize=7)
        ax.set_ylim(0, 1.05)
        ax.legend(fontsize=7)
    ax.set_ylabel("per-class F1")
    ax.set_title(f"classes with >= {results['params']['min_support']} training reports", fontsize=9)
    mean = df.groupby(["approach", "class"]).agg(f1=("f1", "mean"), n=("train_count", "mean")).reset_index()
    if "single" in set(mean.approach):
        base = mean[mean.approach == "single"].set_index("class").f1
        for a in ("centralized", "shared_private"):
            m = mean[mean.approach == a].set_index("class")
            if m.empty:
                continue
            bx.scatter(m.n, m.f1 - base.reindex(m.index), color=COLORS[a], label=f"{LABELS[a]} − single", s=18)
        bx.axhline(0, color="grey", lw=0.8)
        bx.set_xscale("log")
        bx.legend(fontsize=7)
    bx.set_xlabel("pooled training reports of the class (mean over seeds)")
    bx.set_ylabel("F1 gain over single-registry")
    bx.set_title("per-class gain vs class size", fontsize=9)
    fig.suptitle(f"alawad: {scale_note(results)}", fontsize=8)
    fig.tight_layout()
    return fig


@style()
def figure_attack(results: dict[str, Any]):
    """Registry-identification accuracy on the shared representation vs chance and majority."""
    t = attack_table(results)
    fig, ax = plt.subplots(figsize=(max(7.5, 1.8 * len(t)), 4.4))
    if not t.empty:  # tick labels wrapped to the bar width, so that neighbours never overlap
        labels = [textwrap.fill(LABELS[a], 18) + "\n" + textwrap.fill(att, 18) for a, att in zip(t.approach, t.attacker)]
        x = np.arange(len(t))
        _errorbar(ax, x, t.accuracy_mean, t.accuracy_min, t.accuracy_max, [COLORS[a] for a in t.approach], None, 0.6)
        ax.axhline(t.chance.iloc[0], color="grey", ls="--", lw=1, label=f"chance 1/{results['params']['n_registries']}")
        ax.axhline(t.majority.max(), color="grey", ls=":", lw=1, label="majority registry")
        ax.set_xticks(x, labels, fontsize=7)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("registry identified (test half)")
    ax.set_title(f"registry attack — {scale_note(results)}\nmean over seeds, error bars min–max", fontsize=8)
    fig.tight_layout()
    return fig
