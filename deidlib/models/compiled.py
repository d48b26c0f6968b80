"""Loading the package's compiled CPU kernels (``deidlib/models/csrc``): the GRU layer of
:mod:`.fused_gru`, the CRF log-partition and Viterbi of :mod:`.fused_crf` and the LSTM/GRU
inference kernel of :mod:`.fused_infer`.

Each is a C++ source built on first use with :func:`torch.utils.cpp_extension.load` (a C++
compiler, ninja and the Python headers are needed; about 20 s each on the development
machine, then cached under torch's extensions folder, ``TORCH_EXTENSIONS_DIR`` or
``~/.cache/torch_extensions``, and shared by later processes, which wait on a lock while one
builds). Where a kernel cannot be built, or with ``DEIDLIB_COMPILED=0`` in the environment,
it is unavailable and its callers keep torch's own operators (one ``RuntimeWarning`` says
why). Results agree with those operators to float rounding, so a run on a machine without a
compiler gives the same figures up to that rounding, not bit for bit.
"""

from __future__ import annotations

import functools
import hashlib
import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

import torch

__all__ = ["Kernel", "wrapped"]

_CSRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "csrc")


@functools.cache
def _headers_hash() -> str:
    """A short hash of the contents of every header in ``csrc`` (see :meth:`Kernel.module`);
    read once, when the first kernel is built."""
    h = hashlib.sha1()
    for f in sorted(os.listdir(_CSRC)):
        if f.endswith(".h"):
            with open(os.path.join(_CSRC, f), "rb") as fh:
                h.update(f.encode() + b"\0" + fh.read())
    return h.hexdigest()[:12]


def wrapped(t: torch.Tensor) -> bool:
    """Whether ``t`` is a batching or transform wrapper (``torch.func``'s, or the legacy
    batched tensors of ``autograd.grad(..., is_grads_batched=True)``): such tensors have no
    plain storage for compiled code."""
    f = torch._C._functorch
    return f.is_functorch_wrapped_tensor(t) or f.is_legacy_batchedtensor(t)


class Kernel:
    """One compiled extension: ``module()`` (built on first call, ``None`` where it cannot
    be), ``available()``, ``enabled()`` (available and not inside ``disabled()``)."""

    def __init__(self, name: str, source: str, what: str, fallback: str, cflags: tuple[str, ...] = ()) -> None:
        self.name, self.source, self.what, self.fallback = name, os.path.join(_CSRC, source), what, fallback
        self.cflags = ["-O3", *cflags]
        self._module = None
        self._tried = False
        self._disabled = 0

    def module(self):
        if not self._tried:
            self._tried = True
            if os.environ.get("DEIDLIB_COMPILED", "1") == "0":
                return None
            try:
                from torch.utils.cpp_extension import load

                # torch's loader rebuilds when a source or a flag changes, not when a header does: the
                # headers' hash goes into the flags (every kernel, so an edit to a shared header rebuilds all)
                flags = [*self.cflags, f"-DDEID_HEADERS_HASH=0x{_headers_hash()}"]
                self._module = load(name=self.name, sources=[self.source], extra_cflags=flags, verbose=False)
            except Exception as e:  # no compiler, no headers, no ninja, a failed build
                warnings.warn(f"deidlib: the compiled {self.what} could not be built ({type(e).__name__}: "
                              f"{str(e)[:200]}); {self.fallback}", RuntimeWarning, stacklevel=3)
        return self._module

    def reset(self) -> None:
        """Forget the build attempt (tests)."""
        self._module, self._tried = None, False

    def available(self) -> bool:
        return self.module() is not None

    def enabled(self) -> bool:
        return not self._disabled and self.available()

    def usable(self, *tensors: torch.Tensor) -> bool:
        """Whether the kernel can take these tensors now: CPU float32/float64, no batching or
        transform wrappers (:func:`wrapped`), and :meth:`enabled`."""
        return all(t.device.type == "cpu" and t.dtype in (torch.float32, torch.float64) and not wrapped(t)
                   for t in tensors) and self.enabled()

    @contextmanager
    def disabled(self) -> Iterator[None]:
        """Inside the block the callers use torch's operators instead (side-by-side
        measurements, equality tests, ``torch.func`` transforms)."""
        self._disabled += 1
        try:
            yield
        finally:
            self._disabled -= 1
