"""Output safety, input validation and thread settings shared by every ``deidlib`` command.

A command never destroys its input and never prints a traceback for a user mistake:

* :func:`check_output` refuses an output path that is, contains or lies inside an input
  (after resolving ``..`` and symlinks), an output folder that is an existing file, and a
  non-empty output folder without ``--force``;
* :func:`staged_dir` writes a folder's files into a hidden sibling and moves them into
  place only when everything succeeded, so a failure leaves no partial output;
* :class:`UsageError` carries a one-line message; ``deidlib.cli.main`` prints it as
  ``deidlib COMMAND: message`` and returns its exit code (2 for bad options, as argparse,
  1 for bad data or environment);
* :func:`set_threads` (from :mod:`deidlib.threads`, the one thread rule) applies ``--threads``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..threads import DEFAULT_THREADS, set_threads

__all__ = [
    "UsageError",
    "resolve",
    "check_output",
    "staged_dir",
    "positive_int",
    "nonneg_int",
    "positive_float",
    "unit_float",
    "add_threads_argument",
    "set_threads",
    "check_device",
]


class UsageError(Exception):
    """A user mistake: printed as one line by the CLI, exit code ``code``."""

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code


def resolve(path: str | os.PathLike) -> Path:
    """Absolute path with ``..`` and symlinks resolved (the path need not exist)."""
    return Path(os.path.expanduser(os.fspath(path))).resolve()


def _related(a: Path, b: Path) -> bool:
    return a == b or a in b.parents or b in a.parents


def check_output(
    out: str | os.PathLike,
    inputs: Iterable[str | os.PathLike | None],
    *,
    what: str,
    kind: str = "dir",
    force: bool = False,
    against: str = "the input",
) -> Path:
    """Validate an output path before any work; return it resolved.

    Args:
        out: the output path as the user gave it.
        inputs: paths the command reads (``None`` entries are ignored).
        what: how the message names the output, e.g. ``"OUT_DIR"`` or ``"--json FILE"``.
        kind: ``"dir"`` (a folder the command fills) or ``"file"``.
        force: allow a non-empty output folder (``kind="dir"``).
        against: how the message names ``inputs``.

    Raises:
        UsageError: the output is, contains or lies inside an input; a folder is needed
            where a file exists (or the reverse); a non-empty folder without ``force``.
    """
    o = resolve(out)
    for i in inputs:
        if i is None:
            continue
        r = resolve(i)
        if _related(o, r):
            rel = "is" if o == r else ("lies inside" if r in o.parents else "contains")
            raise UsageError(f"{what} {out} {rel} {against} {i}; {what} must lie outside {against}")
    if kind == "dir":
        if o.exists() and not o.is_dir():
            raise UsageError(f"{what} {out} is an existing file, not a folder")
        if o.is_dir() and any(o.iterdir()) and not force:
            raise UsageError(f"{what} {out} is not empty (use --force to write into it)")
    else:
        if o.is_dir():
            raise UsageError(f"{what} {out} is a folder, not a file")
    return o


@contextlib.contextmanager
def staged_dir(out: Path) -> Iterator[Path]:
    """Yield a fresh hidden folder next to ``out``; on success move its entries into
    ``out`` (replacing same-named files), on failure delete it. ``out`` thus never holds
    a partial result of this run."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.", suffix=".partial"))
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    try:
        if not out.exists():
            os.replace(tmp, out)
            return
        for entry in sorted(tmp.iterdir()):
            dest = out / entry.name
            if dest.is_dir() and not dest.is_symlink():
                shutil.rmtree(dest)
            os.replace(entry, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _number(kind, test, desc):
    def parse(text: str):
        import argparse

        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {desc}, got {text!r}") from None
        if not test(v):
            raise argparse.ArgumentTypeError(f"expected {desc}, got {text!r}")
        return v

    parse.__name__ = desc  # argparse names the type in its messages
    return parse


#: argparse ``type=`` validators: a bad value is a one-line usage error (exit 2)
positive_int = _number(int, lambda v: v >= 1, "an integer >= 1")
nonneg_int = _number(int, lambda v: v >= 0, "an integer >= 0")
positive_float = _number(float, lambda v: v > 0 and v == v and v != float("inf"), "a finite number > 0")
unit_float = _number(float, lambda v: 0 < v <= 1, "a number in (0, 1]")


def add_threads_argument(p) -> None:
    p.add_argument(
        "--threads", type=positive_int, default=None, metavar="N",
        help=f"torch/OpenMP intra-op threads (default: {DEFAULT_THREADS}, or OMP_NUM_THREADS when set; "
        "one thread was fastest on a loaded 2-core machine)",
    )


def check_device(device: str) -> None:
    """Refuse a torch device this machine does not have (one line instead of a traceback)."""
    import torch

    try:
        d = torch.device(device)
    except RuntimeError as e:
        raise UsageError(f"--device {device!r}: {e}") from None
    if d.type == "cuda" and not torch.cuda.is_available():
        raise UsageError(f"--device {device}: CUDA is not available on this machine (use --device cpu)")
    if d.type == "cuda" and d.index is not None and d.index >= torch.cuda.device_count():
        raise UsageError(f"--device {device}: this machine has {torch.cuda.device_count()} CUDA device(s)")
    if d.type == "mps" and not torch.backends.mps.is_available():
        raise UsageError(f"--device {device}: MPS is not available on this machine")
