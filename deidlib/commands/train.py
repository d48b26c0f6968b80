"""``deidlib train OUT_DIR``: train a tagger on a corpus split, save it, score it."""

from __future__ import annotations

from ._safety import add_threads_argument, positive_float, positive_int

HELP = "train a de-identification tagger (festag, friedrich, gru, gru_gru, lstm_gru, transformer) and save it"


def add_arguments(p) -> None:
    p.add_argument(
        "out_dir", help="folder for the model (model/), history.json, scores.json and test predictions"
    )
    p.add_argument("--model", default="gru", help="tagger kind (default: gru)")
    p.add_argument("--corpus", default="synthetic", choices=("synthetic", "physionet", "i2b2"))
    p.add_argument("--data-dir", help="folder of a real corpus (see data/README.md); not with --corpus synthetic")
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
        default=None,
        help="word2vec | fasttext (trained on the training split) | none | PATH to vectors "
        "(default: word2vec; none with DP-SGD)",
    )
    p.add_argument("--epochs", type=float, default=10,
                   help="passes over the training data (default 10; fractions only with DP-SGD)")
    p.add_argument("--batch-size", type=positive_int, default=16)
    p.add_argument(
        "--optimizer", choices=("sgd", "adam", "nadam"), help="default: the paper's for this model"
    )
    p.add_argument("--lr", type=positive_float, help="default: the paper's for this model")
    p.add_argument("--lr-decay", type=float, default=0.0,
                   help="epoch t uses lr/(1+LR_DECAY*t) (Ma & Hovy 2016; default 0: constant)")
    p.add_argument("--clip", type=float, help="gradient-norm clip (default: the paper's for this model)")
    p.add_argument("--patience", type=int, help="early stopping after N epochs without better dev F1")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cpu")
    p.add_argument("--resume", action="store_true", help="continue from OUT_DIR/checkpoints/last.pt (must exist)")
    p.add_argument("--force", action="store_true", help="train into a non-empty OUT_DIR (files of the same name are replaced)")
    add_threads_argument(p)
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="tagger hyperparameter, e.g. --set hidden=64 --set crf=false (repeatable)",
    )
    g = p.add_argument_group(
        "differential privacy",
        "train with DP-SGD (deidlib.privacy.train_dp) when --dp-noise or --dp-epsilon is given; "
        "--batch-size is then the expected Poisson lot size and --epochs sets the number of steps; "
        "optimizer default adam, lr 3e-3. OUT_DIR/privacy.json gets the ledger.",
    )
    g.add_argument("--dp-noise", type=float, metavar="SIGMA", help="noise multiplier σ")
    g.add_argument("--dp-epsilon", type=float, metavar="EPS", help="target ε (σ calibrated to reach it)")
    g.add_argument("--dp-delta", type=float, default=1e-5, help="δ (default 1e-5)")
    g.add_argument("--dp-max-grad-norm", type=float, default=1.0, help="per-unit clipping bound C (default 1)")
    g.add_argument("--dp-unit", choices=("sentence", "patient"), default="sentence",
                   help="privacy unit: one sentence (the thesis) or all sentences of a patient")
    g.add_argument("--dp-accountant", choices=("prv", "rdp", "gdp"), default="prv")
    g.add_argument("--dp-secure", action="store_true",
                   help="draw lots and noise from the OS CSPRNG (not reproducible; for models to publish)")


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


def _check_paths(args):
    """OUT_DIR and --data-dir/--resume checks before any work; return OUT_DIR resolved.

    Names the real-corpus folder in use (it may have been found in a parent folder or via
    DEIDLIB_DATA_DIR rather than given)."""
    from ..corpus.locate import PHYSIONET_DEID, find_data_dir

    try:  # deidlib.datasets on main since the corpus loaders moved; deidlib.corpus.datasets before
        from ..datasets import I2B2_2014
    except ImportError:
        from ..corpus.datasets import I2B2_2014
    from ._safety import UsageError, check_output, resolve

    data = None
    if args.corpus == "synthetic":
        if args.data_dir is not None:
            raise UsageError("--data-dir is only for --corpus physionet or i2b2 (the synthetic corpus is embedded)")
    else:
        try:
            data = find_data_dir(PHYSIONET_DEID if args.corpus == "physionet" else I2B2_2014, args.data_dir)
        except FileNotFoundError as e:
            raise UsageError(f"--data-dir: {e}", code=1) from None
        if data is not None:
            print(f"deidlib train: corpus {args.corpus} from {data.resolve()}")
    ckpt = resolve(args.out_dir) / "checkpoints" / "last.pt"
    if args.resume and not ckpt.is_file():
        raise UsageError(f"--resume: no checkpoint {ckpt} (train without --resume to start over)", code=1)
    return check_output(args.out_dir, [data], what="OUT_DIR", force=args.force or args.resume,
                        against="the data folder")


