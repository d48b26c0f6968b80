"""The buffered OS CSPRNG of the secure mode: distributions, bit widths, fork safety."""

from __future__ import annotations

import os

import numpy as np
import pytest
from scipy.stats import chisquare

from deidlib.surrogates.randomness import SecureRNG, _BufferedSystemRandom


def test_getrandbits_widths_and_randrange_uniform():
    r = _BufferedSystemRandom(block=64)  # small block: many refills, draws straddle block ends
    for k in (1, 3, 8, 9, 31, 64, 65, 200):
        xs = [r.getrandbits(k) for _ in range(200)]
        assert all(0 <= x < 2**k for x in xs)
        assert max(xs) >= 2 ** (k - 1) * 0.5  # the top bits are used
    counts = np.bincount([r.randrange(7) for _ in range(14_000)], minlength=7)
    assert chisquare(counts).pvalue > 1e-4
    u = np.array([r.random() for _ in range(20_000)])
    assert 0 <= u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.01
    g = SecureRNG()
    assert {g.randbelow(1) for _ in range(50)} == {0}
    big = np.bincount([g.randbelow(300) for _ in range(30_000)], minlength=300)
    assert big.size == 300 and chisquare(big).pvalue > 1e-4
    with pytest.raises(ValueError):
        g.randbelow(0)
    with pytest.raises(ValueError):
        r.getrandbits(-1)
    assert r.getrandbits(0) == 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_forked_child_does_not_reuse_parent_bytes():
    r = _BufferedSystemRandom()
    r.getrandbits(8)  # fill the buffer
    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: report its next 16 bytes and exit at once
        os.write(wr, r.randbytes(16))
        os._exit(0)
    os.close(wr)
    child = os.read(rd, 16)
    os.waitpid(pid, 0)
    os.close(rd)
    assert child != r.randbytes(16)


def test_secure_discrete_laplace_symmetric_and_scaled():
    g = SecureRNG()
    x = np.array([g.discrete_laplace(0.5) for _ in range(6000)])
    q = np.exp(-0.5)
    assert abs(x.mean()) < 0.15
    assert abs((x == 0).mean() - (1 - q) / (1 + q)) < 0.03
