"""tchouka: the Table 2 analog, the NER that feeds the surrogates, scored per PHI type.

The paper's Table 2 (section 3.4, "NER results on the evaluation dataset") gives P, R and F1
per HIPAA label (Table 1: PER, ORG, LOC, DATE, AGE, TEL, REF, QID) and overall (micro) for
three systems. Ours: the GRU-CRF model of ``deidlib deidentify --model gru``
(:mod:`deidlib.pipeline.default_model`: trained on the synthetic corpus, built
from :data:`~deidlib.pipeline.default_model.GRU_MODEL_RECIPE`; a typed tagger on the notes it
was trained for, which is what the paper's table measures), scored on the synthetic
test split of its own corpus with the i2b2 scorer (:func:`deidlib.evaluation.scorer.evaluate`,
strict mode: typed, exact offsets, i.e. entity level).

**Type mapping (ours → theirs), :data:`PAPER_LABEL`.** i2b2 TYPEs are mapped to the paper's
labels on both the gold and the system side *before* scoring, so a span counts as correct
when its offsets match and its mapped label matches (a HOSPITAL tagged ORGANIZATION is a hit
for ORG, as it would be for a tagger of the paper's labels). PER: PATIENT, DOCTOR. ORG:
HOSPITAL, ORGANIZATION, DEPARTMENT. LOC: every other i2b2 LOCATION TYPE (ROOM, STREET, CITY,
STATE, COUNTRY, ZIP, LOCATION-OTHER). DATE, AGE: themselves. TEL: PHONE, FAX. QID: every
i2b2 ID TYPE and USERNAME. REF (references related to individuals) has no i2b2 TYPE; PROFESSION,
EMAIL, URL, IPADDR and OTHER have no paper label: those spans are left out on both sides.
Each label is carried through the scorer as one representative i2b2 TYPE
(:data:`REPRESENTATIVE`), whose per-TYPE row is the label's row.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from ...corpus.document import Document, Span
from ...corpus.phi import CATEGORIES
from ...evaluation.scorer import evaluate

__all__: list[str] = []

#: the paper's labels (Table 1) in Table 2's row order
PAPER_LABELS = ("PER", "ORG", "LOC", "DATE", "AGE", "TEL", "REF", "QID")

_ORG = ("HOSPITAL", "ORGANIZATION", "DEPARTMENT")
#: i2b2 TYPE -> the paper's label (TYPEs not listed have no paper label and are left out)
PAPER_LABEL: dict[str, str] = {
    "PATIENT": "PER", "DOCTOR": "PER",
    **{t: "ORG" for t in _ORG},
    **{t: "LOC" for t in CATEGORIES["LOCATION"] if t not in _ORG},
    "DATE": "DATE", "AGE": "AGE",
    "PHONE": "TEL", "FAX": "TEL",
    **{t: "QID" for t in CATEGORIES["ID"]}, "USERNAME": "QID",
}
#: paper label -> the i2b2 TYPE that carries it through the scorer
REPRESENTATIVE: dict[str, str] = {
    "PER": "PATIENT", "ORG": "ORGANIZATION", "LOC": "CITY", "DATE": "DATE", "AGE": "AGE",
    "TEL": "PHONE", "QID": "IDNUM",
}

#: Table 2 of the paper (section 3.4), in percent: label -> system -> (P, R, F1); None where
#: the paper prints "-". Systems: the hybrid NER of Tchouka et al. 2022 and the paper's
#: FlauBERT model ("PROPOSAL"), both on the HNFC hospital notes, and Dernoncourt et al. 2016 on i2b2.
_PAPER_TABLE2: dict[str, dict[str, tuple[float, float, float] | None]] = {
    "PER": {"tchouka2022": (96.3, 99.8, 98.0), "proposal": (97.2, 98.9, 98.0), "dernoncourt2016": (98.2, 99.1, 98.6)},
    "ORG": {"tchouka2022": (41.1, 57.3, 47.8), "proposal": (90.0, 51.0, 65.6), "dernoncourt2016": (92.9, 71.4, 80.7)},
    "LOC": {"tchouka2022": (88.4, 95.8, 92.0), "proposal": (99.4, 94.4, 96.9), "dernoncourt2016": (95.9, 95.7, 95.8)},
    "DATE": {"tchouka2022": (97.7, 86.7, 91.9), "proposal": (99.2, 95.7, 97.4), "dernoncourt2016": (99.0, 99.5, 99.2)},
    "AGE": {"tchouka2022": (91.5, 66.9, 77.3), "proposal": (98.2, 91.8, 95.0), "dernoncourt2016": (98.9, 97.6, 98.2)},
    "TEL": {"tchouka2022": (99.5, 97.9, 98.7), "proposal": (99.4, 99.8, 99.6), "dernoncourt2016": (98.7, 99.7, 99.2)},
    "REF": {"tchouka2022": None, "proposal": (96.1, 79.5, 87.0), "dernoncourt2016": None},
    "QID": {"tchouka2022": None, "proposal": (77.2, 32.0, 45.3), "dernoncourt2016": (99.2, 98.7, 99.0)},
    "Overall": {"tchouka2022": (94.6, 94.9, 94.7), "proposal": (98.5, 96.4, 97.4), "dernoncourt2016": (98.3, 98.53, 98.4)},
}


def _to_paper_labels(docs: Iterable[Document]) -> list[Document]:
    """``docs`` with every span relabelled to its paper label's representative TYPE; spans
    whose TYPE has no paper label are dropped."""
    out = []
    for d in docs:
        spans = [Span.of(d.text, s.start, s.end, REPRESENTATIVE[PAPER_LABEL[s.subtype]])
                 for s in d.spans if s.subtype in PAPER_LABEL]
        out.append(dataclasses.replace(d, spans=spans))
    return out


def table2(gold: Iterable[Document], system: Iterable[Document], *, mode: str = "strict") -> pd.DataFrame:
    """Per paper label (and ``Overall``, the micro average over the mapped spans): our P, R, F1
    (fractions), TP/FP/FN and gold mentions from :func:`~deidlib.evaluation.scorer.evaluate`
    in ``mode`` on the relabelled documents, beside the paper's Table 2 (fractions)."""
    g, s = _to_paper_labels(gold), _to_paper_labels(system)
    rep = evaluate(g, s)
    per_type = rep.per_type[mode]
    rows = []
    for label in (*PAPER_LABELS, "Overall"):
        if label == "Overall":
            sc = rep.scores[mode]
            p, (tp, fp, fn) = sc.micro, (sc.tp, sc.fp, sc.fn)
        elif label in REPRESENTATIVE and REPRESENTATIVE[label] in per_type:
            p, (tp, fp, fn) = per_type[REPRESENTATIVE[label]]
        else:
            p, tp, fp, fn = None, 0, 0, 0
        mapped = "no i2b2 TYPE" if label == "REF" else (
            "all mapped types" if label == "Overall" else ", ".join(t for t, lab in PAPER_LABEL.items() if lab == label))
        row = {"label": label, "i2b2_types": mapped, "gold": tp + fn, "tp": tp, "fp": fp, "fn": fn,
               "precision": p.precision if p else float("nan"), "recall": p.recall if p else float("nan"),
               "f1": p.f1 if p else float("nan")}
        for sysname, v in _PAPER_TABLE2[label].items():
            for k, x in zip(("precision", "recall", "f1"), v or (None,) * 3):
                row[f"paper_{sysname}_{k}"] = float("nan") if x is None else x / 100
        rows.append(row)
    return pd.DataFrame(rows)


