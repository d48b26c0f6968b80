"""DP-SGD recipes on real notes: binary-token F1 at ε ∈ {1, 2, 4, 8} (and ∞: the
same lots and optimiser without noise or clipping) for each recipe of
:mod:`deidlib.studies.dp_recipes`, per seed and as medians, beside the thesis' points
(F1 80.5 at ε 343, 79.6 at ε 8.41 on the nursing notes, sentence unit, δ 1e-5).

    python benchmarks/dp_recipes.py                                   # minilm, nursing notes, seed 0
    python benchmarks/dp_recipes.py --recipes minilm glove --seeds 0 1 2
    python benchmarks/dp_recipes.py --recipes minilm --unit patient --epsilons 8
    python benchmarks/dp_recipes.py --corpus synthetic --profile cpu
    python benchmarks/dp_recipes.py -r minilm -p batch_size=2048 -p epochs=20

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
    ap.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 2.0, 4.0, 8.0, math.inf])
    ap.add_argument("--unit", choices=("sentence", "patient"), default=None, help="privacy unit (default: the recipe's)")
    ap.add_argument("--dev", action="store_true", help="score the dev split too")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("-p", dest="params", action="append", default=[], metavar="NAME=VALUE",
                    help="override a Recipe field (Python literals), e.g. -p batch_size=2048 -p 'tagger={\"hidden\": 64}'")
    ap.add_argument("--out", default=None, help="write the rows as JSON here")
    args = ap.parse_args(argv)

    import pandas as pd
    import torch

    from deidlib.commands.reproduce import parse_params
    from deidlib.datasets import load_corpus
    from deidlib.studies.dp_recipes import RECIPES, THESIS_POINTS, recipe_curve, with_overrides

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
        t0 = time.perf_counter()
        df = recipe_curve(recipe, list(sp.train), list(sp.test), epsilons=args.epsilons, seeds=args.seeds,
                          dev_docs=list(sp.dev) if args.dev else None)
        cols = [c for c in ("seed", "target_epsilon", "epsilon", "noise_multiplier", "steps", "lot", "units",
                            "test_precision", "test_recall", "test_f1", "dev_f1", "train_seconds") if c in df]
        print(df[cols].round(4).to_string(index=False))
        print(f"   ({time.perf_counter() - t0:.0f} s)", flush=True)
        frames.append(df)
    df = pd.concat(frames, ignore_index=True)
    med = df.groupby(["recipe", "unit", "target_epsilon"]).agg(
        runs=("test_f1", "size"), epsilon=("epsilon", "median"), precision=("test_precision", "median"),
        recall=("test_recall", "median"), f1=("test_f1", "median"), f1_min=("test_f1", "min"),
        f1_max=("test_f1", "max"), seconds=("train_seconds", "median"))
    print("\nmedians over seeds (test split):")
    print(med.round(4).to_string())
    print("thesis (nursing notes, sentence unit): " + ", ".join(f"F1 {p['f1']:.3f} at ε {p['epsilon']:g}"
                                                             for p in THESIS_POINTS))
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(json.loads(df.to_json(orient="records")), fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
