"""Output safety, input validation and thread settings shared by every ``deidlib`` command.

A command never destroys its input and never prints a traceback for a user mistake:

* :func:`check_output` is the one rule for every path a command writes: it refuses, before
  any work, an output that is, contains or lies inside an input (after resolving ``..`` and
  symlinks), an output folder that is an existing file, a non-empty output folder without
  ``--force``, and an output that cannot be written;
* :func:`staged_dir` writes a folder's files into a hidden sibling and moves them into
  place only when everything succeeded, so a failure leaves no partial output; with
  ``mode="exclusive"`` the move fails when the output appeared meanwhile, with
  ``mode="replace"`` the output is replaced whole;
* :func:`output_lock` lets one run at a time write an output (a lock file beside it, released
  by the kernel even when the run is killed) and :func:`remove_leftovers` removes what a
  killed run left beside an output (hidden ``.NAME.XXXXXXXX.partial``/``.old`` entries);
* :func:`loading` turns any failure to read a user-supplied model or checkpoint into one
  line (models are read with ``torch.load(weights_only=True)``: a pickle runs no code);
* :class:`UsageError` carries a one-line message; ``deidlib.cli.main`` prints it as
  ``deidlib COMMAND: message`` and returns its exit code (2 for bad options, as argparse,
  1 for bad data or environment);
* :func:`set_threads` (from :mod:`deidlib.threads`, the one thread rule) applies ``--threads``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import shutil
import tempfile
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..threads import DEFAULT_THREADS, set_threads

__all__ = ["UsageError", "resolve", "check_output", "loading", "set_threads"]


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


def _write_problem(o: Path, kind: str) -> str | None:
    """Why ``o`` cannot be written (``None`` when it can): the nearest existing folder on the
    way to ``o`` (and ``o`` itself when it is an existing folder) must take a new file."""
    probe = [o, o.parent] if kind == "dir" and o.is_dir() else []
    if not probe:
        p = o.parent
        while not os.path.lexists(p) and p != p.parent:
            p = p.parent
        if not p.is_dir():
            return f"{p} is a file, not a folder"
        probe = [p]
    for d in probe:
        try:
            fd, name = tempfile.mkstemp(dir=d, prefix=".deidlib-write-test.")
        except OSError as e:
            return f"{d}: {e.strerror or e}"
        os.close(fd)
        os.unlink(name)
    return None


def check_output(
    out: str | os.PathLike,
    inputs: Iterable,
    *,
    what: str,
    kind: str = "dir",
    force: bool = False,
    against: str = "the input",
) -> Path:
    """The one rule for every path a command writes (OUT, ``--json``, ``--audit``,
    checkpoints, runs folders), applied before any work; returns the path resolved.

    Args:
        out: the output path as the user gave it.
        inputs: what the command reads: paths, or ``(name, path)`` pairs naming them in the
            message (``None`` paths are ignored). Symlinks and ``..`` are resolved on both sides.
        what: how the message names the output, e.g. ``"OUT_DIR"`` or ``"--json FILE"``.
        kind: ``"dir"`` (a folder the command fills) or ``"file"``.
        force: allow a non-empty output folder (``kind="dir"``).
        against: how the message names an input given without a name.

    Raises:
        UsageError (exit code 2): the output is, contains or lies inside an input; a folder is
            needed where a file exists (or the reverse); a non-empty folder without ``force``;
            the output cannot be written (no permission, a path under a file, a read-only or
            virtual file system such as ``/proc``).
    """
    o = resolve(out)
    for item in inputs:
        name, i = item if isinstance(item, tuple) else (against, item)
        if i is None:
            continue
        r = resolve(i)
        if _related(o, r):
            rel = "is" if o == r else ("lies inside" if r in o.parents else "contains")
            raise UsageError(f"{what} {out} {rel} {name} {i}; {what} must lie outside {name}")
    if kind == "dir":
        if o.exists() and not o.is_dir():
            raise UsageError(f"{what} {out} is an existing file, not a folder")
        if o.is_dir() and any(o.iterdir()) and not force:
            raise UsageError(f"{what} {out} is not empty (use --force to write into it)")
    else:
        if o.is_dir():
            raise UsageError(f"{what} {out} is a folder, not a file")
    problem = _write_problem(o, kind)
    if problem:
        raise UsageError(f"{what} {out}: cannot write there ({problem})")
    return o


def model_inputs(model_dir: str | os.PathLike | None, name: str = "the model") -> list:
    """``(name, folder)`` of a saved model and, for an ensemble (``ensemble.json``), of each
    member folder it reads: the inputs an output must stay clear of. A file that cannot be
    read yields the folder only (loading it then fails with its own one-line error)."""
    if model_dir is None:
        return []

    d = Path(model_dir)
    found = [(name, d)]
    try:
        for m in json.loads((d / "ensemble.json").read_text())["members"]:
            found.append(("an ensemble member", Path(m) if os.path.isabs(m) else d / m))
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return found


def _first_line(e: BaseException) -> str:
    import pickle

    text = str(e)
    if isinstance(e, pickle.UnpicklingError):
        why = next((ln.strip() for ln in text.splitlines() if "GLOBAL" in ln or "Unsupported" in ln), "")
        return ("it holds Python objects, not only tensors, and is refused without running them"
                + (f" ({why})" if why else ""))
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    line = f"{type(e).__name__}: {line}" if line else type(e).__name__
    return line if len(line) <= 300 else line[:297] + "..."


@contextlib.contextmanager
def loading(path: str | os.PathLike) -> Iterator[None]:
    """Read a user-supplied model, checkpoint or record: any failure (random bytes, a truncated
    archive, bad JSON, a shape mismatch, a pickle of anything but tensors) becomes the one line
    ``cannot load PATH: reason`` (exit code 2). Torch's loader warnings are silenced so that
    the error stays one line."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    except (UsageError, KeyboardInterrupt, MemoryError):
        raise
    except Exception as e:
        raise UsageError(f"cannot load {path}: {_first_line(e)}") from None


