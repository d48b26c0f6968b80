"""Selection math of DSSGD (Festag & Spreckelsen Figure 5) with hand-computed vectors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from deidlib.collaborative import make_generator
from deidlib.collaborative.dssgd import (
    _apply_download,
    apply_upload,
    fraction_count,
    select_download,
    select_upload,
    threshold_and_clip,
)


def test_fraction_count_rounds_half_up_and_keeps_one():
    assert fraction_count(0.1, 10) == 1
    assert fraction_count(0.25, 10) == 3  # 2.5 -> 3
    assert fraction_count(0.01, 10) == 1  # positive fraction -> at least one
    assert fraction_count(0.0, 10) == 0
    assert fraction_count(1.0, 7) == 7
    with pytest.raises(ValueError):
        fraction_count(1.5, 10)


def test_download_takes_highest_counts():
    counts = torch.tensor([0, 5, 2, 9, 1, 7, 3, 0, 4, 6])
    # θ_d = 0.3 of 10 -> the 3 highest counts: 9 (idx 3), 7 (idx 5), 6 (idx 9)
    idx = select_download(counts, 0.3, tie_break="index")
    assert sorted(idx.tolist()) == [3, 5, 9]
    idx = select_download(counts, 0.3, generator=make_generator(0))
    assert sorted(idx.tolist()) == [3, 5, 9]  # no ties among the top 3: generator irrelevant


def test_download_ties_index_and_random():
    counts = torch.tensor([2, 1, 2, 2, 0])
    assert sorted(select_download(counts, 0.4, tie_break="index").tolist()) == [0, 2]
    seen = set()
    for s in range(60):
        idx = sorted(select_download(counts, 0.4, generator=make_generator(s)).tolist())
        assert len(idx) == 2 and set(idx) <= {0, 2, 3}
        seen.add(tuple(idx))
    assert seen == {(0, 2), (0, 3), (2, 3)}  # every tie resolution occurs
    with pytest.raises(ValueError, match="Generator"):
        select_download(counts, 0.4)


def test_apply_download_replaces_only_chosen():
    local = torch.tensor([1.0, 2.0, 3.0, 4.0])
    glob = torch.tensor([10.0, 20.0, 30.0, 40.0])
    out = _apply_download(local, glob, torch.tensor([1, 3]))
    assert out.tolist() == [1.0, 20.0, 3.0, 40.0]
    assert local.tolist() == [1.0, 2.0, 3.0, 4.0]  # pure


def test_threshold_and_clip_hand_computed():
    u = torch.tensor([5e-5, -5e-5, 1e-4, -1e-4, 0.3, -12.0, 11.0, 0.0])
    out = threshold_and_clip(u, tau=1e-4, gamma=10.0)
    # |u| < τ -> 0; |u| = τ is kept; clamp to [-10, 10]
    assert out.tolist() == pytest.approx([0.0, 0.0, 1e-4, -1e-4, 0.3, -10.0, 10.0, 0.0])
    assert torch.equal(threshold_and_clip(u, tau=0.0, gamma=math.inf), u)
    with pytest.raises(ValueError):
        threshold_and_clip(u, tau=-1.0, gamma=1.0)
    with pytest.raises(ValueError):
        threshold_and_clip(u, tau=0.0, gamma=0.0)


def test_upload_only_nonzero_and_size():
    u = torch.tensor([0.0, 0.5, 0.0, -0.2, 0.9, 0.0, 0.1, 0.0, 0.0, 0.0])
    g = make_generator(1)
    # base="parameters": k = round(0.3*10) = 3 among the 4 non-zero entries {1, 3, 4, 6}
    idx = select_upload(u, 0.3, generator=g)
    assert idx.numel() == 3 and set(idx.tolist()) <= {1, 3, 4, 6}
    # k capped at nnz
    assert sorted(select_upload(u, 0.8, generator=g).tolist()) == [1, 3, 4, 6]
    # base="eligible": round(0.5*4) = 2
    assert select_upload(u, 0.5, generator=g, base="eligible").numel() == 2
    # largest magnitude: 0.9 (4), 0.5 (1), -0.2 (3)
    assert sorted(select_upload(u, 0.3, selection="largest").tolist()) == [1, 3, 4]
    assert select_upload(torch.zeros(5), 0.5, generator=g).numel() == 0


def test_upload_sampling_rate_is_uniform():
    """Each of the nnz candidates is uploaded with probability k/nnz (binomial test, 5 sd)."""
    n, trials = 200, 400
    u = torch.zeros(n)
    u[::2] = torch.linspace(0.01, 1.0, n // 2)  # 100 candidates of very different size
    k = fraction_count(0.2, n)  # 40 of the 100 candidates
    hits = torch.zeros(n)
    for t in range(trials):
        idx = select_upload(u, 0.2, generator=make_generator(t))
        assert idx.numel() == k
        hits[idx] += 1
    assert hits[1::2].sum() == 0
    p = k / (n // 2)
    rate = hits[::2] / trials
    sd = math.sqrt(p * (1 - p) / trials)
    assert (rate - p).abs().max() < 5 * sd
    # no dependence on magnitude: correlation between |u| and rate is small
    r = np.corrcoef(u[::2].numpy(), rate.numpy())[0, 1]
    assert abs(r) < 0.3


def test_apply_upload_adds_and_counts():
    glob = torch.tensor([1.0, 1.0, 1.0, 1.0])
    counts = torch.tensor([0, 3, 0, 1])
    g2, c2 = apply_upload(glob, counts, torch.tensor([1, 2]), torch.tensor([0.5, -2.0]))
    assert g2.tolist() == [1.0, 1.5, -1.0, 1.0]
    assert c2.tolist() == [0, 4, 1, 1]
    assert glob.tolist() == [1.0] * 4 and counts.tolist() == [0, 3, 0, 1]  # pure
    with pytest.raises(ValueError, match="out of range"):
        apply_upload(glob, counts, torch.tensor([4]), torch.tensor([1.0]))


def test_one_epoch_hand_computed():
    """A full worker epoch on vectors: download by counts, update, τ, γ, upload, counts."""
    glob = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    counts = torch.tensor([4, 0, 2, 0, 3, 1])
    local = torch.zeros(6)
    idx = select_download(counts, 0.5, tie_break="index")  # counts 4, 3, 2 -> idx 0, 4, 2
    assert sorted(idx.tolist()) == [0, 2, 4]
    local = _apply_download(local, glob, idx)
    assert local.tolist() == [1.0, 0.0, 3.0, 0.0, 5.0, 0.0]
    new_local = local + torch.tensor([20.0, 1e-6, -0.5, 0.25, -30.0, 0.0])
    upd = threshold_and_clip(new_local - local, tau=1e-4, gamma=10.0)
    assert upd.tolist() == pytest.approx([10.0, 0.0, -0.5, 0.25, -10.0, 0.0])
    up = select_upload(upd, 1.0, generator=make_generator(0))
    assert sorted(up.tolist()) == [0, 2, 3, 4]
    g2, c2 = apply_upload(glob, counts, up, upd[up])
    assert g2.tolist() == pytest.approx([11.0, 2.0, 2.5, 4.25, -5.0, 6.0])
    assert c2.tolist() == [5, 0, 3, 1, 4, 1]


def test_vectorised_on_a_million_parameters():
    n = 1_000_000
    g = make_generator(0)
    counts = torch.randint(0, 50, (n,), generator=g)
    idx = select_download(counts, 0.1, generator=g)
    assert idx.numel() == 100_000
    assert counts[idx].min() >= counts.float().quantile(0.85)
    u = threshold_and_clip(torch.randn(n, generator=g) * 1e-3, 1e-4, 10.0)
    up = select_upload(u, 0.5, generator=g)
    assert up.numel() == 500_000 and bool((u[up] != 0).all())
