"""The cross-site matrix, the corpus overview's trained part: how different are the sites of a
corpus, measured.

:func:`cross_site_matrix` trains one fast tagger per site (on that site's train split) and
scores binary-token F1 (:func:`deidlib.evaluation.binary_token_prf`) on every site's test
split, for several seeds. The diagonal says whether a site is learnt alone; the
off-diagonal how well a site's tagger transfers to the others. The synthetic corpus's
``heterogeneity`` (:mod:`deidlib.synthetic.styles`) sets the gap between the two.

The tagger is the word-level GRU-CRF preset (``"gru"``) at small sizes (:data:`~.params.TAGGER`),
no pretrained vectors, binary IO labels: the cheapest tagger of :mod:`deidlib.models` that
learns a synthetic site alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from ...corpus import Document
from ...corpus.splits import CorpusSplits
from ...evaluation import binary_token_prf
from .params import TAGGER

__all__ = []


def _by_site(splits: CorpusSplits) -> dict[str, CorpusSplits]:
    """One :class:`CorpusSplits` per ``doc.site`` (train / dev / test kept as split), sites sorted."""
    sites = sorted({d.site for part in (splits.train, splits.dev, splits.test) for d in part})
    return {s: CorpusSplits([d for d in splits.train if d.site == s], [d for d in splits.dev if d.site == s],
                            [d for d in splits.test if d.site == s], s) for s in sites}


def _fit(site: CorpusSplits, seed: int, tagger: dict[str, Any], device: str):
    from ...training import fit_tagger

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
    from ...training.predict import predict_documents

    tagger = dict(TAGGER if tagger is None else tagger)
    if not splits_by_seed:
        raise ValueError("cross_site_matrix needs at least one seed's splits")
    rows = []
    sites_by_seed = {seed: _by_site(sp) for seed, sp in splits_by_seed.items()}
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


def _documents_sites(docs: Sequence[Document]) -> list[str]:
    """The distinct ``doc.site`` values, sorted."""
    return sorted({d.site for d in docs})
