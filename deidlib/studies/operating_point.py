"""Recall-oriented operating point (notebook ``10_operating_point``).

A de-identifier is judged by the PHI it lets through. The taggers' own decision (Viterbi for
the CRF) is an F1-oriented point: on the PhysioNet nursing notes (document split, 486 test
notes) a trained GRU-CRF's own decision gives up recall for precision, while a rules-based
de-identifier (Philter, UCSF) buys recall with precision. This study trains one tagger, traces its
binary-token precision–recall curve over thresholds on the PHI marginal 1 − P(O)
(:mod:`deidlib.models.decoding`), chooses the threshold on the **dev** split for a target
recall (``deidlib train --target-recall``: the grid brackets it, the dev tokens' PHI
probabilities refine it, :func:`deidlib.training.choose_threshold`) and reports the **test** split at that threshold
and at the model's own decision. The target (:data:`TARGET`) is recall ≥ 0.92 at precision ≥ 0.85
on the nursing notes.

Choices: one tagger kind and one seed per run (the curve of one released model is what a
user gets; seeds would give a band, at a training run each); thresholds on a fixed log-like
grid (:data:`THRESHOLDS`); the model is the GRU-CRF of ``deidlib train`` (ahmed ch. 4 sizes)
with the profile's epochs and early stopping on dev F1.

On the nursing notes (``corpus="physionet"``) the figure also draws the package's **default
model** (:mod:`deidlib.pipeline.default_model`: trained on synthetic notes only, its threshold
fixed on synthetic dev): its test curve over the same thresholds (patterns included) and its
own operating point, and the **peers'** points (:func:`peer_points`: Philter and Presidio,
computed at run time on the same test notes when ``deidlib[peers]`` is installed,
:mod:`deidlib.evaluation.peers`; absent otherwise). On synthetic notes neither is drawn.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, TypedDict

import matplotlib.pyplot as plt

from ..datasets import load_corpus
from ..plotting import style
from ..training import choose_threshold, fit_tagger, operating_points
from .params import StudyParams, profiles

__all__ = ["OperatingPointParams", "PROFILE_PARAMS", "params_for", "run_study", "OperatingPointResults",
           "plot_curve", "summary_rows", "THRESHOLDS", "TARGET", "peer_points", "default_model_curve"]

#: PHI-marginal thresholds traced (high to low)
THRESHOLDS = (0.9, 0.7, 0.5, 0.4, 0.3, 0.2, 0.15, 0.1, 0.07, 0.05, 0.03, 0.02, 0.01, 0.005, 0.002, 0.001)
#: the target on the nursing notes: recall >= 0.92 at precision >= 0.85
TARGET = {"recall": 0.92, "precision": 0.85}


@dataclass(frozen=True)
class OperatingPointParams(StudyParams):
    STUDY: ClassVar[str] = "operating_point"

    model: str = "gru"
    epochs: int = 14
    patience: int | None = 4
    lr_decay: float = 0.15
    batch_size: int = 16
    #: tagger hyperparameters (None: the preset's sizes)
    hparams: dict[str, Any] | None = None
    #: recall the dev-chosen threshold must reach
    target_recall: float = 0.92

    def check(self) -> None:
        if self.epochs < 1 or self.batch_size < 1:
            raise ValueError("epochs and batch_size must be >= 1")
        if not 0 < self.target_recall <= 1:
            raise ValueError(f"target_recall must be in (0, 1], got {self.target_recall}")


PROFILE_PARAMS = profiles(OperatingPointParams, {
    "smoke": OperatingPointParams(
        epochs=2, patience=None, lr_decay=0.0, batch_size=8,
        hparams={"word_dim": 16, "char_emb_dim": 8, "char_hidden": 8, "hidden": 16, "ff_dim": 16},
    ),
    "cpu": OperatingPointParams(epochs=8, patience=3),
    "paper": OperatingPointParams(),
})


def params_for(profile: str, **overrides: Any) -> OperatingPointParams:
    return OperatingPointParams.resolve(profile, **overrides)


class OperatingPointResults(TypedDict):
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
    seconds: float
    #: nursing notes only (else empty): the default model's test curve (row 0: its own saved
    #: decision, with its threshold) and the installed peers' points
    default_model: list[dict]
    peers: list[dict]


def peer_points(corpus: str, test_docs=()) -> list[dict]:
    """Binary-token precision/recall/F1 and surviving mentions of each installed peer
    (:func:`deidlib.evaluation.peers.available_peers`) on ``test_docs``, computed now; empty
    unless ``corpus`` is the nursing notes or when no peer is installed."""
    from ..evaluation.peers import available_peers, peer_predictions, score_predictions

    if corpus != "physionet":
        return []
    return [{"system": name, **score_predictions(test_docs, peer_predictions(name, test_docs))}
            for name in available_peers()]


def default_model_curve(test_docs, thresholds=THRESHOLDS, *, progress: bool = False) -> list[dict]:
    """The default model's binary-token points on ``test_docs``: row 0 its saved decision
    (``threshold``: the one it saved), then one row per threshold on its PHI marginal."""
    from ..pipeline.default_model import ensure_default_model
    from ..training import load_tagger

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
    return {
        "profile": params.profile, "corpus": corpus, "seed": seed, "params": asdict(params),
        "data": {"train_documents": len(splits.train), "dev_documents": len(splits.dev),
                 "test_documents": len(splits.test)},
        "epochs_run": len(hist.epochs),
        "best_dev_f1": max(e["dev_f1"] for e in hist.epochs),
        "dev_curve": dev, "test_curve": test,
        "chosen_threshold": chosen,
        "default_model": default_model_curve(splits.test, progress=progress) if real else [],
        "peers": peer_points(corpus, splits.test),
        "seconds": time.perf_counter() - t0,
    }


def summary_rows(res: OperatingPointResults) -> list[dict]:
    """Test P/R/F1 at the model's own decision and at the dev-chosen threshold (with its dev
    numbers), and whether the target is met on test."""
    rows = []
    for name, th in (("model decision", None), ("dev-chosen threshold", res["chosen_threshold"])):
        if name != "model decision" and th is None:
            rows.append({"point": name, "threshold": None, "note": "no threshold reaches the target recall on dev"})
            continue
        d = next(p for p in res["dev_curve"] if p["threshold"] == th)
        t = next(p for p in res["test_curve"] if p["threshold"] == th)
        rows.append({
            "point": name, "threshold": th,
            "dev_precision": d["precision"], "dev_recall": d["recall"],
            "test_precision": t["precision"], "test_recall": t["recall"], "test_f1": t["f1"],
            "meets_target": t["recall"] >= TARGET["recall"] and t["precision"] >= TARGET["precision"],
        })
    return rows


@style()
def plot_curve(res: OperatingPointResults):
    """Test precision vs recall over the thresholds; the model's own decision, the dev-chosen
    threshold, the target region and (nursing notes only) the default model's curve and the
    peers' points."""
    fig, ax = plt.subplots(figsize=(6, 4.4))
    pts = [p for p in res["test_curve"] if p["threshold"] is not None]
    ax.plot([p["recall"] for p in pts], [p["precision"] for p in pts], "o-", ms=3, label="threshold on 1 − P(O)")
    # axes zoomed to the data (on synthetic notes the points crowd near (1, 1)); the zoom is stated
    # on the figure, since the target region may lie partly outside it
    peers = res.get("peers") or []
    dm = [p for p in res.get("default_model") or [] if p["recall"] > 0]
    others = peers + dm
    xs = [p["recall"] for p in pts + others]
    ys = [p["precision"] for p in pts + others]
    mx = max(0.005, 0.15 * (max(xs) - min(xs)))
    my = max(0.005, 0.15 * (max(ys) - min(ys)))
    x0, x1 = max(0.0, min(xs) - mx), min(1.005, max(xs) + mx / 3)
    y0, y1 = max(0.0, min(ys) - my), min(1.005, max(ys) + my / 3)
    last = None
    for p in pts:
        here = ((p["recall"] - x0) / (x1 - x0), (p["precision"] - y0) / (y1 - y0))
        if last is None or max(abs(here[0] - last[0]), abs(here[1] - last[1])) > 0.06:
            ax.annotate(f"{p['threshold']:g}", (p["recall"], p["precision"]), textcoords="offset points",
                        xytext=(3, -10), fontsize=7)
            last = here
    own = res["test_curve"][0]
    ax.plot(own["recall"], own["precision"], "ks", label="model's own decision (Viterbi)")
    if res["chosen_threshold"] is not None:
        c = next(p for p in pts if p["threshold"] == res["chosen_threshold"])
        ax.plot(c["recall"], c["precision"], "r*", ms=12,
                label=f"dev-chosen for recall ≥ {res['params']['target_recall']:g} (T={c['threshold']:g})")
    ax.fill_between([TARGET["recall"], 1.0], TARGET["precision"], 1.0, color="g", alpha=0.12,
                    label=f"target on the nursing notes: R ≥ {TARGET['recall']:g}, P ≥ {TARGET['precision']:g}")
    if dm:
        curve = [p for p in dm if not p.get("own")]
        ax.plot([p["recall"] for p in curve], [p["precision"] for p in curve], "^-", ms=3, color="tab:purple",
                label="default model (synthetic-only), threshold on 1 − P(O)")
        for p in dm:
            if p.get("own"):
                ax.plot(p["recall"], p["precision"], "P", ms=10, color="tab:purple",
                        label=f"default model's saved decision (T={p['threshold'] or 0:.3g}, chosen on synthetic dev)")
    for p, mk, col in zip(peers, "Dvx", ("tab:orange", "tab:brown", "tab:gray")):
        ax.plot(p["recall"], p["precision"], mk, color=col, ms=8, label=f"{p['system']} (peer), same test notes")
    ax.set_xlabel("binary-token recall (test)")
    ax.set_ylabel("binary-token precision (test)")
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    if others:  # nursing notes: the peers and the default model fill the plot, the legend goes below it
        fig.set_size_inches(6, 6.6)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=1)
    else:
        ax.legend(fontsize=7, loc="lower left")
    zoom = f"axes zoomed to the data: recall {x0:.3f}–{min(x1, 1):.3f}, precision {y0:.3f}–{min(y1, 1):.3f}"
    if x0 >= TARGET["recall"] and y0 >= TARGET["precision"]:
        zoom += " (all inside the target region)"
    d = res["data"]
    ax.set_title(f"{res['params']['model']} on {res['corpus']} ({res['profile']}): {res['epochs_run']} epochs, "
                 f"{d['train_documents']} training notes, {d['test_documents']} test notes, seed {res.get('seed', '?')}\n{zoom}",
                 fontsize=8)
    fig.tight_layout()
    return fig
