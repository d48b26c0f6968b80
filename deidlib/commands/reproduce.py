"""``deidlib reproduce``: execute the study notebooks with papermill (the main job)."""

from __future__ import annotations

import ast
from pathlib import Path

from ._safety import UsageError, check_output, nonneg_int, positive_int

HELP = "execute the study notebooks with papermill into runs/<profile>/ and refresh figures/"


def add_arguments(p) -> None:
    p.add_argument("--profile", choices=["smoke", "cpu", "paper"], default="cpu", help="scale of the runs (default: cpu)")
    p.add_argument("--only", action="append", metavar="STUDY", help="run only this study or notebook (repeatable)")
    p.add_argument("--corpus", choices=["synthetic", "physionet", "i2b2", "abstracts", "mixed"],
                   default="synthetic",
                   help="corpus for the studies that take one (default: the embedded synthetic corpus; "
                        "abstracts: medical_abstracts_tc, only for --only alawad; mixed: the synthetic sites plus "
                        "the PhysioNet nursing notes as one more site; real-data runs stay in runs/)")
    p.add_argument("--data-dir", default=None,
                   help="folder of the real corpus (physionet/i2b2/mixed), relative to the current directory")
    p.add_argument("--seed", type=nonneg_int, default=0)
    p.add_argument("--device", default="cpu", help="torch device, e.g. cuda")
    p.add_argument("--no-copy-figures", dest="copy_figures", action="store_false",
                   help="leave figures/ untouched (runs/ still gets everything)")
    p.add_argument("--runs-dir", default=None, help="where executed notebooks go (default: runs/<profile>)")
    p.add_argument("--threads", type=positive_int, default=None,
                   help="torch/OpenMP threads per notebook kernel (default: 1 for smoke/cpu on the CPU)")
    p.add_argument("--jobs", type=positive_int, default=None,
                   help="notebooks executed at once, each in its own kernel (default: 2 on a machine with 2 or "
                        "more cores when every kernel runs one thread, i.e. smoke/cpu profile on the CPU, else 1; "
                        "the numbers do not change)")
    p.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                   help="extra notebook parameter, e.g. -p n_seeds=3 (repeatable; VALUE is read as a "
                        "Python literal when it parses as one, else as a string); use with --only")
    p.add_argument("--list", action="store_true", help="list the notebooks and exit")


def parse_params(items: list[str]) -> dict:
    """``["n_seeds=3", "corpus_note=x"]`` -> ``{"n_seeds": 3, "corpus_note": "x"}``."""
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name.isidentifier():
            raise ValueError(f"--param expects NAME=VALUE, got {item!r}")
        try:
            out[name] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            out[name] = value
    return out


def run(args) -> int:
    from ..notebooks import NotebookRunError, load_manifest, reproduce

    if args.list:
        for e in load_manifest():
            print(f"{e.name:32s} study={e.study:12s} figures={', '.join(e.figures)}")
        return 0

    if args.data_dir is not None:
        if args.corpus == "synthetic":
            raise UsageError("--data-dir is only for --corpus physionet, i2b2, abstracts or mixed (the synthetic corpus is embedded)")
        if not Path(args.data_dir).is_dir():
            raise UsageError(f"--data-dir {args.data_dir}: not a folder", code=1)
    if args.runs_dir is not None:  # a runs folder is reused run after run: no --force needed
        check_output(args.runs_dir, [("--data-dir", args.data_dir)], what="--runs-dir", force=True)
    try:
        parameters = parse_params(args.param)
        outs = reproduce(
            args.profile,
            only=args.only,
            corpus=args.corpus,
            data_dir=args.data_dir,
            seed=args.seed,
            device=args.device,
            copy_figures=args.copy_figures,
            runs_dir=args.runs_dir,
            threads=args.threads,
            parameters=parameters,
            jobs=args.jobs,
        )
    except (NotebookRunError, ValueError) as e:
        import sys

        print(f"deidlib reproduce: {e}", file=sys.stderr)
        return 1
    print(f"{len(outs)} notebook(s) executed")
    return 0
