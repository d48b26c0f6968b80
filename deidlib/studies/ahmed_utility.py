"""Ahmed (2020) thesis §4.3.2: what de-identified text is still good for (notebook ``03_ahmed_utility``).

For every way the package removes PHI and every source of PHI spans, the de-identified
corpus is compared with the original by

* **BLEU-1/2/3** (Table 4.5; :func:`deidlib.utility.bleu.bleu_scores`),
* **LDA topic overlap**, 5 topics × 30 words, per topic and overall (Table 4.6;
  :mod:`deidlib.utility.topics`); the number of topics is *also* chosen by coherence on the
  original corpus (the thesis "experimentally set it as 5"), and the overall overlap at that
  k is reported next to the k = 5 columns,
* **downstream document classification** with 3, 5 and 7 classes (Table 4.9;
  :func:`deidlib.utility.classify.classify`): synthetic notes carry their patient's diagnosis
  (7 classes); train and test are split by patient so a name cannot stand in for the label.

Ways of removing PHI (:data:`TRANSFORMS`): removal (the thesis' "sanitized and removed"),
category masks (``[NAME]``, thesis Fig. 2.1b), Tchouka et al. surrogates at each ε of
``epsilons`` (:class:`deidlib.surrogates.SurrogateEngine`, seeded: a study, not a release),
and Friedrich et al. neighbour pseudonymization with N of ``pseudonym_n`` public GloVe
neighbours (:func:`deidlib.privacy.pseudonymize.pseudonymize_words`, applied in place in the
note; skipped with a note when the GloVe package is not installed).

Sources of PHI spans (:data:`SOURCES`): the gold spans (the thesis' "GT" row: recall 1), and
the predictions of two taggers of different quality trained on the corpus' training split —
the **GRU-CRF** of chapter 4 (``gru`` preset, char embedding, BIOES-constrained CRF;
the thesis' "Ours" row used its self-attention model, our cpu-scale GRU-CRF is the stronger
of our cheap taggers) and a **baseline**: the same GRU-CRF trained far shorter
(``baseline_epochs`` on ``baseline_train_sentences``), a deliberately weaker tagger. The
thesis' baseline is Dernoncourt et al.'s tagger, a different model of similar quality; what
this study needs is two points of different recall, so the difference is in training budget,
not architecture (stated in every table's "source" column).

Corpus: the taggers train on ``splits.train``; the de-identified ("utility") corpus is
``splits.dev + splits.test`` (never seen by a tagger: training uses no dev-based early
stopping), capped at ``max_utility_documents``. Binary-token P/R/F1 of each source is scored on
that corpus, so each figure point's recall is the recall on exactly the text measured.

Real text (optional, ``max_abstracts``): the medical abstracts (Schopf et al.; 5 labels) are
de-identified by the same two taggers (trained on synthetic notes) and classified with 3 and 5
classes on the original and each de-identified version. The abstracts hold almost no PHI, so
what changes there is what the taggers' false positives remove. Only run when the data is
found; its table stays in ``runs/`` (not in the manifest).

Choices where the thesis is vague are in the library modules' docstrings (BLEU weights, LDA
preprocessing and topic pairing, classifier); the choices of this study are the fields of
:class:`UtilityParams`.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, ClassVar, TypedDict

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from ..corpus import Document
from ..corpus.splits import subsample
from ..corpus.tokenize import tokenize
from ..datasets import load_corpus
from ..evaluation import binary_token_prf
from ..plotting import style
from ..results import fingerprint_documents
from ..rng import derive_seed
from ..surrogates import SurrogateConfig, SurrogateEngine
from ..threads import limited_threads
from ..training import predict_documents, prepare_tagger, train
from ..utility.bleu import bleu_scores
from ..utility.classify import classify, restrict, top_classes
from ..utility.topics import choose_num_topics, fit_topics, topic_overlap
from ..utility.transforms import mask, merge_regions, remove
from .params import StudyParams, profiles

__all__ = [
    "UtilityParams",
    "PROFILE_PARAMS",
    "UtilityResults",
    "SOURCES",
    "params_for",
    "train_taggers",
    "pseudonymize_text",
    "make_transforms",
    "deidentify",
    "source_scores",
    "bleu_table",
    "topic_table",
    "classification_table",
    "abstracts_table",
    "run_study",
    "plot_tradeoff",
]

SCHEME, ENCODING = "i2b2", "BIOES"
#: span sources: key -> row label
SOURCES = {"gold": "ground truth", "gru": "GRU-CRF", "baseline": "baseline (short-trained GRU-CRF)"}
METRICS = ("precision", "recall", "f1")


# ----------------------------------------------------------------------------- parameters


@dataclass(frozen=True)
class UtilityParams(StudyParams):
    """All knobs of the study (defaults = the thesis where it says; profiles override some)."""

    STUDY: ClassVar[str] = "ahmed_utility"
    MERGED: ClassVar[tuple[str, ...]] = ("sizes",)

    #: tagger kind of both taggers and its sizes (thesis chapter 4 GRU sizes)
    kind: str = "gru"
    sizes: dict[str, Any] = field(default_factory=lambda: {
        "word_dim": 100, "char_emb_dim": 50, "char_hidden": 25, "hidden": 150, "ff_dim": 150, "dropout": 0.5})
    #: the well-trained tagger
    epochs: int = 30
    max_train_sentences: int | None = None
    #: the weak baseline: same model, this training budget
    baseline_epochs: int = 2
    baseline_train_sentences: int | None = 500
    lr: float = 2e-3
    batch_size: int = 32
    word2vec_epochs: int = 5
    #: cap on the de-identified corpus (dev + test documents; None: all)
    max_utility_documents: int | None = None
    #: surrogate ε per document (Tchouka et al.; seeded)
    epsilons: tuple[float, ...] = (1.0, 10.0)
    #: Friedrich neighbour pseudonymization with N GloVe neighbours (empty: none)
    pseudonym_n: tuple[int, ...] = (100,)
    #: Table 4.6: topics × words; candidates for the coherence choice of k
    n_topics: int = 5
    top_words: int = 30
    topic_candidates: tuple[int, ...] = (3, 4, 5, 6, 7, 8)
    coherence: str = "c_v"
    lda_passes: int = 10
    #: Table 4.9: numbers of classes; the classification is averaged over this many patient splits
    class_counts: tuple[int, ...] = (3, 5, 7)
    class_repeats: int = 5
    test_size: float = 0.25
    #: medical abstracts de-identified by the taggers (0: skip; None: all 2,888)
    max_abstracts: int | None = None
    #: torch intra-op threads while the study runs (None: leave torch's setting)
    num_threads: int | None = None

    def check(self) -> None:
        if min(self.epochs, self.baseline_epochs, self.batch_size, self.n_topics, self.top_words,
               self.class_repeats) < 1:
            raise ValueError("epochs, baseline_epochs, batch_size, n_topics, top_words and class_repeats must be >= 1")
        if any(not (e > 0 and math.isfinite(e)) for e in self.epsilons):
            raise ValueError(f"surrogate epsilons must be positive and finite, got {self.epsilons}")
        if any(n < 1 for n in self.pseudonym_n):
            raise ValueError(f"pseudonym N must be >= 1, got {self.pseudonym_n}")
        if any(c < 2 for c in self.class_counts) or any(k < 1 for k in self.topic_candidates):
            raise ValueError("class counts must be >= 2 and topic candidates >= 1")
        if self.coherence not in ("c_v", "u_mass"):
            raise ValueError(f"coherence must be 'c_v' or 'u_mass', got {self.coherence!r}")
        if not 0 < self.test_size < 1:
            raise ValueError(f"test_size must lie in (0, 1), got {self.test_size}")


_SMOKE_SIZES = {"word_dim": 16, "char_emb_dim": 8, "char_hidden": 8, "hidden": 16, "ff_dim": 16, "dropout": 0.5}
_CPU_SIZES = {"word_dim": 50, "char_emb_dim": 16, "char_hidden": 16, "hidden": 48, "ff_dim": 48, "dropout": 0.5}

PROFILE_PARAMS: dict[str, UtilityParams] = profiles(UtilityParams, {
    "smoke": UtilityParams(
        sizes=dict(_SMOKE_SIZES), epochs=2, max_train_sentences=150, baseline_epochs=1,
        baseline_train_sentences=40, lr=1e-2, batch_size=16, word2vec_epochs=1, epsilons=(1.0,),
        pseudonym_n=(10,), topic_candidates=(3, 5), coherence="u_mass", lda_passes=2, class_counts=(3, 5),
        class_repeats=1, test_size=0.34, max_abstracts=0, num_threads=1,
    ),
    # baseline 4 epochs: at 2 it stayed in the all-O phase (F1 0: no de-identification at all);
    # at 4 it finds PHI with low precision (P 33 / R 85 / F1 47 on the cpu run)
    "cpu": UtilityParams(
        sizes=dict(_CPU_SIZES), epochs=8, max_train_sentences=1500, baseline_epochs=4,
        baseline_train_sentences=1000, lr=8e-3, batch_size=16, word2vec_epochs=5, epsilons=(1.0, 10.0),
        pseudonym_n=(100,), lda_passes=5, class_repeats=5, max_abstracts=None, num_threads=1,
    ),
    "paper": UtilityParams(),
})


def params_for(profile: str, **overrides: Any) -> UtilityParams:
    """The profile's parameters with ``overrides`` (:meth:`StudyParams.resolve`)."""
    return UtilityParams.resolve(profile, **overrides)


