"""DP-SGD step time / non-private step time per tagger (targets: transformer-CRF <= 2.5x,
BiLSTM-CRF <= 6x).

For every tagger kind (paper-size presets of :mod:`deidlib.models.taggers`, vocabulary from a
synthetic training split, random word vectors), the same lots of ``--batch-size`` sentences
are timed with

* the ordinary step, ``deidlib.training.loop.step`` (mean loss, backward, clip, optimiser step);
* the DP step, ``deidlib.privacy.gradients.dp_step`` (per-sentence gradients as Jacobian rows,
  flat clipping at C = 1, Gaussian noise σ = 1, optimiser step).

Both use plain SGD (Algorithm 1) and train mode (dropout on). Encoding the lots is not timed
(the trainer encodes once; ``train_dp`` encodes each Poisson lot, a cost printed separately).
Each repeat times every lot once; the table shows the median per-step time over all repeats
and lots, and the ratio of the medians. ``BiLSTM-CRF`` is the friedrich tagger (2 x 128
BiLSTM + CRF); the ahmed "transformer" is the transformer-CRF.

    python benchmarks/dpsgd.py                          # all kinds, 1 thread
    python benchmarks/dpsgd.py --kinds friedrich transformer --repeats 5 --freeze-embeddings
    python benchmarks/dpsgd.py --kinds friedrich gru --packed-rnns   # RNNs on packed sequences
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time

import torch

from deidlib.datasets import load_corpus
from deidlib.models.presets import PRESETS, encoder_of
from deidlib.privacy.gradients import dp_step
from deidlib.training import prepare_tagger
from deidlib.training.batching import bucket_batches
from deidlib.training.loop import make_optimizer, step

LABEL = {
    "friedrich": "BiLSTM-CRF",
    "transformer": "transformer-CRF",
    "festag": "BiLSTM-softmax (char LSTM)",
    "gru": "GRU-CRF",
    "gru_gru": "GRU-GRU-CRF",
    "lstm_gru": "LSTM-GRU-CRF",
}


def time_steps(fn, batches, repeats: int) -> tuple[list[float], list[float]]:
    """(wall seconds, CPU seconds of this process) per step."""
    wall, cpu = [], []
    for _ in range(repeats):
        for b in batches:
            t0, c0 = time.perf_counter(), time.process_time()
            fn(b)
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kinds", nargs="+", default=[k for k in PRESETS if encoder_of(k) is None], choices=list(PRESETS))
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--lots", type=int, default=8, help="distinct lots timed per repeat")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--patients", type=int, default=60, help="synthetic training corpus size")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--method", default="micro", choices=("micro", "vmap", "loop"))
    ap.add_argument(
        "--freeze-embeddings",
        action="store_true",
        help="frozen word vectors (pre-trained, as festag/friedrich)",
    )
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--packed-rnns", action="store_true",
                    help="run every RNN on packed sequences (deidlib.models.layers.packed_rnns) instead of the padded path")
    a = ap.parse_args()
    if a.packed_rnns:
        from deidlib.models.layers import packed_rnns

        packed_rnns().__enter__()  # for the whole process
    torch.set_num_threads(a.threads)
    sp = load_corpus("synthetic", profile="cpu", seed=a.seed, patients=a.patients, sites=3)
    print(
        f"torch {torch.__version__}, {a.threads} thread(s), device {a.device}, batch {a.batch_size}, "
        f"{a.lots} lots x {a.repeats} repeats, method {a.method}, frozen embeddings {a.freeze_embeddings}, "
        f"load {os.getloadavg()[0]:.2f}"
    )
    rows = []
    for kind in a.kinds:
        sents, tagger = prepare_tagger(
            kind, sp.train, embeddings=None, seed=a.seed, freeze_embeddings=a.freeze_embeddings
        )
        tagger.to(a.device).train()
        groups = bucket_batches([len(s.tokens) for s in sents], a.batch_size, a.seed, bucketed=False)[
            : a.lots
        ]
        fz = tagger.featurizer
        t0 = time.perf_counter()
        batches = [
            fz.encode([sents[i].words for i in g], [sents[i].tags for i in g]).to(a.device) for g in groups
        ]
        enc = (time.perf_counter() - t0) / len(batches)
        opt = make_optimizer(tagger.parameters(), "sgd", 1e-3)
        gen = torch.Generator().manual_seed(a.seed)

        def plain(b, tagger=tagger, opt=opt):
            return step(tagger, b, opt, None)

        def private(b, tagger=tagger, opt=opt, gen=gen):
            return dp_step(
                tagger,
                b,
                opt,
                max_grad_norm=1.0,
                noise_multiplier=1.0,
                denominator=a.batch_size,
                generator=gen,
                method=a.method,
            )

        time_steps(plain, batches[:2], 1)  # warm-up
        time_steps(private, batches[:2], 1)
        # interleave plain and DP repeats so that load changes hit both alike
        pw, pc, dw, dc = [], [], [], []
        for _ in range(a.repeats):
            w, c = time_steps(plain, batches, 1)
            pw += w
            pc += c
            w, c = time_steps(private, batches, 1)
            dw += w
            dc += c
        tp, td = statistics.median(pw), statistics.median(dw)
        cp, cd = statistics.median(pc), statistics.median(dc)
        n_par = sum(p.numel() for p in tagger.parameters() if p.requires_grad)
        rows.append((kind, LABEL[kind], n_par, tp, td, td / tp, cp, cd, cd / cp, enc))
        print(
            f"  {kind}: wall plain {tp * 1e3:.1f} ms, dp {td * 1e3:.1f} ms, ratio {td / tp:.2f}; "
            f"cpu ratio {cd / cp:.2f}",
            flush=True,
        )
    print()
    print(
        f"{'kind':<12} {'model':<28} {'params':>9} {'plain ms':>9} {'DP ms':>9} {'DP/plain':>9} "
        f"{'cpu ratio':>9} {'encode ms':>9}"
    )
    for kind, label, n, tp, td, r, _cp, _cd, rc, enc in rows:
        print(
            f"{kind:<12} {label:<28} {n:>9,d} {tp * 1e3:>9.1f} {td * 1e3:>9.1f} {r:>9.2f} {rc:>9.2f} {enc * 1e3:>9.1f}"
        )
    print(
        "(ms: median wall time per step; cpu ratio: the same with the process' CPU time, robust to machine load)"
    )
    targets = {"transformer": 2.5, "friedrich": 6.0}
    for kind, *_, r, _cp, _cd, rc, _enc in rows:
        if kind in targets:
            ok = "meets" if max(r, rc) <= targets[kind] else "MISSES"
            print(f"{LABEL[kind]}: {r:.2f}x wall, {rc:.2f}x cpu: {ok} the target {targets[kind]}x")
    assert all(math.isfinite(r[5]) for r in rows)


if __name__ == "__main__":
    main()
