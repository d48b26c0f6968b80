"""Recall of a de-identification model by PHI type on the PhysioNet nursing notes: binary-token
precision, recall and F1 of the model's decisions (its saved threshold and patterns: what
``deidlib deidentify`` tags) and, for each gold PHI type, how many of its tokens are tagged.

Real data: reads the nursing notes (``load_corpus("physionet")``, the thesis document split) and
writes scores only (``runs/deid_by_type/<split>.json``, ignored by git), never note text. On the
train and dev splits it also counts the missed PHI tokens and the false-alarm tokens by word
shape (:func:`deidlib.evaluation.diagnostics.token_kind`), for error analysis; on the test split
it does not, so that the test notes' errors are never looked at.

    python benchmarks/deid_by_type.py                         # default model, test split
    python benchmarks/deid_by_type.py --split train           # + missed / false-alarm shapes
    python benchmarks/deid_by_type.py --model runs/mymodel --split dev
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path


def _model(name: str):
    from deidlib.pipeline.default_model import MODEL_RECIPES, ensure_default_model
    from deidlib.training import load_tagger

    path = ensure_default_model(name, progress=False) if name in MODEL_RECIPES else Path(name)
    return load_tagger(path), path


def type_recall(gold_docs, system_docs) -> dict:
    """Per gold PHI type: gold tokens and the share of them inside any system span (binary)."""
    from deidlib.evaluation.keys import token_keys

    sys_by_id = {d.id: token_keys(d.spans, True) for d in system_docs}
    total, hit = Counter(), Counter()
    for g in gold_docs:
        s = sys_by_id[g.id]
        for _cat, typ, a, b in token_keys(g.spans):
            total[typ] += 1
            hit[typ] += (a, b) in s
    return {t: {"tokens": total[t], "recall": hit[t] / total[t]} for t in sorted(total, key=lambda t: -total[t])}


def error_shapes(gold_docs, system_docs, top: int = 20) -> dict:
    """Missed PHI tokens by (gold type, word shape) and false-alarm tokens by (system type, word shape)."""
    from deidlib.evaluation.diagnostics import token_kind
    from deidlib.evaluation.keys import token_keys

    missed, false = Counter(), Counter()
    sys_by_id = {d.id: d for d in system_docs}
    for g in gold_docs:
        s = sys_by_id[g.id]
        gk, sk = token_keys(g.spans), token_keys(s.spans)
        gb, sb = {(a, b) for *_, a, b in gk}, {(a, b) for *_, a, b in sk}
        missed.update((t, token_kind(g.text[a:b])) for _c, t, a, b in gk if (a, b) not in sb)
        false.update((t, token_kind(g.text[a:b])) for _c, t, a, b in sk if (a, b) not in gb)
    fmt = lambda c: [[t, k, n] for (t, k), n in c.most_common(top)]  # noqa: E731
    return {"missed": fmt(missed), "false_alarms": fmt(false)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="default", help="a named recipe ('default', 'gru') or a model folder")
    ap.add_argument("--split", default="test", choices=("train", "dev", "test"))
    ap.add_argument("--out", default=None, help="JSON output (default runs/deid_by_type/<split>.json)")
    args = ap.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    from deidlib.datasets import load_corpus
    from deidlib.evaluation import binary_token_prf
    from deidlib.training import predict_documents

    docs = list(getattr(load_corpus("physionet"), args.split))
    tagger, path = _model(args.model)
    pred = predict_documents(tagger, [d.with_spans([]) for d in docs])
    p, r, f = binary_token_prf(docs, pred)
    out = {"model": str(Path(path).name), "split": args.split, "notes": len(docs),
           "phi_threshold": tagger.task.get("phi_threshold"), "patterns": tagger.task.get("patterns"),
           "binary_token": {"precision": p, "recall": r, "f1": f}, "recall_by_type": type_recall(docs, pred)}
    if args.split != "test":
        out.update(error_shapes(docs, pred))
    print(f"{args.split} ({len(docs)} notes), model {out['model']}: binary-token P {p:.3f} R {r:.3f} F1 {f:.3f}")
    for t, v in out["recall_by_type"].items():
        print(f"  {t:16s} {v['tokens']:5d} tokens  recall {v['recall']:.3f}")
    for key in ("missed", "false_alarms"):
        if key in out:
            print(f"{key} (type, shape, tokens): " + "; ".join(f"{t} {k} {n}" for t, k, n in out[key]))
    dest = Path(args.out or f"runs/deid_by_type/{args.split}.json")
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
