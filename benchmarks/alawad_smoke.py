"""Brief measurement for the alawad library (Alawad et al. 2020 highlight) on a small synthetic
registry set, one thread, about two minutes; notebook 07 (deidlib.studies.alawad) does the study.

Single-registry vs centralized vs shared-private (with the adversary, and with adv_weight 0 as
the no-adversary control) multi-window CNNs: micro/macro F1 over all registries' test
reports, per-class F1 of the most/least represented classes with >= --min-support training
reports, paired-bootstrap p-values, and the registry-identification attack on the frozen
representation each approach shares (shared encoder; for centralized, its whole encoder).

    OMP_NUM_THREADS=1 python benchmarks/alawad_smoke.py
    OMP_NUM_THREADS=1 python benchmarks/alawad_smoke.py --abstracts   # medical_abstracts_tc instead
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from deidlib.collaborative.registries import abstract_registries, label_counts, synthetic_registries
from deidlib.collaborative.registry_eval import (
    extreme_classes,
    f1_micro_macro,
    paired_bootstrap,
    per_class_f1,
    registry_attack,
)
from deidlib.collaborative.shared_private import (
    CNNConfig,
    RegistryTraining,
    encode,
    predict,
    shared_features,
    train_centralized,
    train_shared_private,
    train_single_registry,
)
from deidlib.models.cnn import pad_ids


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--registries", type=int, default=3)
    ap.add_argument("--patients", type=int, default=1500)
    ap.add_argument("--label", default="subsite")
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--min-support", type=int, default=30)
    ap.add_argument("--abstracts", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(1)
    t0 = time.time()
    if args.abstracts:
        regs = abstract_registries(args.registries, seed=args.seed, limit=args.patients)
    else:
        regs = synthetic_registries(args.registries, args.patients, seed=args.seed, label=args.label)
    counts = label_counts(regs)
    print(f"data {time.time() - t0:.1f}s; train reports per registry {counts.sum(1).tolist()}, "
          f"test {label_counts(regs, 'test').sum(1).tolist()}, classes {counts.shape[1]}")
    cfg = CNNConfig(n_buckets=2**14, emb_dim=64, filters=32, max_len=400)
    tr = RegistryTraining(epochs=args.epochs, batch_size=32, lr=2e-3, adv_weight=1.0, seed=args.seed)
    y = np.concatenate([r.test_labels for r in regs])
    preds, attack = {}, {}

    t = time.time()
    singles = train_single_registry(regs, cfg, tr)
    preds["single"] = np.concatenate([predict(m, encode(r.test_texts, cfg)) for m, r in zip(singles, regs)])
    print(f"single-registry {time.time() - t:.1f}s")
    t = time.time()
    cen = train_centralized(regs, cfg, tr)
    preds["centralized"] = np.concatenate([predict(cen, encode(r.test_texts, cfg)) for r in regs])
    with torch.no_grad():
        cen.eval()
        feats = np.concatenate([cen.features(pad_ids(encode(r.test_texts, cfg), 5)).numpy() for r in regs])
    regid = np.concatenate([np.full(len(r.test_texts), i) for i, r in enumerate(regs)])
    attack["centralized"] = registry_attack(feats, regid, epochs=30, seed=args.seed)
    print(f"centralized {time.time() - t:.1f}s")
    for name, w in (("shared-private", tr.adv_weight), ("shared-private, no adversary", 0.0)):
        t = time.time()
        run = train_shared_private(regs, cfg, RegistryTraining(**{**tr.__dict__, "adv_weight": w}))
        preds[name] = np.concatenate([predict(m, encode(r.test_texts, cfg)) for m, r in zip(run.models, regs)])
        f, g = shared_features(run, regs, cfg)
        attack[name] = registry_attack(f, g, epochs=30, seed=args.seed)
        print(f"{name} {time.time() - t:.1f}s; {len(run.uploads)} hand-offs of {run.uploads[0].n_values} values "
              f"in {len(run.uploads[0].names)} tensors ({', '.join(sorted({n.split('.')[0] for n in run.uploads[0].names}))})")

    ext = extreme_classes(counts.sum(0), args.min_support)
    names = regs[0].label_names
    print(f"\nmost/least represented with >= {args.min_support} training reports: "
          + (f"{names[ext[0]]} ({counts.sum(0)[ext[0]]}), {names[ext[1]]} ({counts.sum(0)[ext[1]]})" if ext else "none"))
    for k, p in preds.items():
        f1 = f1_micro_macro(y, p)
        pc = per_class_f1(y, p, ext) if ext else {}
        a = attack.get(k)
        att = f"; attack {a.accuracy:.3f} (chance {a.chance:.3f}, majority {a.majority:.3f})" if a else ""
        print(f"{k:30s} micro {f1['micro']:.3f} macro {f1['macro']:.3f}; per-class "
              + ", ".join(f"{names[c]} {v:.3f}" for c, v in pc.items()) + att)
    for a, b in (("single", "shared-private"), ("centralized", "shared-private")):
        for metric in ("micro", "macro"):
            d, p = paired_bootstrap(y, preds[a], preds[b], metric=metric, n_resamples=1000, seed=args.seed)
            print(f"{b} - {a} {metric} F1: {d:+.3f}, paired bootstrap p = {p:.3f}")
    print(f"total {time.time() - t0:.0f}s")


if __name__ == "__main__":
    main()
