"""The CRF's log-partition compiled (:mod:`deidlib.models.fused_crf`) against its Python
recursion under autograd, side by side: the CRF negative log-likelihood, forward + backward,
over the length-bucketed batches of ``benchmarks/taggers.py`` (same corpus, batch 32), with
random emissions of each tagger kind's label set (friedrich BIO: 57 labels; the ahmed kinds
BIOES: 113). Rounds alternate the two sides; medians per side and of the per-round ratios.
Then the compiled Viterbi decode of the same emissions with the mask :meth:`CRF.decode` passes
(``crf.viterbi_mask``: the grouped maximum over allowed predecessors, given only where at most
half of the moves are allowed) and without it (every predecessor), alternating likewise; the
paths must be identical.

    OMP_NUM_THREADS=1 python benchmarks/crf_kernel.py --kinds gru friedrich
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taggers import bucketed, kind_corpus, take  # noqa: E402

from deidlib.models import build_tagger, fused_crf  # noqa: E402
from deidlib.synthetic import generate  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kinds", nargs="+", default=["gru", "friedrich"])
    ap.add_argument("--tokens", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    if not fused_crf.available():
        sys.exit("the compiled CRF is not built here (see the warning above); nothing to compare")
    docs = generate(patients=60, sites=3, seed=0)
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, {a.rounds} alternating rounds, "
          f"load average {os.getloadavg()[0]:.1f}")
    for kind in a.kinds:
        fz, words, tags = kind_corpus(docs, kind)
        w, t, n = take(words, tags, a.tokens)
        batches = [fz.encode(x, y) for x, y in bucketed(w, t, 32)]
        crf = build_tagger(kind, fz, seed=0).crf
        gen = torch.Generator().manual_seed(0)
        ems = [torch.randn(*b.word_ids.shape, fz.num_labels, generator=gen).requires_grad_(True) for b in batches]

        def one_pass(crf=crf, batches=batches, ems=ems):
            for b, e in zip(batches, ems):
                crf.nll(e, b.labels, b.mask).backward()

        times: dict[str, list[float]] = {"compiled": [], "python": []}
        for r in range(a.rounds + 1):
            for side in (("compiled", "python") if r % 2 else ("python", "compiled")):
                with fused_crf.disabled() if side == "python" else torch.enable_grad():
                    t0 = time.perf_counter()
                    one_pass()
                    if r:  # round 0 warms both sides up
                        times[side].append(time.perf_counter() - t0)
        ratios = [p / c for p, c in zip(times["python"], times["compiled"])]
        print(f"{kind:10s} {fz.num_labels:4d} labels, {n} tokens in {len(batches)} batches: python "
              f"{1e3 * statistics.median(times['python']):7.1f} ms, compiled {1e3 * statistics.median(times['compiled']):7.1f} ms "
              f"per pass; python / compiled {statistics.median(ratios):.2f}x (range {min(ratios):.2f}-{max(ratios):.2f})",
              flush=True)
        scores = [x.detach() for x in crf._scores()]
        allowed = crf.viterbi_mask  # what CRF.decode passes: None where over half the moves are allowed
        moves = crf.trans_bias >= 0 if crf.constrained else None
        cases = [(e.detach(), b.mask.long().sum(1)) for b, e in zip(batches, ems)]

        def decode(mask, scores=scores, cases=cases):
            return [fused_crf.viterbi(e, lengths, *scores, mask) for e, lengths in cases]

        same = all(torch.equal(x, y) for x, y in zip(decode(allowed), decode(None)))
        vt: dict[str, list[float]] = {"masked": [], "full": []}
        for r in range(a.rounds + 1):
            for side in (("masked", "full") if r % 2 else ("full", "masked")):
                t0 = time.perf_counter()
                decode(allowed if side == "masked" else None)
                if r:
                    vt[side].append(time.perf_counter() - t0)
        vr = [f / m for f, m in zip(vt["full"], vt["masked"])]
        share = "unconstrained" if moves is None else f"{int(moves.sum())} of {moves.numel()} moves allowed" + (
            "" if allowed is not None else ", mask not used")
        print(f"{'':10s} Viterbi ({share}): every predecessor {1e3 * statistics.median(vt['full']):6.1f} ms, "
              f"with the mask {1e3 * statistics.median(vt['masked']):6.1f} ms per pass; "
              f"{statistics.median(vr):.2f}x (range {min(vr):.2f}-{max(vr):.2f}); identical paths: {same}", flush=True)


if __name__ == "__main__":
    main()
