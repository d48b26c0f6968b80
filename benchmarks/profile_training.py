"""Where a training pass of a tagger spends its time on the CPU: the torch profiler's top
operators (self time) for one pass over the length-bucketed batches of
``benchmarks/taggers.py`` (same corpus, sizes, batch and Adam), after one warm-up pass, plus
the share of the fused RNN kernels (``mkldnn_rnn_layer`` and its backward; the GRU has no
such kernel on the CPU and shows up as many small ``addmm``/``mm`` and element-wise ops).

Then, per LSTM layer of the tagger (matched by input width), the fused kernels' share of the
pass and their own rate inside it: executed matmul FLOPs (padded row-steps × 2·4·H·(D+H),
× 3 for forward + backward) over the kernels' self time, as % of the matmul peak measured
in the same run; where the step's time goes is then readable against that rate.

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
from deidlib.models.flops import matmul_gflops  # noqa: E402
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
    peak = matmul_gflops(1024, 1024, 1024)
    print(f"threads {torch.get_num_threads()}, matmul peak {peak:.1f} GFLOP/s")
    docs = generate(patients=60, sites=3, seed=0)
    for kind in a.kinds:
        fz, words, tags = kind_corpus(docs, kind)
        w, t, n = take(words, tags, a.tokens)
        batches = bucketed(w, t, 32)
        tagger = build_tagger(kind, fz, seed=0)
        opt = make_optimizer(tagger.parameters(), "adam", 1e-3)
        train_pass(tagger, opt, fz, batches)  # warm-up
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            train_pass(tagger, opt, fz, batches)
        events = prof.key_averages()
        total = sum(e.self_cpu_time_total for e in events)
        kernels = sum(e.self_cpu_time_total for e in events if e.key in KERNELS)
        print(f"{kind}: {n} tokens, {len(batches)} batches, profiled pass {total / 1e6:.2f} s (self time); "
              f"fused RNN kernels {100 * kernels / total:.1f} %", flush=True)
        for e in sorted(events, key=lambda e: -e.self_cpu_time_total)[: a.rows]:
            print(f"  {e.key:45s} {100 * e.self_cpu_time_total / total:5.1f} %  {e.count:6d} calls")
        lstms = {m.input_size: (name, m) for name, m in tagger.named_modules() if isinstance(m, torch.nn.LSTM)}
        per: dict[int, list[float]] = {}
        for e in prof.key_averages(group_by_input_shape=True):
            if e.key in KERNELS and e.input_shapes and len(e.input_shapes[0]) == 3:
                b, t, d = e.input_shapes[0]
                acc = per.setdefault(d, [0.0, 0.0])
                acc[0] += e.self_cpu_time_total
                if e.key == KERNELS[0]:  # row-steps once per forward call
                    acc[1] += b * t * e.count
        for d, (us, steps) in sorted(per.items()):
            name, m = lstms.get(d, ("?", None))
            if m is None:
                continue
            fl = 3 * 2 * 4 * m.hidden_size * (d + m.hidden_size) * steps
            print(f"  LSTM {name} ({d} -> {m.hidden_size}, one direction per call): {100 * us / total:5.1f} % of the "
                  f"pass, {int(steps)} padded row-steps, {fl / us / 1e3:6.1f} GFLOP/s = {100 * fl / us / 1e3 / peak:5.1f} % "
                  f"of the peak inside its kernels")


if __name__ == "__main__":
    main()
