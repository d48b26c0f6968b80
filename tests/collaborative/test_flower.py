"""The festag strategies as Flower apps (deidlib.collaborative.flower) against the simulator.

Equivalence tolerance: none — B round robin, C DSSGD and C with DP uploads on Flower give
bit-identical models, evaluations and ledgers to the in-process simulator (same seeds,
same pure functions, float32 arrays cross Flower records byte for byte). FedAvg has no
simulator counterpart; it is checked against a hand-computed weighted mean (atol 1e-6:
Flower averages in a different summation order).
"""

from __future__ import annotations

import pytest
import torch
from collab_tiny import tiny_accuracy, tiny_data, tiny_factory, tiny_trainer

pytest.importorskip("flwr")

from deidlib.collaborative import DSSGD, DSSGDConfig, ParameterServer, RoundRobin, make_sites, simulate
from deidlib.collaborative.dssgd import fraction_count
from deidlib.collaborative.flower import flower_simulate
from deidlib.collaborative.flower.client_app import SiteSpec, make_client_app  # noqa: E402
from deidlib.collaborative.flower.engine import (
    FedAvg,
    LoopbackGrid,
    _task_identity,  # noqa: E402
)
from deidlib.collaborative.flower.server_app import Plan, run_server  # noqa: E402
from deidlib.rng import derive_seed  # noqa: E402

EVAL = tiny_accuracy(tiny_data(40, seed=99))
PARTS = [tiny_data(n, seed=s) for n, s in [(12, 1), (9, 2), (15, 3)]]
KW = dict(model_factory=tiny_factory, trainer=tiny_trainer(), evaluate=EVAL, epochs=3, seed=7)
N_PARAMS = make_sites(PARTS[:1], model_factory=tiny_factory, trainer=tiny_trainer(), seed=7)[0].parameters().numel()


def _flower(strategy, parts=PARTS, **over):
    """A Flower run that also hands back the sites' final local models."""
    kw = {**KW, **over}
    sites = make_sites(parts, model_factory=kw["model_factory"], trainer=kw["trainer"], seed=kw["seed"])
    specs = {i: SiteSpec(s, i, kw["evaluate"]) for i, s in enumerate(sites)}
    grid = LoopbackGrid(make_client_app(lambda ctx: specs[int(ctx.node_config["site"])]),
                        [{"site": i} for i in range(len(sites))])
    from deidlib.collaborative.flower.engine import _plan_for

    with _task_identity():
        hist = run_server(grid, _plan_for(strategy, epochs=kw["epochs"], seed=kw["seed"]),
                          evaluate=kw["evaluate"], model_factory=kw["model_factory"])
    return hist, sites


def _comparable(hist):
    d = hist.to_dict()
    d["communication"] = {k: v for k, v in d["communication"].items() if not k.startswith("received")}
    return d


@pytest.mark.parametrize("strategy", [
    RoundRobin(),
    DSSGD(DSSGDConfig(theta_d=0.1, theta_u=0.5, gamma=10.0, tau=1e-4)),
    DSSGD(DSSGDConfig(theta_d=0.3, theta_u=0.2, gamma=0.5, tau=1e-4, dp_epsilon=1.0, dp_budget=2.5)),
], ids=["B", "C_0.1", "C_dp"])
def test_flower_run_is_bit_identical_to_the_simulator(strategy):
    sim_sites = make_sites(PARTS, model_factory=tiny_factory, trainer=tiny_trainer(), seed=7)
    server = ParameterServer(sim_sites[0].parameters())
    sim = strategy.run(sim_sites, epochs=3, evaluate=EVAL, seed=7, server=server)
    hist, fl_sites = _flower(strategy)
    assert _comparable(hist) == sim.to_dict()  # every evaluation, loss, count and ledger entry, exactly
    for a, b in zip(sim_sites, fl_sites):  # every site's final local model, bit for bit
        assert torch.equal(a.parameters(), b.parameters()), a.name
    if isinstance(strategy, DSSGD):
        assert torch.equal(server.parameters(), hist.server.parameters())  # the global model
        assert torch.equal(server.counts(), hist.server.counts())
    if strategy.name == "dssgd" and strategy.config.dp_epsilon:
        # the budget of 2.5 allows two uploads of ε = 1 per site; the third round uploads nothing
        assert all(led["uploads"] == 2 and led["total_epsilon"] == 2.0 for led in hist.ledgers.values())
        third = [r for r in hist.received if r["round"] == "3"]
        assert len(third) == 3 and all(r["values"] == 0 for r in third)


