"""Does ``torch.compile`` speed up the taggers' training on the CPU? Eager against compiled,
side by side in one process, interleaved rounds (issue 18 lists "torch.compile where it helps").

Modes (each a fresh tagger with the same seed, trained with the trainer's Adam over the same
length-bucketed batches of the synthetic corpus, as in ``benchmarks/taggers.py``):

* ``eager``: as ``deidlib.training`` trains;
* ``compile-crf``: the CRF's ``log_partition`` and ``score`` wrapped in
  ``torch.compile(dynamic=True)`` (the per-step element-wise work of the forward algorithm is
  what a fusing compiler could save; the RNNs stay torch's fused kernels);
* ``compile-loss`` (``--whole-loss``): the tagger's whole ``loss`` compiled.

Rounds are interleaved (eager, compiled, eager, …) so that load changes hit every mode alike;
each number is the median over ``--rounds`` passes after a warm-up pass, which includes the
compilation (printed). The first pass starts from the same seed (weights and dropout) in every
mode, so its losses differ only by the compiled kernels' rounding (printed as the largest
relative difference).

    OMP_NUM_THREADS=1 python benchmarks/compile_trial.py --kinds friedrich gru gru_gru
    OMP_NUM_THREADS=1 python benchmarks/compile_trial.py --kinds gru --whole-loss
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taggers import bucketed, kind_corpus, take, train_pass  # noqa: E402

from deidlib.models import build_tagger  # noqa: E402
from deidlib.synthetic import generate  # noqa: E402
from deidlib.training import make_optimizer  # noqa: E402


def make_mode(kind, fz, mode):
    torch.manual_seed(0)
    tg = build_tagger(kind, fz, seed=0)
    loss = tg.loss
    if mode == "compile-crf":
        tg.crf.log_partition = torch.compile(tg.crf.log_partition, dynamic=True)
        tg.crf.score = torch.compile(tg.crf.score, dynamic=True)
    elif mode == "compile-loss":
        loss = torch.compile(tg.loss, dynamic=True)
    return tg, loss, make_optimizer(tg.parameters(), "adam", 1e-3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kinds", nargs="+", default=["friedrich", "gru", "gru_gru"])
    ap.add_argument("--whole-loss", action="store_true", help="also compile the whole loss (slow warm-up)")
    ap.add_argument("--tokens", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--patients", type=int, default=60)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    warnings.filterwarnings("ignore")
    docs = generate(patients=a.patients, sites=3, seed=0)
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, dynamo cache_size_limit "
          f"{torch._dynamo.config.cache_size_limit}, load average {os.getloadavg()[0]:.1f}", flush=True)
    for kind in a.kinds:
        fz, words, tags = kind_corpus(docs, kind)
        w, t, n = take(words, tags, a.tokens)
        batches = bucketed(w, t, 32)
        lengths = {max(len(s) for s in b) for b, _ in batches}
        print(f"{kind}: {fz.num_labels} labels, {n} tokens in {len(batches)} batches of 32, "
              f"{len(lengths)} distinct padded lengths", flush=True)
        runs = {}
        for mode in ["eager", "compile-crf"] + (["compile-loss"] if a.whole_loss else []):
            if mode == "compile-crf" and runs["eager"]["tagger"].crf is None:
                continue  # a softmax tagger has no CRF to compile
            torch._dynamo.reset()
            tg, loss_fn, opt = make_mode(kind, fz, mode)

            def one_pass(tg=tg, loss_fn=loss_fn, opt=opt, batches=batches, fz=fz):
                losses: list[float] = []
                train_pass(tg, opt, fz, batches, loss_fn=loss_fn, losses=losses)
                return losses

            torch.manual_seed(1)  # the same dropout draws in every mode's first pass
            t0 = time.perf_counter()
            first = one_pass()
            runs[mode] = dict(tagger=tg, run=one_pass, first=first, warm=time.perf_counter() - t0, times=[])
        for _ in range(a.rounds):
            for r in runs.values():
                t0 = time.perf_counter()
                r["run"]()
                r["times"].append(time.perf_counter() - t0)
        eager = statistics.median(runs["eager"]["times"])
        for mode, r in runs.items():
            med = statistics.median(r["times"])
            rel = max(abs(x - y) / max(abs(x), 1e-12) for x, y in zip(runs["eager"]["first"], r["first"]))
            print(f"  {mode:12s} warm-up {r['warm']:6.1f} s  train {n / med:7.0f} tok/s  x{eager / med:.2f} vs eager  "
                  f"(rounds {', '.join(f'{n / x:.0f}' for x in r['times'])}; first-pass loss rel. diff {rel:.1e})",
                  flush=True)


if __name__ == "__main__":
    main()
