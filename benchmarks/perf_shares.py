"""Where a tagger's prediction or training pass spends its CPU time, including inside the
compiled kernels and MKL (which ``torch.profiler`` cannot see into): Linux ``perf`` samples
of a loop over the length-bucketed batches of ``benchmarks/taggers.py`` (same corpus,
sizes, batch 32, one thread), grouped into

- ``matmul``: MKL's sgemm/sgemv kernels and their packing routines (every matrix product:
  input and per-step RNN products, linear layers, weight gradients, the CRF's products),
- ``oneDNN JIT``: code oneDNN generates at run time, i.e. its LSTM training kernels (their
  products and gates together; perf sees no symbols there),
- ``rnn gates``, ``crf``: the package's compiled kernels outside those products
  (``deidlib_rnn_infer``, ``deidlib_fused_gru``; ``deidlib_fused_crf``),
- ``python``: the interpreter (featurisation, module calls, the character cache, tag
  strings, garbage collection),
- ``copies``: libc's memmove/memset,
- ``torch other``: every other torch operator (element-wise, gathers, dispatch, Adam, ...),
- ``os``: the kernel (page faults of fresh allocations) and everything else.

With the pass's roofline ratio from ``benchmarks/taggers.py`` this says how fast the
products themselves run (ratio / matmul share) and how much of the rest would have to go
for a given ratio. The setup (corpus, model, one warm-up pass) is not sampled.

    OMP_NUM_THREADS=1 python benchmarks/perf_shares.py --kind gru --mode predict
    OMP_NUM_THREADS=1 python benchmarks/perf_shares.py --kind gru --mode train --seconds 30

Needs ``perf`` (Debian: ``linux-perf``) and permission to sample (``perf_event_paranoid`` ≤ 2).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict

GROUPS = ("matmul", "oneDNN JIT", "rnn gates", "crf", "python", "copies", "torch other", "os")


def group_of(dso: str, symbol: str) -> str:
    """The group of one ``perf report`` line (shared object, symbol)."""
    if "mkl_blas" in symbol or re.search(r"\b[sd]gem[mv]", symbol):
        return "matmul"
    if dso.startswith("[JIT]"):
        return "oneDNN JIT"
    if dso.startswith(("deidlib_rnn_infer", "deidlib_fused_gru")):
        return "rnn gates"
    if dso.startswith("deidlib_fused_crf"):
        return "crf"
    if dso.startswith("libpython"):
        return "python"
    if dso.startswith("libc.") and re.search(r"mem(move|cpy|set)", symbol):
        return "copies"
    if dso.startswith(("libtorch", "libc10", "libgomp")):
        return "torch other"
    return "os"


def shares(report: str) -> dict[str, float]:
    """Percent of samples per group from ``perf report --stdio --sort dso,symbol`` text."""
    out: dict[str, float] = defaultdict(float)
    for line in report.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(.+?)\s{2,}\[[.k]\]\s+(.*)", line)
        if m:
            out[group_of(m.group(2), m.group(3))] += float(m.group(1))
    return dict(out)


def workload(kind: str, mode: str, seconds: float, ready: str) -> None:
    """Build the benchmark's corpus and tagger, warm up, touch ``ready``, then loop ``mode``
    passes for ``seconds``."""
    import torch

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from taggers import bucketed, kind_corpus, take, train_pass

    from deidlib.models import build_tagger
    from deidlib.synthetic import generate
    from deidlib.training import make_optimizer, predict_tags

    torch.set_num_threads(1)
    docs = generate(patients=60, sites=3, seed=0)
    fz, words, tags = kind_corpus(docs, kind)
    w, t, n = take(words, tags, 10000)
    tagger = build_tagger(kind, fz, seed=0)
    opt = make_optimizer(tagger.parameters(), "adam", 1e-3)
    batches = bucketed(w, t, 32)

    def one() -> None:
        if mode == "train":
            train_pass(tagger, opt, fz, batches)
        else:
            predict_tags(tagger, w, batch_size=32)

    one()
    passes, t0 = 0, time.perf_counter()
    with open(ready, "w"):
        pass
    while time.perf_counter() - t0 < seconds:
        one()
        passes += 1
    print(f"{kind} {mode}: {passes} passes of {n} tokens, {(time.perf_counter() - t0) / passes * 1e3:.1f} ms each",
          flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kind", default="gru")
    ap.add_argument("--mode", choices=["predict", "train"], default="predict")
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--freq", type=int, default=2000, help="perf sampling frequency (Hz)")
    ap.add_argument("--workload", metavar="READY_FILE", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.workload:
        workload(a.kind, a.mode, a.seconds, a.workload)
        return
    if shutil.which("perf") is None:
        sys.exit("perf is not installed (Debian: apt install linux-perf)")
    with tempfile.TemporaryDirectory() as tmp:
        data, ready = os.path.join(tmp, "perf.data"), os.path.join(tmp, "ready")
        proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--kind", a.kind, "--mode", a.mode,
                                 "--seconds", str(a.seconds), "--workload", ready])
        while not os.path.exists(ready):  # sample the loop only, not the setup
            if proc.poll() is not None:
                sys.exit(f"the workload ended before its loop (exit {proc.returncode})")
            time.sleep(0.05)
        rec = subprocess.run(["perf", "record", "-q", "-F", str(a.freq), "-p", str(proc.pid), "-o", data],
                             capture_output=True, text=True)
        proc.wait()
        if rec.returncode != 0 or not os.path.exists(data):
            sys.exit(f"perf record failed: {rec.stderr.strip()}")
        rep = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children", "--sort", "dso,symbol"],
                             capture_output=True, text=True, check=True).stdout
    got = shares(rep)
    total = sum(got.values())
    print(f"perf samples by group ({total:.1f} % of samples classified):")
    for g in GROUPS:
        print(f"  {g:12s} {got.get(g, 0.0):5.1f} %")


if __name__ == "__main__":
    main()