def test_flower_simulate_has_the_simulate_signature():
    strat = DSSGD(DSSGDConfig(theta_d=0.5))
    assert _comparable(flower_simulate(strat, PARTS, **KW)) == simulate(strat, PARTS, **KW).to_dict()


@pytest.mark.parametrize("theta_u", [0.5, 0.1])
def test_server_receives_only_theta_u_of_each_update(theta_u):
    """Measured on the received Flower messages: per round and site, round(θ_u·|p|) values."""
    hist, _ = _flower(DSSGD(DSSGDConfig(theta_d=0.1, theta_u=theta_u, gamma=10.0, tau=0.0)))
    rec = hist.received
    k = fraction_count(theta_u, N_PARAMS)
    assert 0 < k < N_PARAMS
    assert sorted((r["round"], r["site"]) for r in rec) == sorted(
        (str(e), f"site{i}") for e in (1, 2, 3) for i in (1, 2, 3))
    assert all(r["type"] == "train.dssgd" and r["values"] == k and r["indices"] == k for r in rec), rec
    assert hist.communication["received_values"] == 9 * k


def test_round_robin_server_receives_the_full_vector():
    hist, _ = _flower(RoundRobin())
    assert [r["values"] for r in hist.received] == [N_PARAMS] * 9


def test_dp_upload_sends_at_most_c_values():
    hist, _ = _flower(DSSGD(DSSGDConfig(theta_d=0.2, theta_u=0.3, gamma=0.5, tau=0.0, dp_epsilon=5.0)))
    c = fraction_count(0.3, N_PARAMS)
    assert all(r["values"] <= c and r["values"] == r["indices"] for r in hist.received)
    assert any(r["values"] > 0 for r in hist.received)


def test_without_reproducible_mode_the_site_uses_its_own_randomness():
    """Plan(reproducible=False): no generator state is sent, so the upload sample differs
    from the simulator's (with θ_u < 1 and many candidates) — the site's randomness is private."""
    strat = DSSGD(DSSGDConfig(theta_d=0.1, theta_u=0.3, tau=0.0))
    sites = make_sites(PARTS, model_factory=tiny_factory, trainer=tiny_trainer(), seed=7)
    specs = {i: SiteSpec(s, i, EVAL) for i, s in enumerate(sites)}
    grid = LoopbackGrid(make_client_app(lambda ctx: specs[int(ctx.node_config["site"])]),
                        [{"site": i} for i in range(3)])
    with _task_identity():
        hist = run_server(grid, Plan("dssgd", 2, 7, dssgd=strat.config, reproducible=False))
    sim = simulate(strat, PARTS, **{**KW, "epochs": 2})
    assert [r["train_loss"] for r in hist.records] != [r["train_loss"] for r in sim.records]


def test_fedavg_round_is_the_weighted_mean_of_local_epochs():
    hist = flower_simulate(FedAvg(), PARTS, **{**KW, "epochs": 1})
    sites = make_sites(PARTS, model_factory=tiny_factory, trainer=tiny_trainer(), seed=7)
    vecs, ns = [], []
    for i, s in enumerate(sites):
        s.train_epoch(seed=derive_seed(7, "epoch", 1, i))
        vecs.append(s.parameters().double())
        ns.append(s.num_examples)
    mean = sum(n * v for n, v in zip(ns, vecs)) / sum(ns)
    assert torch.allclose(hist.final.double(), mean, atol=1e-6, rtol=0)
    assert [r["values"] for r in hist.received] == [N_PARAMS] * 3
    assert hist.records[0]["epoch"] == 1 and "acc" in hist.records[0]


