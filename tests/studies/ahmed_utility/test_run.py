"""The pieces of the utility study (notebook 03; thesis §4.3.2) on small hand-made corpora."""

from __future__ import annotations

import random

import numpy as np
import pytest

from deidlib.corpus import Document, Span
from deidlib.embeddings.neighbours import NeighbourIndex
from deidlib.embeddings.public import PublicEmbeddings
from deidlib.studies import ahmed_utility as au
from deidlib.studies.ahmed_utility.deidentify import (
    _pseudonymize_text,
    deidentify,
    make_transforms,
    source_scores,
)
from deidlib.studies.ahmed_utility.tables import (
    abstracts_table,
    bleu_table,
    classification_table,
    topic_table,
)

TOPICS = {
    "cardio": "heart failure ejection fraction diuretic edema furosemide cardiology echo murmur",
    "neuro": "stroke aphasia hemiparesis neurology imaging infarct thrombolysis deficit speech",
    "onco": "tumor chemotherapy oncology biopsy metastasis radiation lymph node staging",
}
NAMES = ["Smith", "Jones", "Brown", "Miller", "Davis", "Garcia", "Wilson", "Moore"]


def corpus(n=60, seed=0, label_in_span=False):
    """Notes ``"Patient <name> seen. <topic words>"``; the name is a PATIENT span. With
    ``label_in_span`` the topic words are a (fake) HOSPITAL span too, so removing PHI removes the label."""
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        lab = list(TOPICS)[i % 3]
        name = rng.choice(NAMES)
        words = TOPICS[lab].split()
        body = " ".join(rng.sample(words, 6))
        text = f"Patient {name} seen today. {body}."
        spans = [Span.of(text, 8, 8 + len(name), "PATIENT")]
        if label_in_span:
            a = text.index(body)
            spans.append(Span.of(text, a, a + len(body), "HOSPITAL"))
        docs.append(Document(f"d{i}", text, spans, patient_id=f"p{i // 2}", metadata={"diagnosis": lab}))
    return docs


def small_params(**kw):
    base = dict(n_topics=3, top_words=8, topic_candidates=(2, 3), coherence="u_mass", lda_passes=2,
                class_counts=(3,), class_repeats=2, test_size=0.34, epsilons=(1.0,), pseudonym_n=())
    return au.params_for("smoke", **{**base, **kw})


def test_gold_removal_has_recall_one_and_bleu_below_one_identity_has_bleu_one():
    docs = corpus()
    originals = [d.text for d in docs]
    scores = source_scores(docs, {"gold": docs, "none": [d.with_spans([]) for d in docs]})
    assert scores.loc["gold", "R(%)"] == 100 and scores.loc["gold", "P(%)"] == 100
    assert scores.loc["none", "R(%)"] == 0
    texts = deidentify({"gold": docs}, make_transforms(small_params()), progress=False)
    texts[("gold", "identity")] = originals
    bleu = bleu_table(originals, texts, scores)
    for t in ("removal", "type mask", "surrogate ε=1"):
        row = bleu.loc[("ground truth", t)]
        assert 0.3 < row["BLEU-1"] < 1 and row["BLEU-3"] < 1, t
    assert bleu.loc[("ground truth", "identity"), ["BLEU-1", "BLEU-2", "BLEU-3"]].tolist() == [1.0, 1.0, 1.0]
    # removal shortens the note: brevity penalty, so it scores below the same-length masks here
    assert bleu.loc[("ground truth", "removal"), "BLEU-1"] < bleu.loc[("ground truth", "surrogate ε=1"), "BLEU-1"]
    # no gold name survives removal or masking
    for t in ("removal", "type mask"):
        assert not any(s.text in x for d, x in zip(docs, texts[("gold", t)]) for s in d.spans), t