# ----------------------------------------------------------------------------- taggers


def train_taggers(train_docs: Sequence[Document], params: UtilityParams, *, seed: int = 0, device="cpu",
                  progress: bool = True) -> dict[str, dict[str, Any]]:
    """The GRU-CRF and the short-trained baseline: ``{"gru": {...}, "baseline": {...}}`` with
    the tagger, its training budget and seconds. No dev-based early stopping (the dev split is
    part of the de-identified corpus)."""
    budgets = {"gru": (params.epochs, params.max_train_sentences),
               "baseline": (params.baseline_epochs, params.baseline_train_sentences)}
    out = {}
    for name, (epochs, cap) in budgets.items():
        t0 = time.perf_counter()
        sents, tagger = prepare_tagger(params.kind, train_docs, scheme=SCHEME, encoding=ENCODING,
                                       embedding_epochs=params.word2vec_epochs, seed=seed, **params.sizes)
        sents = [s for s in sents if s.tokens]
        sents = subsample(sents, cap, derive_seed(seed, "utility-train", name))
        train(tagger, sents, None, None, epochs=epochs, batch_size=params.batch_size, lr=params.lr,
              seed=derive_seed(seed, "utility-tagger", name), device=device, progress=progress)
        out[name] = {"tagger": tagger, "epochs": epochs, "sentences": len(sents),
                     "seconds": time.perf_counter() - t0}
    return out


