"""Tables of the alawad study (Alawad et al. 2020): F1 per approach, significance and
equivalence tests, the discriminator check, per-class F1, the registry attacks, what left each
registry, and each registry's data."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["scale_note", "f1_table", "significance_table", "equivalence_table", "discriminator_check",
           "per_class_table", "class_size_table", "attack_table", "uploads_table", "registries_table"]


def scale_note(results: Mapping[str, Any]) -> str:
    """One line with the scale of a run: reports, registries, classes, epochs, seeds."""
    d = pd.DataFrame(results["data"])
    per = d.groupby("seed")[["train", "test"]].sum().mean()
    p = results["params"]
    return (f"{results['corpus']}, profile {results['profile']}: {p['n_registries']} registries, "
            f"~{per['train']:.0f} train / {per['test']:.0f} test reports per seed, {len(results['label_names'])} "
            f"classes, {p['epochs']} epochs, hand-off every {p['visit_batches']} batch(es), seeds {results['seeds']}")


def f1_table(results: Mapping[str, Any]) -> pd.DataFrame:
    """Micro/macro F1 per approach: mean, min and max over seeds (and mean seconds)."""
    df = pd.DataFrame(results["scores"])
    g = df.groupby("approach", sort=False)
    t = pd.DataFrame({"micro_mean": g.micro.mean(), "micro_min": g.micro.min(), "micro_max": g.micro.max(),
                      "macro_mean": g.macro.mean(), "macro_min": g.macro.min(), "macro_max": g.macro.max(),
                      "seconds": g.seconds.mean(), "n_seeds": g.size()})
    return t.reindex([a for a in results["approaches"]])


def significance_table(results: Mapping[str, Any]) -> pd.DataFrame:
    """Δ = F1(b) − F1(a), paired-bootstrap and McNemar p-values, per seed and pooled (seed ``all``)."""
    return pd.DataFrame(results["significance"])


def equivalence_table(results: Mapping[str, Any]) -> pd.DataFrame:
    """TOST of F1(b) − F1(a) within ± ``equivalence_margin``: δ, its 90 % bootstrap interval,
    p and the verdict (equivalent when p < 0.05), per seed and pooled (seed ``all``)."""
    return pd.DataFrame(results.get("equivalence", []))


def discriminator_check(results: Mapping[str, Any], tolerance: float = 0.02) -> pd.DataFrame:
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


def per_class_table(results: Mapping[str, Any], roles_only: bool = True) -> pd.DataFrame:
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


def class_size_table(results: Mapping[str, Any], bins: int = 3) -> pd.DataFrame:
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


def attack_table(results: Mapping[str, Any]) -> pd.DataFrame:
    """Registry-identification accuracy (mean, min, max over seeds) next to chance and majority."""
    df = pd.DataFrame(results["attack"])
    if df.empty:
        return pd.DataFrame(columns=["approach", "attacker", "accuracy_mean", "chance", "majority"])
    g = df.groupby(["approach", "attacker"], sort=False)
    return pd.DataFrame({"accuracy_mean": g.accuracy.mean(), "accuracy_min": g.accuracy.min(),
                         "accuracy_max": g.accuracy.max(), "chance": g.chance.mean(), "majority": g.majority.mean(),
                         "n_test": g.n_test.mean()}).reset_index()


def uploads_table(results: Mapping[str, Any], seed: int | None = None) -> pd.DataFrame:
    """What each registry handed on, over all its hand-offs (first seed unless ``seed``);
    private_tensors must be 0."""
    df = pd.DataFrame(results["uploads"])
    if df.empty:
        return df
    return df[df.seed == (results["seeds"][0] if seed is None else seed)].reset_index(drop=True)


def registries_table(results: Mapping[str, Any]) -> pd.DataFrame:
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
