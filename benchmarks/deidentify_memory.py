"""Peak memory of ``deidlib deidentify`` with the default model against the number of notes:
the encoder's vector cache is bounded in bytes (:data:`deidlib.pipeline.run.INFERENCE_CACHE_BYTES`),
so the peak RSS should stay flat as the notes grow.

The notes are synthetic and short (one JSONL file; each note is two or three sentences: one
that no other note has, holding the note's number and a generated name and date, so the
encoder sees a new sentence in every note and the cache fills up, plus one or two sentences
drawn from the embedded synthetic corpus, ``deidlib.datasets.synthetic_documents``). Each size
runs the command in a fresh process on one thread (``--threads 1 --seed 0 --no-progress``); the
peak RSS and CPU seconds of that process come from ``os.wait4``. Inputs are written into a
temporary folder, deleted at the end. What grows with the notes besides the cache: the command
holds the input notes and their de-identified copies until it writes OUT (a few hundred bytes
of text per short note).

    python benchmarks/deidentify_memory.py                       # 1k and 10k notes
    python benchmarks/deidentify_memory.py --sizes 1000 10000 100000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _pool_sentences(limit: int = 4000) -> list[str]:
    """Sentences of the embedded synthetic corpus (generated, no real data)."""
    from deidlib.corpus.tokenize import document_sentences
    from deidlib.datasets import synthetic_documents

    out: list[str] = []
    for d in synthetic_documents("cpu", seed=1):
        for toks in document_sentences(d, "default", use_spans=False):
            if 3 <= len(toks) <= 40:
                out.append(d.text[toks[0].start:toks[-1].end].replace("\n", " "))
        if len(out) >= limit:
            break
    return out


def write_notes(path: Path, n: int, pool: list[str], seed: int = 0) -> int:
    """``n`` short notes as JSONL lines ``{"text": ...}``; returns the bytes written."""
    from faker import Faker

    fake = Faker("en_US")
    fake.seed_instance(seed)
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            own = (f"Note {i}: seen with {fake.first_name()} {fake.last_name()} on "
                   f"{fake.date_between('-30y', 'today'):%m/%d/%Y}.")
            text = " ".join([own, *rng.sample(pool, rng.randint(1, 2))])
            fh.write(json.dumps({"text": text}) + "\n")
    return path.stat().st_size


def run_size(src: Path, out: Path) -> dict:
    """Run the command on ``src`` in a fresh process; its peak RSS (MB), CPU and wall seconds."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    cmd = [sys.executable, "-m", "deidlib", "deidentify", str(src), str(out), "--threads", "1", "--seed", "0",
           "--no-progress"]
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode(errors="replace") if p.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"deidentify failed: {err.strip().splitlines()[-1:]}")
    return {"peak_rss_mb": ru.ru_maxrss / 1024, "cpu_s": ru.ru_utime + ru.ru_stime, "wall_s": wall}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    args = ap.parse_args(argv)
    from deidlib.pipeline.default_model import ensure_default_model
    from deidlib.pipeline.run import INFERENCE_CACHE_BYTES

    ensure_default_model(progress=False)  # built (once) before anything is measured
    pool = _pool_sentences()
    print(f"default model, encoder cache bound {INFERENCE_CACHE_BYTES / 2**20:.0f} MiB, one thread; "
          f"short synthetic notes (2-3 sentences, one new per note)")
    print(f"{'notes':>8s} {'input MB':>9s} {'peak RSS MB':>12s} {'CPU s':>8s} {'wall s':>8s} {'notes/CPU-s':>12s}")
    with tempfile.TemporaryDirectory(prefix="deid_memory-") as tmp:
        for n in args.sizes:
            src = Path(tmp) / f"notes-{n}.jsonl"
            size = write_notes(src, n, pool)
            r = run_size(src, Path(tmp) / f"out-{n}")
            print(f"{n:8d} {size / 1e6:9.1f} {r['peak_rss_mb']:12.0f} {r['cpu_s']:8.1f} {r['wall_s']:8.1f} "
                  f"{n / r['cpu_s']:12.1f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
