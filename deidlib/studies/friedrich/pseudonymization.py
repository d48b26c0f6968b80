"""Notebook 05: automatic pseudonymization (Friedrich et al., ACL 2019, section 4, 7.2, 8).

* :func:`sweep` — Figure 4 analog: for each embedding (FastText, GloVe), each N and each seed,
  pseudonymize the training sentences (:func:`deidlib.privacy.pseudonymize.pseudonymize`:
  shuffle, every PHI token → a uniform choice among its N nearest neighbours, itself
  included), train the section-3 model on them and score it on the raw test sentences.
  N = 1 is the non-private model. The pseudonymization is seeded (a study; released text
  would use the CSPRNG default).
* :func:`table2` — Table 2 analog: non-private FastText / GloVe / GloVe + casing (GloVe
  without the casing feature is an extra run; the other rows are the N = 1 points of the
  sweep, which use casing), pseudonymized N = ``table_neighbours``, adversarial N =
  ``table_neighbours`` (three-phase training, :func:`.adversarial.adversarial_run`).
* :func:`subword_table` — section 8: mean number of a distinct training PHI token's N = 100
  nearest neighbours that contain the token.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Any, TypedDict

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from ...embeddings.neighbours import NeighbourIndex
from ...evaluation import binary_tag_prf
from ...plotting import style
from ...privacy.pseudonymize import pseudonymize, subword_statistic
from ...rng import derive_seed
from .claims import PAPER_SHAPES, paper_relative, pseudo_shape_checks
from .common import (
    FriedrichData,
    encode,
    identity_model,
    load_embeddings,
    phi_tokens,
    prepare_data,
    train_deid,
)
from .params import FriedrichParams

__all__ = ["PseudoResults", "train_pseudonymized", "sweep", "summarize_sweep", "table2", "subword_table",
           "run_study", "figure4", "shape_checks", "scale_note"]

#: the Figure 4 statements next to ours (:func:`deidlib.studies.friedrich.claims.pseudo_shape_checks`)
shape_checks = pseudo_shape_checks


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


def summarize_sweep(df: pd.DataFrame) -> pd.DataFrame:
    """Mean, min and max F1 over seeds per (embedding, N), and the mean relative to N = 1."""
    g = df.groupby(["embedding", "n"]).f1.agg(["mean", "min", "max", "count"]).reset_index()
    base = g[g.n == 1].set_index("embedding")["mean"]
    g["relative_to_n1"] = [r["mean"] / base[r.embedding] if r.embedding in base and base[r.embedding] > 0
                           else float("nan") for _, r in g.iterrows()]
    g["paper_relative"] = g.n.map(paper_relative)
    return g.rename(columns={"mean": "f1_mean", "min": "f1_min", "max": "f1_max", "count": "seeds"})


def subword_table(data: FriedrichData, indexes: dict, n: int = 100) -> pd.DataFrame:
    """Section 8 statistic over the distinct PHI tokens of the training split."""
    phi = phi_tokens(data.train)
    rows = []
    for e, idx in indexes.items():
        r = subword_statistic(phi, idx, n)
        rows.append({"embedding": e, "n": n, "mean_containing": r["mean"], "tokens": r["tokens"],
                     "without_vector": r["without_vector"], "paper": PAPER_SHAPES["subword"][e]})
    return pd.DataFrame(rows)


def table2(sweep_df: pd.DataFrame, extra: pd.DataFrame, adversarial: pd.DataFrame | None,
           params: FriedrichParams) -> pd.DataFrame:
    """Table 2 analog: mean (min–max) binary token F1 over seeds per row, with the paper's value."""
    names = {"fasttext": "FastText", "glove": "GloVe"}
    N = params.table_neighbours
    rows = []

    def add(label, f1s):
        f1s = list(f1s)
        if f1s:
            rows.append({"model": label, "f1_mean": float(np.mean(f1s)), "f1_min": float(np.min(f1s)),
                         "f1_max": float(np.max(f1s)), "runs": len(f1s),
                         "paper": PAPER_SHAPES["table2"].get(label, float("nan"))})

    for e in ("fasttext", "glove"):
        if e == "glove" and len(extra):
            add("non-private GloVe", extra[extra.embedding == "glove"].f1)
        label = f"non-private {names[e]}" + (" + casing" if e == "glove" else "")
        add(label, sweep_df[(sweep_df.embedding == e) & (sweep_df.n == 1)].f1)
    for e in ("fasttext", "glove"):
        add(f"pseudonymized N={N} {names[e]}", sweep_df[(sweep_df.embedding == e) & (sweep_df.n == N)].f1)
    if adversarial is not None and len(adversarial):
        for e in ("fasttext", "glove"):
            add(f"adversarial N={N} {names[e]}", adversarial[adversarial.embedding == e].f1)
    return pd.DataFrame(rows)


