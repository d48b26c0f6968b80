"""``deidlib train OUT_DIR``: train a tagger on a corpus split, save it, score it."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from ._safety import (
    UsageError,
    add_threads_argument,
    check_device,
    check_output,
    loading,
    nonneg_float,
    nonneg_int,
    positive_float,
    positive_int,
    set_threads,
    staged_dir,
    unit_float,
)

HELP = "train a de-identification tagger (festag, friedrich, gru, gru_gru, lstm_gru, transformer) and save it"


def add_arguments(p) -> None:
    p.add_argument(
        "out_dir", help="folder for the model (model/), history.json, scores.json and test predictions"
    )
    p.add_argument("--model", default="gru",
                   help="tagger kind (default: gru): festag, friedrich, gru, gru_gru, lstm_gru, transformer, or minilm "
                        "(the pre-trained all-MiniLM-L6-v2 encoder fine-tuned, from local files; "
                        "--set finetune_layers=0 freezes it)")
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
    p.add_argument("--epochs", type=positive_float, default=10,
                   help="passes over the training data (default 10; fractions only with DP-SGD)")
    p.add_argument("--batch-size", type=positive_int,
                   help="sentences per batch (default 16; on a CUDA device without DP-SGD the profile's device "
                        "batch, deidlib.profiles.batch_size_for; with DP-SGD the expected lot size, default 16)")
    p.add_argument(
        "--optimizer", choices=("sgd", "adam", "nadam"), help="default: the paper's for this model"
    )
    p.add_argument("--lr", type=positive_float, help="default: the paper's for this model")
    p.add_argument("--lr-decay", type=nonneg_float, default=0.0,
                   help="epoch t uses lr/(1+LR_DECAY*t) (Ma & Hovy 2016; default 0: constant)")
    p.add_argument("--clip", type=positive_float, help="gradient-norm clip (default: the paper's for this model)")
    p.add_argument("--patience", type=positive_int, help="early stopping after N epochs without better dev F1")
    p.add_argument("--seed", type=nonneg_int, default=0)
    p.add_argument("--split-seed", type=nonneg_int, metavar="S",
                   help="seed of the corpus (generation and train/dev/test split) only (default: --seed); "
                        "models trained with different --seed and one --split-seed share their test notes, "
                        "e.g. the members of an ensemble ('deidlib ensemble OUT_DIR MODEL MODEL ...')")
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
    op = p.add_argument_group(
        "operating point",
        "the decision rule saved with the model (deidlib.models.decoding): by default the model's own "
        "(Viterbi / arg-max); a threshold on the PHI marginal 1 - P(O) trades precision for recall",
    ).add_mutually_exclusive_group()
    op.add_argument("--phi-threshold", type=unit_float, metavar="T",
                    help="mark a token as PHI when its PHI marginal is >= T")
    op.add_argument("--target-recall", type=unit_float, metavar="R",
                    help="choose T on the dev split: the highest threshold of the grid whose dev recall "
                    "is >= R (error if none reaches it)")
    g = p.add_argument_group(
        "differential privacy",
        "train with DP-SGD (deidlib.privacy.train_dp) when --dp-noise or --dp-epsilon is given; "
        "--batch-size is then the expected Poisson lot size and --epochs sets the number of steps; "
        "optimizer default adam, lr 3e-3. Noise and lots come from the OS CSPRNG; the word vocabulary "
        "is chosen by a DP mechanism whose ε is composed into the printed guarantee. "
        "OUT_DIR/privacy.json gets the ledger and the guarantee.",
    )
    g.add_argument("--dp-recipe", metavar="NAME", default=None,
                   help="train with a DP recipe of deidlib.studies.dp_recipes (e.g. synthetic_minilm: a head on the "
                        "frozen public MiniLM encoder, pre-trained on the synthetic corpus without DP, then "
                        "DP-fine-tuned); the recipe fixes the tagger, lot, epochs, "
                        "optimiser, learning rate and thinning (--model, --set, --batch-size, --epochs, --lr and "
                        "--optimizer are not used); needs --dp-epsilon")
    g.add_argument("--dp-noise", type=float, metavar="SIGMA", help="noise multiplier σ, in (0, 1000]")
    g.add_argument("--dp-epsilon", type=float, metavar="EPS", help="target ε in (0, 100] (σ calibrated to reach it)")
    g.add_argument("--dp-delta", type=float, default=1e-5, help="δ (default 1e-5)")
    g.add_argument("--dp-max-grad-norm", type=float, default=1.0, help="per-unit clipping bound C (default 1)")
    g.add_argument("--dp-unit", choices=("sentence", "patient"), default="sentence",
                   help="privacy unit: one sentence (the thesis) or all sentences of a patient")
    g.add_argument("--dp-accountant", choices=("prv", "rdp", "gdp"), default="prv")
    g.add_argument("--dp-seeded-noise", action="store_true",
                   help="draw lots, noise and the DP vocabulary's noise from generators seeded with --seed "
                        "(reproducible research runs only: the guarantee does NOT hold against anyone who holds "
                        "the seed; default: the OS CSPRNG)")
    g.add_argument("--dp-secure", action="store_true",
                   help="OS CSPRNG for lots and noise: the default (kept for compatibility)")
    g.add_argument("--write-test-predictions", action="store_true",
                   help="with DP-SGD on a real corpus (i2b2, physionet): also write OUT_DIR/test_predictions/*.xml, "
                        "which copy the test notes verbatim under their original file names and are NOT covered by "
                        "the DP guarantee (default: not written; the test scores are)")
    g.add_argument("--dp-vocab", default="dp", metavar="dp|training|PATH",
                   help="word vocabulary under DP: 'dp' (default) a DP vocabulary (Gaussian partition selection "
                        "per privacy unit, ε composed into the guarantee); 'training' every training word seen "
                        "twice, NOT covered by the guarantee (stated in the output); PATH a file of public words, "
                        "one per line")
    g.add_argument("--dp-vocab-noise", type=float, default=4.0, metavar="SIGMA",
                   help="noise multiplier of the DP vocabulary (default 4)")
    g.add_argument("--dp-vocab-max-words", type=int, default=8, metavar="K",
                   help="distinct words one privacy unit may contribute to the DP vocabulary (default 8)")


def _value(text: str):
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
    DEIDLIB_DATA_DIR rather than given). OUT_DIR and its checkpoints/ folder must lie clear
    of every input (the data folder, a vectors file, a --dp-vocab word list); the checkpoint
    to resume from is read here, so that a broken or crafted one is refused before any work."""
    from ..corpus.locate import PHYSIONET_DEID, find_data_dir
    from ..datasets import I2B2_2014
    from ..training.trainer import load_checkpoint

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
    inputs = [("the data folder", data)]
    if args.embeddings and args.embeddings.lower() not in ("word2vec", "fasttext", "none"):
        inputs.append(("--embeddings", args.embeddings))
    if args.dp_vocab not in ("dp", "training"):
        inputs.append(("--dp-vocab", args.dp_vocab))
    out = check_output(args.out_dir, inputs, what="OUT_DIR", force=args.force or args.resume)
    ckpt_dir = out / "checkpoints"
    if ckpt_dir.is_symlink():
        raise UsageError(f"OUT_DIR {args.out_dir}: checkpoints/ is a symlink; it is not followed for writing")
    check_output(ckpt_dir, inputs, what="OUT_DIR/checkpoints", force=True)
    ckpt = ckpt_dir / "last.pt"
    if args.resume:
        if not ckpt.is_file():
            raise UsageError(f"--resume: no checkpoint {ckpt} (train without --resume to start over)", code=1)
        with loading(Path(args.out_dir) / "checkpoints" / "last.pt"):
            load_checkpoint(ckpt)
    return out


