"""Save and load a trained tagger with its vocabularies, hyperparameters and task."""

from __future__ import annotations

import json
import os
from pathlib import Path

import torch

from ..models.features import Featurizer
from ..models.taggers import tagger_from_config
from ..results import atomic_write_text

__all__ = ["save_tagger", "load_tagger", "save_ensemble", "ENSEMBLE_FILE"]

#: the file that makes a folder an ensemble of saved taggers (:func:`save_ensemble`)
ENSEMBLE_FILE = "ensemble.json"


def save_tagger(tagger, path: str | os.PathLike) -> Path:
    """Write ``path/config.json`` (kind, hyperparameters, featurizer, task) and ``path/weights.pt``."""
    d = Path(path)
    d.mkdir(parents=True, exist_ok=True)
    cfg = {
        "tagger": tagger.config(),
        "featurizer": tagger.featurizer.config(),
        "task": getattr(tagger, "task", {}),
    }
    tmp = d / "weights.pt.tmp"
    torch.save(tagger.state_dict(), tmp)
    os.replace(tmp, d / "weights.pt")
    atomic_write_text(d / "config.json", json.dumps(cfg))
    return d


def save_ensemble(path: str | os.PathLike, member_dirs, phi_threshold: float | None = None) -> Path:
    """Write ``path/ensemble.json``: the members' model folders (relative to ``path`` when they
    share a root with it, so the folders can move together) and the saved decision threshold.
    The members' weights are not copied: the ensemble reads them where they are."""
    d = Path(path)
    d.mkdir(parents=True, exist_ok=True)
    members = []
    for m in member_dirs:
        m = Path(m).resolve()
        try:
            members.append(os.path.relpath(m, d.resolve()))
        except ValueError:  # another drive (Windows)
            members.append(str(m))
    cfg = {"kind": "ensemble", "members": members, "phi_threshold": phi_threshold}
    atomic_write_text(d / ENSEMBLE_FILE, json.dumps(cfg, indent=2))
    return d


def _load_ensemble(d: Path, device):
    from ..models.marginal_ensemble import MarginalEnsemble

    cfg = json.loads((d / ENSEMBLE_FILE).read_text())
    members = []
    for m in cfg["members"]:
        p = Path(m) if os.path.isabs(m) else d / m
        if (p / "model" / "config.json").is_file():
            p = p / "model"
        members.append(load_tagger(p, device))
    return MarginalEnsemble(members, cfg.get("phi_threshold")).to(device).eval()


def load_tagger(path: str | os.PathLike, device: str | torch.device = "cpu"):
    """A saved tagger (``config.json`` + ``weights.pt``), or an ensemble of saved taggers
    (``ensemble.json``, :class:`deidlib.models.marginal_ensemble.MarginalEnsemble`).

    ``weights.pt`` is a state dict of tensors read with ``weights_only=True``: a file holding
    any other Python object is refused (``pickle.UnpicklingError``) without running it."""
    d = Path(path)
    if (d / ENSEMBLE_FILE).is_file():
        return _load_ensemble(d, device)
    if not (d / "config.json").is_file():
        raise FileNotFoundError(f"{d}: no config.json (not a saved deidlib tagger)")
    cfg = json.loads((d / "config.json").read_text())
    tagger = tagger_from_config(cfg["tagger"], Featurizer.from_config(cfg["featurizer"]))
    tagger.load_state_dict(torch.load(d / "weights.pt", map_location=device, weights_only=True))
    tagger.task = cfg.get("task", {})
    return tagger.to(device).eval()
