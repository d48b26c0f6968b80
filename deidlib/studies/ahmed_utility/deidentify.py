"""The de-identification the ahmed_utility study measures (Ahmed 2020 thesis §4.3.2): the two
taggers that give PHI spans (:func:`train_taggers`), the ways of removing PHI
(:func:`make_transforms`: removal, masks, Tchouka et al. surrogates, Friedrich et al. neighbour
pseudonymization in place, :func:`_pseudonymize_text`), applied to every span source
(:func:`deidentify`), and each source's binary-token scores (:func:`source_scores`).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from ...corpus import Document
from ...corpus.splits import subsample
from ...corpus.tokenize import tokenize
from ...evaluation import binary_token_prf
from ...rng import derive_seed
from ...surrogates import SurrogateConfig, SurrogateEngine
from ...training import prepare_tagger, train
from ...utility.transforms import mask, merge_regions, remove
from .params import ENCODING, SCHEME, SOURCES, UtilityParams

__all__ = []


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


def _pseudonymize_text(doc: Document, index, n: int, rng: random.Random) -> str:
    """Friedrich et al. §4 neighbour pseudonymization in place in the note: every token inside a
    PHI span of ``doc`` is replaced by a uniform draw among itself and its N − 1 nearest public
    neighbours (:func:`deidlib.privacy.pseudonymize.pseudonymize_words`: stop words and
    punctuation kept, words without a vector get a random vocabulary word, casing kept); the
    text around it is untouched."""
    from ...privacy.pseudonymize import pseudonymize_words

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
        from ...embeddings.neighbours import NeighbourIndex
        from ...embeddings.public import load_glove

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
                    return [_pseudonymize_text(d, index, n, rng) for d in docs]
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


def source_scores(gold: Sequence[Document], docs_by_source: dict[str, list[Document]]) -> pd.DataFrame:
    """Binary-token P/R/F1 (%) of each span source against the gold spans (gold: 100)."""
    rows = {}
    for s, docs in docs_by_source.items():
        p, r, f = binary_token_prf(gold, docs)
        rows[s] = {"source": SOURCES.get(s, s), "P(%)": 100 * p, "R(%)": 100 * r, "F1(%)": 100 * f}
    return pd.DataFrame.from_dict(rows, orient="index")
