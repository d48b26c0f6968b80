"""The OS-CSPRNG noise and Poisson lots of DP-SGD (``train_dp(secure=True)``).

The source cannot be seeded, so every statistical check uses a bound whose false-alarm
probability is negligible (< 1e-12) rather than a fixed expected value."""

import ast
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy import stats

from deidlib.privacy.dpsgd import train_dp
from deidlib.privacy.gradients import clip_and_noise
from deidlib.privacy.secure import SecureRandom


def test_uniforms_lie_in_the_open_unit_interval_and_are_uniform():
    u = SecureRandom().uniform(200_000)
    assert u.dtype == np.float64 and u.min() > 0 and u.max() < 1
    # Kolmogorov-Smirnov: P(D > t) <= 2 exp(-2 n t^2); t = 0.012 gives < 1e-24 at n = 200k
    assert stats.kstest(u, "uniform").statistic < 0.012
    assert len(set(SecureRandom().uniform(1000).tolist()) & set(u[:1000].tolist())) == 0  # no repeats


def test_secure_noise_is_gaussian_with_the_dp_sgd_scale():
    sigma, C, L = 0.8, 2.0, 4.0
    out, _ = clip_and_noise([torch.zeros(0, 200_001)], C, sigma, L, SecureRandom())
    x = out[0].double().numpy()
    sd = sigma * C / L
    assert out[0].dtype == torch.float32 and x.shape == (200_001,)
    assert stats.kstest(x / sd, "norm").statistic < 0.012
    n = x.size
    assert abs(x.mean()) < 8 * sd / math.sqrt(n)
    assert abs(x.var() / sd**2 - 1) < 8 * math.sqrt(2 / n)
    again, _ = clip_and_noise([torch.zeros(0, 200_001)], C, sigma, L, SecureRandom())
    assert not torch.equal(again[0], out[0])  # not reproducible, by design


def test_poisson_lots_have_the_sample_rate():
    rng = SecureRandom()
    sizes = [len(lot) for lot in rng.lots(10_000, 0.05, 40)]
    # total ~ Binomial(400k, 0.05): mean 20k, sd ~138; 8 sd
    assert abs(sum(sizes) - 20_000) < 8 * math.sqrt(400_000 * 0.05 * 0.95)
    lot = rng.poisson_lot(50, 1.0)
    assert lot == list(range(50)) and rng.poisson_lot(50, 0.0) == []
    with pytest.raises(ValueError):
        rng.poisson_lot(5, 1.5)


def test_train_dp_secure_runs_records_it_and_is_not_reproducible(make_tagger):
    runs = []
    for _ in range(2):
        sents, tg = make_tagger("gru")
        hist, led = train_dp(tg, sents[:80], epochs=0.3, batch_size=8, noise_multiplier=1.0, accountant="rdp",
                             lr=0.5, progress=False, seed=3, secure=True)
        assert led.secure_rng and led.to_dict()["secure_rng"] is True
        assert math.isfinite(led.epsilon) and "train_loss" not in hist.epochs[-1]
        runs.append([p.detach().clone() for p in tg.parameters() if p.requires_grad])
    assert any(not torch.equal(a, b) for a, b in zip(*runs))


_DRAW = ("from deidlib.privacy.secure import SecureRandom; r = SecureRandom(); "
         "print(r.uniform(4).tolist(), r.standard_normal(4).tolist(), r.poisson_lot(64, 0.5))")


def test_secure_draws_differ_between_fresh_processes():
    # a module-level seeded generator gives every new process the same "secure" noise; draws
    # within one process cannot see that (the generator's state moves on between them)
    import deidlib

    root = str(Path(deidlib.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    outs = [subprocess.run([sys.executable, "-c", _DRAW], capture_output=True, text=True, env=env, cwd=root,
                           timeout=120, check=True).stdout for _ in range(2)]
    assert outs[0].strip() and outs[0] != outs[1], f"two fresh processes drew the same values: {outs[0]}"


#: constructors and seeding calls of the seedable generators (numpy, random, torch)
_SEEDABLE = {"default_rng", "seed", "manual_seed", "RandomState", "Random", "Generator", "PCG64", "PCG64DXSM",
             "MT19937", "Philox", "SFC64", "SeedSequence", "BitGenerator"}


def test_secure_module_holds_no_seeded_generator():
    import random

    import deidlib.privacy.secure as secure

    kinds = (np.random.Generator, np.random.RandomState, np.random.BitGenerator, random.Random, torch.Generator)
    held = [name for name, v in vars(secure).items() if isinstance(v, kinds)]
    assert not held, f"privacy/secure.py holds seedable generators at module level: {held}"
    tree = ast.parse(Path(secure.__file__).read_text())
    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name in _SEEDABLE:
                calls.append(f"line {node.lineno}: {name}({', '.join(ast.unparse(a) for a in node.args)})")
    assert not calls, f"privacy/secure.py builds or seeds a generator (its draws must come from os.urandom): {calls}"
    assert "os.urandom" in Path(secure.__file__).read_text()
