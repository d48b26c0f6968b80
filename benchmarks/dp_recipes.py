"""DP-SGD recipes on real notes: binary-token F1 at ε ∈ {1, 2, 4, 8} (and ∞: the
same lots and optimiser without noise or clipping) for each recipe of
:mod:`deidlib.studies.dp_recipes`, per seed and as medians, beside the thesis' points
(F1 80.5 at ε 343, 79.6 at ε 8.41 on the nursing notes, sentence unit, δ 1e-5).
A recipe with public pre-training (``synthetic_minilm``) also scores ε 0, its public model
alone (``--epsilons 0``: that row only, no private note trained on). The summary gives per ε
the mean F1 over seeds with its 95 % t interval and the paired (same-seed) difference to ε 0
(:func:`deidlib.studies.dp_recipes.curve_summary`).

    python benchmarks/dp_recipes.py                                   # minilm, nursing notes, seed 0
    python benchmarks/dp_recipes.py --recipes minilm glove --seeds 0 1 2
    python benchmarks/dp_recipes.py --recipes minilm --unit patient --epsilons 8
    python benchmarks/dp_recipes.py --corpus synthetic --profile cpu
    python benchmarks/dp_recipes.py -r minilm -p batch_size=2048 -p epochs=20
    python benchmarks/dp_recipes.py -r synthetic_minilm --epsilons 1 8 --seeds 0 --out runs/dp_s0.json
    python benchmarks/dp_recipes.py --rows runs/dp_s*.json                # summary of saved rows, no training

The corpus' own train/test split (nursing notes: by patient, 1,559 / 486 notes); ε is per
sentence (or per patient with ``--unit patient``), δ = 1e-5, prv accountant; lots and noise
from seeded generators (study runs: the ledger says the guarantee does not hold against
anyone holding the seed). Nothing is written unless ``--out`` is given (a JSON of the rows:
aggregate scores only; keep results on real notes out of the repository).
"""

from __future__ import annotations

import argparse
import json
import math
import time


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-r", "--recipes", nargs="+", default=["minilm"])
    ap.add_argument("--corpus", default="physionet", choices=("physionet", "synthetic", "i2b2"))
    ap.add_argument("--profile", default="cpu", choices=("smoke", "cpu", "paper"), help="synthetic corpus size")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 2.0, 4.0, 8.0, math.inf],
                    help="target ε per sentence (or patient); inf: no noise; 0: the public model alone "
                         "(recipes with public pre-training add it anyway)")
    ap.add_argument("--unit", choices=("sentence", "patient"), default=None, help="privacy unit (default: the recipe's)")
    ap.add_argument("--dev", action="store_true", help="score the dev split too")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("-p", dest="params", action="append", default=[], metavar="NAME=VALUE",
                    help="override a Recipe field (Python literals), e.g. -p batch_size=2048 -p 'tagger={\"hidden\": 64}'")
    ap.add_argument("--out", default=None, help="write the rows as JSON here")
    ap.add_argument("--rows", nargs="+", default=None, metavar="JSON",
                    help="summarise rows saved with --out (several runs, e.g. one per seed) instead of training")
    args = ap.parse_args(argv)

    import pandas as pd
    import torch

    if args.rows:
        try:
            frames = []
            for f in args.rows:
                with open(f) as fh:
                    frames.append(pd.DataFrame(json.load(fh)))
            df = pd.concat(frames, ignore_index=True)
        except (OSError, ValueError) as e:
            raise SystemExit(f"cannot read rows: {e}") from None
        df = df.drop_duplicates(["recipe", "unit", "seed", "target_epsilon"])  # ε 0 is in every run of a seed
        print_summary(df)
        return 0
    if any(e < 0 or math.isnan(e) for e in args.epsilons):
        raise SystemExit(f"--epsilons must be ≥ 0 (0: the public model alone, inf: no noise), got {args.epsilons}")

    from deidlib.commands.reproduce import parse_params
    from deidlib.datasets import load_corpus
    from deidlib.studies.dp_recipes import RECIPES, recipe_curve, with_overrides

    torch.set_num_threads(args.threads)
    try:
        overrides = parse_params(args.params)
    except ValueError as e:
        raise SystemExit(str(e)) from None
    unknown = [r for r in args.recipes if r not in RECIPES]
    if unknown:
        raise SystemExit(f"unknown recipe(s) {unknown}; choose from {', '.join(RECIPES)}")
    sp = load_corpus(args.corpus, data_dir=args.data_dir, profile=args.profile, seed=0)
    print(f"dp_recipes: corpus {args.corpus} ({len(sp.train)} train / {len(sp.test)} test documents), "
          f"seeds {args.seeds}, ε {args.epsilons}, threads {args.threads}")
    frames = []
    for name in args.recipes:
        recipe = with_overrides(RECIPES[name], **overrides, **({"unit": args.unit} if args.unit else {}))
        print(f"\n== {recipe.name}: {recipe.note}\n   {recipe}", flush=True)
        for seed in args.seeds:  # one seed at a time: its rows are printed (and saved) as soon as they exist
            t0 = time.perf_counter()
            try:
                d = recipe_curve(recipe, list(sp.train), list(sp.test), epsilons=args.epsilons, seeds=[seed],
                                 dev_docs=list(sp.dev) if args.dev else None)
            except ValueError as e:
                raise SystemExit(str(e)) from None
            cols = [c for c in ("seed", "target_epsilon", "epsilon", "noise_multiplier", "steps", "lot", "units",
                                "test_precision", "test_recall", "test_f1", "dev_f1", "train_seconds") if c in d]
            print(d[cols].round(4).to_string(index=False))
            print(f"   ({time.perf_counter() - t0:.0f} s)", flush=True)
            frames.append(d)
            if args.out:
                with open(args.out, "w") as fh:
                    rows = pd.concat(frames, ignore_index=True)
                    # ε = ∞ stays Infinity (pandas' to_json would write null); numpy scalars as Python numbers
                    json.dump(rows.to_dict(orient="records"), fh, indent=1, default=lambda v: v.item())
    print_summary(pd.concat(frames, ignore_index=True))
    return 0


def print_summary(df) -> None:
    """Medians over seeds, then means with 95 % t intervals and the paired difference to ε 0."""
    from deidlib.studies.ahmed_dp.claims import THESIS_POINTS
    from deidlib.studies.dp_recipes import curve_summary

    med = df.groupby(["recipe", "unit", "target_epsilon"]).agg(
        runs=("test_f1", "size"), epsilon=("epsilon", "median"), precision=("test_precision", "median"),
        recall=("test_recall", "median"), f1=("test_f1", "median"), f1_min=("test_f1", "min"),
        f1_max=("test_f1", "max"), seconds=("train_seconds", "median"))
    print("\nmedians over seeds (test split):")
    print(med.round(4).to_string())
    summ = curve_summary(df)
    print("\nmeans over seeds (test split) with 95 % t intervals; d: paired difference to the same seed's "
          "ε 0 (public model alone), verdict 'found': DP fine-tuning beat it")
    print(summ.round(4).to_string(index=False))
    print("thesis (nursing notes, sentence unit): " + ", ".join(f"F1 {p['f1']:.3f} at ε {p['epsilon']:g}"
                                                             for p in THESIS_POINTS))


if __name__ == "__main__":
    raise SystemExit(main())
