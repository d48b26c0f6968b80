"""The two representation methods joined into the frontier through their own notebooks'
functions: friedrich §5 (notebook 06: the three-phase adversarial representation and its two
controls) and alawad's shared layers (notebook 07: shared–private, its λ = 0 control and the
centralized CNN)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from .params import AuditParams, alawad_params, friedrich_params

__all__ = []


def representation_rows(params: AuditParams, *, seed: int = 0) -> list[dict[str, Any]]:
    """Friedrich §5 on one seed through notebook 06's functions: the three-phase adversarial
    representation at N = ``representation_n`` and the two controls without privacy training,
    each attacked by the frozen-representation adversary (held-out real/fake pairs). One row per
    representation: ``procedure``, ``n``, ``f1`` (the head's binary-token F1 on the raw test
    sentences), ``adversary_accuracy`` (chance 0.5), ``adversary_pairs``, ``seconds``, ``seed``."""
    from ...embeddings.neighbours import NeighbourIndex
    from ..friedrich.adversarial import adversarial_run, control_runs
    from ..friedrich.common import load_embeddings
    from ..friedrich.common import prepare_data as friedrich_data

    fp = friedrich_params(params)
    data = friedrich_data(fp, seed=seed)
    emb = load_embeddings("glove", fp, seed=seed)
    index = NeighbourIndex(emb)
    runs = [adversarial_run(data, emb, index, params.representation_n, fp, procedure="three_phase", seed=seed),
            *control_runs(data, emb, index, fp, seed=seed)]
    keep = ("procedure", "n", "f1", "adversary_accuracy", "adversary_train_accuracy", "adversary_pairs", "seconds")
    return [{**{k: r[k] for k in keep}, "seed": seed, "train_sentences": len(data.train),
             "test_sentences": len(data.test)} for r in runs if r["n"] == params.representation_n]


#: notebook 07's approaches joined into the frontier: the method, the non-private reference and the control
_SHARED_APPROACHES = ("shared_private", "shared_private_no_adv", "centralized")


def shared_layer_rows(params: AuditParams, *, seed: int = 0) -> list[dict[str, Any]]:
    """Alawad on one seed through notebook 07's :func:`~deidlib.studies.alawad.run_study`
    (approaches :data:`_SHARED_APPROACHES`): per approach the micro/macro F1 of the subsite
    classification and the fresh registry classifier's accuracy on the frozen shared features
    (centralized: its whole encoder), with chance (1/registries), the majority-registry rate and
    the class-label floor of that seed."""
    from ..alawad import run_study as alawad_study

    ap = alawad_params(params)
    res = alawad_study(ap, seeds=[seed], approaches=_SHARED_APPROACHES, progress=False)
    att = pd.DataFrame(res["attack"])
    floor = float(att[att.approach == "label_only"].accuracy.iloc[0])
    fresh = att[att.attacker == "fresh classifier, frozen features"].set_index("approach")
    rows = []
    for sc in res["scores"]:
        a = fresh.loc[sc["approach"]]
        rows.append({"approach": sc["approach"], "seed": seed, "micro": sc["micro"], "macro": sc["macro"],
                     "registry_accuracy": float(a.accuracy), "chance": float(a.chance), "majority": float(a.majority),
                     "class_label_floor": floor, "n_test": int(a.n_test), "registries": ap.n_registries,
                     "adv_weight": ap.adv_weight if sc["approach"] == "shared_private" else 0.0,
                     "seconds": sc["seconds"]})
    return rows
