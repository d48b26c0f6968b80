"""The methods that release updates or text: DSSGD (word reconstruction from an upload),
surrogates (note linkage, equal-value disclosure) and pseudonymization (recovery of the original
word, Friedrich et al. §4)."""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from ...audits import (
    batch_rows,
    embedding_slice,
    equal_value_disclosure,
    neighbour_recovery,
    note_linkage,
    reconstruction_prf,
    recovered_rows,
)
from ...collaborative import DSSGD, DSSGDConfig, simulate, tagger_trainer
from ...collaborative.dp_upload import UploadLedger
from ...collaborative.dssgd import flatten_parameters, make_generator
from ...collaborative.worker_upload import worker_upload
from ...corpus.labels import tagged_sentences
from ...corpus.splits import subsample
from ...rng import derive_seed
from ...surrogates.engine import SurrogateEngine
from ...training import evaluate_tagger
from ..festag import binary_token_evaluator
from .data import AuditData, _featurizer, _half, fit, make_tagger
from .params import ENCODING, SCHEME, AuditParams

__all__ = []


def dssgd_rows(data: AuditData, params: AuditParams, *, seed: int = 0) -> list[dict[str, Any]]:
    """Utility of DSSGD per θ_u (and per DP-upload ε at the largest θ_u) and the word
    reconstruction from site 1's first upload."""
    half = _half(data.patients, seed, "dssgd-sites")
    sites = [[s for s, p in zip(data.sentences, data.patients) if half[p] == b] for b in (True, False)]
    fz = _featurizer([s.words for s in data.sentences])

    def factory(init_seed: int):
        return make_tagger(fz, params, int(init_seed) & 0x7FFF_FFFF)

    trainer = tagger_trainer(lr=params.dssgd_lr, batch_size=1, grad_clip=params.max_grad_norm)
    evaluate = binary_token_evaluator(data.test_sentences)
    settings: list[tuple[float, float | None]] = [(tu, None) for tu in params.dssgd_theta_us]
    settings += [(max(params.dssgd_theta_us), e) for e in params.dssgd_dp_epsilons]
    rows = []
    true_rows = batch_rows(fz, sites[0])
    for theta_u, eps in settings:
        t0 = time.perf_counter()
        cfg = DSSGDConfig(theta_u=theta_u, dp_epsilon=eps)
        hist = simulate(DSSGD(cfg), sites, model_factory=factory, trainer=trainer, evaluate=evaluate,
                        epochs=params.dssgd_epochs, seed=seed, names=["site1", "site2"])
        last = [r for r in hist.records if r["epoch"] == params.dssgd_epochs]
        # the attack: site 1's first upload (one local epoch from the shared initialisation)
        model = factory(derive_seed(seed, "init"))
        before = flatten_parameters(model)
        trainer(model, sites[0], seed=derive_seed(seed, "dssgd-attack"))
        update = flatten_parameters(model) - before
        ledger = UploadLedger("site1") if eps is not None else None
        idx, vals = worker_upload(update, theta_u=cfg.theta_u, gamma=cfg.gamma, tau=cfg.tau,
                                  generator=make_generator(derive_seed(seed, "dssgd-upload")),
                                  dp_epsilon=eps, ledger=ledger)
        rec = reconstruction_prf(recovered_rows(idx, vals, embedding_slice(model)), true_rows)
        rows.append({
            "theta_u": theta_u, "dp_epsilon_per_upload": eps if eps is not None else math.inf,
            "f1": float(np.mean([r["f1"] for r in last])),
            **{f"reconstruction_{k}": v for k, v in rec.items()},
            "vocabulary": fz.num_words - 2, "seconds": time.perf_counter() - t0,
        })
    return rows


# ------------------------------------------------------------------------ surrogates
def surrogate_rows(data: AuditData, params: AuditParams, *, seed: int = 0) -> list[dict[str, Any]]:
    """Per surrogate ε and memo scope: utility of a tagger trained on the surrogate notes
    (F1 on the original test notes) and the linkage attacks on the release; plus the same
    attacks on the original notes (``epsilon = 0``, the ceiling: nothing replaced)."""
    rows = []
    for eps in params.surrogate_epsilons:
        for scope in ("document", "patient"):
            t0 = time.perf_counter()
            eng = SurrogateEngine(seed=derive_seed(seed, "audits-surrogates"), epsilon=eps, memo_scope=scope)
            docs, records = eng.surrogate_documents(data.docs)
            sents = [s for s in tagged_sentences(docs, SCHEME, ENCODING) if s.tokens]
            sents = subsample(sents, len(data.sentences), derive_seed(seed, "audits-sur-cap"))
            tagger = make_tagger(_featurizer([s.words for s in sents]), params, derive_seed(seed, "audits-sur"))
            fit(tagger, sents, params, None, derive_seed(seed, "audits-sur-train"))
            f = evaluate_tagger(tagger, data.test_docs)[2]
            link = note_linkage(records)
            eq = equal_value_disclosure(records)
            rows.append({"epsilon": eps, "memo_scope": scope, "f1": f,
                         **{f"linkage_{k}": v for k, v in link.items()},
                         **{f"equal_value_{k}": v for k, v in eq.items()},
                         "seconds": time.perf_counter() - t0})
            if eps == params.surrogate_epsilons[0] and scope == "document":
                ceil = note_linkage(records, field="original")
                rows.append({"epsilon": 0.0, "memo_scope": "none (original notes)", "f1": math.nan,
                             **{f"linkage_{k}": v for k, v in ceil.items()}})
    return rows


# ------------------------------------------------------------------- pseudonymization
def pseudonym_rows(data: AuditData, params: AuditParams, index, *, seed: int = 0) -> list[dict[str, Any]]:
    """Per N of ``pseudonym_ns``: the population's sentences pseudonymized (Friedrich et al.
    §4, :func:`deidlib.privacy.pseudonymize.pseudonymize`, seeded, not shuffled so that the
    attack can be scored), utility of a tagger trained on them (F1 on the original test notes),
    and the nearest-neighbour recovery of the original PHI words
    (:func:`deidlib.audits.recovery.neighbour_recovery`, ``pseudonym_guesses`` guesses).
    ``index``: a :class:`~deidlib.embeddings.neighbours.NeighbourIndex` over GloVe 6B-50d."""
    from ...privacy.pseudonymize import pseudonymize

    rows = []
    for n in params.pseudonym_ns:
        t0 = time.perf_counter()
        released, st = pseudonymize(data.sentences, index, n, seed=derive_seed(seed, "audits-pseudo", n),
                                     shuffle=False)
        tagger = make_tagger(_featurizer([s.words for s in released]), params, derive_seed(seed, "audits-pseudo-init"))
        fit(tagger, released, params, None, derive_seed(seed, "audits-pseudo-train"))
        rec = neighbour_recovery(data.sentences, released, index, params.pseudonym_guesses)
        rows.append({"n": n, "seed": seed, "f1": evaluate_tagger(tagger, data.test_docs)[2],
                     **{f"recovery_{k}": v for k, v in rec.items()}, "phi_tokens": st.phi_tokens,
                     "replaced": st.replaced, "oov": st.oov, "seconds": time.perf_counter() - t0})
    return rows