def default_tagger_predictions(overrides: dict | None = None, *, progress: bool = False) -> dict:
    """The GRU model's predictions (``deidlib deidentify --model gru``) on the synthetic test split
    of its own corpus.

    With no ``overrides`` this is that model itself
    (:func:`~deidlib.pipeline.default_model.ensure_default_model` ``("gru")``: the cached one, built on
    first use); with ``overrides`` (the smoke profile's smaller corpus and fewer epochs) the
    same recipe so modified is built into a temporary folder. Returns ``{"gold", "system",
    "recipe", "model"}``."""
    from ...datasets import load_corpus
    from ...pipeline.default_model import GRU_MODEL_RECIPE, build_default_model, ensure_default_model
    from ...training import load_tagger, predict_documents

    recipe = {**GRU_MODEL_RECIPE, **(overrides or {})}
    with tempfile.TemporaryDirectory() as tmp:
        if overrides:
            build_default_model(tmp, recipe, progress=progress)
            path, name = Path(tmp), "gru recipe with " + ", ".join(f"{k}={v}" for k, v in overrides.items())
        else:
            path = ensure_default_model("gru", progress=progress)
            name = f"gru model ({path.name})"
        tagger = load_tagger(path)
    splits = load_corpus("synthetic", profile=recipe["profile"], seed=recipe["seed"], note_scale=recipe.get("note_scale"))
    system = predict_documents(tagger, splits.test)
    return {"gold": list(splits.test), "system": system, "recipe": recipe, "model": name}
