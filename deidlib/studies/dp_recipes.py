"""DP-SGD recipes a hospital would use: the thesis' recipe beside what DP practice
has learned since, on one harness (:func:`deidlib.privacy.dpsgd.train_dp`) and one scorer.

The thesis (ahmed, §5.1.2) trains a self-attention tagger *from scratch* with DP-SGD: lot 16,
100 epochs, σ ∈ {0.25, 0.45, 0.55}. Since then DP practice has learned to

* start from **public pre-trained parts** that cost no privacy and let DP train only the
  rest (Tramèr & Boneh, "Differentially private learning needs better features (or much
  more data)", ICLR 2021: DP linear models on fixed public features beat end-to-end DP
  training; Li et al., "Large language models can be strong differentially private
  learners", ICLR 2022; De et al., "Unlocking high-accuracy differentially private image
  classification through scale", 2022). Here: the frozen all-MiniLM-L6-v2 encoder
  (:mod:`deidlib.models.encoder_tagger`) or frozen GloVe 6B-50d vectors with a public
  vocabulary (:func:`deidlib.embeddings.public.glove_vocabulary`);
* use **large lots** with a learning rate fit to them, and **few epochs** (De et al. 2022
  §3; Li et al. 2022 §3: the signal-to-noise ratio of the noisy mean gradient grows with
  the lot size L as L / (σ·C), and the σ needed for a fixed ε grows far slower than L);
* use **DP-Adam** (Adam on the privatised gradient: post-processing, no privacy cost);
* **pre-train on public data, then fine-tune with DP** (Li et al. 2022; Yu et al.,
  "Differentially private fine-tuning of language models", ICLR 2022; Tramèr & Boneh 2021
  §5: public data of the task itself helps most). Here the public data is the package's
  own synthetic corpus (:func:`pretrain_public`, the ``synthetic_minilm`` recipe): the head
  on the frozen encoder is trained on generated notes, which hold no private text and cost
  no privacy, and DP-SGD only fine-tunes it on the private notes. Whether that fine-tuning
  helps is measured against the public model alone (the ε 0 row of :func:`recipe_curve`),
  paired by seed (:func:`curve_summary`): on the nursing notes it beat the public model at
  ε 8 and was not distinguishable from it at ε 1 (5 seeds; docs/dp-recipes.md gives the
  command, ``benchmarks/dp_recipes.py``);
* **thin the PHI-free sentences** with per-sentence keyed coins
  (:func:`deidlib.corpus.labels.thin_negatives`: whether a sentence is kept depends on it
  alone, so the DP guarantee for the thinned set holds for the full one; 96 % of the nursing
  notes' sentences hold no PHI).

A :class:`Recipe` fixes the tagger and the optimisation; :func:`train_recipe` trains one
model at a target ε (σ calibrated by the accountant for the recipe's steps), or at
ε = ∞ with the *same* lots and optimiser but no noise and no clipping (the recipe's
non-private reference). :func:`recipe_curve` sweeps ε and seeds.

Vocabulary. ``minilm`` and ``glove`` have public vocabularies (WordPiece; GloVe's most
frequent words), so nothing of the training text is released outside DP-SGD. ``thesis``
keeps the thesis' own vocabulary of training words, which DP-SGD does not protect
(module docstring of :mod:`.ahmed_dp`).
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd
import torch

from ..corpus.conventions import GUIDELINES, align_spans
from ..corpus.labels import tagged_sentences, thin_negatives
from ..datasets import load_corpus
from ..privacy.dpsgd import patient_units, train_dp
from ..rng import derive_seed
from ..training import evaluate_tagger, prepare_tagger, train

__all__ = ["Recipe", "RECIPES", "build_recipe_tagger", "pretrain_public", "train_recipe",
           "recipe_curve", "curve_summary", "restrict_to_recipe", "with_overrides"]

SCHEME, ENCODING = "binary", "BIO"



@dataclass(frozen=True)
class Recipe:
    """One way to train a DP tagger. ``batch_size`` is the *expected* lot size (Poisson
    sampling; at most ``max_sample_rate`` of the units), ``epochs`` sets the steps
    (epochs / q), ``negative_keep_rate`` thins the PHI-free sentences (None: all kept),
    ``unit`` is the privacy unit."""

    name: str
    kind: str
    tagger: dict[str, Any] = field(default_factory=dict)
    public_vectors: str | None = None  # "glove": frozen GloVe rows over GloVe's own vocabulary
    glove_words: int = 100_000
    batch_size: int = 16
    epochs: float = 3
    lr: float = 3e-3
    optimizer: str = "adam"
    max_grad_norm: float = 1.0
    #: the lot is at most this fraction of the units (small data sets: q stays ≤ it)
    max_sample_rate: float = 0.25
    negative_keep_rate: float | None = None
    unit: str = "sentence"
    note: str = ""
    #: parameter-name prefixes DP-SGD trains (e.g. ``("out.", "crf.")``: the output layer and the CRF);
    #: the tagger's other parameters stay as built or pre-trained. None: every trainable parameter.
    #: Fewer parameters, less noise: the noise's norm grows with the square root of their number
    #: (Yu et al., ICLR 2022: parameter-efficient DP fine-tuning)
    trainable: tuple[str, ...] | None = None
    #: public pre-training before DP-SGD (:func:`pretrain_public`): ``"synthetic"`` trains the
    #: tagger without DP on the package's synthetic corpus first (no private data, no privacy
    #: cost); None: DP-SGD starts from the initialisation
    pretrain: str | None = None
    pretrain_profile: str = "cpu"
    pretrain_epochs: int = 3
    pretrain_lr: float = 1e-3
    #: weight of ICU nursing notes in the public corpus (as the transfer study)
    pretrain_icu_weight: float = 3.0
    #: annotation guideline of the *private* corpus: the public spans are aligned to it
    #: (:func:`deidlib.corpus.conventions.align_spans`; "physionet" for the nursing notes,
    #: "i2b2" keeps every synthetic span)
    guideline: str = "physionet"

    def __post_init__(self) -> None:
        if self.pretrain not in (None, "synthetic"):
            raise ValueError(f"recipe {self.name!r}: pretrain must be None or 'synthetic', got {self.pretrain!r}")
        if self.guideline not in GUIDELINES:
            raise ValueError(f"recipe {self.name!r}: guideline must be one of {', '.join(GUIDELINES)}, "
                             f"got {self.guideline!r}")


#: How the ``minilm`` recipe was chosen (nursing notes' *dev* split, ε = 8, seed 0; the test split
#: was not looked at): frozen-encoder heads without DP — last layer + linear 0.59, layer 3 + linear
#: 0.78, layer 3 + BiGRU 64 0.92, layer 3 + conv(3) 128 0.87 (the conv head is kept: its
#: per-sentence gradients vectorise, the GRU's do not); then DP at ε = 8 — lot 2048, 5 epochs, no
#: thinning: 0.00 (48 steps: all-O); lot 1024, 10 epochs, thinned to 20 %: 0.69 (0.70 without
#: noise); lot 512, lr 3e-3: 0.50; lot 1024, 20 epochs, lr 3e-2: 0.69; lot 1024, 30 epochs, lr 1e-2:
#: 0.75 (``benchmarks/dp_recipes.py``).
#: How ``synthetic_minilm`` was chosen (same dev split, seed 0): fine-tuned on the nursing notes without
#: DP, a head pre-trained on synthetic notes reaches dev F1 0.79 when only its output layer and CRF
#: train, 0.90-0.92 when the whole head trains, so DP fine-tunes the whole head; lot, thinning and 30
#: epochs are the ``minilm`` recipe's; DP at ε = 8, lr 1e-3 / 3e-3 / 1e-2 / 3e-2: 0.811 / 0.841 / 0.851
#: / 0.753; at ε = 1, lr 3e-3 / 1e-2: 0.803 / 0.799 (10 epochs at lr 1e-3: 0.797 at ε = 8, 0.745 at
#: ε = 1). Those runs pre-trained with BIOES labels on the transfer study's corpus; the recipe
#: pre-trains with BIO labels on its own public corpus (:func:`pretrain_public`).
RECIPES: dict[str, Recipe] = {
    "thesis": Recipe(
        "thesis", "transformer", dict(word_dim=48, char_emb_dim=16, char_hidden=16, layers=2, heads=4,
                                      ff_hidden=128),
        batch_size=16, epochs=3, lr=3e-3,
        note="the thesis' recipe (self-attention tagger from scratch, lot 16) at the cpu budget: 3 epochs, "
             "not the thesis' 100"),
    "glove": Recipe(
        "glove", "gru", dict(char="gru", char_onehot=False, char_emb_dim=16, char_hidden=16, casing=True,
                             hidden=64, ff_dim=0, input_dropout=0.0),
        public_vectors="glove", batch_size=512, epochs=8, lr=1e-2, negative_keep_rate=0.25,
        note="frozen public GloVe 6B-50d (vocabulary: GloVe's 100k most frequent words) + casing + char GRU "
             "→ BiGRU 64 → CRF; DP-Adam, large lots, PHI-free sentences thinned"),
    "minilm": Recipe(
        "minilm", "minilm", dict(finetune_layers=0, layers=[3], hidden=128, head="conv", kernel=3),
        batch_size=1024, epochs=30, lr=1e-2, negative_keep_rate=0.2,
        note="frozen public all-MiniLM-L6-v2 (mean of layer 3's pieces) + casing → conv (3 words, 128) → CRF; "
             "DP-Adam, large lots, PHI-free sentences thinned"),
    "synthetic_minilm": Recipe(
        "synthetic_minilm", "minilm", dict(finetune_layers=0, layers=[2, 3, 4], hidden=64, casing=True),
        batch_size=1024, epochs=30, lr=1e-2, negative_keep_rate=0.2, pretrain="synthetic",
        note="frozen public all-MiniLM-L6-v2 (mean of states 2-4) + casing → BiGRU 64 → CRF, pre-trained without "
             "DP on the synthetic corpus (public), then DP-Adam fine-tuning of the whole head, large lots, PHI-free "
             "sentences thinned"),
}


def build_recipe_tagger(recipe: Recipe, train_docs, *, seed: int = 0):
    """Tagged training sentences (empty ones dropped) and the untrained tagger of ``recipe``."""
    hp = dict(recipe.tagger)
    kw: dict[str, Any] = {}
    if recipe.public_vectors == "glove":
        from ..embeddings.public import glove_vocabulary

        kw["vocabulary"] = glove_vocabulary(recipe.glove_words)
        hp.update(word_dim=50, freeze_embeddings=True)
    elif recipe.public_vectors is not None:
        raise ValueError(f"unknown public vectors {recipe.public_vectors!r} (None or 'glove')")
    sents, tagger = prepare_tagger(recipe.kind, train_docs, scheme=SCHEME, encoding=ENCODING, embeddings=None,
                                   seed=seed, **kw, **hp)
    if recipe.public_vectors == "glove":
        from ..embeddings.public import glove_matrix

        with torch.no_grad():
            tagger.tokens.word.weight.copy_(torch.from_numpy(glove_matrix(tagger.featurizer.words, seed)))
    return [s for s in sents if s.tokens], tagger


def pretrain_public(recipe: Recipe, *, seed: int = 0, progress: bool = False):
    """The tagger of ``recipe`` trained *without* DP on public data (``recipe.pretrain``):
    ``"synthetic"``: the training split of the package's synthetic corpus (profile
    ``pretrain_profile``, generated from ``derive_seed(seed, "dp-public-corpus")``, so it is
    never the corpus of a synthetic private run of the same seed; ICU nursing notes weighted
    ``pretrain_icu_weight``; spans aligned to ``recipe.guideline``), ``pretrain_epochs`` of Adam
    at ``pretrain_lr`` with learning-rate decay 0.15 (the transfer study's frozen-encoder
    recipe, :data:`deidlib.studies.transfer.FROZEN_ENCODER_RECIPE`). Its featurizer (labels; the
    encoder's public pieces) is built from the synthetic notes.

    Privacy position: the generator reads no private note, so this model costs no privacy and
    DP-SGD's guarantee for the fine-tuned model covers everything private it saw. What the
    guarantee does *not* cover, as for every recipe's hyperparameters: the generator's design
    and the recipe's settings were chosen with the nursing notes' *dev* split in view
    (the transfer study; docs/dp-recipes.md); a release would choose them on other
    data or pay for the choice (Papernot & Steinke, ICLR 2022)."""
    if recipe.pretrain != "synthetic":
        raise ValueError(f"recipe {recipe.name!r} has no public pre-training (pretrain={recipe.pretrain!r})")
    scale = {"icu_nursing_note": recipe.pretrain_icu_weight} if recipe.pretrain_icu_weight != 1 else None
    syn = load_corpus("synthetic", profile=recipe.pretrain_profile, seed=derive_seed(seed, "dp-public-corpus"),
                      note_scale=scale)
    sents, tagger = build_recipe_tagger(recipe, align_spans(syn.train, recipe.guideline), seed=seed)
    train(tagger, sents, None, None, epochs=recipe.pretrain_epochs, batch_size=16, optimizer="adam",
          lr=recipe.pretrain_lr, lr_decay=0.15, seed=seed, progress=progress)
    return tagger


def restrict_to_recipe(tagger, recipe: Recipe) -> list[str]:
    """Freeze every parameter of ``tagger`` that ``recipe`` does not train (``recipe.trainable``:
    name prefixes; None: what the tagger itself leaves trainable, e.g. the head of a frozen
    encoder) and return the names of those it trains: the parameters DP-SGD makes private.
    Everything else keeps its public (or pre-trained) value."""
    if recipe.trainable is not None:
        keep = tuple(recipe.trainable)
        if not any(p.requires_grad and n.startswith(keep) for n, p in tagger.named_parameters()):
            raise ValueError(f"recipe {recipe.name!r}: no trainable parameter starts with {keep}")
        for n, p in tagger.named_parameters():
            if not n.startswith(keep):
                p.requires_grad_(False)
    return [n for n, p in tagger.named_parameters() if p.requires_grad]


def train_recipe(
    recipe: Recipe,
    train_docs,
    *,
    epsilon: float,
    seed: int = 0,
    delta: float = 1e-5,
    accountant: str = "prv",
    secure: bool = True,
    progress: bool = False,
    base=None,
    history: list[tuple[float, float, int]] | None = None,
    sentences=None,
) -> dict[str, Any]:
    """One model of ``recipe`` at target ``epsilon`` (``math.inf``: the same lots and
    optimiser without noise or clipping). By default (``secure=True``) the lots and the noise
    come from the OS CSPRNG, as for any model a user may release; ``secure=False`` (the study
    runs: :func:`recipe_curve`, the ahmed_dp members) seeds them, and the ledger's ``rng_note``
    says the guarantee does not hold against anyone holding the seed.
    ``base``: a trained tagger to fine-tune (a copy; its featurizer is kept; default: the
    recipe's public pre-training, :func:`pretrain_public`, when it has one), ``history``: DP
    phases already spent on the same units (their ε composes), ``sentences``: the tagged
    training sentences to use instead of ``train_docs``' (a membership game picks sentences;
    needs ``base``, and the sentence unit).
    Returns {"tagger", "ledger", "history" (``train_dp``'s: privacy spent per epoch), "sentences",
    "seconds"}."""
    if not epsilon > 0:
        raise ValueError(f"ε must be positive (math.inf: no noise), got {epsilon}; ε 0 is the public model "
                         "alone (pretrain_public), trained on no private note")
    t0 = time.perf_counter()
    if sentences is not None and (base is None or recipe.unit != "sentence"):
        raise ValueError("train_recipe(sentences=...) needs a base tagger and the sentence unit")
    if base is None and recipe.pretrain is not None:
        base = pretrain_public(recipe, seed=seed, progress=progress)
    if base is None:
        sents, tagger = build_recipe_tagger(recipe, train_docs, seed=seed)
    else:
        tagger = copy.deepcopy(base)
        task = getattr(base, "task", {}) or {}
        sents = [s for s in (sentences if sentences is not None else tagged_sentences(
            train_docs, task.get("scheme", SCHEME), task.get("encoding", ENCODING), task.get("mode", "default")))
            if s.tokens]
    restrict_to_recipe(tagger, recipe)
    if recipe.negative_keep_rate is not None:
        sents = thin_negatives(sents, recipe.negative_keep_rate, derive_seed(seed, "dp-thin"))
    units = patient_units(sents, train_docs) if recipe.unit == "patient" else None
    private = math.isfinite(epsilon)
    if getattr(tagger, "frozen", False):
        tagger.precompute(sents, progress=progress)  # the public encoder's vectors, once (shared cache)
    method = "vectorized" if getattr(tagger, "supports_vectorized", False) else "micro"
    n_units = len(set(units)) if units is not None else len(sents)
    hist, ledger = train_dp(
        tagger, sents, unit=recipe.unit, units=units, epochs=recipe.epochs,
        batch_size=max(1, min(recipe.batch_size, int(recipe.max_sample_rate * n_units))), history=history,
        noise_multiplier=None if private else 0.0, target_epsilon=epsilon if private else None,
        max_grad_norm=recipe.max_grad_norm if private else math.inf, delta=delta, accountant=accountant,
        optimizer=recipe.optimizer, lr=recipe.lr, seed=seed, progress=progress, eval_every=10**9, secure=secure,
        method=method,
    )
    return {"tagger": tagger, "ledger": ledger, "history": hist, "sentences": len(sents),
            "seconds": time.perf_counter() - t0}


def recipe_curve(
    recipe: Recipe,
    train_docs,
    test_docs,
    *,
    epsilons: Sequence[float] = (1.0, 2.0, 4.0, 8.0, math.inf),
    seeds: Sequence[int] = (0,),
    dev_docs=None,
    delta: float = 1e-5,
    accountant: str = "prv",
    progress: bool = False,
) -> pd.DataFrame:
    """F1 vs ε of ``recipe``: one row per (seed, target ε) with the ε spent, σ, q, steps,
    training sentences, seconds, and binary-token P/R/F1 on ``test_docs`` (and ``dev_docs``).
    A recipe with public pre-training adds a row at ε = 0 per seed: the public model alone,
    which has seen no private note (``epsilons`` may name 0 too; ``epsilons=(0,)`` gives that
    row only and never reads ``train_docs``). The DP rows of a seed fine-tune that seed's
    public model, so rows of one seed are paired (:func:`curve_summary`)."""
    import warnings

    if 0 in epsilons and recipe.pretrain is None:
        raise ValueError(f"recipe {recipe.name!r} has no public pre-training: ε 0 (the public model alone) "
                         "needs one")

    def scored(row: dict, tagger) -> dict:
        for name, docs in (("test", test_docs), ("dev", dev_docs)):
            if docs:
                p, r, f = evaluate_tagger(tagger, docs)
                row.update({f"{name}_precision": p, f"{name}_recall": r, f"{name}_f1": f})
        return row

    rows = []
    for seed in seeds:
        # a public pre-training is done once per seed and shared by that seed's ε (train_recipe copies it)
        base = pretrain_public(recipe, seed=seed, progress=progress) if recipe.pretrain is not None else None
        if base is not None:  # ε = 0: the public model alone, before any private note
            rows.append(scored({"recipe": recipe.name, "unit": recipe.unit, "seed": seed, "target_epsilon": 0.0,
                                "epsilon": 0.0, "delta": 0.0, "noise_multiplier": math.nan, "sample_rate": 0.0,
                                "steps": 0, "lot": 0.0, "sentences": 0, "units": 0, "train_seconds": math.nan}, base))
        for eps in [e for e in epsilons if e != 0]:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="noise_multiplier = 0")
                m = train_recipe(recipe, train_docs, epsilon=eps, seed=seed, delta=delta, accountant=accountant,
                                 progress=progress, secure=False, base=base)  # reproducible study rows (rng_note)
            led = m["ledger"]
            rows.append(scored({"recipe": recipe.name, "unit": recipe.unit, "seed": seed, "target_epsilon": eps,
                                "epsilon": led.epsilon, "delta": delta, "noise_multiplier": led.noise_multiplier,
                                "sample_rate": led.sample_rate, "steps": led.steps, "lot": led.expected_batch_size,
                                "sentences": m["sentences"], "units": led.n_units, "train_seconds": m["seconds"]},
                               m["tagger"]))
    return pd.DataFrame(rows)


def curve_summary(rows: pd.DataFrame, *, level: float = 0.95, metric: str = "test_f1") -> pd.DataFrame:
    """Per (recipe, unit, target ε) of :func:`recipe_curve`'s ``rows``: seeds, the mean and
    ``level`` t interval over seeds of ``metric`` (and the mean precision and recall of its
    split), and the paired difference to the same seed's ε 0 row (the public model alone):
    ``d_n`` pairs, mean ``d``, its t interval ``d_lo``–``d_hi``, two-sided ``d_p`` (paired
    t-test, :func:`deidlib.studies.seed_stats.paired_effect`) and ``verdict``
    (:func:`~deidlib.studies.seed_stats.effect_verdict`: ``found`` when the interval lies above 0,
    i.e. DP fine-tuning beat the public model). No ε 0 rows: the paired columns are NaN and the
    verdict ``not measured``."""
    from .seed_stats import effect_verdict, paired_effect, t_interval

    split = metric.rsplit("_", 1)[0]
    out = []
    for (recipe, unit), g in rows.groupby(["recipe", "unit"], sort=False):
        base = g[g.target_epsilon == 0].groupby("seed")[metric].first()
        for eps, e in sorted(g.groupby("target_epsilon"), key=lambda kv: kv[0]):
            by_seed = e.groupby("seed")[metric].first()
            m, lo, hi = t_interval(by_seed.to_numpy(), level)
            row = {"recipe": recipe, "unit": unit, "target_epsilon": eps, "seeds": len(by_seed), "mean": m,
                   "lo": lo, "hi": hi, "precision": e[f"{split}_precision"].mean(),
                   "recall": e[f"{split}_recall"].mean()}
            common = by_seed.index.intersection(base.index)
            if eps != 0 and len(common):
                d = paired_effect(by_seed[common].to_numpy(), base[common].to_numpy(), level)
                row.update(d_n=d["n"], d=d["mean"], d_lo=d["lo"], d_hi=d["hi"], d_p=d["p"],
                           verdict=effect_verdict(d["lo"], d["hi"]))
            else:
                row.update(d_n=0, d=math.nan, d_lo=math.nan, d_hi=math.nan, d_p=math.nan,
                           verdict="baseline" if eps == 0 else "not measured")
            out.append(row)
    return pd.DataFrame(out)


def with_overrides(recipe: Recipe, **kw: Any) -> Recipe:
    """``recipe`` with fields replaced (``tagger`` merged)."""
    if "tagger" in kw:
        kw["tagger"] = {**recipe.tagger, **kw["tagger"]}
    return replace(recipe, **kw)
