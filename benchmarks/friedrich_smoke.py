"""Brief measurements for the friedrich library (Friedrich et al., ACL 2019) on the synthetic
smoke corpus, one thread, a few minutes; notebooks 05/06 will do the full sweeps.

1. The section 8 subword statistic: over the distinct PHI tokens of the training split
   (aggressive tokenizer, binary labels), the mean number of a token's N = 100 nearest
   neighbours that contain it as a substring, FastText (trained on the public medical
   abstracts) vs GloVe 6B 50-d (paper, i2b2: 7.37 vs 0.44).
2. A tiny DANN run against a tiny three-phase (Feutry) run with the same model sizes, then the
   frozen-representation adversary (K more epochs) on test-split pairs, and the de-identification
   head's binary token F1 on the test split. Control ("no privacy"): the representation without
   noise after P1 only (never trained against an adversary), attacked the same way: if its
   adversary is at chance too, the attack budget is too small to tell the procedures apart.

    python benchmarks/friedrich_smoke.py                     # both
    python benchmarks/friedrich_smoke.py --skip-adversarial  # subword statistic only
"""

from __future__ import annotations

import argparse
import time

import torch

from deidlib.corpus import tag_set, tagged_sentences
from deidlib.datasets import load_corpus
from deidlib.embeddings.neighbours import NeighbourIndex
from deidlib.embeddings.public import fasttext_public, load_glove
from deidlib.evaluation import binary_tag_prf
from deidlib.privacy.adversarial import (
    AdversarialModel,
    AdversarialTrainer,
    encode_sentences,
    frozen_adversary_accuracy,
    train_dann,
    train_three_phase,
)
from deidlib.privacy.pseudonymize import default_skip, subword_statistic


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n", type=int, default=100, help="neighbours N (subword statistic and fake pairs)")
    ap.add_argument("--max-train", type=int, default=400, help="training sentences for the adversarial runs")
    ap.add_argument("--epochs", type=int, default=3, help="epochs per phase (P1, P2, P3) / DANN epochs = 2x")
    ap.add_argument("--frozen-epochs", type=int, default=10, help="K: adversary epochs on the frozen representation")
    ap.add_argument("--skip-adversarial", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(1)

    sp = load_corpus("synthetic", profile="smoke", seed=args.seed)
    train = tagged_sentences(sp.train, "binary", "BIO", "aggressive")
    test = tagged_sentences(sp.test, "binary", "BIO", "aggressive")
    dev = tagged_sentences(sp.dev, "binary", "BIO", "aggressive")
    phi = [w for s in train for w, t in zip(s.words, s.tags) if t != "O"]
    words_only = [w for w in phi if not default_skip(w)]
    alpha = [w for w in phi if w.isalpha()]
    digits = [w for w in phi if w.isdigit()]

    t0 = time.perf_counter()
    glove, ft = load_glove(), fasttext_public(dim=50, seed=args.seed)
    print(f"embeddings: {glove.name} {len(glove):,} words; {ft.name} {len(ft):,} words "
          f"({time.perf_counter() - t0:.1f} s incl. FastText training or cache)")
    for emb in (ft, glove):
        idx = NeighbourIndex(emb)
        t0 = time.perf_counter()
        a = subword_statistic(phi, idx, args.n)
        b = subword_statistic(words_only, idx, args.n)
        c = subword_statistic(alpha, idx, args.n)
        d = subword_statistic(digits, idx, args.n)
        print(f"subword statistic N={args.n} {emb.name:24s}: all PHI tokens {a['mean']:.2f} "
              f"({a['tokens']} distinct, {a['without_vector']} without vector); without punctuation/stop words "
              f"{b['mean']:.2f} ({b['tokens']}); alphabetic {c['mean']:.2f} ({c['tokens']}); "
              f"digits {d['mean']:.2f} ({d['tokens']}) [{time.perf_counter() - t0:.1f} s]")
    if args.skip_adversarial:
        return

    labels = tag_set("binary", "BIO")
    index = NeighbourIndex(glove)
    tr = encode_sentences(train[: args.max_train], glove, labels)
    dv = encode_sentences(dev, glove, labels)
    te = encode_sentences(test, glove, labels)
    sizes = dict(d=50, deid_hidden=32, deid_layers=1, adv_hidden=32)
    for name in ("control", "three-phase", "DANN"):
        t0 = time.perf_counter()
        model = AdversarialModel.build(glove.dim, labels, seed=args.seed, noise=name != "control", **sizes)
        t = AdversarialTrainer(model, glove, index, tr, dv, n_neighbours=args.n, batch_size=32, lr=2e-3,
                               seed=args.seed)
        if name == "DANN":
            hist = train_dann(t, epochs=2 * args.epochs, patience=2)
        elif name == "control":
            hist = []
            for _ in range(args.epochs):
                hist.append({"stage": "P1", "train": t.run_epoch("deid"), "dev": t.evaluate()})
        else:
            hist = train_three_phase(t, p1_epochs=args.epochs, p2_epochs=args.epochs, p3_epochs=args.epochs,
                                     patience=2)
        last = hist[-1]["dev"]
        fz = frozen_adversary_accuracy(t, te, epochs=args.frozen_epochs)
        f1 = binary_tag_prf([s.tags for s in te], t.predict(te)).f1
        std_in = model.representation.noise_in.std.mean().item()
        std_out = model.representation.noise_out.std.mean().item()
        print(f"{name:11s}: {len(hist)} epochs [{', '.join(h['stage'] for h in hist)}]; dev adv acc at the end "
              f"{last['adv_acc']:.3f}; frozen adversary after K={args.frozen_epochs}: test acc {fz['accuracy']:.3f} "
              f"({fz['pairs']} pairs), train acc {fz['train_accuracy']:.3f}; test binary token F1 {f1:.3f}; "
              f"mean noise std in/out {std_in:.3f}/{std_out:.3f} [{time.perf_counter() - t0:.0f} s]")


if __name__ == "__main__":
    main()
