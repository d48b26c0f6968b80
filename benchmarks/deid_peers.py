"""The default model against peer de-identifiers (Philter, Presidio) on the PhysioNet nursing
notes' test split (486 notes): binary-token precision, recall, F1, surviving gold mentions
(gold PHI mentions with a token left verbatim by the tagging), verbatim survival on the
released text and notes per second on one core.

Verbatim survival (:func:`deidlib.pipeline.run.verbatim_survival`) judges what each system
releases: for ours the text with surrogates as ``deidlib deidentify`` writes it by default
(shifted dates, OS randomness, one scope per patient), for the peers their tagged spans
replaced by masks (``[OTHER]``); a gold mention survives when its text still occurs in the
released note as a whole token sequence, so a missed mention and a surrogate that equals
its original both count. Reported overall and per PHI type.

Real data: reads the nursing notes (``load_corpus("physionet")``); prints and writes scores
only (``runs/deid_peers/peers.json``, ignored by git), never note text. Notebook 10
(:mod:`deidlib.studies.operating_point`) draws the peers' points from that file when it runs on
the nursing notes. Peers: ``pip install 'deidlib[peers]'`` (:mod:`deidlib.evaluation.peers`);
a peer that is not installed is skipped with a note.

Speed: one thread (``torch.set_num_threads(1)``), each system times the same
``--timing-notes`` test notes ``--repeats`` times after one warm-up pass (models and pipelines
loaded before); the median notes/s is reported. Building the default model, when not cached,
is timed separately (``build_seconds``).

    python benchmarks/deid_peers.py                        # default model, philter, presidio
    python benchmarks/deid_peers.py --systems default gru --timing-notes 50 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path


def _ours(name: str):
    from deidlib.pipeline.default_model import ensure_default_model
    from deidlib.training import load_tagger, predict_documents

    t0 = time.perf_counter()
    path = ensure_default_model(name, progress=False)
    built = time.perf_counter() - t0
    info = json.loads((path / "recipe.json").read_text())
    tagger = load_tagger(path)
    return (lambda docs: predict_documents(tagger, [d.with_spans([]) for d in docs])), {
        "model": path.name, "load_or_build_seconds": round(built, 1), "build_seconds": info.get("build_seconds"),
        "phi_threshold": tagger.task.get("phi_threshold")}


def released_text(name: str, gold_docs, pred_docs) -> list:
    """What system ``name`` releases for the tagged ``pred_docs``: surrogates for ours (the
    default options of ``deidlib deidentify``), masks for a peer. The predicted documents keep
    the gold documents' patient ids, so one patient's notes share one surrogate scope."""
    from deidlib.evaluation.peers import PEERS
    from deidlib.pipeline.run import DeidOptions, mask_document
    from deidlib.surrogates import SurrogateEngine

    docs = [p.with_spans(p.spans) for p in pred_docs]
    if name in PEERS:
        return [mask_document(d)[0] for d in docs]
    opts = DeidOptions(memo_scope="patient" if any(g.patient_id for g in gold_docs) else "document")
    out, _ = SurrogateEngine(opts.surrogate_config()).surrogate_documents(docs)
    return out


def _by_type(v: dict) -> str:
    return ", ".join(f"{t} {x['verbatim']}/{x['mentions']}" for t, x in v["by_type"].items())


def _peer(name: str):
    from deidlib.evaluation.peers import peer_predictions

    return (lambda docs: peer_predictions(name, docs)), {}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--systems", nargs="+", default=["default", "philter", "presidio"],
                    help="'default', 'gru' (named models) and peers 'philter', 'presidio'")
    ap.add_argument("--split", default="test", choices=("test", "dev"))
    ap.add_argument("--timing-notes", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default="runs/deid_peers/peers.json")
    args = ap.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    from deidlib.datasets import load_corpus
    from deidlib.evaluation.peers import PEERS, available_peers, score_predictions
    from deidlib.pipeline.run import disjoint, verbatim_survival

    docs = list(getattr(load_corpus("physionet"), args.split))
    timing = docs[: args.timing_notes]
    rows = []
    for name in args.systems:
        if name in PEERS and name not in available_peers():
            print(f"{name}: not installed (pip install 'deidlib[peers]'), skipped")
            continue
        run, meta = _ours(name) if name not in PEERS else _peer(name)
        pred = run(docs)  # also the warm-up of the timed passes
        row = {"system": name, **score_predictions(docs, pred), **meta}
        pred = [p.with_spans(disjoint(p.spans)) for p in pred]
        row["released_verbatim"] = verbatim_survival(docs, released_text(name, docs, pred))
        speeds = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            run(timing)
            speeds.append(len(timing) / (time.perf_counter() - t0))
        row.update(notes_per_s=statistics.median(speeds), notes_per_s_all=[round(s, 2) for s in speeds])
        rows.append(row)
        v = row["released_verbatim"]
        print(f"{name:9s} P {row['precision']:.3f}  R {row['recall']:.3f}  F1 {row['f1']:.3f}  surviving "
              f"{row['surviving_mentions']}/{row['gold_mentions']}  verbatim in the released text "
              f"{v['verbatim']}/{v['mentions']} ({_by_type(v)})"
              f"  {row['notes_per_s']:.1f} notes/s", flush=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"corpus": "physionet", "split": args.split, "notes": len(docs),
                               "timing_notes": len(timing), "repeats": args.repeats, "threads": 1,
                               "systems": rows}, indent=2))
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
