"""One trainer for every tagger: bucketed batches, SGD/Adam/Nadam, gradient clipping,
early stopping on dev binary-token F1 (:mod:`.stopping`), per-epoch history, checkpoints and resume.

Determinism: training runs inside ``torch.random.fork_rng`` seeded with ``seed``
(dropout draws from that stream; global state is restored afterwards), batch
composition and per-epoch order come from the seed, and the RNG state is saved in
every checkpoint, so an interrupted and resumed run gives the same history and
weights as an uninterrupted one.
"""

from __future__ import annotations

import copy
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

from ..corpus.document import Document
from ..corpus.labels import TaggedSentence, gold_tags
from ..models.taggers import BaseTagger
from .batching import bucket_batches, epoch_order
from .loop import lr_schedule, make_optimizer, train_epoch
from .precision import mixed_precision
from .predict import evaluate_tagger
from .stopping import EarlyStopping

__all__ = ["History", "train", "CheckpointError", "load_checkpoint"]


class TrainingInterrupted(RuntimeError):
    """Raised by a callback to stop training (the checkpoint of the last epoch stays)."""


@dataclass
class History:
    epochs: list[dict[str, Any]] = field(default_factory=list)
    best_epoch: int | None = None
    best_dev_f1: float | None = None
    stopped_early: bool = False

    def column(self, key: str) -> list:
        return [e.get(key) for e in self.epochs]

    def to_dict(self) -> dict:
        return asdict(self)


class CheckpointError(ValueError):
    """A checkpoint that cannot be read or does not fit the tagger (one-line message)."""


#: what a checkpoint holds: state dicts of tensors, lists and numbers only, so that it loads
#: with ``torch.load(weights_only=True)`` and a crafted file can run no code
CHECKPOINT_KEYS = ("model", "optimizer", "history", "best_state", "bad", "epoch", "rng")


def _save(path: Path, payload: dict) -> None:
    tmp = path.with_suffix(".tmp")
    torch.save(payload, tmp)
    os.replace(tmp, path)


def load_checkpoint(path: str | os.PathLike, device: str | torch.device = "cpu") -> dict:
    """The checkpoint ``path`` as written by :func:`train`, read with ``weights_only=True``
    (a pickle of anything but tensors and plain containers is refused without being run).

    Raises:
        CheckpointError: a file of another shape (not a dict with the checkpoint's keys);
            an unreadable file raises what ``torch.load`` raises.
    """
    state = torch.load(path, map_location=device, weights_only=True)
    missing = [k for k in CHECKPOINT_KEYS if not isinstance(state, dict) or k not in state]
    if missing:
        raise CheckpointError(f"{path}: not a deidlib training checkpoint (no {', '.join(missing)})")
    return state


def check_gold_paths(tagger, batches, groups, sentences) -> None:
    """Raise ``ValueError`` when a gold tag sequence is not a path the tagger's constrained
    CRF allows (e.g. BIO tags starting with ``I-``): it could never be predicted and would
    dominate the loss."""
    crf = getattr(tagger, "crf", None)
    if crf is None or not getattr(crf, "constrained", False):
        return
    for b, g in zip(batches, groups):
        bad = crf.invalid_paths(b.labels, b.mask).nonzero().flatten().tolist()
        if bad:
            s = sentences[g[bad[0]]]
            raise ValueError(
                f"{len(bad)} training sentence(s) in a batch have ill-formed tags for the constrained CRF, "
                f"e.g. {list(zip(s.words, s.tags))[:12]}; fix the tags or build the tagger with constrain_crf=False"
            )


def _resumed_rule(patience: int | None, hist: History, bad: int) -> EarlyStopping:
    """The stopping rule's state after the evaluations a checkpointed history holds."""
    evaluated = [rec["epoch"] for rec in hist.epochs if "dev_f1" in rec]
    best = math.nan if hist.best_dev_f1 is None else float(hist.best_dev_f1)
    best_index = evaluated.index(hist.best_epoch) if hist.best_epoch in evaluated else None
    return EarlyStopping(patience, best=best, best_index=best_index, bad=bad, seen=len(evaluated))


