"""Per-sentence gradients of the frozen-encoder tagger: ``vectorized`` (one
``torch.func.vmap`` pass per chunk of the lot) against ``micro`` (one forward/backward per
sentence), side by side on the same lots.

The tagger is the ``minilm`` DP recipe's (frozen all-MiniLM-L6-v2, layer 3, casing, conv head,
CRF), or with ``--head gru`` the same with a BiGRU 64 head (the ``synthetic_minilm`` recipe's); the encoder's vectors are cached before timing (as in ``train_recipe``), so the times are
those of the DP steps. Each repeat times every lot with both methods (a full ``dp_step``: clip,
noise σ = 1, Adam step); printed: median seconds per step and the ratio of the medians, and the
largest difference between the two methods' clipped sums on the first lot (they are exact).

    python benchmarks/dp_vectorized.py                       # lots of 256, 3 lots x 3 repeats
    python benchmarks/dp_vectorized.py --batch-size 1024 --threads 2
    python benchmarks/dp_vectorized.py --head gru --threads 1
"""

from __future__ import annotations

import argparse
import random
import statistics
import time


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--lots", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--patients", type=int, default=150, help="synthetic corpus size")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--head", choices=("conv", "gru"), default="conv")
    args = ap.parse_args(argv)

    import torch

    from deidlib.datasets import load_corpus
    from deidlib.privacy.gradients import _micro_clipped_sum, _vectorized_clipped_sum, dp_step
    from deidlib.studies.dp_recipes import RECIPES, build_recipe_tagger, with_overrides
    from deidlib.training.loop import make_optimizer

    torch.set_num_threads(args.threads)
    sp = load_corpus("synthetic", profile="cpu", patients=args.patients, seed=0)
    recipe = RECIPES["minilm"]
    if args.head == "gru":
        recipe = with_overrides(recipe, tagger={"head": "gru", "hidden": 64})
    sents, tagger = build_recipe_tagger(recipe, sp.train)
    t0 = time.perf_counter()
    tagger.precompute(sents)
    print(f"{len(sents)} sentences encoded in {time.perf_counter() - t0:.1f} s; head {recipe.tagger}")
    rng = random.Random(0)
    lots = [rng.sample(range(len(sents)), args.batch_size) for _ in range(args.lots)]
    batches = [tagger.featurizer.encode([sents[i].words for i in lot], [sents[i].tags for i in lot]) for lot in lots]
    tagger.eval()
    _, a, _ = _micro_clipped_sum(tagger, batches[0], [[i] for i in range(args.batch_size)], 1.0)
    _, b, _ = _vectorized_clipped_sum(tagger, batches[0], [[i] for i in range(args.batch_size)], 1.0)
    diff = max(float((x - y).abs().max()) for x, y in zip(a, b))
    tagger.train()
    opt = make_optimizer(tagger.parameters(), "adam", 1e-3)
    times: dict[str, list[float]] = {"micro": [], "vectorized": []}
    for _ in range(args.repeats):
        for batch in batches:
            for method in times:
                t = time.perf_counter()
                dp_step(tagger, batch, opt, max_grad_norm=1.0, noise_multiplier=1.0, denominator=args.batch_size,
                        method=method)
                times[method].append(time.perf_counter() - t)
    med = {m: statistics.median(v) for m, v in times.items()}
    print(f"lot {args.batch_size}, {args.lots} lots x {args.repeats} repeats, {args.threads} threads")
    for m, v in med.items():
        print(f"  {m:>10}: median {v:.3f} s/step  (min {min(times[m]):.3f}, max {max(times[m]):.3f})")
    print(f"  micro / vectorized = {med['micro'] / med['vectorized']:.1f}x; largest |difference| of the clipped "
          f"sums {diff:.2e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
