"""``python -m deidlib.collaborative.flower local``: a bounded multi-process Flower run on 127.0.0.1.

Starts one ``flower-superlink``, one ``flower-supernode`` per site (``--node-config
"site=I"``, each builds only its own partition of the demo task, :mod:`.app`) and
submits the app with ``flwr run --stream``; prints the server's log (per round: what it
received from each site), writes the run as JSON (``--out``) and stops every process it
started. Everything binds to 127.0.0.1; a private ``FLWR_HOME`` keeps Flower's state
out of the user's home. The same commands, one terminal each, are in docs/flower.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ...threads import thread_env, threads_for

APP_DIR = Path(__file__).resolve().parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, deadline: float) -> None:
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.3)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port}")


def _tool(name: str) -> str:
    here = Path(sys.executable).parent / name
    found = str(here) if here.exists() else shutil.which(name)
    if not found:
        raise SystemExit(f"error: {name} not found; install Flower: pip install 'deidlib[flower]'")
    return found


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in reversed(procs):  # each was started in its own process group: stop the group
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    for p in procs:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)


def run_local(args) -> int:
    home = Path(tempfile.mkdtemp(prefix="deidlib-flwr-"))
    port = _free_port()
    (home / "config.toml").write_text(
        f'[superlink]\ndefault = "local"\n\n[superlink.local]\naddress = "127.0.0.1:{port}"\ninsecure = true\n')
    env = {**os.environ, "FLWR_HOME": str(home), **thread_env(threads_for(None)),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    root = str(Path(__file__).resolve().parents[3])  # the deidlib checkout (for an uninstalled tree)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    out = Path(args.out).resolve() if args.out else home / "run.json"
    logs = home / "logs"
    logs.mkdir()
    procs: list[subprocess.Popen] = []
    deadline = time.monotonic() + args.timeout

    def start(name: str, cmd: list[str]) -> subprocess.Popen:
        f = open(logs / f"{name}.log", "w")  # noqa: SIM115 (closed with the process)
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        procs.append(p)
        return p

    try:
        start("superlink", [_tool("flower-superlink"), "--insecure", "--host", "127.0.0.1", "--port", str(port)])
        _wait_port(port, deadline)
        for i in range(args.sites):
            start(f"site{i}", [_tool("flower-supernode"), "--insecure", "--superlink", f"127.0.0.1:{port}",
                               "--host", "127.0.0.1", "--port", str(_free_port()), "--node-config", f"site={i}"])
        cfg = {"strategy": args.strategy, "epochs": args.epochs, "seed": args.seed, "theta-d": args.theta_d,
               "theta-u": args.theta_u, "gamma": args.gamma, "tau": args.tau, "dp-epsilon": args.dp_epsilon,
               "dp-budget": args.dp_budget, "num-sites": args.sites, "out": str(out),
               "reproducible": bool(args.reproducible),
               "timeout": float(args.timeout)}
        overrides = " ".join(f"{k}={json.dumps(v)}" for k, v in cfg.items())
        cmd = [_tool("flwr"), "run", str(APP_DIR), "local", "--stream", "--run-config", overrides]
        print("$", " ".join(cmd[:4]), "--stream --run-config", repr(overrides), flush=True)
        run = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True,
                               start_new_session=True)
        procs.append(run)
        assert run.stdout is not None
        for line in run.stdout:
            if "deidlib" in line or "WARNING" in line or "Successfully started run" in line or "rror" in line:
                print(line.rstrip(), flush=True)
            if out.exists() and "wrote" in line:
                break
            if time.monotonic() > deadline:
                print(f"error: the run did not finish within {args.timeout} s; logs in {logs}", file=sys.stderr)
                return 1
        if not out.exists():
            print(f"error: the run ended without a result; logs in {logs}", file=sys.stderr)
            return 1
        hist = json.loads(out.read_text())
        print(f"result: {out} ({len(hist['records'])} evaluations, "
              f"{hist['communication']['received_values']} values received by the server)")
        return 0
    finally:
        _stop(procs)
        if not args.keep and not args.out:
            shutil.rmtree(home, ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m deidlib.collaborative.flower", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    loc = sub.add_parser("local", help="superlink + one supernode per site + flwr run, all on 127.0.0.1")
    loc.add_argument("--strategy", choices=["round_robin", "dssgd", "fedavg"], default="dssgd")
    loc.add_argument("--sites", type=int, default=3)
    loc.add_argument("--epochs", type=int, default=2)
    loc.add_argument("--seed", type=int, default=0)
    loc.add_argument("--theta-d", type=float, default=0.1, help="DSSGD download fraction (C_0.1: 0.1)")
    loc.add_argument("--theta-u", type=float, default=0.5)
    loc.add_argument("--gamma", type=float, default=10.0)
    loc.add_argument("--tau", type=float, default=1e-4)
    loc.add_argument("--dp-epsilon", type=float, default=0.0, help="> 0: DP uploads with this ε each")
    loc.add_argument("--dp-budget", type=float, default=0.0, help="> 0: each site's total ε")
    loc.add_argument("--timeout", type=float, default=600.0, help="seconds before everything is stopped")
    loc.add_argument("--out", default=None, help="write the run (JSON) here")
    loc.add_argument("--reproducible", action="store_true",
                     help="sites use the server-forwarded DSSGD generator: identical to the simulator (studies only)")
    loc.add_argument("--keep", action="store_true", help="keep FLWR_HOME and the process logs")
    args = ap.parse_args(argv)
    if args.sites < 1 or args.epochs < 1:
        ap.error("--sites and --epochs must be >= 1")
    return run_local(args)


if __name__ == "__main__":
    raise SystemExit(main())