def run(args) -> int:
    from ..datasets import load_corpus
    from ..models.taggers import PRESETS
    from ..training import fit_tagger
    from ..training.trainer import CheckpointError

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
            args.corpus, args.data_dir, profile=args.profile,
            seed=args.seed if args.split_seed is None else args.split_seed, split=args.split
        )
    except (FileNotFoundError, ValueError) as e:
        print(f"deidlib train: {e}", file=sys.stderr)
        return 1
    dp = args.dp_noise is not None or args.dp_epsilon is not None or args.dp_recipe is not None
    if args.batch_size is None:  # a DP lot size is part of the accounting: never scaled by the device
        from ..profiles import batch_size_for

        args.batch_size = 16 if dp else batch_size_for(args.profile, args.device, 16)
    if dp:
        if args.target_recall is not None:
            # the threshold would be a statistic of the (private) dev notes, outside the DP guarantee
            print("deidlib train: --target-recall chooses a threshold on private dev notes, outside the DP "
                  "guarantee; with DP-SGD give a fixed --phi-threshold (post-processing)", file=sys.stderr)
            return 2
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
    except CheckpointError as e:  # a checkpoint of another tagger (e.g. other --set values)
        raise UsageError(f"cannot load {e}") from None
    _finish(args, splits, tagger, hist, out)
    return 0


