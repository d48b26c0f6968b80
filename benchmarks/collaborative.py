"""DSSGD overhead: time of one DSSGD worker epoch vs one local-only epoch on the same data.

A DSSGD worker epoch (Festag & Spreckelsen, Figure 5) = download the θ_d·|p| most-updated
global parameters + one local epoch of plain SGD + τ/γ/θ_u selection and upload. The
local-only epoch (experiment D) is the same local epoch without any exchange. Both are
timed alternately on the same site data and model, several repeats; medians and their
ratio (target ≤ 1.3) are printed side by side.

    python benchmarks/collaborative.py                  # BiLSTM tagger of paper-like size
    python benchmarks/collaborative.py --model festag   # the festag tagger (needs deidlib.models)
    python benchmarks/collaborative.py --threads 1      # torch.set_num_threads(1)
    python benchmarks/collaborative.py --flower         # + Flower's per-round overhead vs the simulator

``--flower`` also runs round robin (B) and DSSGD (C) on ``--sites`` sites for ``--rounds``
rounds, once with the in-process simulator and once as Flower apps
(:func:`deidlib.collaborative.flower.flower_simulate`: the same ServerApp logic and
ClientApp, messages through Flower records over an in-process grid), alternately,
``--repeats`` times, and prints the median time per round of each, their ratio, and the
received values per round that the Flower server metered.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch
from torch import nn

from deidlib.collaborative import (
    DSSGD,
    DSSGDConfig,
    ParameterServer,
    SGDTrainer,
    make_sites,
)
from deidlib.collaborative.strategies import LocalOnly  # noqa: F401  (documented counterpart)
from deidlib.studies.festag.run import benchmark_setup


class BiLSTMTagger(nn.Module):
    """Word embedding + BiLSTM + 2-layer feed-forward (the label prediction layer of
    Festag & Spreckelsen without the character layer): 100-dim LSTM states, 29 labels."""

    def __init__(self, seed: int, vocab: int = 5000, emb: int = 100, hidden: int = 100, labels: int = 29):
        super().__init__()
        with torch.random.fork_rng(devices=[]):  # seeded init without touching global RNG state
            torch.manual_seed(seed)
            self.emb = nn.Embedding(vocab, emb)
            self.lstm = nn.LSTM(emb, hidden, batch_first=True, bidirectional=True)
            self.ff = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.Tanh(), nn.Linear(hidden, labels))

    def loss(self, batch):
        x, y = batch
        out, _ = self.lstm(self.emb(x))
        return nn.functional.cross_entropy(self.ff(out).reshape(-1, self.ff[-1].out_features), y.reshape(-1))


def _lstm_setup(n_sent: int, seed: int):
    rng = np.random.default_rng(seed)
    data = []
    for _ in range(n_sent):
        t = int(rng.integers(8, 30))
        data.append((torch.from_numpy(rng.integers(1, 5000, t)), torch.from_numpy(rng.integers(0, 29, t))))

    def encode(model, exs):
        return exs[0][0][None], exs[0][1][None]

    def loss(model, batch):
        return model.loss(batch)

    return BiLSTMTagger, data, SGDTrainer(loss, lr=0.9, batch_size=1, encode=encode)


def _festag_setup(n_sent: int, seed: int):

    return benchmark_setup(n_sent, seed)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", choices=["lstm", "festag"], default="lstm")
    ap.add_argument("--sentences", type=int, default=200, help="sentences at the site (one epoch)")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--theta-d", type=float, default=0.1)
    ap.add_argument("--theta-u", type=float, default=0.5)
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: leave as is)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--flower", action="store_true", help="also time the Flower engine against the simulator")
    ap.add_argument("--sites", type=int, default=3, help="--flower: sites (the sentences are split among them)")
    ap.add_argument("--rounds", type=int, default=2, help="--flower: global rounds per run")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)

    factory, data, trainer = (_lstm_setup if args.model == "lstm" else _festag_setup)(args.sentences, args.seed)
    local_site, dssgd_site = make_sites([data, data], model_factory=factory, trainer=trainer, seed=args.seed,
                                        names=["local", "dssgd"])
    server = ParameterServer(dssgd_site.parameters())
    strategy = DSSGD(DSSGDConfig(theta_d=args.theta_d, theta_u=args.theta_u, gamma=10.0, tau=1e-4))
    n_params = server.num_params

    # warm-up (caches encodings, allocator)
    local_site.train_epoch(seed=0)
    strategy._worker_epoch(dssgd_site, server, 0, args.seed, 1, None)

    t_local, t_dssgd = [], []
    for r in range(1, args.repeats + 1):
        t0 = time.perf_counter()
        local_site.train_epoch(seed=r)
        t_local.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        strategy._worker_epoch(dssgd_site, server, r, args.seed, 1, None)
        t_dssgd.append(time.perf_counter() - t0)

    ml, md = statistics.median(t_local), statistics.median(t_dssgd)
    print(f"model={args.model} params={n_params:,} sentences/epoch={len(data)} repeats={args.repeats} "
          f"threads={torch.get_num_threads()} theta_d={args.theta_d} theta_u={args.theta_u}")
    print(f"{'':>10} {'local-only epoch':>18} {'DSSGD epoch':>14}")
    print(f"{'median s':>10} {ml:18.3f} {md:14.3f}")
    print(f"{'min s':>10} {min(t_local):18.3f} {min(t_dssgd):14.3f}")
    print(f"ratio DSSGD / local-only (medians): {md / ml:.3f}  (target <= 1.3)")
    if args.flower:
        _flower_overhead(args, factory, data, trainer, n_params)
    return 0


def _flower_overhead(args, factory, data, trainer, n_params) -> None:
    """Median seconds per round: simulator vs Flower apps, same partitions, seeds and strategies."""
    from deidlib.collaborative import RoundRobin, simulate
    from deidlib.collaborative.flower import flower_simulate

    parts = [data[i :: args.sites] for i in range(args.sites)]
    evaluate = lambda model: {"none": 0.0}  # noqa: E731  (time the protocol, not an evaluation)
    kw = dict(model_factory=factory, trainer=trainer, evaluate=evaluate, epochs=args.rounds, seed=args.seed)
    cases = [("B round robin", RoundRobin()),
             (f"C DSSGD θ_d={args.theta_d}", DSSGD(DSSGDConfig(theta_d=args.theta_d, theta_u=args.theta_u)))]
    print(f"\nFlower vs simulator: {args.sites} sites x {len(parts[0])}-{len(parts[-1])} sentences, "
          f"{args.rounds} rounds per run, {args.repeats} repeats, params={n_params:,}")
    print(f"{'':>22} {'simulator s/round':>18} {'flower s/round':>15} {'ratio':>7} {'overhead ms/round':>18}")
    for label, strategy in cases:
        flower_simulate(strategy, parts, **{**kw, "epochs": 1})  # warm-up (encodings, imports)
        t_sim, t_fl, hist = [], [], None
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            simulate(strategy, parts, **kw)
            t_sim.append((time.perf_counter() - t0) / args.rounds)
            t0 = time.perf_counter()
            hist = flower_simulate(strategy, parts, **kw)
            t_fl.append((time.perf_counter() - t0) / args.rounds)
        ms, mf = statistics.median(t_sim), statistics.median(t_fl)
        print(f"{label:>22} {ms:18.3f} {mf:15.3f} {mf / ms:7.3f} {1000 * (mf - ms):18.1f}")
        per_round: dict[str, list[int]] = {}
        for r in hist.received:
            per_round.setdefault(r["round"], []).append(r["values"])
        print(f"{'':>22} server received per round (values per site reply): "
              + "; ".join(f"round {k}: {v}" for k, v in per_round.items()))


if __name__ == "__main__":
    raise SystemExit(main())