# ----------------------------------------------------------------------------- transforms


def pseudonymize_text(doc: Document, index, n: int, rng: random.Random) -> str:
    """Friedrich et al. §4 neighbour pseudonymization in place in the note: every token inside a
    PHI span of ``doc`` is replaced by a uniform draw among itself and its N − 1 nearest public
    neighbours (:func:`deidlib.privacy.pseudonymize.pseudonymize_words`: stop words and
    punctuation kept, words without a vector get a random vocabulary word, casing kept); the
    text around it is untouched."""
    from ..privacy.pseudonymize import pseudonymize_words

    regions = merge_regions(doc.spans)
    toks = tokenize(doc.text, spans=doc.spans)
    inside = [any(a <= t.start and t.end <= b for a, b, _ in regions) for t in toks]
    words = [t.text for t in toks]
    new = pseudonymize_words(words, ["PHI" if x else "O" for x in inside], index, n, rng)
    parts, pos = [], 0
    for t, w, v in zip(toks, words, new):
        if v != w:
            parts.append(doc.text[pos:t.start])
            parts.append(v)
            pos = t.end
    parts.append(doc.text[pos:])
    return "".join(parts)


def _glove_index():
    try:
        from ..embeddings.neighbours import NeighbourIndex
        from ..embeddings.public import load_glove

        return NeighbourIndex(load_glove())
    except ImportError:
        return None


def make_transforms(params: UtilityParams, *, seed: int = 0, notes: list[str] | None = None
                    ) -> dict[str, Callable[[Sequence[Document], str], list[str]]]:
    """``{transform label: f(docs with the spans to remove, source key) -> texts}`` in table order.

    Surrogates: one seeded engine per ε (per-document scope); pseudonymization: one seeded
    generator per (N, source). Without the GloVe package the pseudonym rows are left out and a
    line is added to ``notes``.
    """
    out: dict[str, Callable] = {
        "removal": lambda docs, src: [remove(d) for d in docs],
        "type mask": lambda docs, src: [mask(d) for d in docs],
    }
    for eps in params.epsilons:
        def sur(docs, src, eps=eps):
            eng = SurrogateEngine(SurrogateConfig(epsilon=eps), seed=derive_seed(seed, "surrogate", eps, src))
            return [eng.surrogate(d).document.text for d in docs]
        out[f"surrogate ε={eps:g}"] = sur
    if params.pseudonym_n:
        index = _glove_index()
        if index is None:
            if notes is not None:
                notes.append("pseudonymization rows left out: GloVe vectors need pip install 'deidlib[glove]'")
        else:
            for n in params.pseudonym_n:
                def pse(docs, src, n=n):
                    rng = random.Random(derive_seed(seed, "pseudonym", n, src))
                    return [pseudonymize_text(d, index, n, rng) for d in docs]
                out[f"pseudonym N={n}"] = pse
    return out


