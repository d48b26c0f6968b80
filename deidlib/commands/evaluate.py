"""``deidlib evaluate GOLD_DIR SYS_DIR``: the i2b2 2014 de-identification scorer."""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

from ..corpus.document import CorpusError
from ._safety import UsageError, check_output, nonneg_int

HELP = "score system i2b2 XML files against gold ones (i2b2 2014 measures: token/strict/relaxed, HIPAA, binary)"


def add_arguments(p) -> None:
    p.add_argument("gold_dir", help="folder of gold-standard i2b2 XML files (subfolders included, e.g. a "
                   "'deidlib synth' corpus)")
    p.add_argument("system_dir", help="folder of system output XML files (same file names; subfolders included)")
    p.add_argument("--measure", action="append", help="only these measures (repeatable), e.g. binary_token")
    p.add_argument("--fix-hipaa-idnum", action="store_true",
                   help="count ID/IDNUM as HIPAA PHI (the original script's filter never matches it)")
    p.add_argument("--bootstrap", type=nonneg_int, default=0, metavar="N", help="bootstrap resamples for 95%% CIs")
    p.add_argument("--seed", type=nonneg_int, default=0)
    p.add_argument("--lenient", action="store_true", help="skip bad tags/files with a warning instead of failing")
    p.add_argument("--strict-spans", action="store_true",
                   help="refuse files with overlapping tags (default: score them as the official script does, "
                        "comparing sets of tag keys)")
    p.add_argument("--no-details", action="store_true", help="omit per-category and per-TYPE tables")
    p.add_argument("--json", metavar="OUT", help="also write the full report as JSON (a file outside GOLD_DIR and SYSTEM_DIR)")


def run(args) -> int:
    from ..evaluation import MEASURES, evaluate_dirs
    from ..results import atomic_write_text

    unknown = sorted(set(args.measure or ()) - set(MEASURES))
    if unknown:
        print(f"deidlib evaluate: unknown measure(s) {', '.join(unknown)}; known: {', '.join(MEASURES)}", file=sys.stderr)
        return 2
    for name, d in (("GOLD_DIR", args.gold_dir), ("SYSTEM_DIR", args.system_dir)):
        if not Path(d).is_dir():
            raise UsageError(f"{name} {d}: not a folder", code=1)
    from ..corpus.i2b2 import xml_files

    if not xml_files(args.gold_dir, recursive=True):
        raise UsageError(f"GOLD_DIR {args.gold_dir}: no *.xml files (in it or its subfolders)", code=1)
    if args.json:
        check_output(args.json, [("GOLD_DIR", args.gold_dir), ("SYSTEM_DIR", args.system_dir)], what="--json",
                     kind="file")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            rep = evaluate_dirs(
                args.gold_dir, args.system_dir, lenient=args.lenient, idnum_bug=not args.fix_hipaa_idnum,
                n_boot=args.bootstrap, seed=args.seed, strict_spans=args.strict_spans,
            )
        except CorpusError as e:
            hint = " (or drop --strict-spans)" if args.strict_spans and "overlaps" in str(e) else ""
            print(f"deidlib evaluate: {e}{hint}", file=sys.stderr)
            return 1
    for w in caught:
        print(f"deidlib evaluate: warning: {w.message}", file=sys.stderr)
    if rep.n_documents == 0:
        print("deidlib evaluate: no document is present in both folders", file=sys.stderr)
        return 1
    print(rep.table(args.measure, details=not args.no_details))
    if args.json:
        atomic_write_text(args.json, json.dumps(rep.to_dict(), indent=2))
    return 0