def test_strategies_without_a_counterpart_are_refused():
    from deidlib.collaborative import Centralized

    with pytest.raises(ValueError, match="no Flower version"):
        flower_simulate(Centralized(), PARTS, **KW)
    with pytest.raises(ValueError, match="only as Flower apps"):
        simulate(FedAvg(), PARTS, **KW)


@pytest.mark.slow
def test_multi_process_run_on_localhost_equals_the_simulator(tmp_path):
    """superlink + 3 supernodes + flwr run as real processes on 127.0.0.1 (about 1-3 min on 2 cores)."""
    import json
    import subprocess
    import sys

    from deidlib.collaborative.flower.app import (
        _demo_evaluator,
        _demo_model,
        _demo_partition,
        _demo_test_set,
        demo_trainer,
    )

    out = tmp_path / "run.json"
    proc = subprocess.run([sys.executable, "-m", "deidlib.collaborative.flower", "local", "--epochs", "1", "--reproducible",
                           "--timeout", "400", "--out", str(out)], capture_output=True, text=True, timeout=450)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    run = json.loads(out.read_text())
    sim = simulate(DSSGD(DSSGDConfig(theta_d=0.1, theta_u=0.5, gamma=10.0, tau=1e-4)),
                   [_demo_partition(i, 0) for i in range(3)], model_factory=_demo_model, trainer=demo_trainer(),
                   evaluate=_demo_evaluator(_demo_test_set(0)), epochs=1, seed=0)
    assert run["records"] == sim.to_dict()["records"]
    k = fraction_count(0.5, run["communication"]["num_params"])
    assert [r["values"] for r in run["received"]] == [k] * 3


def test_festag_study_engine_flower_matches_the_simulator():
    """Notebook 01's ``engine=flower``: B and C on Flower, the same numbers as the simulator."""
    pytest.importorskip("gensim")
    from deidlib.studies import festag

    params = festag.params_for("smoke", epochs=1)
    kw = dict(seeds=[0], experiments=["B", "C_0.1"], progress=False)
    sim, fl = festag.run_study(params, **kw), festag.run_study(params, engine="flower", **kw)
    assert [r["engine"] for r in fl["runs"]] == ["flower", "flower"]
    for a, b in zip(sim["runs"], fl["runs"]):
        assert a["records"] == b["records"], a["experiment"]
    with pytest.raises(ValueError, match="unknown engine"):
        festag.run_study(params, engine="ray", **kw)


def test_the_flower_app_defaults_to_private_site_randomness():
    """A real run forwards no generator state unless asked (reproducible=true is for checks only)."""
    import sys
    from pathlib import Path

    import deidlib.collaborative.flower as fl
    from deidlib.collaborative.flower.app import _plan_from_config

    tomllib = pytest.importorskip("tomllib" if sys.version_info >= (3, 11) else "tomli")
    cfg = tomllib.loads((Path(fl.__file__).parent / "pyproject.toml").read_text())["tool"]["flwr"]["app"]["config"]
    plan = _plan_from_config(cfg)
    assert plan.reproducible is False and plan.strategy == "dssgd" and plan.num_sites == 3
    assert plan.dssgd == DSSGDConfig(theta_d=0.1, theta_u=0.5, gamma=10.0, tau=1e-4)


def test_record_readers_return_numbers_and_reject_other_entries():
    from flwr.app import ConfigRecord

    from deidlib.collaborative.flower.records import number, numbers

    cfg = ConfigRecord({"lr": 0.5, "epoch": 3, "name": "dssgd", "eps": [0.25, 0.5]})
    assert number(cfg, "lr") == 0.5 and number(cfg, "epoch") == 3
    assert number(cfg, "max_steps", -1) == -1  # absent: the default
    assert numbers(cfg, "eps") == [0.25, 0.5]
    with pytest.raises(KeyError):
        number(cfg, "max_steps")
    with pytest.raises(ValueError, match="'name' is not a number"):
        number(cfg, "name")
    with pytest.raises(ValueError, match="'eps' is not a number"):
        number(cfg, "eps")
    with pytest.raises(ValueError, match="'lr' is not a list of numbers"):
        numbers(cfg, "lr")