def deidentify(docs_by_source: dict[str, list[Document]], transforms: dict[str, Callable], *,
               progress: bool = True) -> dict[tuple[str, str], list[str]]:
    """``{(source, transform): texts}`` for every source's documents (spans = what to remove)."""
    out = {}
    items = [(s, t) for s in docs_by_source for t in transforms]
    for s, t in tqdm(items, desc="de-identify", disable=not progress):
        out[(s, t)] = transforms[t](docs_by_source[s], s)
    return out


# ----------------------------------------------------------------------------- tables


def source_scores(gold: Sequence[Document], docs_by_source: dict[str, list[Document]]) -> pd.DataFrame:
    """Binary-token P/R/F1 (%) of each span source against the gold spans (gold: 100)."""
    rows = {}
    for s, docs in docs_by_source.items():
        p, r, f = binary_token_prf(gold, docs)
        rows[s] = {"source": SOURCES.get(s, s), "P(%)": 100 * p, "R(%)": 100 * r, "F1(%)": 100 * f}
    return pd.DataFrame.from_dict(rows, orient="index")


def _frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows).set_index(["source", "transform"])


def bleu_table(originals: Sequence[str], texts: dict[tuple[str, str], list[str]], scores: pd.DataFrame) -> pd.DataFrame:
    """Table 4.5: P/R/F1 of the span source and BLEU-1/2/3 of each de-identified corpus."""
    rows = []
    for (s, t), xs in texts.items():
        rows.append({"source": SOURCES.get(s, s), "transform": t, **scores.loc[s, ["P(%)", "R(%)", "F1(%)"]].to_dict(),
                     **bleu_scores(originals, xs)})
    return _frame(rows)