class PseudoResults(TypedDict):
    """What :func:`run_study` returns."""

    params: dict[str, Any]
    profile: str
    corpus: str
    seed: int
    sizes: dict[str, int]  #: sentences per split
    sweep: pd.DataFrame  #: one row per (embedding, N, seed)
    summary: pd.DataFrame  #: Figure 4 analog (mean/min/max per embedding and N)
    table2: pd.DataFrame  #: Table 2 analog
    subword: pd.DataFrame  #: section 8 statistic
    adversarial_table_runs: pd.DataFrame | None  #: the adversarial N = table_neighbours runs of Table 2
    fingerprint: str
    seconds: float


def run_study(params: FriedrichParams, *, corpus: str = "synthetic", data_dir: str | None = None, seed: int = 0,
              progress: bool = False, adversarial_rows: bool = True) -> PseudoResults:
    """Everything of notebook 05 at the scale of ``params`` (resolved once by the caller)."""
    if not isinstance(params, FriedrichParams):
        raise TypeError("run_study takes resolved FriedrichParams (friedrich.params_for(profile, ...))")
    from .adversarial import adversarial_run

    t0 = time.perf_counter()
    data = prepare_data(params, corpus=corpus, data_dir=data_dir, seed=seed)
    embeddings = {e: load_embeddings(e, params, seed=seed) for e in params.embeddings}
    indexes = {e: NeighbourIndex(v) for e, v in embeddings.items()}
    sw = sweep(data, embeddings, indexes, params, seed=seed, progress=progress)
    extra = []
    if "glove" in embeddings:  # GloVe without the casing feature (Table 2, first GloVe row)
        for k in range(params.n_seeds):
            extra.append({"embedding": "glove", **train_pseudonymized(data, embeddings["glove"], indexes["glove"], 1,
                                                                     params, seed=seed + k, casing=False)})
    extra_df = pd.DataFrame(extra)
    adv = None
    if adversarial_rows:
        adv = pd.DataFrame([{"embedding": e, **adversarial_run(data, embeddings[e], indexes[e], params.table_neighbours,
                                                                params, procedure="three_phase", seed=seed + k,
                                                                attack=False)}
                            for e in embeddings for k in range(params.adv_seeds)])
    out: PseudoResults = {
        "params": asdict(params), "profile": params.profile, "corpus": corpus, "seed": seed,
        "sizes": {"train": len(data.train), "dev": len(data.dev), "test": len(data.test)},
        "sweep": sw, "summary": summarize_sweep(sw), "table2": table2(sw, extra_df, adv, params),
        "subword": subword_table(data, indexes, 100), "adversarial_table_runs": adv,
        "fingerprint": data.fingerprint, "seconds": 0.0,
    }
    out["seconds"] = time.perf_counter() - t0
    return out


def scale_note(params: FriedrichParams, sizes: dict[str, int], corpus: str, seeds: int) -> str:
    """One line stating the scale of a figure (profile, corpus, sentences, epochs, seeds)."""
    return (f"{params.profile} profile, {corpus}: {sizes['train']} train / {sizes['test']} test sentences, "
            f"≤{params.epochs} epochs, {seeds} seed{'s' if seeds != 1 else ''}, BiLSTM {params.deid_layers}×"
            f"{params.deid_hidden}")


@style()
def figure4(res: PseudoResults):
    """F1 vs N per embedding: mean over seeds, band = min–max over seeds, the 95 % line, and
    the paper's shape (fraction of each embedding's non-private F1) dotted."""
    p = FriedrichParams(**res["params"])
    s = res["summary"]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for e, d in s.groupby("embedding"):
        d = d.sort_values("n")
        (line,) = ax.plot(d.n, d.f1_mean, "o-", label=f"{e} (mean)")
        if (d.seeds > 1).any():
            ax.fill_between(d.n, d.f1_min.clip(lower=0), d.f1_max.clip(lower=0), alpha=0.2, color=line.get_color(),
                            label=f"{e} min–max over seeds")
        base = d[d.n == 1].f1_mean
        if len(base):
            xs = np.unique(np.r_[d.n.values, 200])
            ax.plot(xs, [float(base.iloc[0]) * paper_relative(x) for x in xs], ":", color=line.get_color(),
                    label=f"paper's shape × {e} N=1")
    ax.axhline(0.95, color="grey", ls="--", lw=1, label="95 % target F1")
    ax.set_xscale("log")
    ax.set_xlabel("number of neighbours N")
    ax.set_ylabel("binary HIPAA token F1")
    ax.set_title("Figure 4 analog: training on pseudonymized PHI\n" + scale_note(p, res["sizes"], res["corpus"],
                                                                                  p.n_seeds), fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
