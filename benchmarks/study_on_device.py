"""One study's ``run_study`` at a profile on a device, timed end to end: a ``paper``-profile
study on a GPU machine where papermill and Jupyter are not installed.

    python benchmarks/study_on_device.py --study operating_point --profile paper --device cuda
    python benchmarks/study_on_device.py --study operating_point --profile smoke --device cpu

Only studies whose ``run_study`` takes ``device=`` can run here (:data:`STUDIES`). It prints the
device's name, the wall time of the whole study (corpus generation, word vectors, training,
curves) and the results' scalar fields; ``--out FILE`` also writes the results as JSON. What the
study computes is exactly what its notebook computes at that profile: the parameters come from
``params_for(profile)`` with no override.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time

#: studies whose run_study places its models on ``device``
STUDIES = ("operating_point", "ahmed_utility", "transfer")


def _scalars(results) -> dict:
    items = results.items() if hasattr(results, "items") else vars(results).items()
    return {k: v for k, v in items if isinstance(v, (int, float, str)) or v is None}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--study", default="operating_point", choices=STUDIES)
    ap.add_argument("--profile", default="paper", choices=("smoke", "cpu", "paper"))
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="write the results as JSON to this file")
    args = ap.parse_args(argv)

    import torch

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print(f"study_on_device: no CUDA device here (torch {torch.__version__})", flush=True)
        return 2
    name = torch.cuda.get_device_name(args.device) if args.device.startswith("cuda") else "cpu"
    print(f"study_on_device: {args.study} at the {args.profile} profile on {name}; torch {torch.__version__}",
          flush=True)
    study = importlib.import_module(f"deidlib.studies.{args.study}")
    params = study.params_for(args.profile)
    print(f"  parameters: {params}", flush=True)
    t0 = time.perf_counter()
    results = study.run_study(params, seed=args.seed, device=args.device, progress=True)
    wall = time.perf_counter() - t0
    for key, value in _scalars(results).items():
        print(f"  {key}: {value}", flush=True)
    print(f"study_on_device: {args.study} ({args.profile}) finished in {wall:.1f} s wall on {name}", flush=True)
    if args.out:
        from deidlib.reporting import json_ready

        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(json_ready(results), fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
