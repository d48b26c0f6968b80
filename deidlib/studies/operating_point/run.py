"""Running the operating-point study: train one tagger (binary scheme, BIOES), trace its dev and
test curves over :data:`~.params.THRESHOLDS`, choose the threshold on dev for the target recall;
on the nursing notes also the default model's curve and the installed peers' points. The choices
are in the package docstring (:mod:`deidlib.studies.operating_point`).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from ...datasets import load_corpus
from ...training import choose_threshold, fit_tagger, operating_points
from ..protocol import StudyResults
from .params import THRESHOLDS, OperatingPointParams

__all__ = ["OperatingPointResults", "run_study"]


@dataclass
class OperatingPointResults(StudyResults):
    """What :func:`run_study` returns (the input of :func:`~.tables.summary_rows`,
    :func:`~.figures.plot_curve` and the claims)."""

    profile: str
    corpus: str
    seed: int
    params: dict[str, Any]
    data: dict[str, int]
    epochs_run: int
    best_dev_f1: float
    dev_curve: list[dict]  #: one row per threshold (None: the model's own decision)
    test_curve: list[dict]
    chosen_threshold: float | None  #: None when no threshold reaches the target recall on dev
    #: nursing notes only (else empty): the default model's test curve (row 0: its own saved
    #: decision, with its threshold) and the installed peers' points
    default_model: list[dict] = field(default_factory=list)
    peers: list[dict] = field(default_factory=list)
    seconds: float = 0.0


def _peer_points(corpus: str, test_docs=()) -> list[dict]:
    """Binary-token precision/recall/F1 and surviving mentions of each installed peer
    (:func:`deidlib.evaluation.peers.available_peers`) on ``test_docs``, computed now; empty
    unless ``corpus`` is the nursing notes or when no peer is installed."""
    from ...evaluation.peers import available_peers, peer_predictions, score_predictions

    if corpus != "physionet":
        return []
    return [{"system": name, **score_predictions(test_docs, peer_predictions(name, test_docs))}
            for name in available_peers()]


def _default_model_curve(test_docs, thresholds=THRESHOLDS, *, progress: bool = False) -> list[dict]:
    """The default model's binary-token points on ``test_docs``: row 0 its saved decision
    (``threshold``: the one it saved), then one row per threshold on its PHI marginal."""
    from ...pipeline.default_model import ensure_default_model
    from ...training import load_tagger

    tagger = load_tagger(ensure_default_model(progress=progress))
    # one pass of marginals: the saved decision is the point at the saved threshold (without
    # one, the model's own decision)
    saved = tagger.task.get("phi_threshold")
    if saved is None:
        own, *curve = operating_points(tagger, test_docs, list(thresholds))
    else:
        own, *curve = operating_points(tagger, test_docs, [saved, *thresholds], own=False)
    return [{**own, "own": True}, *curve]


def run_study(params: OperatingPointParams, *, corpus: str = "synthetic", data_dir: str | None = None,
              seed: int = 0, device: str = "cpu", progress: bool = True) -> OperatingPointResults:
    """Train one tagger (binary scheme, BIOES), then its dev and test curves over
    :data:`THRESHOLDS` and the dev-chosen threshold for ``params.target_recall``."""
    if not isinstance(params, OperatingPointParams):
        raise TypeError("run_study takes resolved OperatingPointParams (operating_point.params_for(profile, ...))")
    t0 = time.perf_counter()
    splits = load_corpus(corpus, data_dir, profile=params.profile, seed=seed)
    tagger, hist = fit_tagger(
        params.model, splits, scheme="binary", encoding="BIOES", embeddings="word2vec",
        hparams=params.hparams or {}, seed=seed, evaluate_test=False, epochs=params.epochs,
        batch_size=params.batch_size, patience=params.patience, lr_decay=params.lr_decay,
        device=device, progress=progress,
    )
    chosen, dev = choose_threshold(tagger, splits.dev, params.target_recall, grid=THRESHOLDS, device=device)
    # the test curve over the same thresholds as the dev curve (the refined one included), row for row
    test = operating_points(tagger, splits.test, [p["threshold"] for p in dev[1:]], device=device)
    real = corpus == "physionet"
    return OperatingPointResults(
        profile=params.profile, corpus=corpus, seed=seed, params=asdict(params),
        data={"train_documents": len(splits.train), "dev_documents": len(splits.dev),
              "test_documents": len(splits.test)},
        epochs_run=len(hist.epochs),
        best_dev_f1=max(e["dev_f1"] for e in hist.epochs),
        dev_curve=dev, test_curve=test,
        chosen_threshold=chosen,
        default_model=_default_model_curve(splits.test, progress=progress) if real else [],
        peers=_peer_points(corpus, splits.test),
        seconds=time.perf_counter() - t0,
    )
