"""``deidlib predict MODEL_DIR IN_DIR OUT_DIR``: tag i2b2 XML (or plain text) files."""

from __future__ import annotations

HELP = "predict PHI spans with a saved tagger: i2b2 XML (or .txt) files in, i2b2 XML files out"


def add_arguments(p) -> None:
    p.add_argument("model_dir", help="a folder written by 'deidlib train' (its model/ subfolder or itself)")
    p.add_argument("in_dir", help="folder of i2b2 XML files (gold tags are ignored) or .txt files")
    p.add_argument("out_dir", help="folder for the predicted i2b2 XML files (same names)")
    p.add_argument("--device", default="cpu")


def run(args) -> int:
    import sys
    from pathlib import Path

    from ..corpus.document import CorpusError, Document
    from ..corpus.i2b2 import read_i2b2_dir
    from ..training import load_tagger, write_predictions

    model = Path(args.model_dir)
    if (model / "model" / "config.json").is_file():
        model = model / "model"
    try:
        tagger = load_tagger(model, device=args.device)
    except FileNotFoundError as e:
        print(f"deidlib predict: {e}", file=sys.stderr)
        return 1
    src = Path(args.in_dir)
    if not src.is_dir():
        print(f"deidlib predict: {src}: not a folder", file=sys.stderr)
        return 1
    try:
        docs = (
            read_i2b2_dir(src)
            if any(src.glob("*.xml"))
            else [Document(f.stem, f.read_text(encoding="utf-8"), []) for f in sorted(src.glob("*.txt"))]
        )
    except (CorpusError, UnicodeDecodeError) as e:
        print(f"deidlib predict: {e}", file=sys.stderr)
        return 1
    if not docs:
        print(f"deidlib predict: {src}: no .xml or .txt files", file=sys.stderr)
        return 1
    docs = [d.with_spans([]) for d in docs]
    write_predictions(tagger, docs, args.out_dir, device=args.device)
    print(f"{len(docs)} documents tagged into {args.out_dir}")
    return 0
