"""The pseudonymization experiment's part (Friedrich et al., ACL 2019, sections 4, 7.2, 8).

* :func:`sweep` — Figure 4 analog: for each embedding (FastText, GloVe), each N and each seed,
  pseudonymize the training sentences (:func:`deidlib.privacy.pseudonymize.pseudonymize`:
  shuffle, every PHI token → a uniform choice among its N nearest neighbours, itself
  included), train the section-3 model on them and score it on the raw test sentences.
  N = 1 is the non-private model. The pseudonymization is seeded (a study; released text
  would use the CSPRNG default). The Table 2 analog built from it is ``tables.table2``.
* :func:`subword_table` — section 8: mean number of a distinct training PHI token's N = 100
  nearest neighbours that contain the token.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from ...embeddings.neighbours import NeighbourIndex
from ...evaluation import binary_tag_prf
from ...privacy.pseudonymize import pseudonymize, subword_statistic
from ...rng import derive_seed
from .claims import PAPER_SHAPES
from .common import FriedrichData, encode, identity_model, phi_tokens, train_deid
from .params import FriedrichParams

__all__: list[str] = []


def train_pseudonymized(data: FriedrichData, emb, index: NeighbourIndex, n: int, params: FriedrichParams, *,
                        seed: int, casing: bool = True) -> dict[str, Any]:
    """One point: pseudonymize the training split with N = ``n`` (seeded), train, test on raw text."""
    t0 = time.perf_counter()
    train, stats = pseudonymize(data.train, index, n, seed=derive_seed(seed, "pseudonymize", n))
    model = identity_model(emb.dim, params, casing=casing, seed=derive_seed(seed, "init"))
    trainer, info = train_deid(model, emb, index, encode(train, emb), encode(data.dev, emb), params, seed=seed)
    test = encode(data.test, emb)
    score = asdict(binary_tag_prf([s.tags for s in test], trainer.predict(test)))
    return {"n": n, "seed": seed, **score, "epochs": info["epochs"], "phi_tokens": stats.phi_tokens,
            "replaced": stats.replaced, "skipped": stats.skipped, "oov": stats.oov,
            "unchanged_draws": stats.unchanged_draws, "seconds": time.perf_counter() - t0}


def sweep(data: FriedrichData, embeddings: dict, indexes: dict, params: FriedrichParams, *, seed: int = 0,
          progress: bool = False) -> pd.DataFrame:
    """Figure 4 analog: one row per (embedding, N, seed)."""
    jobs = [(e, n, seed + k) for e in embeddings for n in params.neighbours for k in range(params.n_seeds)]
    rows = []
    for e, n, s in tqdm(jobs, desc="pseudonymization sweep", disable=not progress):
        rows.append({"embedding": e, **train_pseudonymized(data, embeddings[e], indexes[e], n, params, seed=s)})
    return pd.DataFrame(rows)


def subword_table(data: FriedrichData, indexes: dict, n: int = 100) -> pd.DataFrame:
    """Section 8 statistic over the distinct PHI tokens of the training split."""
    phi = phi_tokens(data.train)
    rows = []
    for e, idx in indexes.items():
        r = subword_statistic(phi, idx, n)
        rows.append({"embedding": e, "n": n, "mean_containing": r["mean"], "tokens": r["tokens"],
                     "without_vector": r["without_vector"], "paper": PAPER_SHAPES["subword"][e]})
    return pd.DataFrame(rows)
