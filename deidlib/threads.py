"""The one rule for how many threads this process's numeric libraries use.

:func:`set_threads` sets them for the rest of the process (the commands' ``--threads N``,
the de-identification workers); :func:`limited_threads` sets them for a block and restores
them afterwards (the studies' ``num_threads`` parameter). Both set ``OMP_NUM_THREADS`` and
``MKL_NUM_THREADS`` (for child processes and libraries not loaded yet), limit the BLAS/OpenMP
pools already loaded with threadpoolctl, and set torch's intra-op threads.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["DEFAULT_THREADS", "env_threads", "threads_for", "thread_env", "set_threads", "limited_threads"]

#: default thread count: 1. Measured on the shared 2-core development machine under load:
#: a GRU-CRF epoch took 14 s with one intra-op thread and 121 s with torch's default of 2;
#: festag 2.1 s against no epoch in 240 s. These models are small, thread synchronisation
#: costs more than it saves when the cores are busy.
DEFAULT_THREADS = 1
_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")


def env_threads() -> int | None:
    """``OMP_NUM_THREADS`` when it is set to a positive integer, else ``None``."""
    env = os.environ.get(_ENV[0], "")
    return int(env) if env.isdigit() and int(env) >= 1 else None


def threads_for(requested: int | None) -> int:
    """``requested``, else ``OMP_NUM_THREADS`` when set to a positive integer, else 1."""
    if requested is not None:
        return requested
    return env_threads() or DEFAULT_THREADS


def thread_env(n: int) -> dict[str, str]:
    """The environment variables that give a child process (a notebook kernel, a Flower
    node) ``n`` threads."""
    return {var: str(n) for var in _ENV}


def set_threads(requested: int | None, *, torch: bool = True) -> int:
    """Set the thread count of this process's numeric libraries (:func:`threads_for`
    ``requested``) for good; return it. ``torch=False`` leaves torch's threads alone."""
    n = threads_for(requested)
    os.environ.update(thread_env(n))
    from threadpoolctl import threadpool_limits

    threadpool_limits(n)
    if torch:
        import torch as _torch

        if _torch.get_num_threads() != n:
            _torch.set_num_threads(n)
    return n


@contextmanager
def limited_threads(n: int | None) -> Iterator[int]:
    """``with limited_threads(n):`` the block runs on ``n`` threads (as :func:`set_threads`),
    and the previous counts come back afterwards; ``n=None`` changes nothing. Yields torch's
    thread count inside the block."""
    import torch

    if n is None:
        yield torch.get_num_threads()
        return
    from threadpoolctl import threadpool_limits

    old_env = {var: os.environ.get(var) for var in _ENV}
    old_torch = torch.get_num_threads()
    try:
        with threadpool_limits(n):
            set_threads(n)
            yield torch.get_num_threads()
    finally:
        torch.set_num_threads(old_torch)
        for var, value in old_env.items():
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value
