"""Save and load a trained tagger with its vocabularies, hyperparameters and task."""

from __future__ import annotations

import json
import os
from pathlib import Path

import torch

from ..models.features import Featurizer
from ..models.taggers import tagger_from_config
from ..results import atomic_write_text

__all__ = ["save_tagger", "load_tagger"]


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


def load_tagger(path: str | os.PathLike, device: str | torch.device = "cpu"):
    d = Path(path)
    if not (d / "config.json").is_file():
        raise FileNotFoundError(f"{d}: no config.json (not a saved deidlib tagger)")
    cfg = json.loads((d / "config.json").read_text())
    tagger = tagger_from_config(cfg["tagger"], Featurizer.from_config(cfg["featurizer"]))
    tagger.load_state_dict(torch.load(d / "weights.pt", map_location=device, weights_only=True))
    tagger.task = cfg.get("task", {})
    return tagger.to(device).eval()
