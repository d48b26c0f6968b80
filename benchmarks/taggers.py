"""Training and inference throughput (tokens/s) of every tagger kind on the CPU, side by
side with a plain reference of the same architecture and weights.

Optimised path (what ``deidlib.training`` uses): length-bucketed batches of
``--batch-size`` sentences, one :meth:`Featurizer.encode` per batch, the character
encoder run once per *distinct* token of the batch, packed RNNs.
Reference path: one sentence at a time, unbucketed, the character encoder run once per
token *occurrence* (each occurrence gets its own row of ``char_ids``).
Both include featurization; training = forward + backward + Adam step.

Sentences come from the synthetic corpus (``deidlib.synthetic.generate``), tokenized and
tagged with the i2b2 scheme in each paper's encoding: festag IO (29 labels = 28 PHI types
+ O), friedrich BIO, ahmed BIOES.
Each number is the median of ``--repeats`` timed runs after one warm-up.
Default hyperparameters are the papers' sizes (festag: char BiLSTM 128/direction over
one-hot ASCII, word 300, BiLSTM 100, FF 100; friedrich: 2×128 BiLSTM-CRF, word 300;
ahmed: char-GRU 25, word 100, context 150).

    python benchmarks/taggers.py                        # all kinds, threads = torch default
    python benchmarks/taggers.py --threads 2 --kinds festag --tokens 20000
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from deidlib.corpus.labels import tag_set, tagged_sentences
from deidlib.models import PRESETS, build_tagger, count_parameters
from deidlib.models.features import Featurizer
from deidlib.models.protocol import Batch
from deidlib.synthetic import generate

ENCODING = {"festag": "IO", "friedrich": "BIO"}  # ahmed taggers: BIOES


def corpus(docs, encoding: str):
    sents = tagged_sentences(docs, "i2b2", encoding)
    return [s.words for s in sents], [s.tags for s in sents]


def take(words, tags, n_tokens):
    out_w, out_t, n = [], [], 0
    for w, t in zip(words, tags):
        if n >= n_tokens:
            break
        out_w.append(w), out_t.append(t)
        n += len(w)
    return out_w, out_t, n


def bucketed(words, tags, bs):
    order = sorted(range(len(words)), key=lambda i: len(words[i]))
    return [([words[i] for i in order[k:k + bs]], [tags[i] for i in order[k:k + bs]]) for k in range(0, len(order), bs)]


def per_occurrence(fz: Featurizer, w, t) -> Batch:
    """One sentence, the char encoder fed every occurrence (naive reference)."""
    b = fz.encode([w], [t] if t is not None else None)
    idx = b.token_to_unique[0]
    return Batch(b.word_ids, b.mask, b.labels, b.casing_ids, b.char_ids[idx], b.char_lengths[idx],
                 torch.arange(len(w)).unsqueeze(0))


def time_it(fn, repeats):
    fn()  # warm-up
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def bench(kind, fz, words, tags, args):
    tagger = build_tagger(kind, fz, seed=0)
    opt = torch.optim.Adam([p for p in tagger.parameters() if p.requires_grad], lr=1e-3)
    w_fast, t_fast, n_fast = take(words, tags, args.tokens)
    w_ref, t_ref, n_ref = take(words, tags, max(500, args.tokens // args.ref_fraction))
    batches = bucketed(w_fast, t_fast, args.batch_size)

    def train_fast():
        tagger.train()
        for w, t in batches:
            opt.zero_grad()
            tagger.loss(fz.encode(w, t)).backward()
            opt.step()

    def train_ref():
        tagger.train()
        for w, t in zip(w_ref, t_ref):
            opt.zero_grad()
            tagger.loss(per_occurrence(fz, w, t)).backward()
            opt.step()

    def infer_fast():
        tagger.eval()
        with torch.no_grad():
            for w, _ in batches:
                tagger.predict(fz.encode(w))

    def infer_ref():
        tagger.eval()
        with torch.no_grad():
            for w in w_ref:
                tagger.predict(per_occurrence(fz, w, None))

    tr_f = n_fast / time_it(train_fast, args.repeats)
    tr_r = n_ref / time_it(train_ref, args.repeats)
    in_f = n_fast / time_it(infer_fast, args.repeats)
    in_r = n_ref / time_it(infer_ref, args.repeats)
    return dict(kind=kind, params=count_parameters(tagger), train=tr_f, train_ref=tr_r, infer=in_f, infer_ref=in_r)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kinds", nargs="+", default=list(PRESETS), choices=list(PRESETS))
    ap.add_argument("--tokens", type=int, default=10000, help="tokens per timed run (optimised path)")
    ap.add_argument("--ref-fraction", type=int, default=10, help="the reference times tokens/this many tokens")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--patients", type=int, default=60)
    ap.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: torch's choice)")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    docs = generate(patients=a.patients, sites=3, seed=a.seed)
    words, _ = corpus(docs, "IO")
    mean_len = sum(map(len, words)) / len(words)
    print(f"torch {torch.__version__}, threads={torch.get_num_threads()}, {len(words)} synthetic sentences "
          f"(mean {mean_len:.1f} tokens), batch {a.batch_size}, median of {a.repeats}; ref = one sentence at a time, "
          f"char encoder per occurrence")
    print(f"{'kind':12s} {'labels':>6s} {'params':>9s} {'train tok/s':>12s} {'ref':>9s} {'ratio':>7s} "
          f"{'infer tok/s':>12s} {'ref':>9s} {'ratio':>7s}")
    for kind in a.kinds:
        enc = ENCODING.get(kind, "BIOES")
        words, tags = corpus(docs, enc)
        fz = Featurizer.build(words, tag_set("i2b2", enc))
        r = bench(kind, fz, words, tags, a)
        print(f"{r['kind']:12s} {fz.num_labels:6d} {r['params']:9d} {r['train']:12.0f} {r['train_ref']:9.0f} {r['train'] / r['train_ref']:7.1f} "
              f"{r['infer']:12.0f} {r['infer_ref']:9.0f} {r['infer'] / r['infer_ref']:7.1f}", flush=True)


if __name__ == "__main__":
    main()