def _operating_point(args, splits, tagger) -> dict:
    """Set ``tagger.task["phi_threshold"]`` from --phi-threshold / --target-recall; return what
    scores.json records about it (the dev precision–recall curve when one was computed)."""
    from ..training import THRESHOLD_GRID, choose_threshold

    if args.phi_threshold is not None:
        tagger.task = {**tagger.task, "phi_threshold": args.phi_threshold}
        return {"phi_threshold": args.phi_threshold}
    if args.target_recall is None:
        return {}
    if not splits.dev:
        raise UsageError("--target-recall needs a dev split to choose the threshold on", code=1)
    th, curve = choose_threshold(tagger, splits.dev, args.target_recall, device=args.device)
    if th is None:
        best = max(p["recall"] for p in curve)
        raise UsageError(f"--target-recall {args.target_recall:g}: no threshold down to {THRESHOLD_GRID[-1]:g} "
                         f"reaches it on the dev split (best dev recall {best:.4f})", code=1)
    point = next(p for p in curve if p["threshold"] == th)
    print(f"operating point: PHI threshold {th:g} (dev P/R/F1 {point['precision']:.4f} / {point['recall']:.4f} / "
          f"{point['f1']:.4f}; target recall {args.target_recall:g})")
    tagger.task = {**tagger.task, "phi_threshold": th}
    return {"phi_threshold": th, "target_recall": args.target_recall, "dev_operating_points": curve}


def _finish(args, splits, tagger, hist, out, extra: dict | None = None, files: dict | None = None,
            predictions: bool = True) -> None:
    """Save model and history, score the test notes and write their predictions (unless
    ``predictions`` is False), write scores.json and ``files`` (name -> text), all staged next
    to OUT_DIR and moved in only when complete."""
    extra = {**(extra or {}), **_operating_point(args, splits, tagger)}
    with staged_dir(out) as tmp:
        _write_run(args, splits, tagger, hist, tmp, extra, files or {}, predictions)
    if predictions and splits.test:
        print(f"model saved to {out / 'model'}; score test predictions with: "
              f"deidlib evaluate GOLD_DIR {out / 'test_predictions'}")
    else:
        print(f"model saved to {out / 'model'}")


def _writes_test_predictions(args) -> bool:
    """Under DP-SGD, test predictions (the test notes verbatim, under their file names) are
    written only for the synthetic corpus or when asked (``--write-test-predictions``)."""
    return args.corpus == "synthetic" or args.write_test_predictions


def _not_covered_outputs(args, splits, predictions: bool, hist) -> dict[str, str]:
    """What a DP run writes besides the weights that the (ε, δ) guarantee does not cover:
    statistics of the held-out notes, the notes themselves when asked, the user's choices."""
    out = {}
    if splits.test:
        out["test_scores"] = (f"scores.json's test P/R/F1 are computed without DP on the {len(splits.test)} test notes "
                              "(held out of training, not protected by the guarantee)")
    if any("dev_f1" in e for e in hist.epochs):
        out["dev_scores"] = (f"history.json's per-epoch dev P/R/F1 are computed without DP on the {len(splits.dev)} "
                             "dev notes")
    if predictions and splits.test:
        out["test_predictions"] = ("test_predictions/*.xml copy the test notes verbatim, under their original file "
                                   "names, with the model's PHI tags")
    if args.phi_threshold is not None:
        out["phi_threshold"] = ("the decision threshold (--phi-threshold) is the user's choice: covered only if it "
                                "was not chosen by looking at private notes")
    out["hyperparameters"] = ("model, lot size, epochs, learning rate, clipping bound and noise are the user's "
                              "choices: covered only if they were not tuned on private notes")
    return out


def _write_run(args, splits, tagger, hist, out, extra: dict, files: dict, predictions: bool = True) -> None:
    from ..results import atomic_write_text
    from ..training import evaluate_tagger, save_tagger, write_predictions

    for name, text in files.items():
        atomic_write_text(out / name, text)
    save_tagger(tagger, out / "model")
    atomic_write_text(out / "history.json", json.dumps(hist.to_dict(), indent=2))
    scores = {
        "corpus": args.corpus,
        "model": args.model,
        "seed": args.seed,
        "split_seed": args.seed if args.split_seed is None else args.split_seed,
        "train_documents": len(splits.train),
        "test_documents": len(splits.test),
        **(extra or {}),
    }
    if splits.test:
        p, r, f = evaluate_tagger(tagger, splits.test, device=args.device)
        scores.update(test_precision=p, test_recall=r, test_f1=f)
        if predictions:
            write_predictions(tagger, splits.test, out / "test_predictions", device=args.device)
        print(f"test binary-token P/R/F1: {p:.4f} / {r:.4f} / {f:.4f}  ({len(splits.test)} documents)")
    atomic_write_text(out / "scores.json", json.dumps(scores, indent=2))


def _run_dp_recipe(args, splits, out, secure: bool) -> int:
    """``--dp-recipe NAME --dp-epsilon EPS``: one model of a DP recipe (``train_recipe``), saved with
    its privacy.json like any DP model. The recipes' taggers read a public encoder's pieces: there
    is no vocabulary of training words, so the guarantee covers everything trained on the notes."""
    from ..privacy.ledger import SEEDED_NOTE
    from ..studies.dp_recipes import RECIPES, train_recipe, with_overrides

    if args.dp_recipe not in RECIPES:
        print(f"deidlib train: unknown --dp-recipe {args.dp_recipe!r}; choose one of {', '.join(RECIPES)}",
              file=sys.stderr)
        return 2
    if args.dp_epsilon is None or args.dp_noise is not None:
        print("deidlib train: --dp-recipe calibrates σ to a target: give --dp-epsilon (not --dp-noise)", file=sys.stderr)
        return 2
    recipe = RECIPES[args.dp_recipe]
    predictions = _writes_test_predictions(args)
    if recipe.public_vectors is None and recipe.kind != "minilm":
        print(f"deidlib train: recipe {recipe.name!r} builds a vocabulary of training words, which DP-SGD does not "
              "cover; train it with --model/--dp-vocab instead", file=sys.stderr)
        return 2
    over = {"unit": args.dp_unit, "max_grad_norm": args.dp_max_grad_norm}
    if recipe.pretrain is not None:
        over["guideline"] = "physionet" if args.corpus == "physionet" else "i2b2"
    recipe = with_overrides(recipe, **over)
    try:
        m = train_recipe(recipe, splits.train, epsilon=args.dp_epsilon, seed=args.seed, delta=args.dp_delta,
                         accountant=args.dp_accountant, secure=secure, progress=True)
    except (ImportError, TypeError, ValueError) as e:
        print(f"deidlib train: {e}", file=sys.stderr)
        return 2
    ledger = m["ledger"]
    public = "the public all-MiniLM-L6-v2 encoder's pieces" if recipe.kind == "minilm" else "GloVe's words"
    text = (f"({ledger.epsilon:.3g}, {ledger.delta:g})-DP per {ledger.unit} for the weights (the vocabulary is "
            f"public: {public})")
    if recipe.pretrain is not None:
        text += "; the head was pre-trained without DP on the package's synthetic corpus (no private data)"
    if not secure:
        text += f"; seeded noise (--dp-seeded-noise, seed {args.seed}): {SEEDED_NOTE}"
    privacy = {**ledger.to_dict(), "recipe": {k: v for k, v in vars(recipe).items()},
               "guarantee": {"epsilon": ledger.epsilon, "delta": ledger.delta, "unit": ledger.unit, "text": text,
                             "randomness": "os-csprng" if secure else "seeded", "composition": "DP-SGD ledger"},
               "not_covered_by_dp": {**_not_covered_outputs(args, splits, predictions, m["history"]),
                                     "hyperparameters": "the recipe's settings (and the synthetic generator's design) "
                                                        "were chosen on the nursing notes' dev split"}}
    files = {"privacy.json": json.dumps(privacy, indent=2, default=str)}
    print(f"DP-SGD recipe {recipe.name}: {text}; σ={ledger.noise_multiplier:.4g}, {ledger.steps} steps of lot "
          f"{ledger.expected_batch_size:.0f}, accountant {ledger.accountant}")
    if not secure:
        print(f"WARNING: {SEEDED_NOTE}", file=sys.stderr)
    args.model = recipe.kind
    scores_extra = {"dp_epsilon": ledger.epsilon, "dp_delta": ledger.delta, "dp_unit": ledger.unit,
                    "dp_guarantee": text, "dp_randomness": "os-csprng" if secure else "seeded",
                    "dp_recipe": recipe.name}
    _finish(args, splits, m["tagger"], m["history"], out, scores_extra, files, predictions)
    return 0


#: δ of the DP vocabulary's threshold, as a fraction of --dp-delta (the rest goes to the accountant)
VOCAB_DELTA_FRACTION = 0.1


def _dp_vocabulary(args, splits, units_of):
    """(word list or None, privacy.json record, not-covered entry or None, δ_τ) for --dp-vocab."""
    import numpy as np

    from ..corpus.labels import tagged_sentences
    from ..embeddings.vectors import normalize_token
    from ..privacy.vocabulary import dp_vocabulary
    from ..rng import derive_seed

    mode = args.dp_vocab
    if mode == "training":
        return None, {"source": "training", "covered_by_dp": False}, (
            "the word vocabulary (every training word seen at least twice, most frequent first) is built from "
            "the training text without a DP mechanism; it ships inside model/config.json and can name "
            "training PHI"), None
    if mode != "dp":
        path = Path(mode)
        if not path.is_file():
            raise ValueError(f"--dp-vocab: expected 'dp', 'training' or a word-list file, got {mode!r}")
        words = [normalize_token(w.strip()) for w in path.read_text(encoding="utf-8").splitlines() if w.strip()]
        return words, {"source": str(path), "size": len(set(words)), "covered_by_dp": "only if the file is public"}, (
            f"the word vocabulary is read from {path}: covered only if that file is public (not derived from "
            "the training data)"), None
    sents = tagged_sentences(splits.train, args.scheme, args.encoding, args.tokenizer)
    keys = units_of(sents)
    groups: dict = {}
    for s_, k in zip(sents, keys):
        groups.setdefault(k, []).extend(s_.words)
    rng = np.random.default_rng(derive_seed(args.seed, "dp-vocab")) if args.dp_seeded_noise else None
    rel = dp_vocabulary(list(groups.values()), unit=args.dp_unit, noise_multiplier=args.dp_vocab_noise,
                        max_words_per_unit=args.dp_vocab_max_words,
                        delta_threshold=args.dp_delta * VOCAB_DELTA_FRACTION, rng=rng)
    return rel.words, {"source": "dp", "covered_by_dp": True, **rel.to_dict()}, None, rel


