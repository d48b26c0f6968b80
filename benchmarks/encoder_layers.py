"""What dropping the encoder's unread top layers saves (``EncoderTagger``).

The ``minilm`` tagger keeps only the transformer layers up to the highest hidden state it
reads (:mod:`deidlib.models.encoder_tagger`, "What runs"). This script times, side by side in
one run, the same training steps (loss, backward, Adam step) and the same inference passes
with the kept layers and with the full encoder swapped back in, on the same lots of synthetic
sentences; the states read are the same, so both compute the same function. Each repeat
times every lot once with each encoder, alternating; the table shows medians per lot and the
ratio full / kept.

    python benchmarks/encoder_layers.py                                   # the transfer recipe
    python benchmarks/encoder_layers.py --finetune-layers 0 --layers 3    # the minilm DP recipe's frozen encoder (no cache)
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layers", type=int, nargs="+", default=[2, 3, 4], help="hidden states read (default 2 3 4)")
    ap.add_argument("--finetune-layers", type=int, default=3, help="top layers made trainable (default 3)")
    ap.add_argument("--lots", type=int, default=8)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)

    from deidlib.corpus.labels import tagged_sentences
    from deidlib.datasets import load_corpus
    from deidlib.embeddings.encoders import load_encoder_model
    from deidlib.models import build_featurizer, build_tagger

    sents = [s for s in tagged_sentences(load_corpus("synthetic", profile="smoke", seed=0).train, "binary", "BIO")
             if len(s.words) > 3]
    lots = [sents[i * args.batch_size : (i + 1) * args.batch_size] for i in range(args.lots)]
    fz = build_featurizer("minilm", [], labels=["O", "B-PHI", "I-PHI"])
    batches = [fz.encode([s.words for s in lot], [s.tags for s in lot]) for lot in lots]
    t = build_tagger("minilm", fz, seed=0, finetune_layers=args.finetune_layers, layers=args.layers, hidden=64)
    kept = t.encoder
    full = load_encoder_model("minilm")
    full.pooler = None
    n = len(full.encoder.layer)
    k = n if args.finetune_layers is None else args.finetune_layers
    parts = [full.embeddings, *full.encoder.layer]
    trains = [k > 0 and (k == n or i > n - k) for i in range(len(parts))]  # as EncoderTagger sets them
    for m, on in zip(parts, trains):
        m.requires_grad_(on)
    full.load_state_dict(kept.state_dict(), strict=False)
    print(f"states read {args.layers}: {len(kept.encoder.layer)} of {n} layers kept; "
          f"finetune_layers={args.finetune_layers}; {args.lots} lots of {args.batch_size} sentences, "
          f"{args.threads} thread(s), {args.repeats} repeats")

    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.repeats):
        for name, enc in (("kept", kept), ("full", full)):
            t.encoder = enc
            t._fingerprint = None
            opt = torch.optim.Adam([p for p in t.parameters() if p.requires_grad], lr=1e-4)
            t.train()
            if enc is full:  # frozen parts never drop out, as in the tagger
                for m, on in zip(parts, trains):
                    m.train(on)
            for b in batches:
                t.clear_cache()  # a frozen encoder: time the encoder, not its cache
                t0 = time.perf_counter()
                opt.zero_grad()
                t.loss(b).backward()
                opt.step()
                times.setdefault((name, "train"), []).append(time.perf_counter() - t0)
            t.eval()
            with torch.no_grad():
                for b in batches:
                    t.clear_cache()
                    t0 = time.perf_counter()
                    t.predict(b)
                    times.setdefault((name, "predict"), []).append(time.perf_counter() - t0)
    t.encoder = kept
    for what in ("train", "predict"):
        mk, mf = (statistics.median(times[(n_, what)]) for n_ in ("kept", "full"))
        print(f"{what:8s} median s/lot: kept {mk:.4f}  full {mf:.4f}  full/kept {mf / mk:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
