"""``deidlib ensemble OUT_DIR MODEL_DIR MODEL_DIR ...``: average saved taggers' PHI posteriors.

The members (folders written by ``deidlib train``, trained on one corpus split, e.g. with
different ``--seed`` and one ``--split-seed``) are combined into a
:class:`deidlib.models.marginal_ensemble.MarginalEnsemble`; with ``--target-recall`` the
decision threshold on the mean P(PHI) is chosen on the corpus' dev split, as ``deidlib train
--target-recall`` does for one model. ``OUT_DIR`` gets ``ensemble.json`` (the members' folders,
not copies of their weights, and the threshold) and ``scores.json`` (dev curve, test scores of
the ensemble and of each member, and the test curve over the same grid, reported, never used
to choose). ``deidlib predict OUT_DIR IN_DIR PRED_DIR`` then tags with it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ._safety import (
    UsageError,
    add_threads_argument,
    check_device,
    check_output,
    loading,
    model_inputs,
    nonneg_int,
    set_threads,
    staged_dir,
    unit_float,
)

HELP = "combine saved taggers into an ensemble that averages their PHI marginals (recall operating point)"


def add_arguments(p) -> None:
    p.add_argument("out_dir", help="folder for ensemble.json and scores.json (must be empty, or --force)")
    p.add_argument("members", nargs="+", metavar="MODEL_DIR",
                   help="folders written by 'deidlib train' (or their model/ subfolders), same labels and encoding")
    p.add_argument("--corpus", default="synthetic", choices=("synthetic", "physionet", "i2b2"),
                   help="corpus whose dev split chooses the threshold and whose test split is scored")
    p.add_argument("--data-dir", help="folder of a real corpus (see data/README.md)")
    p.add_argument("--profile", default="smoke", choices=("smoke", "cpu", "paper"),
                   help="synthetic corpus size (only with --corpus synthetic)")
    p.add_argument("--split", choices=("patient", "document"), help="split unit (default: the corpus' own)")
    p.add_argument("--split-seed", type=nonneg_int, default=0, metavar="S",
                   help="the corpus seed the members were trained on ('deidlib train --split-seed', or its --seed); "
                        "members whose scores.json records another corpus or split seed are refused")
    op = p.add_mutually_exclusive_group()
    op.add_argument("--phi-threshold", type=unit_float, metavar="T",
                    help="save this threshold on the mean P(PHI) (default: 0.5, the ensemble's own decision)")
    op.add_argument("--target-recall", type=unit_float, metavar="R",
                    help="choose the highest threshold whose dev-split recall reaches R (binary-token)")
    p.add_argument("--device", default="cpu")
    p.add_argument("--force", action="store_true", help="write into a non-empty OUT_DIR")
    add_threads_argument(p)


def _member_dir(path):
    d = Path(path)
    return d / "model" if (d / "model" / "config.json").is_file() else d


def _check_member_split(member, corpus: str, split_seed: int) -> None:
    """Refuse a member whose scores.json says it was trained on another corpus or split: its
    training notes could then be in the test split scored here."""
    run_dir = member.parent if member.name == "model" else member
    f = run_dir / "scores.json"
    if not f.is_file():
        return
    with loading(f):
        rec = json.loads(f.read_text())
        if not isinstance(rec, dict):
            raise ValueError("not a JSON object")
    seed = rec.get("split_seed", rec.get("seed"))
    if rec.get("corpus") not in (None, corpus) or (seed is not None and seed != split_seed):
        raise UsageError(f"member {run_dir} was trained on corpus {rec.get('corpus')!r} with split seed {seed}, "
                         f"not {corpus!r} with --split-seed {split_seed}: its training notes may be in this test split",
                         code=1)


def run(args) -> int:
    from ..corpus.locate import PHYSIONET_DEID, find_data_dir
    from ..datasets import I2B2_2014, load_corpus
    from ..results import atomic_write_text

    if args.corpus == "synthetic" and args.data_dir is not None:
        raise UsageError("--data-dir is only for --corpus physionet or i2b2 (the synthetic corpus is embedded)")
    members = [_member_dir(m) for m in args.members]
    for m in members:
        if not (m / "config.json").is_file():
            raise UsageError(f"{m}: no config.json (not a folder written by 'deidlib train')", code=1)
        _check_member_split(m, args.corpus, args.split_seed)
    data = None
    if args.corpus != "synthetic":
        try:
            data = find_data_dir(PHYSIONET_DEID if args.corpus == "physionet" else I2B2_2014, args.data_dir)
        except FileNotFoundError as e:
            raise UsageError(f"--data-dir: {e}", code=1) from None
    out = check_output(args.out_dir, [("--data-dir", data), *(i for m in members for i in model_inputs(m, "MODEL_DIR"))],
                       what="OUT_DIR", force=args.force)
    check_device(args.device)
    set_threads(args.threads)

    from ..models.marginal_ensemble import DEFAULT_ENSEMBLE_THRESHOLD, MarginalEnsemble
    from ..training import (
        THRESHOLD_GRID,
        choose_threshold,
        evaluate_tagger,
        load_tagger,
        operating_points,
        save_ensemble,
    )

    taggers = []
    for m in members:  # a broken member is refused before the corpus is read
        with loading(m):
            taggers.append(load_tagger(m, args.device))
    try:
        splits = load_corpus(args.corpus, args.data_dir, profile=args.profile, seed=args.split_seed, split=args.split)
    except (FileNotFoundError, ValueError) as e:
        print(f"deidlib ensemble: {e}", file=sys.stderr)
        return 1
    try:
        ens = MarginalEnsemble(taggers)
    except ValueError as e:
        raise UsageError(str(e), code=1) from None
    th, dev_curve = args.phi_threshold, None
    if args.target_recall is not None:
        if not splits.dev:
            raise UsageError("--target-recall needs a dev split to choose the threshold on", code=1)
        th, dev_curve = choose_threshold(ens, splits.dev, args.target_recall, device=args.device)
        if th is None:
            best = max(p["recall"] for p in dev_curve)
            raise UsageError(f"--target-recall {args.target_recall:g}: no threshold reaches it on the dev split "
                             f"(best dev recall {best:.4f})", code=1)
        point = next(p for p in dev_curve if p["threshold"] == th)
        print(f"operating point: mean P(PHI) >= {th:g} (dev P/R/F1 {point['precision']:.4f} / {point['recall']:.4f} / "
              f"{point['f1']:.4f}; target recall {args.target_recall:g})")
    scores = {"corpus": args.corpus, "split_seed": args.split_seed, "members": [str(m) for m in members],
              "phi_threshold": th, "target_recall": args.target_recall, "dev_operating_points": dev_curve,
              "test_documents": len(splits.test)}
    if splits.test:
        # the whole test curve is reported (the precision-recall trade-off), never used to choose
        grid = tuple(THRESHOLD_GRID) + (() if th is None or th in THRESHOLD_GRID else (th,))
        curve = operating_points(ens, splits.test, grid, device=args.device)
        own = curve[0]
        scores["test_own_decision"] = {**own, "threshold": DEFAULT_ENSEMBLE_THRESHOLD}
        scores["test_operating_points"] = curve[1:]
        print(f"test, ensemble of {len(members)} at mean P(PHI) >= {DEFAULT_ENSEMBLE_THRESHOLD:g}: "
              f"P/R/F1 {own['precision']:.4f} / {own['recall']:.4f} / {own['f1']:.4f}")
        if th is not None:
            at = next(p for p in curve[1:] if p["threshold"] == th)
            scores.update(test_precision=at["precision"], test_recall=at["recall"], test_f1=at["f1"])
            print(f"test, ensemble at mean P(PHI) >= {th:g}: P/R/F1 {at['precision']:.4f} / {at['recall']:.4f} / "
                  f"{at['f1']:.4f}  ({len(splits.test)} documents)")
        scores["members_test"] = []
        for m, tagger in zip(members, ens.members):
            p, r, f = evaluate_tagger(tagger, splits.test, device=args.device)
            scores["members_test"].append({"member": str(m), "precision": p, "recall": r, "f1": f})
            print(f"  member {m}: P/R/F1 {p:.4f} / {r:.4f} / {f:.4f} (its own decision)")
    with staged_dir(out) as tmp:  # a sibling of OUT_DIR, so the members' relative paths hold there too
        save_ensemble(tmp, [m.resolve() for m in members], th)
        atomic_write_text(tmp / "scores.json", json.dumps(scores, indent=2))
    print(f"ensemble saved to {out}; tag notes with: deidlib predict {out} IN_DIR OUT_DIR")
    return 0