def topic_table(originals: Sequence[str], texts: dict[tuple[str, str], list[str]], scores: pd.DataFrame,
                params: UtilityParams, *, seed: int = 0, progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """Table 4.6 (per-topic and overall word match %, ``n_topics`` × ``top_words``) plus the
    overall match at the coherence-chosen k; returns ``(table, coherence, k)``."""
    kw = {"top_n": params.top_words, "seed": seed, "passes": params.lda_passes}
    k_best, coh = choose_num_topics(originals, params.topic_candidates, measure=params.coherence, **kw)
    ks = [params.n_topics] + ([k_best] if k_best != params.n_topics else [])
    ref = {k: fit_topics(originals, k, **kw) for k in ks}
    rows = []
    for (s, t), xs in tqdm(texts.items(), desc="topics", disable=not progress):
        row = {"source": SOURCES.get(s, s), "transform": t, **scores.loc[s, ["P(%)", "R(%)", "F1(%)"]].to_dict()}
        for k in ks:
            ov = topic_overlap(ref[k], fit_topics(xs, k, **kw))
            if k == params.n_topics:
                row.update({f"Topic{i + 1}": v for i, v in enumerate(ov.per_topic)})
                row["Overall"] = ov.overall
            if k == k_best:
                row[f"Overall (k={k_best}, {params.coherence})"] = ov.overall
        rows.append(row)
    coherence = pd.DataFrame({"k": list(coh), params.coherence: list(coh.values())}).set_index("k")
    coherence["chosen"] = coherence.index == k_best
    return _frame(rows), coherence, k_best


def _accuracy(texts, labels, groups, n, params, seed) -> float:
    classes = top_classes(labels, n)
    idx = [i for i, y in enumerate(labels) if y in set(classes)]
    accs = []
    for r in range(params.class_repeats):
        x, y = restrict([texts[i] for i in idx], [labels[i] for i in idx], classes)
        g = None if groups is None else [groups[i] for i in idx]
        accs.append(classify(x, y, groups=g, test_size=params.test_size, seed=derive_seed(seed, "classify", r) % 2**32)["accuracy"])
    return 100 * float(np.mean(accs))


def classification_table(originals: Sequence[str], texts: dict[tuple[str, str], list[str]], labels: Sequence,
                         groups: Sequence | None, scores: pd.DataFrame, params: UtilityParams, *, seed: int = 0,
                         progress: bool = True) -> pd.DataFrame:
    """Table 4.9: accuracy (%) with 3/5/7 classes (the most frequent labels, nested), trained and
    tested on original and on each de-identified corpus, the same patient splits for every row
    (mean over ``class_repeats`` seeded splits). Class counts above the number of labels are left out."""
    counts = [n for n in params.class_counts if n <= len(set(labels))]
    rows = [{"source": "non-sanitized", "transform": "original", "P(%)": np.nan, "R(%)": np.nan, "F1(%)": np.nan,
             **{f"acc {n}": _accuracy(list(originals), labels, groups, n, params, seed) for n in counts}}]
    for (s, t), xs in tqdm(texts.items(), desc="classify", disable=not progress):
        rows.append({"source": SOURCES.get(s, s), "transform": t, **scores.loc[s, ["P(%)", "R(%)", "F1(%)"]].to_dict(),
                     **{f"acc {n}": _accuracy(xs, labels, groups, n, params, seed) for n in counts}})
    return _frame(rows)


def abstracts_table(taggers: dict[str, dict[str, Any]], params: UtilityParams, *, seed: int = 0, device="cpu",
                    progress: bool = True) -> pd.DataFrame | None:
    """Medical abstracts de-identified by each tagger (removal, mask, first surrogate ε) and
    classified with 3 and 5 classes; ``None`` when the data set is not found or ``max_abstracts`` is 0."""
    from ..utility.abstracts import AbstractsError, load_abstracts

    if params.max_abstracts == 0:
        return None
    try:
        texts, labels = load_abstracts(split="test")
    except AbstractsError:
        return None
    keep = subsample(list(range(len(texts))), params.max_abstracts, derive_seed(seed, "abstracts"))
    texts, labels = [texts[i] for i in sorted(keep)], [labels[i] for i in sorted(keep)]
    docs = [Document(id=f"abstract-{i}", text=t) for i, t in enumerate(texts)]
    transforms = make_transforms(replace(params, pseudonym_n=(), epsilons=params.epsilons[:1]), seed=seed)
    n_tokens = sum(len(tokenize(t)) for t in texts)
    counts = [n for n in (3, 5) if n <= len(set(labels))]
    rows = [{"tagger": "none", "transform": "original", "tokens flagged (%)": 0.0,
             **{f"acc {n}": _accuracy(texts, labels, None, n, params, seed) for n in counts}}]
    for name, tg in taggers.items():
        pred = predict_documents(tg["tagger"], docs, device=device)
        flagged = sum(len(tokenize(d.text[s.start:s.end])) for d in pred for s in d.spans)
        for t, f in transforms.items():
            xs = f(pred, name)
            rows.append({"tagger": SOURCES[name], "transform": t, "tokens flagged (%)": 100 * flagged / max(n_tokens, 1),
                         **{f"acc {n}": _accuracy(xs, labels, None, n, params, seed) for n in counts}})
    return pd.DataFrame(rows).set_index(["tagger", "transform"])


# ----------------------------------------------------------------------------- study


class UtilityResults(TypedDict):
    params: dict[str, Any]
    taggers: pd.DataFrame  # per tagger: epochs, sentences, seconds, P/R/F1 on the utility corpus
    scores: pd.DataFrame  # per source: P/R/F1 (%)
    bleu: pd.DataFrame  # Table 4.5
    topics: pd.DataFrame  # Table 4.6 (+ overall at the coherence-chosen k)
    coherence: pd.DataFrame
    k_coherence: int
    classification: pd.DataFrame  # Table 4.9
    abstracts: pd.DataFrame | None
    n_documents: int
    n_patients: int
    fingerprint: str
    notes: list[str]
    seconds: float


def run_study(params: UtilityParams, *, corpus: str = "synthetic", data_dir: str | None = None, seed: int = 0,
              device: str = "cpu", progress: bool = True) -> UtilityResults:
    """Train the two taggers, de-identify the utility corpus every way, and score it (module docstring)."""
    if not isinstance(params, UtilityParams):
        raise TypeError("run_study takes resolved UtilityParams (ahmed_utility.params_for(profile, ...))")
    t0 = time.perf_counter()
    with limited_threads(params.num_threads or None):
        splits = load_corpus(corpus=corpus, data_dir=data_dir, profile=params.profile, seed=seed)
        gold = subsample(list(splits.dev) + list(splits.test), params.max_utility_documents,
                         derive_seed(seed, "utility-docs"))
        if not gold:
            raise ValueError(f"the {corpus} corpus has no dev/test documents to de-identify")
        notes: list[str] = []
        taggers = train_taggers(splits.train, params, seed=seed, device=device, progress=progress)
        docs_by_source = {"gold": gold}
        for name, tg in taggers.items():
            docs_by_source[name] = predict_documents(tg["tagger"], gold, device=device)
        scores = source_scores(gold, docs_by_source)
        transforms = make_transforms(params, seed=seed, notes=notes)
        texts = deidentify(docs_by_source, transforms, progress=progress)
        originals = [d.text for d in gold]
        bleu = bleu_table(originals, texts, scores)
        topics, coherence, k_best = topic_table(originals, texts, scores, params, seed=seed, progress=progress)
        labels = [d.metadata.get("diagnosis") for d in gold]
        if all(y is not None for y in labels) and len(set(labels)) >= 2:
            groups = [d.patient_id or d.id for d in gold]
            classification = classification_table(originals, texts, labels, groups, scores, params, seed=seed,
                                                  progress=progress)
        else:
            classification = pd.DataFrame()
            notes.append(f"no classification: the {corpus} notes carry no diagnosis label")
        abstracts = abstracts_table(taggers, params, seed=seed, device=device, progress=progress)
        if abstracts is None and params.max_abstracts != 0:
            notes.append("medical abstracts not found: no real-text classification")
        tag_rows = {SOURCES[n]: {"epochs": tg["epochs"], "train sentences": tg["sentences"],
                                 "seconds": round(tg["seconds"], 1), **scores.loc[n, ["P(%)", "R(%)", "F1(%)"]].to_dict()}
                    for n, tg in taggers.items()}
    return UtilityResults(
        params=asdict(params), taggers=pd.DataFrame.from_dict(tag_rows, orient="index"), scores=scores, bleu=bleu,
        topics=topics, coherence=coherence, k_coherence=k_best, classification=classification, abstracts=abstracts,
        n_documents=len(gold), n_patients=len({d.patient_id for d in gold}),
        fingerprint=fingerprint_documents(gold), notes=notes, seconds=time.perf_counter() - t0,
    )


# ----------------------------------------------------------------------------- figure

_MARKERS = ["o", "s", "^", "v", "D", "P", "X", "*"]
_COLORS = {"ground truth": "black", "GRU-CRF": "tab:blue"}


@style()
def plot_tradeoff(res: UtilityResults, title: str = ""):
    """Utility vs PHI recall: one point per (span source, transform); panels BLEU-2, topic
    overlap (overall, k = 5) and classification accuracy with the most classes available."""
    panels = [("BLEU-2", res["bleu"]["BLEU-2"], "BLEU-2 vs original")]
    panels.append(("topic overlap (%)", res["topics"]["Overall"], "LDA topic words matched (overall)"))
    cls = res["classification"]
    acc_cols = [c for c in cls.columns if c.startswith("acc ")]
    if acc_cols:
        panels.append((f"accuracy, {acc_cols[-1][4:]} classes (%)", cls[acc_cols[-1]], "downstream classification"))
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 4.2), squeeze=False)
    transforms = list(dict.fromkeys(t for _, t in res["bleu"].index))
    for ax, (ylabel, series, sub) in zip(axes[0], panels):
        for (src, t), y in series.items():
            if t == "original":
                ax.axhline(y, color="grey", ls="--", lw=1, label="original text")
                continue
            r = res["scores"].set_index("source").loc[src, "R(%)"]
            ax.scatter(r, y, marker=_MARKERS[transforms.index(t) % len(_MARKERS)],
                       color=_COLORS.get(src, "tab:orange"), s=46, alpha=0.85, label=f"{src} · {t}")
        ax.set_xlabel("PHI recall of the span source (binary token, %)")
        ax.set_ylabel(ylabel)
        ax.set_title(sub, fontsize=10)
    h, lab = axes[0][-1].get_legend_handles_labels()
    seen = dict(zip(lab, h))
    fig.legend(list(seen.values()), list(seen.keys()), loc="lower center", ncol=3, fontsize=7, frameon=False,
               bbox_to_anchor=(0.5, -0.02 - 0.035 * math.ceil(len(seen) / 3)))
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig
