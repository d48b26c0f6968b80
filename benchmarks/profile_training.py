"""Where a training pass of a tagger spends its time on the CPU: the torch profiler's top
operators (self time) for one pass over the length-bucketed batches of
``benchmarks/taggers.py`` (same corpus, sizes, batch and Adam), after one warm-up pass, plus
the share of the fused RNN kernels (``mkldnn_rnn_layer`` and its backward; the GRU has no
such kernel on the CPU and shows up as many small ``addmm``/``mm`` and element-wise ops).

    OMP_NUM_THREADS=1 python benchmarks/profile_training.py --kinds friedrich festag
"""

from __future__ import annotations

import argparse
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taggers import bucketed, kind_corpus, take, train_pass  # noqa: E402

from deidlib.models import build_tagger  # noqa: E402
from deidlib.synthetic import generate  # noqa: E402
from deidlib.training import make_optimizer  # noqa: E402

KERNELS = ("aten::mkldnn_rnn_layer", "aten::mkldnn_rnn_layer_backward")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kinds", nargs="+", default=["friedrich", "festag"])
    ap.add_argument("--tokens", type=int, default=10000)
    ap.add_argument("--rows", type=int, default=12, help="operators listed per kind")
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    docs = generate(patients=60, sites=3, seed=0)
    for kind in a.kinds:
        fz, words, tags = kind_corpus(docs, kind)
        w, t, n = take(words, tags, a.tokens)
        batches = bucketed(w, t, 32)
        tagger = build_tagger(kind, fz, seed=0)
        opt = make_optimizer(tagger.parameters(), "adam", 1e-3)
        train_pass(tagger, opt, fz, batches)  # warm-up
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            train_pass(tagger, opt, fz, batches)
        events = prof.key_averages()
        total = sum(e.self_cpu_time_total for e in events)
        kernels = sum(e.self_cpu_time_total for e in events if e.key in KERNELS)
        print(f"{kind}: {n} tokens, {len(batches)} batches, profiled pass {total / 1e6:.2f} s (self time); "
              f"fused RNN kernels {100 * kernels / total:.1f} %", flush=True)
        for e in sorted(events, key=lambda e: -e.self_cpu_time_total)[: a.rows]:
            print(f"  {e.key:45s} {100 * e.self_cpu_time_total / total:5.1f} %  {e.count:6d} calls")


if __name__ == "__main__":
    main()
