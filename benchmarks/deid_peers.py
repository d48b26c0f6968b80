"""The default model against peer de-identifiers (Philter, Presidio) on the PhysioNet nursing
notes' test split (486 notes): binary-token precision, recall, F1, surviving gold mentions
(gold PHI mentions with a token left verbatim by the tagging), verbatim survival on the
released text and **cold notes per CPU-second** on one thread.

Verbatim survival (:func:`deidlib.pipeline.run.verbatim_survival`) judges what each system
releases: for ours the notes the ``deidlib deidentify`` command wrote to OUT at its default
settings (surrogates, OS randomness, one scope per patient), read back and paired with the gold
notes by document id through the audit's file map (output names are pseudonyms), for the peers
their tagged spans replaced by masks (``[OTHER]``); a gold mention survives when its text still
occurs in the released note as a whole token sequence, so a missed mention and a surrogate that
equals its original both count. Reported overall and per PHI type.

Real data: reads the nursing notes (``load_corpus("physionet")``); prints and writes scores
only (``runs/deid_peers/peers.json``, ignored by git), never note text. The notes are written as
i2b2 XML into a temporary folder that is deleted at the end (the audit file, which holds the
original PHI, lies in it too). Peers: ``pip install 'deidlib[peers]'`` (:mod:`deidlib.evaluation.peers`);
a peer that is not installed is skipped with a note.

Speed as a user meets it: each system runs in a **fresh process** on notes that process has
never seen, end to end (start-up, imports, model loading, reading, tagging, writing), on one
thread (``--threads 1`` and ``OMP_NUM_THREADS=1``). Our models run as the ``deidlib deidentify``
command itself (``python -m deidlib deidentify IN OUT --threads 1 --audit FILE``: the audit's
replacement records give the predicted spans on the original text, OUT the released notes of
the last run); a peer runs in a
worker process of this script. The CPU time of that process (user + system, from
``resource.getrusage(RUSAGE_CHILDREN)``) gives notes per CPU-second; CPU time, unlike wall time,
hardly moves with the load of a shared machine. The median over ``--repeats`` fresh processes is
reported, with the peak RSS. Building the default model, when not cached, is done before and not
timed (``build_seconds`` from its ``recipe.json``).

    python benchmarks/deid_peers.py                        # default model, philter, presidio
    python benchmarks/deid_peers.py --systems default gru --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: one thread for every library a system may use
ONE_THREAD = {k: "1" for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")}


def _child_cpu() -> tuple[float, int]:
    """CPU seconds (user + system) of the waited-for children so far, and their peak RSS (kB)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime, r.ru_maxrss


def cold_run(cmd: list[str]) -> dict:
    """Run ``cmd`` in a fresh process (one thread); its CPU seconds, wall seconds, peak RSS (MB)."""
    import time

    env = {**os.environ, **ONE_THREAD, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    c0, _ = _child_cpu()
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    c1, rss = _child_cpu()
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])}... failed ({p.returncode}): {p.stderr.strip().splitlines()[-1:]}")
    return {"cpu_s": c1 - c0, "wall_s": wall, "peak_rss_mb": rss / 1024}


def _ours_cmd(model: str, src: Path, work: Path, k: int) -> tuple[list[str], Path]:
    audit = work / f"audit-{k}.jsonl"
    return [sys.executable, "-m", "deidlib", "deidentify", str(src), str(work / f"out-{k}"), "--model", model,
            "--threads", "1", "--no-progress", "--audit", str(audit)], audit


def _spans_from_audit(docs, audit: Path) -> list:
    """The replaced spans of each document (original offsets), from the run's audit records."""
    from deidlib.corpus.document import Span

    by_doc: dict[str, list] = {d.id: [] for d in docs}
    for line in audit.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if "original_start" in rec and rec.get("document_id") in by_doc:
            by_doc[rec["document_id"]].append((rec["original_start"], rec["original_end"]))
    return [d.with_spans([Span.of(d.text, a, b, "OTHER") for a, b in sorted(by_doc[d.id])]) for d in docs]


def _peer_worker(name: str, src: str, out: str) -> int:
    """Worker process of a peer: read the i2b2 folder, tag every note, write the spans as JSON."""
    from deidlib.corpus.i2b2 import read_i2b2_dir
    from deidlib.evaluation.peers import peer_predictions

    pred = peer_predictions(name, [d.with_spans([]) for d in read_i2b2_dir(src)])
    Path(out).write_text(json.dumps({d.id: [(s.start, s.end) for s in d.spans] for d in pred}))
    return 0


def _spans_from_json(docs, path: Path) -> list:
    from deidlib.corpus.document import Span

    got = json.loads(path.read_text())
    return [d.with_spans([Span.of(d.text, a, b, "OTHER") for a, b in got[d.id]]) for d in docs]


def peer_released_text(pred_docs) -> list:
    """What a peer releases for its tagged ``pred_docs``: each span replaced by its mask."""
    from deidlib.pipeline.run import mask_document

    return [mask_document(d.with_spans(d.spans))[0] for d in pred_docs]


