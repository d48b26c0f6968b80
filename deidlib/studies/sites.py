"""Cross-site transfer: how different are the sites of a corpus, measured.

:func:`cross_site_matrix` trains one fast tagger per site (on that site's train split) and
scores binary-token F1 (:func:`deidlib.evaluation.binary_token_prf`) on every site's test
split, for several seeds. The diagonal says whether a site is learnt alone; the
off-diagonal how well a site's tagger transfers to the others. The synthetic corpus's
``heterogeneity`` (:mod:`deidlib.synthetic.styles`) sets the gap between the two.

The tagger is the word-level GRU-CRF preset (``"gru"``) at small sizes (:data:`TAGGER`),
no pretrained vectors, binary IO labels: the cheapest tagger of :mod:`deidlib.models` that
learns a synthetic site alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import matplotlib.pyplot as plt
import pandas as pd

from ..corpus import Document
from ..corpus.splits import CorpusSplits
from ..evaluation import binary_token_prf
from ..plotting import style
from .params import StudyParams, profiles

__all__ = ["TAGGER", "TARGET_GAP", "MIN_DIAGONAL", "SitesParams", "PROFILE_PARAMS", "params_for", "by_site", "cross_site_matrix", "cross_site_summary", "plot_cross_site"]

#: the tagger of the matrix: small word-level GRU-CRF (hparams of :data:`deidlib.models.PRESETS` ``"gru"``)
TAGGER: dict[str, Any] = {"kind": "gru", "epochs": 3, "batch_size": 16, "lr": 3e-3,
                          "hparams": {"word_dim": 32, "char_emb_dim": 12, "char_hidden": 16, "hidden": 48,
                                      "casing": True}}

#: what the default heterogeneity is chosen for: mean diagonal F1 at least this much above the
#: mean off-diagonal F1
TARGET_GAP = 0.15
#: every site must still be learnt alone at the default level: lowest diagonal F1 at least this
MIN_DIAGONAL = 0.85
@dataclass(frozen=True)
class SitesParams(StudyParams):
    """Seeds, corpus size (``patients``; None: the profile's) and tagger of the cross-site matrix
    (``tagger``: ``{"kind", "epochs", "batch_size", "lr", "hparams"}``, merged key by key)."""

    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    patients: int | None = None
    tagger: dict = field(default_factory=lambda: dict(TAGGER))

    STUDY: ClassVar[str] = "sites"
    MERGED: ClassVar[tuple[str, ...]] = ("tagger",)

    def check(self) -> None:
        if not self.seeds:
            raise ValueError("sites needs at least one seed")
        if self.patients is not None and self.patients < 1:
            raise ValueError(f"patients must be >= 1, got {self.patients}")


#: per profile (smoke: 40 patients, so that every site has test notes, and one tiny tagger: seconds)
PROFILE_PARAMS = profiles(SitesParams, {
    "smoke": SitesParams(seeds=(0,), patients=40,
                         tagger={"kind": "gru", "epochs": 1, "batch_size": 16,
                                 "hparams": {"word_dim": 8, "char_emb_dim": 4, "char_hidden": 4, "hidden": 8}}),
    "cpu": SitesParams(seeds=(0, 1, 2)),
    "paper": SitesParams(),
})


def params_for(profile: str, **overrides: Any) -> SitesParams:
    """The cross-site matrix's parameters at ``profile`` (smoke, cpu, paper), overrides checked."""
    return SitesParams.resolve(profile, **overrides)


def by_site(splits: CorpusSplits) -> dict[str, CorpusSplits]:
    """One :class:`CorpusSplits` per ``doc.site`` (train / dev / test kept as split), sites sorted."""
    sites = sorted({d.site for part in (splits.train, splits.dev, splits.test) for d in part})
    return {s: CorpusSplits([d for d in splits.train if d.site == s], [d for d in splits.dev if d.site == s],
                            [d for d in splits.test if d.site == s], s) for s in sites}


def _fit(site: CorpusSplits, seed: int, tagger: dict[str, Any], device: str):
    from ..training import fit_tagger

    model, _ = fit_tagger(tagger["kind"], CorpusSplits(site.train, [], [], site.name), scheme="binary",
                          encoding="IO", embeddings=None, hparams=dict(tagger.get("hparams") or {}), seed=seed,
                          evaluate_test=False, epochs=tagger["epochs"], batch_size=tagger["batch_size"],
                          lr=tagger.get("lr"), patience=None, device=device, progress=False)
    return model


def cross_site_matrix(splits_by_seed: dict[int, CorpusSplits], *, tagger: dict[str, Any] | None = None,
                      device: str = "cpu", progress: bool = False) -> pd.DataFrame:
    """Binary-token F1 of a tagger trained on site ``train`` and tested on site ``test``.

    Args:
        splits_by_seed: seed -> the corpus splits of that seed (every site in each).
        tagger: ``{"kind", "epochs", "batch_size", "hparams"}`` (default :data:`TAGGER`).

    Returns:
        A tidy frame, one row per (seed, train site, test site): ``seed``, ``train``, ``test``,
        ``diagonal`` (train == test), ``precision``, ``recall``, ``f1``.
    """
    from ..training.predict import predict_documents

    tagger = dict(TAGGER if tagger is None else tagger)
    if not splits_by_seed:
        raise ValueError("cross_site_matrix needs at least one seed's splits")
    rows = []
    sites_by_seed = {seed: by_site(sp) for seed, sp in splits_by_seed.items()}
    jobs = [(seed, s) for seed, sites in sites_by_seed.items() for s in sites]
    it = jobs
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(jobs, desc="cross-site taggers", unit="tagger")
    for seed, train_site in it:
        sites = sites_by_seed[seed]
        if not sites[train_site].train or not all(v.test for v in sites.values()):
            raise ValueError(f"site {train_site!r} (seed {seed}) has no train documents, or a site has no test documents")
        model = _fit(sites[train_site], seed, tagger, device)
        for test_site, sp in sites.items():
            p, r, f = binary_token_prf(sp.test, predict_documents(model, sp.test, device=device))
            rows.append({"seed": seed, "train": train_site, "test": test_site, "diagonal": train_site == test_site,
                         "precision": p, "recall": r, "f1": f})
    return pd.DataFrame(rows)


def cross_site_summary(matrix: pd.DataFrame) -> dict[str, Any]:
    """Per-cell mean and spread (std over seeds) of F1, and the mean diagonal / off-diagonal F1.

    Returns ``{"cells": DataFrame[train, test, diagonal, f1_mean, f1_std, seeds], "diagonal": float,
    "off_diagonal": float, "gap": float (diagonal - off_diagonal), "min_diagonal": float}``.
    """
    cells = (matrix.groupby(["train", "test", "diagonal"], as_index=False)
             .agg(f1_mean=("f1", "mean"), f1_std=("f1", "std"), seeds=("seed", "nunique")))
    cells["f1_std"] = cells["f1_std"].fillna(0.0)
    diag = cells[cells["diagonal"]]
    off = cells[~cells["diagonal"]]
    d = float(diag["f1_mean"].mean())
    o = float(off["f1_mean"].mean()) if len(off) else float("nan")
    return {"cells": cells, "diagonal": d, "off_diagonal": o, "gap": d - o, "min_diagonal": float(diag["f1_mean"].min())}


@style()
def plot_cross_site(cells_by_level: dict[str, pd.DataFrame], title: str = "cross-site binary-token F1"):
    """One heat map per level (``label -> cells`` of :func:`cross_site_summary`): rows the training
    site, columns the test site, mean F1 over seeds written in each cell."""
    n = len(cells_by_level)
    fig, axes = plt.subplots(1, n, figsize=(4.6 * n, 4.2), squeeze=False)
    im = None
    for ax, (label, cells) in zip(axes[0], cells_by_level.items()):
        m = cells.pivot(index="train", columns="test", values="f1_mean")
        im = ax.imshow(m.values, vmin=0.0, vmax=1.0, cmap="viridis")
        ax.set_xticks(range(len(m.columns)), m.columns, rotation=45, ha="right")
        ax.set_yticks(range(len(m.index)), m.index)
        for i in range(m.shape[0]):
            for j in range(m.shape[1]):
                v = m.values[i, j]
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=8, color="white" if v < 0.6 else "black")
        ax.set_xlabel("test site")
        ax.set_ylabel("train site")
        ax.set_title(label)
    if im is not None:
        fig.colorbar(im, ax=list(axes[0]), shrink=0.8, label="F1")
    fig.suptitle(title)
    return fig


def documents_sites(docs: Sequence[Document]) -> list[str]:
    """The distinct ``doc.site`` values, sorted."""
    return sorted({d.site for d in docs})
