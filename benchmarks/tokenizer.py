"""Tokenizer cost per MB on single-line notes of 50 KB, 500 KB and 5 MB, side by side.

A note without line breaks is one paragraph for :func:`deidlib.corpus.tokenize.split_sentences`
and one long run for the tokenizer's expressions; the cost must grow linearly with the length
(the per-MB time of the 5 MB row close to the 50 KB row's). Two texts:

``note``
    synthetic nursing notes (``deidlib.synthetic.generate``, public templates) with every line
    break replaced by a space, repeated up to the size: dates, phone numbers, e-mail addresses,
    sentence ends and list markers of real-looking notes, on one line.
``a.a.a.``
    the adversarial case ``"a." * n``: no space at all; an expression that rescans a run from
    every position inside it is quadratic here (the e-mail alternative of the ``default`` mode
    once was: 40 KB of it then took > 5 s).

What is timed (CPU seconds of this process, the minimum of ``--repeats``): ``tokenize(text)``
(``default`` mode) and ``document_sentences`` without spans (sentence splitting, then tokenization of every
sentence: what prediction runs). The load average is printed; the machine is shared.

    python benchmarks/tokenizer.py
    python benchmarks/tokenizer.py --repeats 5 --sizes 50000 500000 5000000
"""

from __future__ import annotations

import argparse
import os
import time

from deidlib.corpus import Document
from deidlib.corpus.tokenize import document_sentences, tokenize
from deidlib.synthetic import generate


def note_text(size: int) -> str:
    docs = generate(patients=20, sites=1, seed=0)
    one_line = " ".join(" ".join(d.text.split()) for d in docs)
    return (one_line * (size // len(one_line) + 1))[:size]


def adversarial_text(size: int) -> str:
    return ("a." * (size // 2 + 1))[:size]


def best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[50_000, 500_000, 5_000_000])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}; CPU seconds per MB (min of {args.repeats}); "
          f"ratio = per-MB time at {args.sizes[-1]:,} B / at {args.sizes[0]:,} B (1.0 = linear)")
    header = f"{'text':8} {'what':18}" + "".join(f"{s:>12,} B" for s in args.sizes) + "   ratio"
    print(header)
    for name, make in (("note", note_text), ("a.a.a.", adversarial_text)):
        texts = [make(s) for s in args.sizes]
        for what, fn in (
            ("tokenize", lambda t: tokenize(t)),
            ("document_sentences", lambda t: document_sentences(Document("bench", t, []), use_spans=False)),
        ):
            per_mb = [best(lambda t=t, fn=fn: fn(t), args.repeats) / (len(t) / 1e6) for t in texts]
            print(f"{name:8} {what:18}" + "".join(f"{x:12.3f} s" for x in per_mb) + f"   {per_mb[-1] / per_mb[0]:.2f}",
                  flush=True)


if __name__ == "__main__":
    main()
