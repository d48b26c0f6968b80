"""Result records with provenance: every number in a figure is traceable.

A :class:`Result` carries the study, parameters, seeds, metrics, package version,
git SHA, a fingerprint of the data it was computed on and (for DP runs) the
privacy ledger. Records are JSON, written atomically.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from . import __version__

__all__ = ["Result", "save_result", "fingerprint_documents", "atomic_write_text"]


def _git_sha() -> str:
    """The current git commit of the package checkout, or ``"unknown"``."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
        )
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def fingerprint_documents(docs: Iterable[Any]) -> str:
    """SHA-256 over ids, texts and spans of documents (order-sensitive); no text is stored."""
    h = hashlib.sha256()
    for d in docs:
        h.update(d.id.encode())
        h.update(b"\0")
        h.update(d.text.encode())
        h.update(b"\0")
        for s in d.spans:
            h.update(f"{s.start},{s.end},{s.category},{s.subtype};".encode())
    return h.hexdigest()


@dataclass
class Result:
    study: str
    name: str
    params: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    seeds: list[int] = field(default_factory=list)
    data_fingerprint: str = ""
    privacy_ledger: dict[str, Any] | None = None
    version: str = __version__
    _git_sha: str = field(default_factory=_git_sha)
    created: str = field(default_factory=lambda: _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` to ``path`` via a temporary file and rename: never half-written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def save_result(result: Result, path: str | os.PathLike) -> Path:
    return atomic_write_text(path, json.dumps(asdict(result), indent=2, sort_keys=True, default=str))


def _load_result(path: str | os.PathLike) -> Result:
    return Result(**json.loads(Path(path).read_text(encoding="utf-8")))
