"""Training and inference time per pass of one tagger kind in two checkouts of the package,
interleaved: one worker process per checkout (its own ``PYTHONPATH``), the driver asks them in
turn for one timed training pass (featurisation, forward, backward, Adam step per batch) and
one timed inference pass (:func:`deidlib.training.predict_tags`) over the same length-bucketed
batches of the synthetic corpus, so both see the same machine load; prints the medians of
``--rounds`` rounds (after one warm-up pass each) and the ratios B / A.

    OMP_NUM_THREADS=1 python benchmarks/checkouts_ab.py /work/main . --kinds gru friedrich --rounds 7
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

WORKER = r"""
import sys, time, torch
sys.path.insert(0, "benchmarks")
from taggers import bucketed, kind_corpus, take, train_pass
from deidlib.models import build_tagger
from deidlib.synthetic import generate
from deidlib.training import make_optimizer, predict_tags
kind, tokens, bs, patients = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
torch.set_num_threads(1)
fz, words, tags = kind_corpus(generate(patients=patients, sites=3, seed=0), kind)
w, t, n = take(words, tags, tokens)
batches = bucketed(w, t, bs)
tagger = build_tagger(kind, fz, seed=0)
opt = make_optimizer(tagger.parameters(), "adam", 1e-3)
def one():
    t0 = time.perf_counter(); train_pass(tagger, opt, fz, batches); t1 = time.perf_counter()
    predict_tags(tagger, w, batch_size=bs); t2 = time.perf_counter()
    return t1 - t0, t2 - t1
one()
print(n, flush=True)
for line in sys.stdin:
    print(*one(), flush=True)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", help="checkout A (its root)")
    ap.add_argument("b", help="checkout B (its root)")
    ap.add_argument("--kinds", nargs="+", default=["gru", "friedrich"])
    ap.add_argument("--tokens", type=int, default=3000)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--patients", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=7)
    a = ap.parse_args()
    roots = [os.path.abspath(a.a), os.path.abspath(a.b)]
    print(f"A = {roots[0]}, B = {roots[1]}; one thread, {a.tokens} tokens per pass, batch {a.batch_size}, "
          f"median of {a.rounds} interleaved rounds; load average {os.getloadavg()[0]:.1f}")
    print(f"{'kind':10s} {'tokens':>6s} {'train A s':>10s} {'train B s':>10s} {'B/A':>6s} "
          f"{'infer A s':>10s} {'infer B s':>10s} {'B/A':>6s}")
    for kind in a.kinds:
        procs = [subprocess.Popen([sys.executable, "-c", WORKER, kind, str(a.tokens), str(a.batch_size),
                                   str(a.patients)], cwd=r, env={**os.environ, "PYTHONPATH": r},
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for r in roots]
        n = [int(p.stdout.readline()) for p in procs][0]
        times: list[list[tuple[float, float]]] = [[], []]
        for _ in range(a.rounds):
            for i, p in enumerate(procs):
                p.stdin.write("go\n")
                p.stdin.flush()
                tr, inf = map(float, p.stdout.readline().split())
                times[i].append((tr, inf))
        for p in procs:
            p.stdin.close()
            p.wait()
        med = [[statistics.median(x[k] for x in ts) for k in (0, 1)] for ts in times]
        print(f"{kind:10s} {n:6d} {med[0][0]:10.3f} {med[1][0]:10.3f} {med[1][0] / med[0][0]:6.2f} "
              f"{med[0][1]:10.3f} {med[1][1]:10.3f} {med[1][1] / med[0][1]:6.2f}", flush=True)


if __name__ == "__main__":
    main()