def _run_dp(args, splits, hp, out) -> int:
    from ..privacy.accounting import MAX_NOISE_MULTIPLIER, MAX_TARGET_EPSILON
    from ..privacy.dpsgd import patient_units, train_dp
    from ..privacy.ledger import SEEDED_NOTE
    from ..privacy.vocabulary import total_guarantee
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
    if args.dp_noise is not None and not args.dp_noise > 0:
        print(f"deidlib train: --dp-noise must be > 0 (got {args.dp_noise:g}): σ = 0 adds no noise, so the model "
              "would have no privacy guarantee (ε = ∞); train without --dp-noise for a non-private model",
              file=sys.stderr)
        return 2
    if args.dp_noise is not None and not args.dp_noise <= MAX_NOISE_MULTIPLIER:
        print(f"deidlib train: --dp-noise must be at most {MAX_NOISE_MULTIPLIER:g} (got {args.dp_noise:g}): a larger σ "
              "drowns every gradient and the accountants only report their floor", file=sys.stderr)
        return 2
    if args.dp_epsilon is not None and not 0 < args.dp_epsilon <= MAX_TARGET_EPSILON:
        print(f"deidlib train: --dp-epsilon must lie in (0, {MAX_TARGET_EPSILON:g}] (got {args.dp_epsilon:g}): a larger "
              "ε promises nothing; train without --dp-epsilon for a non-private model", file=sys.stderr)
        return 2
    if not 0 < args.dp_delta < 1:
        print(f"deidlib train: --dp-delta must lie in (0, 1) (got {args.dp_delta:g})", file=sys.stderr)
        return 2
    if args.dp_seeded_noise and args.dp_secure:
        print("deidlib train: give --dp-seeded-noise or --dp-secure, not both", file=sys.stderr)
        return 2
    secure = not args.dp_seeded_noise
    if args.dp_recipe is not None:
        return _run_dp_recipe(args, splits, out, secure)
    emb = args.embeddings or "none"  # word vectors trained on the private text would not be covered by DP
    predictions = _writes_test_predictions(args)
    not_covered = {}
    if emb.lower() in ("word2vec", "fasttext"):
        not_covered["embeddings"] = f"{emb} vectors trained on the training text without DP"

    def units_of(sents):
        return patient_units(sents, splits.train) if args.dp_unit == "patient" else list(range(len(sents)))

    try:
        words, vocab_record, vocab_note, rel = _dp_vocabulary(args, splits, units_of)
        if vocab_note:
            not_covered["vocabulary"] = vocab_note
        history = [rel.accountant_phase()] if rel else []
        delta_tau = rel.delta_threshold if rel else 0.0
        target = args.dp_epsilon + math.log1p(-delta_tau) if args.dp_epsilon is not None else None
        sents, tagger = prepare_tagger(
            args.model, splits.train, scheme=args.scheme, encoding=args.encoding, tokenizer=args.tokenizer,
            embeddings=None if emb.lower() == "none" else emb, seed=args.seed, vocabulary=words, **hp,
        )
        units = patient_units(sents, splits.train) if args.dp_unit == "patient" else None
        hist, ledger = train_dp(
            tagger, sents, splits.dev or None, None, unit=args.dp_unit, units=units, epochs=args.epochs,
            batch_size=args.batch_size, noise_multiplier=args.dp_noise, target_epsilon=target,
            delta=args.dp_delta - delta_tau, max_grad_norm=args.dp_max_grad_norm, accountant=args.dp_accountant,
            optimizer=args.optimizer or "adam", lr=args.lr if args.lr is not None else 3e-3, seed=args.seed,
            device=args.device, secure=secure, history=history,
        )
    except (TypeError, ValueError) as e:
        print(f"deidlib train: {e}", file=sys.stderr)
        return 2
    not_covered = {**_not_covered_outputs(args, splits, predictions, hist), **not_covered}
    eps, delta = total_guarantee(ledger.epsilon, ledger.delta, delta_tau)
    covers = "the weights and the word vocabulary" if rel else (
        "the weights only (the vocabulary is NOT covered)" if args.dp_vocab == "training"
        else "the weights; the vocabulary is covered only if its file is public")
    text = f"({eps:.3g}, {delta:g})-DP per {ledger.unit} for {covers}"
    if not secure:
        text += f"; seeded noise (--dp-seeded-noise, seed {args.seed}): {SEEDED_NOTE}"
    privacy = {
        **ledger.to_dict(),
        "guarantee": {"epsilon": eps, "delta": delta, "unit": ledger.unit, "text": text,
                      "randomness": "os-csprng" if secure else "seeded",
                      "composition": "accountant over the vocabulary's Gaussian phase (history) and DP-SGD at "
                                     "the ledger's delta, plus the vocabulary threshold's delta (deidlib.privacy."
                                     "vocabulary.total_guarantee)" if rel else "DP-SGD ledger"},
        "vocabulary": vocab_record,
        "not_covered_by_dp": not_covered,
    }
    files = {"privacy.json": json.dumps(privacy, indent=2)}
    extra = f"; not covered: {', '.join(not_covered)} (privacy.json)"
    print(f"DP-SGD: {text}; σ={ledger.noise_multiplier:.4g}, {ledger.steps} steps, accountant {ledger.accountant}"
          f"{extra}")
    if rel:
        print(f"DP vocabulary: {len(rel.words)} words (each in more than {rel.threshold:.0f} noisy {ledger.unit}s)")
    if not secure:
        print(f"WARNING: {SEEDED_NOTE}", file=sys.stderr)
    scores_extra = {"dp_epsilon": eps, "dp_delta": delta, "dp_unit": ledger.unit, "dp_guarantee": text,
                    "dp_randomness": "os-csprng" if secure else "seeded"}
    _finish(args, splits, tagger, hist, out, scores_extra, files, predictions)
    return 0
