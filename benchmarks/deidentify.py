"""Throughput of ``deidlib deidentify`` in notes per second: 1 worker against N worker
processes and against a local Dask cluster of N workers (medians of repeats, side by side).

Writes synthetic notes (``deidlib.datasets.synthetic_documents``) as ``.txt`` files into a
temporary folder and runs the command (``deidlib.cli.main``) on them end to end: reading,
tagging, seeded surrogates, writing. Timed: the whole command, including starting the
worker processes / the Dask cluster and loading the model in each worker (what a user
waits for). Not timed: writing the input, building the default model (done before).
The machine's load average is printed: on a shared machine ratios near 1 mean the cores
were busy, not that the workers do not scale.

    python benchmarks/deidentify.py                          # default model, 200 notes, N=2, 3 repeats
    python benchmarks/deidentify.py --model runs/nurs --notes 500 --workers 4 --repeats 5
    python benchmarks/deidentify.py --no-dask
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import tempfile
import time
from pathlib import Path


def _write_notes(n: int, root: Path) -> int:
    from deidlib.datasets import synthetic_documents

    docs = synthetic_documents("cpu", seed=1)
    docs = (docs * (n // len(docs) + 1))[:n]
    for i, d in enumerate(docs):
        with open(root / f"{i:06d}-{d.id}.txt", "w", encoding="utf-8", newline="") as fh:
            fh.write(d.text)
    return n


def _run(src: Path, out: Path, model: str, extra: list[str]) -> float:
    from deidlib.cli import main

    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        rc = main(["deidentify", str(src), str(out), "--model", model, "--seed", "0", "--no-progress",
                   "--patient-from-filename", r"^\d+-(\d+)-", *extra])
    secs = time.perf_counter() - t0
    if rc != 0:
        raise SystemExit(f"deidentify failed ({rc}) with {extra}")
    return secs


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
        outputs: dict[str, dict] = {}
        for r in range(a.repeats):
            for name, extra in configs:  # interleaved, so a load change hits every configuration
                out = Path(tmp) / f"out-{r}-{len(times[name])}-{name.split()[0]}"
                times[name].append(_run(src, out, model, extra))
                outputs[name] = {p.name: p.read_bytes() for p in out.glob("*.txt")}
        base = statistics.median(times["1 worker"])
        print(f"{n} notes, model {model}, {a.repeats} repeats, load average {os.getloadavg()[0]:.1f} "
              f"on {os.cpu_count()} CPUs")
        print(f"{'configuration':40s} {'median s':>9s} {'notes/s':>9s} {'vs 1 worker':>12s}  same output")
        for name, _ in configs:
            med = statistics.median(times[name])
            same = outputs[name] == outputs["1 worker"]
            print(f"{name:40s} {med:9.2f} {n / med:9.1f} {base / med:11.2f}x  {same}")


if __name__ == "__main__":
    main()