@contextlib.contextmanager
def staged_dir(out: Path, mode: str = "merge") -> Iterator[Path]:
    """Yield a fresh hidden folder next to ``out``; on success publish it as ``out``, on
    failure delete it: ``out`` never holds a partial result of this run.

    ``mode``:

    * ``"merge"`` (default): a missing ``out`` is the staged folder renamed. Into an existing
      ``out`` (``--force``) each same-named entry is first renamed aside (a symlink is moved as
      a link, its target is never written), then each new entry is renamed in; if a rename
      fails, the entries are put back as they were.
    * ``"exclusive"``: one ``rename(2)`` of the staged folder onto ``out``, which succeeds only
      while ``out`` is missing or an empty folder: a ``UsageError`` (exit 1) when another
      process filled ``out`` meanwhile, so two runs never merge.
    * ``"replace"``: an existing ``out`` is renamed aside, the staged folder renamed into its
      place, then the old folder deleted (on failure the old one is put back): nothing of an
      earlier run survives."""
    if mode not in ("merge", "exclusive", "replace"):
        raise ValueError(f"mode must be 'merge', 'exclusive' or 'replace', got {mode!r}")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.", suffix=".partial"))
    try:
        yield tmp
        {"merge": _publish, "exclusive": _publish_exclusive, "replace": _publish_replace}[mode](tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _publish_exclusive(tmp: Path, out: Path) -> None:
    try:
        os.rename(tmp, out)  # replaces a missing or empty folder only, atomically
    except OSError as e:
        if os.path.lexists(out):
            raise UsageError(f"{out} appeared (or was filled) while this run worked; nothing of this run was "
                             "written into it", code=1) from None
        raise UsageError(f"cannot move the output into place at {out} ({e.strerror or e})", code=1) from None


def _publish_replace(tmp: Path, out: Path) -> None:
    if not os.path.lexists(out):
        _publish_exclusive(tmp, out)
        return
    old = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.", suffix=".old"))
    os.rename(out, old)  # onto an empty folder: atomic
    try:
        os.rename(tmp, out)
    except BaseException:
        os.rename(old, out)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _publish(tmp: Path, out: Path) -> None:
    if not os.path.lexists(out):
        os.replace(tmp, out)
        return
    aside_dir = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.", suffix=".old"))
    old: Path | None = aside_dir  # removed at the end unless a failed rollback leaves files in it
    aside: list[str] = []
    placed: list[str] = []
    try:
        for entry in sorted(tmp.iterdir()):
            dest = out / entry.name
            if os.path.lexists(dest):
                os.replace(dest, aside_dir / entry.name)
                aside.append(entry.name)
            os.replace(entry, dest)
            placed.append(entry.name)
    except BaseException:
        try:
            for name in placed:
                os.replace(out / name, tmp / name)
            for name in aside:
                os.replace(aside_dir / name, out / name)
        except OSError:
            old = None  # keep what was moved aside rather than lose it
        raise
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def _lock_path(path: Path) -> Path:
    return path.parent / f".{path.name}.lock"


@contextlib.contextmanager
def output_lock(path: str | os.PathLike, what: str) -> Iterator[None]:
    """Hold the lock of the output ``path`` while the block runs: an exclusive ``flock`` on the
    hidden file ``.NAME.lock`` beside it, taken without waiting. The kernel releases it when
    the process ends, however it ends (SIGKILL included), so a stale lock file never blocks
    the next run; the file is removed when the block ends. Raises ``UsageError`` (exit 1) when
    another process holds it. Where ``fcntl`` is missing (Windows) nothing is locked (the
    exclusive publish of :func:`staged_dir` still refuses a merge)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    lock = _lock_path(Path(path))
    lock.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise UsageError(f"{what} {path}: another run is writing it now (its lock {lock.name} is held); "
                             "wait for it to finish or choose another output", code=1) from None
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(lock))
        except FileNotFoundError:
            same = False
        if same:  # not a lock file that its last holder removed meanwhile
            break
        os.close(fd)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(lock)
        os.close(fd)


def _leftover_pattern(name: str):
    return re.compile(rf"\.{re.escape(name)}\.[A-Za-z0-9_]{{8}}\.(partial|old)")


def remove_leftovers(path: str | os.PathLike) -> list[Path]:
    """Remove what a killed run left beside the output ``path``: the hidden staging entries
    ``.NAME.XXXXXXXX.partial`` and ``.NAME.XXXXXXXX.old`` (the names :func:`staged_dir` and
    temporary writes use). Call it only while holding :func:`output_lock` of ``path``, so that
    no live run's staging is removed. Returns what was removed."""
    p = Path(path)
    if not p.parent.is_dir():
        return []
    rx = _leftover_pattern(p.name)
    found = sorted(q for q in p.parent.iterdir() if rx.fullmatch(q.name))
    for q in found:
        if q.is_dir() and not q.is_symlink():
            shutil.rmtree(q, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                q.unlink()
    return found


def _number(kind, test, desc):
    def parse(text: str):
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
positive_float = _number(float, lambda v: 0 < v < math.inf, "a finite number > 0")
nonneg_float = _number(float, lambda v: 0 <= v < math.inf, "a finite number >= 0")
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