def run(args) -> int:
    import sys

    from ..corpus.datasets import load_corpus
    from ..models.taggers import PRESETS
    from ..training import fit_tagger
    from ._safety import check_device, set_threads

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
    out = _check_paths(args)
    check_device(args.device)
    set_threads(args.threads)
    try:
        splits = load_corpus(
            args.corpus, args.data_dir, profile=args.profile, seed=args.seed, split=args.split
        )
    except (FileNotFoundError, ValueError) as e:
        print(f"deidlib train: {e}", file=sys.stderr)
        return 1
    dp = args.dp_noise is not None or args.dp_epsilon is not None
    if dp:
        return _run_dp(args, splits, hp, out)
    if args.epochs != int(args.epochs) or args.epochs < 1:
        print(f"deidlib train: --epochs must be a whole number >= 1 without DP-SGD, got {args.epochs:g}", file=sys.stderr)
        return 2
    kw = {k: getattr(args, k) for k in ("optimizer", "lr", "lr_decay", "patience") if getattr(args, k) is not None}
    if args.clip is not None:
        kw["clip"] = args.clip
    emb = args.embeddings or "word2vec"
    emb = None if emb.lower() == "none" else emb
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
            epochs=int(args.epochs),
            batch_size=args.batch_size,
            device=args.device,
            checkpoint_dir=out / "checkpoints",
            resume=args.resume,
            **kw,
        )
    except TypeError as e:  # an unknown --set key reaches the tagger's constructor
        print(f"deidlib train: {e}", file=sys.stderr)
        return 2
    _finish(args, splits, tagger, hist, out)
    return 0


def _finish(args, splits, tagger, hist, out, extra: dict | None = None) -> None:
    """Save model and history, score and write the test predictions, write scores.json."""
    import json

    from ..results import atomic_write_text
    from ..training import evaluate_tagger, save_tagger, write_predictions

    save_tagger(tagger, out / "model")
    atomic_write_text(out / "history.json", json.dumps(hist.to_dict(), indent=2))
    scores = {
        "corpus": args.corpus,
        "model": args.model,
        "seed": args.seed,
        "train_documents": len(splits.train),
        "test_documents": len(splits.test),
        **(extra or {}),
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


#: what DP-SGD does not cover in a `deidlib train --dp-*` run (written into privacy.json)
NOT_COVERED = {
    "vocabulary": "the word vocabulary (training words seen at least min_count times) is built from the "
    "training text without a DP mechanism; it ships inside model/config.json",
}


def _run_dp(args, splits, hp, out) -> int:
    import json
    import sys

    from ..privacy.dpsgd import patient_units, train_dp
    from ..results import atomic_write_text
    from ..training import prepare_tagger

    bad = [f"--{n.replace('_', '-')}" for n in ("patience", "clip", "resume") if getattr(args, n)]
    if args.lr_decay:
        bad.append("--lr-decay")
    if bad:
        print(f"deidlib train: {', '.join(bad)} not supported with DP-SGD (--dp-noise/--dp-epsilon)", file=sys.stderr)
        return 2
    if args.dp_noise is not None and args.dp_epsilon is not None:
        print("deidlib train: give --dp-noise or --dp-epsilon, not both", file=sys.stderr)
        return 2
    emb = args.embeddings or "none"  # word vectors trained on the private text would not be covered by DP
    not_covered = dict(NOT_COVERED)
    if emb.lower() in ("word2vec", "fasttext"):
        not_covered["embeddings"] = f"{emb} vectors trained on the training text without DP"
    try:
        sents, tagger = prepare_tagger(
            args.model, splits.train, scheme=args.scheme, encoding=args.encoding, tokenizer=args.tokenizer,
            embeddings=None if emb.lower() == "none" else emb, seed=args.seed, **hp,
        )
        units = patient_units(sents, splits.train) if args.dp_unit == "patient" else None
        hist, ledger = train_dp(
            tagger, sents, splits.dev or None, None, unit=args.dp_unit, units=units, epochs=args.epochs,
            batch_size=args.batch_size, noise_multiplier=args.dp_noise, target_epsilon=args.dp_epsilon,
            delta=args.dp_delta, max_grad_norm=args.dp_max_grad_norm, accountant=args.dp_accountant,
            optimizer=args.optimizer or "adam", lr=args.lr if args.lr is not None else 3e-3, seed=args.seed,
            device=args.device, secure=args.dp_secure,
        )
    except (TypeError, ValueError) as e:
        print(f"deidlib train: {e}", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    privacy = {**ledger.to_dict(), "not_covered_by_dp": not_covered}
    atomic_write_text(out / "privacy.json", json.dumps(privacy, indent=2))
    print(f"DP-SGD: ({ledger.epsilon:.3g}, {ledger.delta:g})-DP per {ledger.unit}, σ={ledger.noise_multiplier:.4g}, "
          f"{ledger.steps} steps, accountant {ledger.accountant}; not covered: {', '.join(not_covered)}")
    _finish(args, splits, tagger, hist, out, {"dp_epsilon": ledger.epsilon, "dp_delta": ledger.delta,
                                              "dp_unit": ledger.unit})
    return 0