def released_from_out(docs, out_dir: Path, audit: Path) -> list:
    """The notes ``deidlib deidentify`` released into ``out_dir`` for the i2b2 files
    ``<id>.xml`` of ``docs``, in the order of ``docs``: each read back from the output file the
    audit's pseudonym map names for its input file (output names are pseudonyms, so that map is
    the one link), with the gold document's id. A document without its output file is an error."""
    from deidlib.corpus.document import Document
    from deidlib.corpus.i2b2 import read_i2b2_xml

    files: dict = {}
    for line in audit.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if "pseudonyms" in rec:
            files = rec["pseudonyms"].get("file", {})
    out = []
    for d in docs:
        name = files.get(f"{d.id}.xml")
        if name is None or not (out_dir / name).is_file():
            raise SystemExit(f"document {d.id}: no released file in {out_dir} (audit map: {name})")
        r = read_i2b2_xml(out_dir / name, allow_overlap=True)
        out.append(Document(d.id, r.text, [], d.patient_id))
    return out


def _by_type(v: dict) -> str:
    return ", ".join(f"{t} {x['verbatim']}/{x['mentions']}" for t, x in v["by_type"].items())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--systems", nargs="+", default=["default", "philter", "presidio"],
                    help="'default', 'gru' (named models) and peers 'philter', 'presidio'")
    ap.add_argument("--split", default="test", choices=("test", "dev"))
    ap.add_argument("--repeats", type=int, default=3, help="fresh processes per system (median reported)")
    ap.add_argument("--out", default="runs/deid_peers/peers.json")
    ap.add_argument("--peer-worker", nargs=3, metavar=("NAME", "IN", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.peer_worker:
        return _peer_worker(*args.peer_worker)

    from deidlib.corpus.i2b2 import write_i2b2_dir
    from deidlib.datasets import load_corpus
    from deidlib.evaluation.peers import PEERS, available_peers, score_predictions
    from deidlib.pipeline.default_model import ensure_default_model
    from deidlib.pipeline.run import disjoint, verbatim_survival

    docs = list(getattr(load_corpus("physionet"), args.split))
    rows = []
    with tempfile.TemporaryDirectory(prefix="deid_peers-") as tmp:
        work = Path(tmp)
        src = work / "in"
        write_i2b2_dir(docs, src)
        for name in args.systems:
            if name in PEERS and name not in available_peers():
                print(f"{name}: not installed (pip install 'deidlib[peers]'), skipped")
                continue
            meta: dict = {}
            if name not in PEERS:
                path = ensure_default_model(name, progress=False)  # built (once) before any timing
                info = json.loads((path / "recipe.json").read_text())
                meta = {"model": path.name, "build_seconds": info.get("build_seconds"),
                        "phi_threshold": info.get("phi_threshold")}
            runs, pred, released = [], None, None
            for k in range(args.repeats):
                if name in PEERS:
                    spans = work / f"{name}-{k}.json"
                    runs.append(cold_run([sys.executable, __file__, "--peer-worker", name, str(src), str(spans)]))
                    pred = _spans_from_json(docs, spans)
                else:
                    cmd, audit = _ours_cmd(name, src, work, k)
                    runs.append(cold_run(cmd))
                    pred = _spans_from_audit(docs, audit)
                    released = released_from_out(docs, work / f"out-{k}", audit)
            speeds = [len(docs) / r["cpu_s"] for r in runs]
            row = {"system": name, **score_predictions(docs, pred), **meta,
                   "notes_per_cpu_s": statistics.median(speeds), "notes_per_cpu_s_all": [round(s, 2) for s in speeds],
                   "cpu_s_median": statistics.median(r["cpu_s"] for r in runs),
                   "wall_s_median": statistics.median(r["wall_s"] for r in runs),
                   "peak_rss_mb": max(r["peak_rss_mb"] for r in runs)}
            if name in PEERS:
                released = peer_released_text([p.with_spans(disjoint(p.spans)) for p in pred])
            row["released_verbatim"] = v = verbatim_survival(docs, released)
            rows.append(row)
            print(f"{name:9s} P {row['precision']:.3f}  R {row['recall']:.3f}  F1 {row['f1']:.3f}  surviving "
                  f"{row['surviving_mentions']}/{row['gold_mentions']}  verbatim in the released text "
                  f"{v['verbatim']}/{v['mentions']} ({_by_type(v)})  {row['notes_per_cpu_s']:.1f} notes/CPU-s "
                  f"cold (median of {len(runs)}: {row['cpu_s_median']:.1f} CPU-s, {row['wall_s_median']:.1f} s wall "
                  f"for {len(docs)} notes; peak RSS {row['peak_rss_mb']:.0f} MB)", flush=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"corpus": "physionet", "split": args.split, "notes": len(docs),
                               "repeats": args.repeats, "threads": 1, "timing": "cold, end to end, CPU time",
                               "systems": rows}, indent=2))
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
