"""``deidlib train OUT_DIR``: train a tagger on a corpus split, save it, score it."""

from __future__ import annotations

HELP = "train a de-identification tagger (festag, friedrich, gru, gru_gru, lstm_gru, transformer) and save it"


def add_arguments(p) -> None:
    p.add_argument(
        "out_dir", help="folder for the model (model/), history.json, scores.json and test predictions"
    )
    p.add_argument("--model", default="gru", help="tagger kind (default: gru)")
    p.add_argument("--corpus", default="synthetic", choices=("synthetic", "physionet", "i2b2"))
    p.add_argument("--data-dir", help="folder of a real corpus (see data/README.md)")
    p.add_argument(
        "--profile",
        default="smoke",
        choices=("smoke", "cpu", "paper"),
        help="synthetic corpus size (default: smoke)",
    )
    p.add_argument("--split", choices=("patient", "document"), help="split unit (default: the corpus' own)")
    p.add_argument("--scheme", default="i2b2", choices=("i2b2", "category", "binary"), help="label scheme")
    p.add_argument("--encoding", default="BIOES", choices=("BIO", "BIOES", "IO"))
    p.add_argument("--tokenizer", default="default", choices=("default", "aggressive"))
    p.add_argument(
        "--embeddings",
        default="word2vec",
        help="word2vec | fasttext (trained on the training split) | none | PATH to vectors",
    )
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument(
        "--optimizer", choices=("sgd", "adam", "nadam"), help="default: the paper's for this model"
    )
    p.add_argument("--lr", type=float, help="default: the paper's for this model")
    p.add_argument("--lr-decay", type=float, default=0.0,
                   help="epoch t uses lr/(1+LR_DECAY*t) (Ma & Hovy 2016; default 0: constant)")
    p.add_argument("--clip", type=float, help="gradient-norm clip (default: the paper's for this model)")
    p.add_argument("--patience", type=int, help="early stopping after N epochs without better dev F1")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cpu")
    p.add_argument("--resume", action="store_true", help="continue from OUT_DIR/checkpoints/last.pt")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="tagger hyperparameter, e.g. --set hidden=64 --set crf=false (repeatable)",
    )


def _value(text: str):
    import json

    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def run(args) -> int:
    import json
    import sys
    from pathlib import Path

    from ..corpus.datasets import load_corpus
    from ..models.taggers import PRESETS
    from ..results import atomic_write_text
    from ..training import evaluate_tagger, fit_tagger, save_tagger, write_predictions

    if args.model not in PRESETS:
        print(
            f"deidlib train: unknown model {args.model!r}; choose one of {', '.join(PRESETS)}",
            file=sys.stderr,
        )
        return 2
    hp = {}
    for item in args.set:
        key, sep, val = item.partition("=")
        if not sep or not key:
            print(f"deidlib train: --set expects KEY=VALUE, got {item!r}", file=sys.stderr)
            return 2
        hp[key.strip()] = _value(val.strip())
    try:
        splits = load_corpus(
            args.corpus, args.data_dir, profile=args.profile, seed=args.seed, split=args.split
        )
    except (FileNotFoundError, ValueError) as e:
        print(f"deidlib train: {e}", file=sys.stderr)
        return 1
    out = Path(args.out_dir)
    kw = {k: getattr(args, k) for k in ("optimizer", "lr", "lr_decay", "patience") if getattr(args, k) is not None}
    if args.clip is not None:
        kw["clip"] = args.clip
    emb = None if args.embeddings.lower() == "none" else args.embeddings
    try:
        tagger, hist = fit_tagger(
            args.model,
            splits,
            scheme=args.scheme,
            encoding=args.encoding,
            tokenizer=args.tokenizer,
            embeddings=emb,
            hparams=hp,
            seed=args.seed,
            evaluate_test=False,
            epochs=args.epochs,
            batch_size=args.batch_size,
            device=args.device,
            checkpoint_dir=out / "checkpoints",
            resume=args.resume,
            **kw,
        )
    except TypeError as e:  # an unknown --set key reaches the tagger's constructor
        print(f"deidlib train: {e}", file=sys.stderr)
        return 2
    save_tagger(tagger, out / "model")
    atomic_write_text(out / "history.json", json.dumps(hist.to_dict(), indent=2))
    scores = {
        "corpus": args.corpus,
        "model": args.model,
        "seed": args.seed,
        "train_documents": len(splits.train),
        "test_documents": len(splits.test),
    }
    if splits.test:
        p, r, f = evaluate_tagger(tagger, splits.test, device=args.device)
        scores.update(test_precision=p, test_recall=r, test_f1=f)
        write_predictions(tagger, splits.test, out / "test_predictions", device=args.device)
        print(f"test binary-token P/R/F1: {p:.4f} / {r:.4f} / {f:.4f}  ({len(splits.test)} documents)")
    atomic_write_text(out / "scores.json", json.dumps(scores, indent=2))
    print(
        f"model saved to {out / 'model'}; score test predictions with: "
        f"deidlib evaluate GOLD_DIR {out / 'test_predictions'}"
    )
    return 0
