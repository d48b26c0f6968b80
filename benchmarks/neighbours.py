"""Time of cosine nearest-neighbour queries over GloVe 6B (400,000 words × 50 d) for the
friedrich pseudonymization (section 4), N = 1,000 by default.

Times, on one thread, (1) building the index (normalising the memory-mapped matrix), (2) one
cold query for N neighbours, (3) a batched warm-up of Q distinct words (``NeighbourIndex.warm``:
blocks of 64 queries, one matrix product and one ``torch.topk`` each), per word, against a
naive reference (one query at a time, a full ``argsort`` of the 400k similarities in NumPy),
and (4) a cached repeat. Medians of ``--repeats``. Needs ``pip install 'deidlib[glove]'``.

    python benchmarks/neighbours.py                    # N = 1000, 256 query words
    python benchmarks/neighbours.py --n 100 --queries 1024
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch

from deidlib.embeddings.neighbours import NeighbourIndex
from deidlib.embeddings.public import load_glove


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--queries", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    torch.set_num_threads(1)
    g = load_glove()
    words = [g.words[i] for i in range(1000, 1000 + args.queries)]

    t0 = time.perf_counter()
    index = NeighbourIndex(g)
    build = time.perf_counter() - t0

    cold, batched, naive, cached = [], [], [], []
    for r in range(args.repeats):
        index._cache.clear()
        t0 = time.perf_counter()
        index.nearest(words[r], args.n)
        cold.append(time.perf_counter() - t0)
        index._cache.clear()
        t0 = time.perf_counter()
        index.warm(words, args.n)
        batched.append((time.perf_counter() - t0) / len(words))
        t0 = time.perf_counter()
        for w in words:
            index.nearest(w, args.n)
        cached.append((time.perf_counter() - t0) / len(words))
        m = index.matrix.numpy()
        t0 = time.perf_counter()
        for w in words[:16]:
            q = g.vector(w)
            np.argsort(-(m @ (q / np.linalg.norm(q))))[: args.n + 1]
        naive.append((time.perf_counter() - t0) / 16)
    med = statistics.median
    print(f"GloVe {len(g):,} words x {g.dim} d, N = {args.n}, one thread, medians of {args.repeats}")
    print(f"  build index (normalise matrix):     {build * 1e3:8.1f} ms")
    print(f"  one cold query:                     {med(cold) * 1e3:8.2f} ms")
    print(f"  batched, per word ({args.queries} words):     {med(batched) * 1e3:8.2f} ms")
    print(f"  naive numpy argsort, per word:      {med(naive) * 1e3:8.2f} ms  "
          f"(batched is {med(naive) / med(batched):.1f}x faster)")
    print(f"  cached repeat, per word:            {med(cached) * 1e6:8.1f} us")


if __name__ == "__main__":
    main()
