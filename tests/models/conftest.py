"""Tiny models on a shared 2-core machine: one intra-op thread avoids oversubscription
(10-20x slower otherwise under load); restored after each test."""

import pytest
import torch


@pytest.fixture(autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)
