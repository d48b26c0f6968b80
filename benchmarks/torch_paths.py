"""Each speed-up the models keep in torch operators, against its simplest alternative, side by
side in one process: the median of ``--rounds`` interleaved rounds (one warm-up), and the ratio
simple / kept (> 1: the kept path is faster).

Inputs are the synthetic corpus' sentences (``deidlib.synthetic.generate``), length-bucketed
batches of ``--batch-size`` as the trainer makes them, ``--tokens`` tokens per round, at the
presets' sizes:

* word RNN layer, training (forward + backward) and inference: :func:`run_rnn_padded` (padded
  batch, one ``torch.lstm``/``torch.gru`` call per direction) against the packed RNN; LSTM
  300 → 128 (friedrich), GRU 150 → 150 (gru);
* character encoder, training and inference: :func:`grouped_final_states` (padded, in groups of
  similar word length) against the packed RNN, over each batch's distinct tokens; LSTM and GRU
  25 → 25 (the gru preset's, flair's);
* CRF log-partition, forward + backward: :meth:`CRF.log_partition` (scaled-space matrix product
  per step) against the plain ``logsumexp`` recursion, BIOES (113 tags) and BIO (57);
* Viterbi over a constrained BIOES CRF (113 tags): the maximum over each tag's allowed
  predecessors (:meth:`CRF._viterbi_step`) against the full [B, L, L] maximum.

    OMP_NUM_THREADS=1 python benchmarks/torch_paths.py --rounds 7
"""

from __future__ import annotations

import argparse
import statistics
import time
from contextlib import nullcontext
from unittest import mock

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from deidlib.corpus.labels import tag_set, tagged_sentences
from deidlib.models.crf import CRF
from deidlib.models.layers import grouped_final_states, run_rnn_padded
from deidlib.synthetic import generate


