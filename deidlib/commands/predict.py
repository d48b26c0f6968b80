"""``deidlib predict MODEL_DIR IN_DIR OUT_DIR``: tag i2b2 XML (and plain text) files."""

from __future__ import annotations

import sys
from pathlib import Path

from ..corpus.document import CorpusError, Document
from ._safety import (
    UsageError,
    add_threads_argument,
    check_device,
    check_output,
    loading,
    model_inputs,
    set_threads,
    staged_dir,
    unit_float,
)

HELP = "predict PHI spans with a saved tagger: i2b2 XML and .txt files in, i2b2 XML files out"


def add_arguments(p) -> None:
    p.add_argument("model_dir", help="a folder written by 'deidlib train' (its model/ subfolder or itself) "
                   "or by 'deidlib ensemble'")
    p.add_argument("in_dir", help="folder of i2b2 XML files (gold tags are ignored) and/or UTF-8 .txt files "
                   "(subfolders included; outputs are written flat, by file stem; an empty note is refused)")
    p.add_argument("out_dir", help="folder for the predicted i2b2 XML files (same names); must be empty, "
                   "outside IN_DIR and MODEL_DIR")
    p.add_argument("--device", default="cpu")
    p.add_argument("--phi-threshold", type=unit_float, metavar="T",
                   help="mark a token as PHI when its PHI marginal 1 - P(O) is >= T (default: the decision "
                   "saved with the model by 'deidlib train', e.g. its --target-recall threshold)")
    p.add_argument("--force", action="store_true", help="write into a non-empty OUT_DIR (same-named files are replaced)")
    add_threads_argument(p)


def read_inputs(src):
    """Documents of every ``*.xml`` (i2b2) and ``*.txt`` (plain text) file of ``src`` and its
    subfolders (e.g. the ``site<k>/`` folders of ``deidlib synth``); ids are file stems.

    Raises UsageError when a name exists twice (as .xml and .txt, or in two subfolders),
    as the outputs would collide, and CorpusError naming the file for a .txt file that is not
    UTF-8 or holds no text (an empty note is refused, as the i2b2 readers of evaluate and
    surrogate refuse an empty TEXT: predict writes nothing they would reject)."""
    from ..corpus.i2b2 import read_i2b2_dir, xml_files

    txt = xml_files(src, recursive=True, suffix=".txt")
    xml_ids = {f.stem for f in xml_files(src, recursive=True)}
    both = sorted(xml_ids & {f.stem for f in txt})
    if both:
        raise UsageError(f"{src}: {both[0]}.xml and {both[0]}.txt both exist ({len(both)} such name(s)); "
                         "their outputs would collide", code=1)
    seen: dict[str, object] = {}
    for f in txt:
        if f.stem in seen:
            raise UsageError(f"{src}: {seen[f.stem]} and {f} have the same name; their outputs would collide", code=1)
        seen[f.stem] = f
    docs = read_i2b2_dir(src, recursive=True) if xml_ids else []
    with_newlines = []
    for f in txt:
        try:
            with open(f, encoding="utf-8", newline="") as fh:  # exact text: offsets count \r\n as two characters
                text = fh.read()
        except UnicodeDecodeError as e:
            raise CorpusError(f"{f}: not UTF-8 (invalid byte at byte offset {e.start})") from None
        if not text.strip():
            raise CorpusError(f"{f}: empty note (no text to tag; i2b2 XML with an empty TEXT is refused by "
                              "evaluate and surrogate): remove it from IN_DIR")
        with_newlines.append(Document(f.stem, text, []))
    docs += with_newlines
    return sorted(docs, key=lambda d: d.id)


def run(args) -> int:
    from ..training.io import ENSEMBLE_FILE

    src = Path(args.in_dir)
    if not src.is_dir():
        raise UsageError(f"IN_DIR {src}: not a folder", code=1)
    model = Path(args.model_dir)
    if (model / "model" / "config.json").is_file():
        model = model / "model"  # OUT_DIR may lie in the training run's folder, not in its model/
    out = check_output(args.out_dir, [("IN_DIR", args.in_dir), *model_inputs(model, "MODEL_DIR")],
                       what="OUT_DIR", force=args.force)
    if not (model / "config.json").is_file() and not (model / ENSEMBLE_FILE).is_file():
        print(f"deidlib predict: {model}: no config.json (not a saved deidlib tagger)", file=sys.stderr)
        return 1
    check_device(args.device)
    set_threads(args.threads)

    from ..training import load_tagger, write_predictions

    with loading(model):
        tagger = load_tagger(model, device=args.device)
    try:
        docs = read_inputs(src)
    except CorpusError as e:
        print(f"deidlib predict: {e}", file=sys.stderr)
        return 1
    if not docs:
        print(f"deidlib predict: {src}: no .xml or .txt files", file=sys.stderr)
        return 1
    docs = [d.with_spans([]) for d in docs]
    with staged_dir(out) as tmp:
        task = None if args.phi_threshold is None else {"phi_threshold": args.phi_threshold}
        write_predictions(tagger, docs, tmp, device=args.device, task=task)
    print(f"{len(docs)} documents tagged into {args.out_dir}")
    return 0
