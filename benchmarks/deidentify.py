"""Throughput of ``deidlib deidentify`` in notes per second: 1 worker against N worker
processes and against a local Dask cluster of N workers (medians of repeats, side by side).

Writes synthetic notes (``deidlib.datasets.synthetic_documents``) as ``.txt`` files into a
temporary folder and runs the command (``python -m deidlib deidentify``, one thread per
worker) on them end to end, each repeat in a fresh process (no model, no encoder cache left
warm by an earlier repeat): reading, tagging, seeded surrogates, writing. Timed: the whole
command, including start-up, starting the worker processes / the Dask cluster and loading the
model in each worker (what a user waits for); wall seconds and CPU seconds of the process
and its workers (``os.wait4``). Not timed: writing the input, building the default model (done before).
The machine's load average is printed: on a shared machine ratios near 1 mean the cores
were busy, not that the workers do not scale.

    python benchmarks/deidentify.py                          # default model, 200 notes, N=2, 3 repeats
    python benchmarks/deidentify.py --model runs/nurs --notes 500 --workers 4 --repeats 5
    python benchmarks/deidentify.py --no-dask
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _write_notes(n: int, root: Path) -> int:
    from deidlib.datasets import synthetic_documents

    docs = synthetic_documents("cpu", seed=1)
    docs = (docs * (n // len(docs) + 1))[:n]
    for i, d in enumerate(docs):
        with open(root / f"{i:06d}-{d.id}.txt", "w", encoding="utf-8", newline="") as fh:
            fh.write(d.text)
    return n


def _run(src: Path, out: Path, model: str, extra: list[str]) -> tuple[float, float]:
    """The command in a fresh process (nothing warm: no model, no encoder cache): its wall
    seconds and CPU seconds (this process and its workers, from ``os.wait4``; a Dask cluster's
    workers are children of it too)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    cmd = [sys.executable, "-m", "deidlib", "deidentify", str(src), str(out), "--model", model, "--seed", "0",
           "--no-progress", "--threads", "1", "--patient-from-filename", r"^\d+-(\d+)-", *extra]
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    secs = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"deidentify failed with {extra}")
    return secs, ru.ru_utime + ru.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", help="model folder (default: the default model, built first if needed)")
    ap.add_argument("--notes", type=int, default=200)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-dask", action="store_true")
    a = ap.parse_args()
    model = a.model
    if model is None:
        from deidlib.pipeline.default_model import ensure_default_model

        model = str(ensure_default_model())
    configs = [("1 worker", [])] + [(f"{a.workers} processes", ["--workers", str(a.workers)])]
    if not a.no_dask:
        configs.append((f"dask local cluster, {a.workers} workers",
                        ["--engine", "dask", "--workers", str(a.workers)]))
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "in"
        src.mkdir()
        n = _write_notes(a.notes, src)
        times: dict[str, list[float]] = {k: [] for k, _ in configs}
        cpus: dict[str, list[float]] = {k: [] for k, _ in configs}
        outputs: dict[str, dict] = {}
        for r in range(a.repeats):
            for name, extra in configs:  # interleaved, so a load change hits every configuration
                out = Path(tmp) / f"out-{r}-{len(times[name])}-{name.split()[0]}"
                wall, cpu = _run(src, out, model, extra)
                times[name].append(wall)
                cpus[name].append(cpu)
                outputs[name] = {p.name: p.read_bytes() for p in out.glob("*.txt")}
        base = statistics.median(times["1 worker"])
        print(f"{n} notes, model {model}, {a.repeats} repeats, each a fresh process, load average "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        print(f"{'configuration':40s} {'median s':>9s} {'notes/s':>9s} {'notes/CPU-s':>12s} {'vs 1 worker':>12s}"
              "  same output")
        for name, _ in configs:
            med = statistics.median(times[name])
            same = outputs[name] == outputs["1 worker"]
            print(f"{name:40s} {med:9.2f} {n / med:9.1f} {n / statistics.median(cpus[name]):12.1f} "
                  f"{base / med:11.2f}x  {same}")


if __name__ == "__main__":
    main()