def side_by_side(fns: dict, rounds: int) -> dict[str, float]:
    """Median seconds of each function over ``rounds`` interleaved rounds, after one warm-up."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    for f in fns.values():
        f()
    for _ in range(rounds):
        for k, f in fns.items():
            t0 = time.perf_counter()
            f()
            times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def packed(rnn, x, lengths):
    out, h = rnn(pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False))
    return pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])[0], (h[0] if isinstance(h, tuple) else h)


def batches_of(words: list[list[str]], bs: int) -> list[list[list[str]]]:
    order = sorted(range(len(words)), key=lambda i: len(words[i]))
    return [[words[i] for i in order[k:k + bs]] for k in range(0, len(order), bs)]


def rnn_case(cls, d_in: int, hidden: int, shapes, grad: bool, fn_kept, fn_simple):
    """(kept, simple) closures running every batch of ``shapes`` through a fresh layer."""
    torch.manual_seed(0)
    rnn = cls(d_in, hidden, batch_first=True, bidirectional=True).train(grad)
    data = [(torch.randn(len(ls), max(ls), d_in, requires_grad=grad), torch.tensor(ls)) for ls in shapes]

    def run(fn):
        def go():
            with torch.set_grad_enabled(grad):
                for x, ls in data:
                    out = fn(rnn, x, ls)
                    if grad:
                        out.sum().backward()
        return go
    return run(fn_kept), run(fn_simple)


def plain_log_partition(crf: CRF, em: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The forward algorithm as the textbook writes it: one ``logsumexp`` over [B, L, L] per step."""
    transitions, start, end = crf._scores()
    alpha = start + em[:, 0]
    for t in range(1, em.shape[1]):
        nxt = torch.logsumexp(alpha.unsqueeze(2) + transitions, 1) + em[:, t]
        alpha = torch.where(mask[:, t].unsqueeze(1), nxt, alpha)
    return torch.logsumexp(alpha + end, 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=4000)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--patients", type=int, default=20)
    ap.add_argument("--only", choices=["rnn", "crf"], default=None, help="only the RNN or only the CRF cases")
    a = ap.parse_args()
    sents = tagged_sentences(generate(patients=a.patients, sites=3, seed=0), "i2b2", "BIOES")
    words, n = [], 0
    for s in sents:
        if n >= a.tokens:
            break
        words.append(s.words)
        n += len(s.words)
    batches = batches_of(words, a.batch_size)
    sent_lengths = [[len(w) for w in b] for b in batches]
    char_lengths = [[len(t) for t in sorted({t for w in b for t in w})] for b in batches]
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s); {n} tokens in {len(words)} sentences, "
          f"{len(batches)} batches of {a.batch_size}; median of {a.rounds} interleaved rounds (seconds per round)")
    print(f"{'case':44s} {'kept':>9s} {'simple':>9s} {'simple/kept':>11s}")

    def report(name, kept, simple):
        t = side_by_side({"kept": kept, "simple": simple}, a.rounds)
        print(f"{name:44s} {t['kept']:9.4f} {t['simple']:9.4f} {t['simple'] / t['kept']:11.2f}", flush=True)

    padded_out = lambda rnn, x, ls: run_rnn_padded(rnn, x, ls)[0]  # noqa: E731
    packed_out = lambda rnn, x, ls: packed(rnn, x, ls)[0]  # noqa: E731
    grouped_h = lambda rnn, x, ls: grouped_final_states(rnn, x, ls)  # noqa: E731
    packed_h = lambda rnn, x, ls: packed(rnn, x, ls)[1]  # noqa: E731
    for grad in (True, False) if a.only != "crf" else ():
        what = "train" if grad else "infer"
        for cls, d_in, hid, label in ((nn.LSTM, 300, 128, "LSTM 300->128"), (nn.GRU, 150, 150, "GRU 150->150")):
            report(f"word {label} {what}: padded vs packed", *rnn_case(cls, d_in, hid, sent_lengths, grad,
                                                                        padded_out, packed_out))
        for cls, label in ((nn.LSTM, "LSTM"), (nn.GRU, "GRU")):
            report(f"char {label} 25->25 {what}: grouped vs packed", *rnn_case(cls, 25, 25, char_lengths, grad,
                                                                                grouped_h, packed_h))

    for enc in ("BIOES", "BIO") if a.only != "rnn" else ():
        labels = tag_set("i2b2", enc)
        torch.manual_seed(0)
        crf = CRF(len(labels), labels)
        data = []
        for ls in sent_lengths:
            lt = torch.tensor(ls)
            data.append((torch.randn(len(ls), max(ls), len(labels), requires_grad=True),
                         torch.arange(max(ls)) < lt.unsqueeze(1)))

        def logz(fn, crf=crf, data=data):
            def go():
                for em, mask in data:
                    fn(crf, em, mask).sum().backward()
            return go
        report(f"CRF log Z fwd+bwd {enc} {len(labels)}: scaled vs logsumexp",
               logz(lambda c, e, m: c.log_partition(e, m)), logz(plain_log_partition))
        transitions = crf._scores()[0].detach().masked_fill(~crf.viterbi_allowed, float("-inf"))
        trans_t = transitions.t().contiguous()  # [cur, prev]

        def full_step(score, trans_t=trans_t):
            return (score.unsqueeze(1) + trans_t.unsqueeze(0)).amax(2)

        def sweep(step, data=data):
            def go():
                with torch.no_grad():
                    for em, _ in data:
                        score = em[:, 0]
                        for t in range(1, em.shape[1]):
                            score = step(score) + em[:, t]
            return go
        report(f"Viterbi sweep {enc} {len(labels)}: allowed vs full", sweep(crf._viterbi_step(transitions)),
               sweep(full_step))

        def decode(full, crf=crf, data=data):
            def go():
                with mock.patch.object(CRF, "_viterbi_step", lambda self, tr: full_step) if full else nullcontext():
                    for em, mask in data:
                        crf.decode(em.detach(), mask)
            return go
        report(f"CRF.decode {enc} {len(labels)}: allowed vs full", decode(False), decode(True))

if __name__ == "__main__":
    main()
