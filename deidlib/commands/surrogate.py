"""``deidlib surrogate IN_DIR OUT_DIR``: replace the PHI of i2b2 XML files by surrogates.

Reads every ``*.xml`` of IN_DIR (gold or predicted tags), replaces each tagged span with
:class:`deidlib.surrogates.SurrogateEngine` (ε·d-private dates/ages, exponential-mechanism
cities, Faker names, format-preserving identifiers; Tchouka et al. 2023) and writes i2b2
XML files with the same names into OUT_DIR whose tags point at the surrogates, readable by
``deidlib.corpus.i2b2.read_i2b2_dir``. The record of what replaced what contains the
original PHI: it is written only with ``--audit FILE``, which must lie outside OUT_DIR.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import time
from collections import Counter
from pathlib import Path

from ..corpus.document import CorpusError
from ._safety import (
    UsageError,
    add_threads_argument,
    check_output,
    nonneg_int,
    positive_float,
    set_threads,
    staged_dir,
)

HELP = "replace tagged PHI in i2b2 XML files by surrogates (d-private dates/ages, exponential-mechanism cities)"


def add_arguments(p) -> None:
    p.add_argument("in_dir", metavar="IN_DIR", help="folder of i2b2 XML files with PHI tags (subfolders included; "
                   "outputs are written flat, by file stem)")
    p.add_argument("out_dir", metavar="OUT_DIR", help="output folder (created; must be empty unless --force)")
    p.add_argument("--epsilon", type=positive_float, default=1.0, help="privacy budget per document (or per patient) (default: 1.0); above 20 dates, ages "
                   "and cities come out nearly unchanged (a warning says so)")
    p.add_argument("--seed", type=nonneg_int, default=None,
                   help="seeded, reproducible draws (NOT for releases: the guarantee does not hold against anyone "
                        "holding the seed); default: OS CSPRNG with exact discrete Laplace sampling")
    p.add_argument("--secure", action="store_true",
                   help="OS CSPRNG (the default; kept for compatibility, conflicts with --seed)")
    p.add_argument("--locale", default="en_US", help="Faker locale of the surrogates, e.g. en_US, fr_FR (default: en_US)")
    p.add_argument("--date-method", default="dp", choices=("dp", "ldp", "shift", "none"))
    p.add_argument("--age-method", default="dp", choices=("dp", "ldp", "shift", "none"))
    p.add_argument("--location-method", default="fixed", choices=("fixed", "paper", "geoind", "uniform", "none"))
    p.add_argument("--memo-scope", default="document", choices=("document", "patient"),
                   help="memoise (and split the budget) per document or per patient (default: document)")
    p.add_argument("--reference-date", metavar="YYYY-MM-DD",
                   help="reference date of every note (default: the note's own date or latest written date)")
    p.add_argument("--dayfirst", action=argparse.BooleanOptionalAction, default=None,
                   help="read numeric dates day first (default: yes for French locales)")
    p.add_argument("--audit", metavar="FILE", help="also write the replacement records (JSON lines; contains PHI)")
    p.add_argument("--no-meta", action="store_true", help="write plain i2b2 files without the deidlib META block")
    p.add_argument("--lenient", action="store_true", help="skip bad tags/files with a warning instead of failing")
    p.add_argument("--force", action="store_true", help="write into a non-empty OUT_DIR")
    add_threads_argument(p)


def run(args) -> int:
    from ..corpus.i2b2 import read_i2b2_dir, write_i2b2_dir
    from ..surrogates import SurrogateConfig, SurrogateEngine, write_audit
    from ..surrogates.config import epsilon_warning

    if args.secure and args.seed is not None:
        raise UsageError("--secure and --seed exclude each other (secure randomness is the default)")
    src = Path(args.in_dir)
    if not src.is_dir():
        raise UsageError(f"IN_DIR {args.in_dir}: not a folder", code=1)
    out = check_output(args.out_dir, [("IN_DIR", args.in_dir)], what="OUT_DIR", force=args.force)
    if args.audit:
        # the audit file holds the original PHI: never onto an input, never inside OUT_DIR
        check_output(args.audit, [("IN_DIR", args.in_dir), ("OUT_DIR", args.out_dir)], what="--audit", kind="file")
    set_threads(args.threads, torch=False)
    ref = None
    if args.reference_date:
        try:
            ref = dt.date.fromisoformat(args.reference_date)
        except ValueError:
            print(f"deidlib surrogate: --reference-date must be YYYY-MM-DD, got {args.reference_date!r}",
                  file=sys.stderr)
            return 2
    try:
        cfg = SurrogateConfig(epsilon=args.epsilon, locale=args.locale, date_method=args.date_method,
                              age_method=args.age_method, location_method=args.location_method,
                              memo_scope=args.memo_scope, reference_date=ref, dayfirst=args.dayfirst,
                              secure=args.seed is None)
        engine = SurrogateEngine(cfg, seed=args.seed)
    except (ValueError, TypeError) as e:
        print(f"deidlib surrogate: {e}", file=sys.stderr)
        return 2
    warning = epsilon_warning(args.epsilon, args.memo_scope)
    if warning:
        print(f"deidlib surrogate: WARNING: {warning}", file=sys.stderr)
    try:
        docs = read_i2b2_dir(src, lenient=args.lenient, recursive=True)
    except CorpusError as e:
        print(f"deidlib surrogate: {e}", file=sys.stderr)
        return 1
    if not docs:
        print(f"deidlib surrogate: no *.xml file in {src}", file=sys.stderr)
        return 1
    t0 = time.perf_counter()
    try:
        new_docs, records = engine.surrogate_documents(docs, progress=len(docs) > 200)
    except CorpusError as e:
        print(f"deidlib surrogate: {e}", file=sys.stderr)
        return 1
    secs = time.perf_counter() - t0
    with staged_dir(out) as tmp:
        write_i2b2_dir(new_docs, tmp, include_meta=not args.no_meta)
    if args.audit:
        write_audit(records, args.audit)
    methods = Counter(r.method for r in records)
    print(f"wrote {len(new_docs)} surrogate documents to {out}")
    print(f"{len(records)} spans replaced in {secs:.2f} s ({len(records) / max(secs, 1e-9):,.0f} entities/s); "
          f"epsilon={args.epsilon} per {args.memo_scope}, "
          f"{'secure (OS CSPRNG)' if args.seed is None else f'seed={args.seed}'}")
    print("methods: " + ", ".join(f"{k}={v}" for k, v in methods.most_common()))
    print("guarantee: " + engine.guarantee())
    loc = engine.location_summary(records)
    if loc:
        print("cities: " + loc)
    if args.audit:
        print(f"audit records (contain the original PHI): {args.audit}")
    return 0
