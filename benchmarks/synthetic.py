"""Throughput of the synthetic corpus generator (target: >= 1 MB of text per second, one core).

Times ``deidlib.synthetic.generate`` end to end (Faker pools included) several times and
prints the median MB/s (pool cache cleared before every run, so each run pays for its
Faker pools; the one-time geonames/Faker import is excluded by a warm-up), and the time
the pools alone take. Pure Python, single-threaded.

    python benchmarks/synthetic.py                       # 300 patients, 5 sites
    python benchmarks/synthetic.py --patients 2000 --repeats 3 --locale fr_FR
"""

from __future__ import annotations

import argparse
import statistics
import time

from deidlib.synthetic import generate, generate_iter
from deidlib.synthetic.identities import build_site_pools


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--patients", type=int, default=300)
    ap.add_argument("--sites", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--locale", default="en_US")
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()

    generate(patients=2, sites=1, seed=a.seed, locale=a.locale)  # import / Faker instance warm-up
    rates, secs, chars, ndocs = [], [], 0, 0
    for r in range(a.repeats):
        build_site_pools.cache_clear()  # measure Faker pool construction in every run
        t0 = time.perf_counter()
        docs = generate(patients=a.patients, sites=a.sites, seed=a.seed + r, locale=a.locale)
        dt = time.perf_counter() - t0
        chars = sum(len(d.text) for d in docs)
        ndocs = len(docs)
        rates.append(chars / 1e6 / dt)
        secs.append(dt)
    # pool construction alone: a generator with zero patients builds all site pools
    build_site_pools.cache_clear()
    t0 = time.perf_counter()
    list(generate_iter(patients=0, sites=a.sites, seed=a.seed, locale=a.locale))
    pool_s = time.perf_counter() - t0

    print(f"synthetic corpus: {a.patients} patients, {a.sites} sites, locale {a.locale}")
    print(f"  last run: {ndocs} documents, {chars / 1e6:.2f} MB of text")
    print(f"  time per run: median {statistics.median(secs):.3f} s (of {a.repeats})")
    print(f"  throughput: median {statistics.median(rates):.2f} MB/s, min {min(rates):.2f}, max {max(rates):.2f}")
    print(f"  of which Faker pool construction: {pool_s:.3f} s per run")
    print(f"  target >= 1 MB/s: {'met' if statistics.median(rates) >= 1.0 else 'NOT met'}")


if __name__ == "__main__":
    main()