def test_identity_keeps_every_topic_word_and_removing_topic_words_loses_them():
    docs = corpus(n=60, label_in_span=True)
    originals = [d.text for d in docs]
    scores = source_scores(docs, {"gold": docs})
    texts = {("gold", "identity"): originals, ("gold", "removal"): make_transforms(small_params())["removal"](docs, "gold")}
    table, coherence, k = topic_table(originals, texts, scores, small_params(), progress=False)
    ident = table.loc[("ground truth", "identity")]
    assert [ident[f"Topic{i}"] for i in (1, 2, 3)] == [100.0] * 3 and ident["Overall"] == 100.0
    # the topic words were PHI here: after removal almost none of them is left
    assert table.loc[("ground truth", "removal"), "Overall"] < 50
    assert k in (2, 3) and coherence["chosen"].sum() == 1 and coherence.loc[k, "chosen"]


def test_classification_loses_the_label_when_it_is_removed_as_phi():
    docs = corpus(n=90, label_in_span=True)
    originals = [d.text for d in docs]
    labels = [d.metadata["diagnosis"] for d in docs]
    groups = [d.patient_id for d in docs]
    scores = source_scores(docs, {"gold": docs})
    tr = make_transforms(small_params())
    texts = {("gold", "removal"): tr["removal"](docs, "gold"), ("gold", "type mask"): tr["type mask"](docs, "gold")}
    table = classification_table(originals, texts, labels, groups, scores, small_params(), progress=False)
    assert table.loc[("non-sanitized", "original"), "acc 3"] > 90
    # the topic words were the only signal: both transforms fall to chance (1/3)
    for t in ("removal", "type mask"):
        assert table.loc[("ground truth", t), "acc 3"] < 60, t
    # names only (label kept): accuracy stays
    docs2 = corpus(n=90)
    texts2 = {("gold", "removal"): tr["removal"](docs2, "gold")}
    t2 = classification_table([d.text for d in docs2], texts2, labels, groups,
                                 source_scores(docs2, {"gold": docs2}), small_params(), progress=False)
    assert t2.loc[("ground truth", "removal"), "acc 3"] > 90


def _toy_index():
    words = [n.lower() for n in NAMES] + ["patient", "seen", "today"]
    rng = np.random.default_rng(0)
    vecs = rng.normal(size=(len(words), 4)).astype(np.float32)
    vecs[: len(NAMES)] += 5  # the names are each other's neighbours
    return NeighbourIndex(PublicEmbeddings("toy", words, vecs, lowercase=True))


def test_pseudonymize_text_changes_only_phi_tokens():
    index = _toy_index()
    d = corpus(n=1)[0]
    name = d.spans[0].text
    # N = 1 is the identity (the token itself is the only candidate)
    assert _pseudonymize_text(d, index, 1, random.Random(0)) == d.text
    outs = {_pseudonymize_text(d, index, 5, random.Random(s)) for s in range(20)}
    assert len(outs) > 1  # the name is drawn among 5 candidates
    for o in outs:
        head, tail = d.text[: d.spans[0].start], d.text[d.spans[0].end:]
        assert o.startswith(head) and o.endswith(tail)  # everything outside the span is untouched
        new = o[len(head): len(o) - len(tail)]
        assert new in NAMES  # a neighbour (all names here), casing kept
    assert any(name not in o for o in outs)
    assert _pseudonymize_text(d, index, 5, random.Random(3)) == _pseudonymize_text(d, index, 5, random.Random(3))


def test_params_are_checked_and_abstracts_can_be_switched_off():
    with pytest.raises(ValueError, match="surrogate epsilons must be positive"):
        au.params_for("smoke", epsilons=[0.0])
    with pytest.raises(ValueError, match="coherence must be"):
        au.params_for("smoke", coherence="npmi")
    with pytest.raises(ValueError, match="class counts must be >= 2"):
        au.params_for("smoke", class_counts=[1, 3])
    assert abstracts_table({}, small_params(max_abstracts=0)) is None
    p = au.params_for("cpu", epsilons=[0.5, 2])
    assert p.epsilons == (0.5, 2.0) and p.baseline_epochs < p.epochs