def train(
    tagger: BaseTagger,
    train_sentences: Sequence[TaggedSentence],
    dev_docs: Sequence[Document] | None = None,
    test_docs: Sequence[Document] | None = None,
    *,
    epochs: int = 10,
    batch_size: int = 16,
    optimizer: str | None = None,
    lr: float | None = None,
    lr_decay: float = 0.0,
    clip: float | None | str = "default",
    patience: int | None = None,
    seed: int = 0,
    device: str | torch.device = "cpu",
    checkpoint_dir: str | os.PathLike | None = None,
    resume: bool = False,
    eval_every: int = 1,
    bucketed: bool = True,
    progress: bool = True,
    callbacks: Sequence[Callable[[int, dict, torch.nn.Module], None]] = (),
) -> History:
    """Train ``tagger`` in place on tagged sentences; score dev/test documents each epoch.

    ``optimizer``/``lr``/``clip`` default to the tagger's ``default_training`` (the paper's
    settings). With ``patience`` and ``dev_docs``, training stops after ``patience``
    epochs without a better dev F1 and the best weights are restored. ``lr_decay`` ρ sets
    epoch ``t``'s (0-based) learning rate to ``lr / (1 + ρ·t)`` (Ma & Hovy 2016, §3.2, who
    use ρ = 0.05 with SGD); 0 keeps it constant. On a CUDA device an encoder tagger's
    encoder runs in bf16 autocast (:mod:`.precision`; float32 on the CPU).
    """
    from tqdm.auto import tqdm

    if not train_sentences:
        raise ValueError("no training sentences")
    if lr_decay < 0:
        raise ValueError(f"lr_decay must be >= 0, got {lr_decay}")
    hints = getattr(tagger, "default_training", {})
    opt_name = optimizer or hints.get("optimizer", "adam")
    lr = lr if lr is not None else hints.get("lr", 1e-3)
    clip_norm = hints.get("clip") if clip == "default" else clip
    if isinstance(clip_norm, str):
        raise ValueError(f"clip must be a number, None or 'default', got {clip!r}")
    tagger.to(device)
    fz = tagger.featurizer
    groups = bucket_batches([len(s.tokens) for s in train_sentences], batch_size, seed, bucketed)
    batches = [
        fz.encode([train_sentences[i].words for i in g], [gold_tags(train_sentences[i]) for i in g]).to(device)
        for g in groups
    ]
    check_gold_paths(tagger, batches, groups, train_sentences)
    opt = make_optimizer(tagger.parameters(), opt_name, lr)
    hist = History()
    best_state = None
    rule = EarlyStopping(patience)
    start = 0
    ckpt = Path(checkpoint_dir) / "last.pt" if checkpoint_dir else None
    with torch.random.fork_rng(devices=[]), mixed_precision(tagger, device):
        torch.manual_seed(seed)
        if resume and ckpt is not None and ckpt.is_file():
            state = load_checkpoint(ckpt, device)
            try:
                tagger.load_state_dict(state["model"])
                opt.load_state_dict(state["optimizer"])
                hist = History(**state["history"])
                best_state, start = state["best_state"], int(state["epoch"]) + 1
                rule = _resumed_rule(patience, hist, int(state["bad"]))
                torch.set_rng_state(state["rng"])
            except (RuntimeError, ValueError, TypeError, KeyError) as e:
                raise CheckpointError(f"{ckpt}: does not fit this tagger ({str(e).strip().splitlines()[0]})") from e
        schedule = lr_schedule(opt, lr, lr_decay, start)
        bar = tqdm(
            range(start, epochs),
            desc=f"train {getattr(tagger, 'kind', '')}",
            disable=not progress,
            unit="epoch",
        )
        for ep in bar:
            t0 = time.perf_counter()
            loss = train_epoch(
                tagger, batches, opt, clip=clip_norm, order=epoch_order(len(batches), seed, ep), progress=False
            )
            rec: dict[str, Any] = {
                "epoch": ep + 1,
                "lr": opt.param_groups[0]["lr"],
                "train_loss": loss,
                "train_seconds": time.perf_counter() - t0,
            }
            schedule.step()
            if (ep + 1) % eval_every == 0 or ep + 1 == epochs:
                for name, docs in (("dev", dev_docs), ("test", test_docs)):
                    if docs:
                        t1 = time.perf_counter()
                        p, r, f = evaluate_tagger(tagger, docs, device=device)
                        rec.update(
                            {
                                f"{name}_precision": p,
                                f"{name}_recall": r,
                                f"{name}_f1": f,
                                f"{name}_predict_seconds": time.perf_counter() - t1,
                            }
                        )
            hist.epochs.append(rec)
            bar.set_postfix(  # what training decides on; per-epoch test scores stay in the history only
                {k: round(v, 4) for k, v in rec.items() if k in ("train_loss", "dev_f1")}
            )
            stop = False
            if "dev_f1" in rec:
                stop = rule.update(rec["dev_f1"])
                if rule.improved:
                    hist.best_dev_f1, hist.best_epoch = rec["dev_f1"], ep + 1
                    best_state = copy.deepcopy(tagger.state_dict()) if patience is not None else None
            if ckpt is not None:
                ckpt.parent.mkdir(parents=True, exist_ok=True)
                _save(
                    ckpt,
                    {
                        "model": tagger.state_dict(),
                        "optimizer": opt.state_dict(),
                        "history": hist.to_dict(),
                        "best_state": best_state,
                        "bad": rule.bad,
                        "epoch": ep,
                        "rng": torch.get_rng_state(),
                    },
                )
            for cb in callbacks:
                cb(ep + 1, rec, tagger)
            if stop:
                hist.stopped_early = True
                break
    if patience is not None and best_state is not None:
        tagger.load_state_dict(best_state)
    return hist
