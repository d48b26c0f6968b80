"""Training and inference throughput (tokens/s) of every tagger kind on the CPU, side by
side with a plain reference of the same architecture and weights.

Optimised path (what ``deidlib.training`` uses): length-bucketed batches of
``--batch-size`` sentences, one :meth:`Featurizer.encode` per batch, the character
encoder run once per *distinct* token of the batch; the one-layer LSTMs run on the padded
batch through torch's fused oneDNN kernel (:func:`deidlib.models.layers.run_rnn_padded`; the
character encoder in groups of similar word length), GRUs on packed sequences.
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

Roofline: the machine's single-thread (or ``--threads``) matmul peak is measured in the
same run (``torch.mm`` float32 of a large square, and of the shapes these models
multiply), and each optimised path's achieved GFLOP/s is the matrix-multiply FLOPs it
*executes* per token (:func:`deidlib.models.flops.count_flops`, torch's ``FlopCounterMode``
on an untimed pass: training = forward + backward of a training pass, inference = the
inference pass, where the character encoder runs once per distinct token of the whole
pass; MFLOP/tok in the peer table is the inference count) times its tokens/s;
``%peak`` = achieved / peak. Next to it, the ceiling that torch's kernels set: the
word-level RNN layers timed alone at the benchmark's batch size and mean
sentence length (:func:`kernel_ceiling`), as % of the same peak; the distance between the
tagger's %peak and this one is the time spent outside those kernels.
Element-wise work (CRF log-sum-exp, Viterbi, gate non-linearities) is not counted, so it
shows up as a lower ratio. The transformer row has no roofline.

Peer: flair's ``SequenceTagger`` (``pip install .[bench]``; without flair the peer table
says so and is skipped) built from local pieces only, nothing downloaded:
``StackedEmbeddings([OneHotEmbeddings(words, 100), CharacterEmbeddings(chars, 25, 25)])``
→ BiLSTM 150 → linear → CRF over BIOES (115 tags with flair's START/STOP), no
re-projection, locked dropout 0.5. Ours at the same sizes: ``RNNTagger`` with a char
BiLSTM 25 over learned 25-d characters, word 100, one BiLSTM 150, no feed-forward, CRF
(113 BIOES tags). Same sentences, same length-bucketed batches of ``--batch-size``, same
thread count, Adam; training = forward + backward + step including featurization (flair
embeds every sentence inside ``forward_loss``; its embeddings are cleared after each
step as its trainer does with ``embeddings_storage_mode="none"``); inference =
:func:`deidlib.training.predict_tags` against ``SequenceTagger.predict`` (both return
tags per token, length-sorted batches).

    python benchmarks/taggers.py                        # all kinds + peer, threads = torch default
    python benchmarks/taggers.py --threads 1 --kinds gru festag --tokens 10000
    python benchmarks/taggers.py --threads 1 2 --kinds   # peer and roofline only, 1 then 2 threads
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch

from deidlib.corpus.labels import tag_set, tagged_sentences
from deidlib.models import PRESETS, build_tagger, count_parameters
from deidlib.models.features import Featurizer
from deidlib.models.flops import count_flops, matmul_gflops
from deidlib.models.layers import packed_rnns, run_rnn
from deidlib.models.presets import encoder_of
from deidlib.models.protocol import Batch
from deidlib.synthetic import generate
from deidlib.training import make_optimizer, predict_tags

ENCODING = {"festag": "IO", "friedrich": "BIO"}  # ahmed taggers: BIOES

#: the peer comparison's sizes (flair's CharacterEmbeddings defaults 25/25; ahmed's word 100 and context 150)
PEER = dict(char="lstm", char_onehot=False, char_emb_dim=25, char_hidden=25, word_dim=100, casing=False,
            input_dropout=0.5, cells=("lstm",), hidden=150, between_dropout=0.0, output_dropout=0.0, ff_dim=0, crf=True)


def corpus(docs, encoding: str):
    sents = tagged_sentences(docs, "i2b2", encoding)
    return [s.words for s in sents], [s.tags for s in sents]


def kind_corpus(docs, kind: str):
    """``(featurizer, words, tags)`` of ``docs`` in the tagger kind's encoding (festag IO,
    friedrich BIO, the others BIOES)."""
    enc = ENCODING.get(kind, "BIOES")
    words, tags = corpus(docs, enc)
    return Featurizer.build(words, tag_set("i2b2", enc)), words, tags


def train_pass(tagger, opt, fz: Featurizer, batches) -> None:
    """One training pass over ``batches`` (featurisation, forward, backward, optimiser step per
    batch), as :mod:`deidlib.training` trains."""
    tagger.train()
    for w, t in batches:
        opt.zero_grad()
        tagger.loss(fz.encode(w, t)).backward()
        opt.step()


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


def matmul_peak(threads: int) -> dict[str, float]:
    """GFLOP/s of torch.mm (float32) at a large square and at the shapes the taggers multiply."""
    shapes = {"1024²": (1024, 1024, 1024), "input 640×125→600": (640, 125, 600),
              "recurrent 32×150→600": (32, 150, 600), "char 512×25→100": (512, 25, 100)}
    out = {name: matmul_gflops(*mkn) for name, mkn in shapes.items()}
    out["peak"] = max(out.values())
    return out


def kernel_ceiling(tagger, batch: int, steps: int, seconds: float = 1.0) -> tuple[float, float]:
    """GFLOP/s of the tagger's word-level RNN layers *alone*: a fresh bidirectional
    ``nn.LSTM``/``nn.GRU`` of each one's sizes on a [batch, steps, input] batch without
    padding, through :func:`run_rnn` as in the tagger (LSTM: torch's fused oneDNN kernel;
    GRU: the packed RNN); training = forward + backward of ``output.sum()``, inference = under
    ``no_grad``; best time over about ``seconds`` each, FLOPs by :func:`count_flops`, summed
    over the layers. What the taggers would reach if nothing but these layers cost time (no
    embeddings, character encoder, dropout, CRF, optimiser or featurisation)."""
    layers = [m for n, m in tagger.named_modules() if isinstance(m, torch.nn.RNNBase) and n.startswith("rnn.")]
    if not layers:
        return float("nan"), float("nan")
    tot_f, tot_t = [0, 0], [0.0, 0.0]
    for m in layers:
        torch.manual_seed(0)
        rnn = type(m)(m.input_size, m.hidden_size, bidirectional=m.bidirectional, batch_first=True)
        x = torch.randn(batch, steps, m.input_size, requires_grad=True)
        full = torch.full((batch,), steps)

        def train(rnn=rnn, x=x, full=full):
            rnn.train()
            x.grad = None
            rnn.zero_grad(set_to_none=True)
            run_rnn(rnn, x, full).sum().backward()

        def infer(rnn=rnn, x=x, full=full):
            rnn.eval()
            with torch.no_grad():
                run_rnn(rnn, x.detach(), full)

        for i, fn in enumerate((train, infer)):
            fl = count_flops(fn)
            best, end = float("inf"), time.perf_counter() + seconds
            while time.perf_counter() < end:
                t0 = time.perf_counter()
                fn()
                best = min(best, time.perf_counter() - t0)
            tot_f[i] += fl
            tot_t[i] += best
    return tot_f[0] / tot_t[0] / 1e9, tot_f[1] / tot_t[1] / 1e9


def bench(kind, fz, words, tags, args, peak):
    tagger = build_tagger(kind, fz, seed=0)
    opt = make_optimizer(tagger.parameters(), "adam", 1e-3)  # the trainer's Adam (fused on the CPU)
    w_fast, t_fast, n_fast = take(words, tags, args.tokens)
    w_ref, t_ref, n_ref = take(words, tags, max(500, args.tokens // args.ref_fraction))
    batches = bucketed(w_fast, t_fast, args.batch_size)

    def train_with(o):
        train_pass(tagger, o, fz, batches)

    def train_fast():
        train_with(opt)

    def train_ref():
        tagger.train()
        for w, t in zip(w_ref, t_ref):
            opt.zero_grad()
            tagger.loss(per_occurrence(fz, w, t)).backward()
            opt.step()

    def infer_fast():
        predict_tags(tagger, w_fast, batch_size=args.batch_size)

    def infer_ref():
        tagger.eval()
        with torch.no_grad():
            for w in w_ref:
                tagger.predict(per_occurrence(fz, w, None))

    uses_lstm = any(type(m) is torch.nn.LSTM for m in tagger.modules())  # packed_rnns changes nothing otherwise
    tr_f = n_fast / time_it(train_fast, args.repeats)
    tr_p = None
    if uses_lstm:
        with packed_rnns():
            tr_p = n_fast / time_it(train_fast, args.repeats)
    plain_adam = make_optimizer(tagger.parameters(), "adam", 1e-3, foreach=False)  # torch's for-loop Adam
    tr_a = n_fast / time_it(lambda: train_with(plain_adam), args.repeats)
    tr_r = n_ref / time_it(train_ref, args.repeats)
    in_f = n_fast / time_it(infer_fast, args.repeats)
    in_p = None
    if uses_lstm:
        with packed_rnns():
            in_p = n_fast / time_it(infer_fast, args.repeats)
    in_r = n_ref / time_it(infer_ref, args.repeats)
    # FLOPs of an (untimed) training pass, forward + backward, and of the inference pass
    fpt = None if kind == "transformer" else (count_flops(train_fast) / n_fast, count_flops(infer_fast) / n_fast)
    ceiling = kernel_ceiling(tagger, args.batch_size, max(1, round(n_fast / len(w_fast))))
    return dict(kind=kind, params=count_parameters(tagger), train=tr_f, train_ref=tr_r, train_packed=tr_p,
                train_plain_adam=tr_a, infer=in_f, infer_ref=in_r, infer_packed=in_p,
                flops_per_token=fpt, ceiling=ceiling)


def roofline(fpt, train, infer, peak) -> str:
    """Achieved GFLOP/s and % of peak; ``fpt`` = (training, inference) FLOPs per token."""
    if fpt is None:
        return f"{'-':>8s} {'-':>6s} {'-':>8s} {'-':>6s}"
    gt, gi = fpt[0] * train / 1e9, fpt[1] * infer / 1e9
    return f"{gt:8.2f} {100 * gt / peak:5.1f}% {gi:8.2f} {100 * gi / peak:5.1f}%"


# ---------------------------------------------------------------- flair peer
def spans(tags: list[str]) -> list[tuple[int, int, str]]:
    """(first, last+1, type) chunks of a BIOES tag sequence."""
    out: list[list] = []
    cur = None
    for i, tag in enumerate(tags):
        if tag == "O":
            cur = None
            continue
        prefix, _, lab = tag.partition("-")
        if cur is not None and cur[2] == lab and prefix in ("I", "E"):
            cur[1] = i + 1
        else:
            cur = [i, i + 1, lab]
            out.append(cur)
        if prefix in ("E", "S"):
            cur = None
    return [tuple(c) for c in out]


def flair_peer(words, tags, batches_idx, args):
    """flair's SequenceTagger at the peer sizes, built offline; (tagger, train, infer functions) or
    None when flair is not installed."""
    try:
        import flair
        from flair.data import Dictionary, Sentence
        from flair.embeddings import CharacterEmbeddings, OneHotEmbeddings, StackedEmbeddings
        from flair.models import SequenceTagger
    except ImportError:
        return None
    import logging

    logging.getLogger("flair").setLevel(logging.WARNING)
    flair.device = torch.device("cpu")
    types = sorted({t.partition("-")[2] for ts in tags for t in ts if t != "O"})
    label_dict = Dictionary(add_unk=False)
    for t in types:
        label_dict.add_item(t)
    label_dict.span_labels = True
    counts: dict[str, int] = {}
    chars = Dictionary(add_unk=True)
    for ws in words:
        for w in ws:
            counts[w] = counts.get(w, 0) + 1
            for c in w:
                chars.add_item(c)
    vocab = Dictionary(add_unk=True)
    for w, n in counts.items():
        if n >= 2:
            vocab.add_item(w)
    torch.manual_seed(0)
    emb = StackedEmbeddings([OneHotEmbeddings(vocab, embedding_length=PEER["word_dim"]),
                             CharacterEmbeddings(chars, char_embedding_dim=PEER["char_emb_dim"],
                                                 hidden_size_char=PEER["char_hidden"])])
    ft = SequenceTagger(emb, label_dict, "ner", rnn_type="LSTM", tag_format="BIOES", hidden_size=PEER["hidden"],
                        use_crf=True, reproject_embeddings=False, dropout=0.0, word_dropout=0.0,
                        locked_dropout=PEER["input_dropout"])
    sents = []
    for ws, ts in zip(words, tags):
        s = Sentence(list(ws))
        for a, b, lab in spans(ts):
            s[a:b].add_label("ner", lab)
        sents.append(s)
    fl_batches = [[sents[i] for i in g] for g in batches_idx]
    opt = torch.optim.Adam(ft.parameters(), lr=1e-3)

    def train():
        ft.train()
        for batch in fl_batches:
            opt.zero_grad()
            loss, _n = ft.forward_loss(batch)
            loss.backward()
            opt.step()
            for s in batch:
                s.clear_embeddings()

    def infer():
        ft.predict(sents, mini_batch_size=args.batch_size, label_name="predicted", embedding_storage_mode="none")

    return ft, train, infer


def peer(docs, args, peak) -> None:
    words, tags = corpus(docs, "BIOES")
    w, t, n = take(words, tags, args.tokens)
    order = sorted(range(len(w)), key=lambda i: len(w[i]))
    groups = [order[k:k + args.batch_size] for k in range(0, len(order), args.batch_size)]
    fz = Featurizer.build(words, tag_set("i2b2", "BIOES"), min_count=2)  # flair's vocabulary: count >= 2 too
    ours = build_tagger("gru", fz, seed=0, **PEER)
    opt = make_optimizer(ours.parameters(), "adam", 1e-3)

    def train_ours():
        ours.train()
        for g in groups:
            opt.zero_grad()
            ours.loss(fz.encode([w[i] for i in g], [t[i] for i in g])).backward()
            opt.step()

    def infer_ours():
        predict_tags(ours, w, batch_size=args.batch_size)

    rows = [("ours", count_parameters(ours), n / time_it(train_ours, args.repeats),
             n / time_it(infer_ours, args.repeats),
             (count_flops(train_ours) / n, count_flops(infer_ours) / n))]
    fl = flair_peer(w, t, groups, args)
    if fl is None:
        print("peer: flair is not installed (pip install '.[bench]'); the flair column is skipped")
    else:
        ft, train_fl, infer_fl = fl
        rows.append(("flair", count_parameters(ft), n / time_it(train_fl, args.repeats),
                     n / time_it(infer_fl, args.repeats),
                     (count_flops(train_fl) / n, count_flops(infer_fl) / n)))
    print(f"peer: {n} tokens in {len(w)} sentences, char BiLSTM 25/25 + word 100 -> BiLSTM 150 -> CRF (BIOES), "
          f"batch {args.batch_size}")
    print(f"{'tagger':8s} {'params':>9s} {'train tok/s':>12s} {'infer tok/s':>12s} {'MFLOP/tok':>10s} "
          f"{'train GF/s':>10s} {'%peak':>6s} {'infer GF/s':>10s} {'%peak':>6s}")
    for name, params, tr, inf, fpt in rows:
        print(f"{name:8s} {params:9d} {tr:12.0f} {inf:12.0f} {fpt[1] / 1e6:10.3f} {roofline(fpt, tr, inf, peak)}")
    if len(rows) == 2:
        print(f"ours / flair: train {rows[0][2] / rows[1][2]:.2f}x, inference {rows[0][3] / rows[1][3]:.2f}x", flush=True)


def packed_cols(fast: float, packed: float | None) -> str:
    return f"{packed:8.0f} {fast / packed:6.2f} " if packed else f"{'-':>8s} {'-':>6s} "


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    word_kinds = [k for k in PRESETS if encoder_of(k) is None]  # the encoder tagger has its own benchmark
    ap.add_argument("--kinds", nargs="*", default=word_kinds, choices=word_kinds,
                    help="tagger kinds against the reference path (none: only the peer and the roofline); "
                         "the pre-trained encoder tagger is measured by benchmarks/encoder_layers.py")
    ap.add_argument("--no-peer", action="store_true", help="skip the flair comparison")
    ap.add_argument("--tokens", type=int, default=10000, help="tokens per timed run (optimised path)")
    ap.add_argument("--ref-fraction", type=int, default=10, help="the reference times tokens/this many tokens")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--patients", type=int, default=60)
    ap.add_argument("--threads", type=int, nargs="+", default=None,
                    help="torch.set_num_threads, one run per value (default: torch's choice)")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    docs = generate(patients=a.patients, sites=3, seed=a.seed)
    words, _ = corpus(docs, "IO")
    mean_len = sum(map(len, words)) / len(words)
    for threads in a.threads or [torch.get_num_threads()]:
        torch.set_num_threads(threads)
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        mm = matmul_peak(threads)
        peak = mm["peak"]
        print(f"torch {torch.__version__}, threads={torch.get_num_threads()}, load average {load:.1f} on "
              f"{os.cpu_count()} CPUs, {len(words)} synthetic sentences (mean {mean_len:.1f} tokens), batch "
              f"{a.batch_size}, median of {a.repeats}")
        print("matmul GFLOP/s: " + ", ".join(f"{k} {v:.1f}" for k, v in mm.items() if k != "peak")
              + f"  -> peak {peak:.1f}")
        if a.kinds:
            print("ref = one sentence at a time, char encoder per occurrence; packed = the optimised path with "
                  "every RNN on packed sequences (layers.packed_rnns; '-': the tagger has no LSTM, so nothing "
                  "changes), adam = with torch's for-loop Adam instead of the fused one; kernels = the word-level "
                  "RNN layers alone at [batch, mean sentence length] (kernel_ceiling), % of the same peak")
            print(f"{'kind':12s} {'labels':>6s} {'params':>9s} {'train tok/s':>12s} {'ref':>9s} {'ratio':>7s} "
                  f"{'packed':>8s} {'ratio':>6s} {'adam':>8s} {'ratio':>6s} "
                  f"{'infer tok/s':>12s} {'ref':>9s} {'ratio':>7s} {'packed':>8s} {'ratio':>6s} "
                  f"{'train GF/s':>10s} {'%peak':>6s} "
                  f"{'infer GF/s':>10s} {'%peak':>6s} {'kernels':>8s} {'train':>6s} {'infer':>6s}")
        for kind in a.kinds:
            fz, words_k, tags_k = kind_corpus(docs, kind)
            r = bench(kind, fz, words_k, tags_k, a, peak)
            print(f"{r['kind']:12s} {fz.num_labels:6d} {r['params']:9d} {r['train']:12.0f} {r['train_ref']:9.0f} "
                  f"{r['train'] / r['train_ref']:7.1f} " + packed_cols(r['train'], r['train_packed']) +
                  f"{r['train_plain_adam']:8.0f} {r['train'] / r['train_plain_adam']:6.2f} "
                  f"{r['infer']:12.0f} {r['infer_ref']:9.0f} "
                  f"{r['infer'] / r['infer_ref']:7.1f} " + packed_cols(r['infer'], r['infer_packed']) +
                  f"{roofline(r['flops_per_token'], r['train'], r['infer'], peak)} "
                  f"{'':>8s} {100 * r['ceiling'][0] / peak:5.1f}% {100 * r['ceiling'][1] / peak:5.1f}%",
                  flush=True)
        if not a.no_peer:
            peer(docs, a, peak)
        end = matmul_peak(threads)
        print(f"at the end: load average {os.getloadavg()[0]:.1f}, matmul peak {end['peak']:.1f} GFLOP/s "
              f"(%peak above is against the peak measured at the start, {peak:.1f})", flush=True)


if __name__ == "__main__":
    main()
