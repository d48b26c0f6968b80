"""ahmed thesis chapter 5 (and appendix A.3/A.4): DP-SGD taggers, the ε table (Table 5.3),
a privacy–utility curve, and the DP ensemble with minimality aggregation (Tables 5.1, 5.2).

Notebook ``04_ahmed_dp_ensemble`` calls these functions; all training goes through
:func:`deidlib.privacy.dpsgd.train_dp`, all accounting through :mod:`deidlib.privacy.accounting`.

Setup and deviations (the thesis trains a 110M-parameter self-attention tagger on i2b2 2014,
MIMIC-III and the PhysioNet nursing notes; none of that fits a 2-core CPU, and MIMIC-III
and i2b2 are not available here):

* **Data sets → sites.** Three synthetic sites (``deidlib.synthetic``, one per hospital,
  each with its own note style and PHI forms) stand in for the three data sets; every site
  is split by patient into train/dev/test. With ``corpus="physionet"`` (data present) the
  PhysioNet nursing notes give the privacy–utility curve and join as a fourth member/target.
* **Tagger.** The thesis' DP model is the self-attention (transformer) tagger with a CRF
  (§5.1.2); profiles shrink it (``PROFILE_PARAMS``). Labels: binary PHI/non-PHI with BIO
  (the ensemble aggregates binary PHI anyway; a deviation — the thesis trains on its label
  set, which it does not restate for chapter 5).
* **DP cost of the self-attention tagger** (Table 5.3; :func:`sat_dp_cost`): the thesis' SAT is
  a fine-tuned pre-trained BERT. Notebook 02's SAT (pre-trained all-MiniLM-L6-v2 + CRF; cpu: top
  two layers fine-tuned, one epoch) is trained without DP on the sentences of the ``minilm``
  recipe, and compared with that recipe at ``member_epsilon`` and at ε = ∞. Under DP only the
  recipe's head on the frozen public encoder is trained and private
  (:func:`deidlib.studies.dp_recipes.restrict_to_recipe`); the encoder keeps its public weights.
* **Privacy unit** is the sentence (the thesis' "sequence"); ``unit="patient"`` is available.
* **Vocabulary.** Each site's word vocabulary comes from its own training sentences, as
  in the thesis; the vocabulary itself is *not* protected by DP-SGD (a published model's
  word list can reveal rare names). A deployment must build it from public text; we state
  it rather than hide it.
* **Epochs / batch.** The thesis uses lot size 16 and 100 epochs; profiles use fewer
  epochs (the ε table uses the thesis' values).
* **Training subsets.** Profiles train on a subset of the sentences: each sentence is kept
  independently with a fixed probability (``train_sentence_rate``; ``curve_sentence_rate`` for
  the F1-vs-ε curve) by a coin keyed by the sentence itself
  (:func:`deidlib.corpus.labels.keyed_subsample`), so adding or removing one sentence changes
  no other sentence's membership and the add/remove DP guarantee of a model trained on the
  subset holds for the full training set. (A fixed-size seeded subset would not: adding one
  sentence swaps others in.)
* **Randomness.** The study draws the DP-SGD noise and lots from seeded generators
  (``train_dp(secure=False)``) so that a run can be repeated; its (ε, δ) therefore does *not*
  hold against anyone who knows the seed (every member ledger says so in ``rng_note``). The
  study's models are for measurement, not for release; ``deidlib train --dp-*`` uses the
  OS CSPRNG by default.
* **Scenario A** (owner without labels): for each site t, the members trained on the two
  other sites, alone and aggregated. **Scenario B** (owner with labels): the owner's own
  DP model, and the ensemble of all three. **Fine-tuning** (appendix A.3/A.4 variation):
  a DP model pre-trained on another site, fine-tuned with DP-SGD on the owner's data
  (the pre-trained model's vocabulary is kept; owner words outside it map to UNK).
* **Guarantee.** Members are DP per *sentence* (the thesis' unit) and trained on disjoint
  sites, so the ensemble is (max ε_i, max δ)-DP per sentence by parallel composition
  (:func:`deidlib.privacy.ensemble.ensemble_guarantee`); that is not a guarantee per person
  (the thesis argues per person). ``unit="patient"`` members would give one per patient.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, TypedDict

import matplotlib.pyplot as plt
import pandas as pd

from ..corpus.labels import keyed_subsample, tagged_sentences, thin_negatives
from ..corpus.splits import split_by_patient, subsample
from ..datasets import load_corpus
from ..evaluation import binary_token_prf
from ..plotting import style
from ..privacy.accounting import table_5_3, thesis_sequence_counts
from ..privacy.dpsgd import train_dp
from ..privacy.ensemble import aggregate_documents, ensemble_guarantee, rule_scores
from ..profiles import get_profile
from ..reporting import json_ready
from ..results import fingerprint_documents
from ..rng import derive_seed
from ..synthetic import generate
from ..training import evaluate_tagger, predict_documents, prepare_tagger, train
from .params import StudyParams, profiles

__all__ = [
    "PROFILE_PARAMS",
    "DPParams",
    "DPStudyResults",
    "params_for",
    "SiteData",
    "prepare_sites",
    "epsilon_table",
    "thesis_sequence_table",
    "train_member",
    "privacy_utility_curve",
    "scenario_tables",
    "fine_tuning_table",
    "run_study",
    "plot_curve",
    "plot_recipe_curves",
    "plot_rules",
    "recipe_curves",
    "sat_dp_cost",
    "dp_costs",
    "SAT_ROLES",
    "member_recipe",
    "results_json",
]

SCHEME, ENCODING = "binary", "BIO"


@dataclass(frozen=True)
class DPParams(StudyParams):
    STUDY: ClassVar[str] = "ahmed_dp"
    MERGED: ClassVar[tuple[str, ...]] = ("tagger", "sat_tagger")

    kind: str = "transformer"
    tagger: dict[str, Any] = field(default_factory=dict)  # build_tagger overrides
    n_sites: int = 3
    patients: int | None = None  # synthetic corpus size (None: the profile's)
    epochs: float = 100
    batch_size: int = 16
    lr: float = 3e-3
    optimizer: str = "adam"  # Adam on the noisy gradient is post-processing (no privacy cost)
    max_grad_norm: float = 1.0
    delta: float = 1e-5
    accountant: str = "rdp"
    member_noise: float = 0.55  # thesis: the σ of the published models (ε 6.95–9.15)
    curve_noises: tuple[float, ...] = (0.25, 0.45, 0.55, 1.0)
    #: keep each training sentence of a member with this fixed probability (None: all), by a
    #: coin keyed by the sentence (keyed_subsample: the DP guarantee holds for the full set)
    train_sentence_rate: float | None = None
    #: the same for the F1-vs-ε curve's training set (all sites, or the real corpus)
    curve_sentence_rate: float | None = None
    #: keep every PHI sentence and each PHI-free one with this probability (None: all), before
    #: the subsampling; per-sentence keyed coins as well (thin_negatives)
    negative_keep_rate: float | None = None
    max_eval_documents: int | None = None
    embeddings: str | None = None  # None: random init (word2vec would read the training text)
    table_noises: tuple[float, ...] = (0.25, 0.45, 0.55)
    fine_tune_per_target: int | None = None  # pre-trained members fine-tuned per target (None: all others)
    #: train the members (Tables 5.1/5.2/A.3) with this recipe of dp_recipes at ``member_epsilon``
    #: (None: the thesis' tagger at σ = ``member_noise``, lot ``batch_size``)
    member_recipe: str | None = None
    member_epsilon: float = 8.0
    #: recipes of dp_recipes whose F1-vs-ε curves are drawn on the curve's corpus (ε × seeds)
    recipes: tuple[str, ...] = ()
    recipe_epsilons: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0, math.inf)
    recipe_seeds: int = 2
    recipe_epochs: float | None = None  # None: each recipe's own
    #: the DP cost of the self-attention tagger (:func:`sat_dp_cost`): notebook 02's SAT (pre-trained
    #: MiniLM + CRF; ``sat_tagger``: its build_tagger overrides) trained without DP on the sentences of
    #: the ``sat_dp_recipe`` curve, against that recipe's DP runs at ``member_epsilon``
    sat_dp_recipe: str | None = "minilm"
    sat_tagger: dict[str, Any] = field(default_factory=lambda: {"finetune_layers": None})
    sat_epochs: float | None = None  # None: ``epochs``
    sat_lr: float = 3e-4

    def check(self) -> None:
        from .dp_recipes import RECIPES

        unknown = sorted({*self.recipes, *([self.member_recipe] if self.member_recipe else []),
                          *([self.sat_dp_recipe] if self.sat_dp_recipe else [])} - set(RECIPES))
        if unknown:
            raise ValueError(f"ahmed_dp: unknown recipe(s) {unknown}; choose from {', '.join(RECIPES)}")
        if not self.member_epsilon > 0:
            raise ValueError(f"ahmed_dp: member_epsilon must be > 0, got {self.member_epsilon}")
        if self.recipe_seeds < 1:
            raise ValueError(f"ahmed_dp: recipe_seeds must be >= 1, got {self.recipe_seeds}")
        if self.sat_dp_recipe and RECIPES[self.sat_dp_recipe].kind != "minilm":
            raise ValueError(f"ahmed_dp: sat_dp_recipe must be a recipe of the pre-trained encoder (kind minilm), "
                             f"got {self.sat_dp_recipe!r}")


PROFILE_PARAMS: dict[str, DPParams] = profiles(DPParams, {
    "smoke": DPParams(
        tagger=dict(word_dim=16, char_emb_dim=8, char_hidden=8, layers=1, heads=2, ff_hidden=32),
        patients=30,
        epochs=2,
        batch_size=8,
        curve_noises=(1.0,),
        train_sentence_rate=0.15,  # sites: 335 / 236 / 637 sentences -> ~50 / 35 / 96
        curve_sentence_rate=0.04,  # 1,208 sentences -> ~48
        max_eval_documents=4,
        fine_tune_per_target=1,
        member_recipe="minilm",
        recipes=("minilm", "synthetic_minilm"),
        recipe_epsilons=(8.0, math.inf),
        recipe_seeds=1,
        recipe_epochs=1,
        sat_tagger={"finetune_layers": 0, "layers": [1]},
        sat_epochs=1,
    ),
    "cpu": DPParams(
        tagger=dict(word_dim=48, char_emb_dim=16, char_hidden=16, layers=2, heads=4, ff_hidden=128),
        patients=150,
        epochs=3,
        batch_size=16,
        curve_noises=(0.25, 0.55, 1.0),
        train_sentence_rate=0.35,  # sites: 3,031 / 1,138 / 2,616 sentences -> ~1,060 / 400 / 916
        curve_sentence_rate=0.15,  # 6,785 sentences -> ~1,018
        max_eval_documents=60,
        fine_tune_per_target=1,  # 3 fine-tunings instead of 6 (each ~1-4 min on 2 loaded cores)
        member_recipe="minilm",
        recipes=("minilm", "synthetic_minilm"),
        recipe_seeds=2,
        recipe_epochs=10,  # the recipe's 30 at the nursing notes' scale; 10 keeps notebook 04 within ~30 min
        # notebook 02's cpu SAT (top 2 of MiniLM's 6 layers fine-tuned), one epoch over the recipe's
        # ~3,000 sentences: about 2 minutes on one thread, what notebook 04's 40-minute budget leaves
        sat_tagger={"finetune_layers": 2},
        sat_epochs=1,
    ),
    "paper": DPParams(tagger={}, patients=None, epochs=100, batch_size=16, member_recipe="minilm",
                      recipes=("minilm", "synthetic_minilm", "glove"), recipe_seeds=3),
})


def params_for(profile: str, **overrides: Any) -> DPParams:
    """The profile's parameters with ``overrides`` (:meth:`StudyParams.resolve`)."""
    return DPParams.resolve(profile, **overrides)


@dataclass
class SiteData:
    name: str
    train: list  # Documents
    dev: list
    test: list


def prepare_sites(profile: str = "cpu", seed: int = 0, params: DPParams | None = None) -> list[SiteData]:
    """Three (``n_sites``) synthetic hospitals, each split by patient into train/dev/test."""
    params = params or params_for(profile)
    n = params.patients or get_profile(profile).patients
    docs = generate(patients=n, sites=params.n_sites, seed=seed)
    sites = []
    for name in sorted({d.site for d in docs}):
        part = [d for d in docs if d.site == name]
        sp = split_by_patient(part, (0.6, 0.1, 0.3), seed=derive_seed(seed, "site-split", name))
        if not (sp.train and sp.test):
            raise ValueError(f"site {name} has too few patients to split ({len(part)} documents)")
        sites.append(
            SiteData(
                name,
                list(sp.train),
                list(sp.dev),
                subsample(list(sp.test), params.max_eval_documents, derive_seed(seed, "eval", name)),
            )
        )
    return sites


def epsilon_table(sizes: dict[str, int], params: DPParams | None = None, accountants=("prv", "rdp", "gdp")):
    """Table 5.3 analog as a DataFrame: ε per data set (number of training sequences), σ and
    accountant, with the thesis' batch size 16, 100 epochs and δ = 1e-5."""
    params = params or DPParams()
    rows = table_5_3(
        sizes, params.table_noises, batch_size=16, epochs=100, delta=1e-5, accountants=tuple(accountants)
    )
    df = pd.DataFrame([r.to_dict() for r in rows])
    return df.pivot_table(index=["dataset", "n", "noise_multiplier"], columns="accountant", values="epsilon")


def thesis_sequence_table(accountants=("rdp",)):
    """For each row of the thesis' Table 5.3, the N (training sequences) reproducing its ε."""
    return pd.DataFrame(thesis_sequence_counts(tuple(accountants))).drop(columns=["note"])


def _sentences(docs, rate: float | None, seed: int, keep_rate: float | None = None):
    return _thin_and_subsample(tagged_sentences(docs, SCHEME, ENCODING, "default"), rate, seed, keep_rate)


def _thin_and_subsample(sents, rate: float | None, seed: int, keep_rate: float | None):
    """Non-empty sentences, PHI-free ones thinned (``keep_rate``), then each kept with
    probability ``rate``; both by per-sentence coins keyed by the sentence (seeded keys), so
    one sentence more or less changes no other decision."""
    sents = [s for s in sents if s.tokens]
    if keep_rate is not None:
        sents = thin_negatives(sents, keep_rate, derive_seed(seed, "dp-thin"))
    if rate is not None:
        sents = keyed_subsample(sents, rate, derive_seed(seed, "train-subsample"))
    return sents


def _recipe(params: DPParams, name: str, corpus: str = "synthetic"):
    """Recipe ``name`` of :data:`~deidlib.studies.dp_recipes.RECIPES` with ``params.recipe_epochs``;
    a recipe with public pre-training pre-trains on the synthetic corpus of the study's profile,
    its spans aligned to the private ``corpus``' guideline ("physionet" for the nursing notes,
    else "i2b2": the synthetic sites' own)."""
    from .dp_recipes import RECIPES, with_overrides

    r = RECIPES[name]
    if r.pretrain is not None:
        r = with_overrides(r, pretrain_profile=params.profile,
                           guideline="physionet" if corpus == "physionet" else "i2b2")
    return with_overrides(r, epochs=params.recipe_epochs) if params.recipe_epochs is not None else r


def member_recipe(params: DPParams):
    """The :class:`~deidlib.studies.dp_recipes.Recipe` of the members (``params.member_recipe``,
    with ``recipe_epochs``), or ``None`` for the thesis' tagger."""
    return None if params.member_recipe is None else _recipe(params, params.member_recipe)


def _published_member(train_docs, dev_docs, params: DPParams, *, seed: int, base=None,
                      progress: bool = False) -> dict[str, Any]:
    """A member of the ensemble tables (or its fine-tuning, with ``base``): the members'
    recipe at ``params.member_epsilon`` (all its sentences: the recipe thins or not by
    itself), or the thesis' tagger at σ = ``params.member_noise`` (:func:`train_member`)."""
    from .dp_recipes import train_recipe

    if params.member_recipe is None:
        return train_member(train_docs, dev_docs, params, noise_multiplier=params.member_noise, seed=seed,
                            base=base, progress=progress)
    m = train_recipe(member_recipe(params), train_docs, epsilon=params.member_epsilon, seed=seed,
                     delta=params.delta, accountant=params.accountant, base=base, progress=progress,
                     secure=False)  # reproducible study runs, as train_member; stated in the ledger (rng_note)
    return {"tagger": m["tagger"], "history": {}, "ledger": m["ledger"], "seconds": m["seconds"],
            "sentences": m["sentences"]}


def train_member(
    train_docs,
    dev_docs,
    params: DPParams,
    *,
    noise_multiplier: float | None,
    seed: int = 0,
    base=None,
    progress: bool = False,
    sentence_rate: float | None = None,
) -> dict[str, Any]:
    """Train one DP model on ``train_docs`` (σ = ``noise_multiplier``; ``None`` = non-private,
    the ordinary trainer with the same epochs/lot size). ``base``: a trained tagger to fine-tune
    (its featurizer is kept). ``sentence_rate``: the fraction of sentences to train on (default
    ``params.train_sentence_rate``). DP-SGD runs with seeded noise and lots (``secure=False``,
    reproducible; the ledger's ``rng_note`` says the guarantee does not hold against anyone
    holding the seed). Returns {"tagger", "history", "ledger", "seconds", "sentences"}."""
    t0 = time.perf_counter()
    rate = params.train_sentence_rate if sentence_rate is None else sentence_rate
    if base is None:
        sents, tagger = prepare_tagger(
            params.kind,
            train_docs,
            scheme=SCHEME,
            encoding=ENCODING,
            embeddings=params.embeddings,
            seed=seed,
            **params.tagger,
        )
        sents = _thin_and_subsample(sents, rate, seed, params.negative_keep_rate)
    else:
        tagger = copy.deepcopy(base)
        sents = _sentences(train_docs, rate, seed, params.negative_keep_rate)
    if noise_multiplier is None:
        hist = train(
            tagger,
            sents,
            None,
            None,
            epochs=max(1, round(params.epochs)),
            batch_size=params.batch_size,
            optimizer=params.optimizer,
            lr=params.lr,
            clip=params.max_grad_norm,
            seed=seed,
            progress=progress,
        )
        ledger = None
    else:
        hist, ledger = train_dp(
            tagger,
            sents,
            None,
            None,
            epochs=params.epochs,
            batch_size=params.batch_size,
            noise_multiplier=noise_multiplier,
            delta=params.delta,
            max_grad_norm=params.max_grad_norm,
            accountant=params.accountant,
            optimizer=params.optimizer,
            lr=params.lr,
            seed=seed,
            progress=progress,
            eval_every=10**9,
            secure=False,  # reproducible study runs; stated in the ledger (rng_note)
        )
    return {
        "tagger": tagger,
        "history": hist.to_dict(),
        "ledger": ledger,
        "seconds": time.perf_counter() - t0,
        "sentences": len(sents),
    }


def _prf(tagger, docs) -> dict[str, float]:

    p, r, f = evaluate_tagger(tagger, docs)
    return {"precision": p, "recall": r, "f1": f}


def privacy_utility_curve(train_docs, test_docs, params: DPParams, *, seed: int = 0, progress: bool = False):
    """F1 vs ε: one model per σ in ``params.curve_noises`` plus a non-private one (ε = ∞)."""
    rows = []
    for s in (None, *params.curve_noises):
        m = train_member(
            train_docs, None, params, noise_multiplier=s, seed=seed, progress=progress,
            sentence_rate=1.0 if params.curve_sentence_rate is None else params.curve_sentence_rate,
        )
        led = m["ledger"]
        rows.append(
            {
                "noise_multiplier": s if s is not None else 0.0,
                "epsilon": led.epsilon if led else math.inf,
                "delta": params.delta,
                "steps": led.steps if led else None,
                "sentences": m["sentences"],
                "seconds": m["seconds"],
                **_prf(m["tagger"], test_docs),
            }
        )
    return pd.DataFrame(rows)


def scenario_tables(
    sites: Sequence[SiteData],
    members: dict[str, dict[str, Any]],
    rules=(("minimality", None), ("majority", None)),
):
    """Tables 5.1 (scenario A) and 5.2 (scenario B) analogs, one row per (target site, model).

    Scenario A: for each target site, the members trained on the *other* sites alone and
    their ensemble under each rule. Scenario B: the target's own member alone, and the
    ensemble of all members. Also the precision/recall of every k-of-n rule (scenario B)."""
    preds = {
        name: {s.name: predict_documents(m["tagger"], s.test) for s in sites} for name, m in members.items()
    }
    a_rows, b_rows, k_rows = [], [], []

    def score(docs, gold):
        p, r, f = binary_token_prf(gold, docs)
        return {"precision": p, "recall": r, "f1": f}

    for t in sites:
        others = [n for n in members if n != t.name]
        for n in others:
            a_rows.append({"target": t.name, "model": n, **score(preds[n][t.name], t.test)})
        for rule, k in rules:
            agg = aggregate_documents([preds[n][t.name] for n in others], rule, k=k)
            a_rows.append(
                {"target": t.name, "model": f"ensemble({'+'.join(others)}) {rule}", **score(agg, t.test)}
            )
        if t.name in members:
            b_rows.append(
                {"target": t.name, "model": f"own {t.name}", **score(preds[t.name][t.name], t.test)}
            )
        names = list(members)
        for rule, k in rules:
            agg = aggregate_documents([preds[n][t.name] for n in names], rule, k=k)
            b_rows.append({"target": t.name, "model": f"ensemble(all) {rule}", **score(agg, t.test)})
        for rname, (p, r, f) in rule_scores(t.test, [preds[n][t.name] for n in names]).items():
            k_rows.append({"target": t.name, "rule": rname, "precision": p, "recall": r, "f1": f})
    return pd.DataFrame(a_rows), pd.DataFrame(b_rows), pd.DataFrame(k_rows)


def fine_tuning_table(
    sites: Sequence[SiteData],
    members: dict[str, dict[str, Any]],
    params: DPParams,
    *,
    seed: int = 0,
    progress: bool = False,
):
    """Appendix A.3 analog: for each target site, a DP model pre-trained on each other site,
    fine-tuned with DP-SGD on the target's training data (the members' recipe when
    ``member_recipe`` is set); ε of the fine-tuning phase (the target's data enter only there)."""
    rows = []
    for t in sites:
        others = [n for n in members if n != t.name][: params.fine_tune_per_target]
        for n in others:
            ft = _published_member(t.train, None, params, seed=seed, base=members[n]["tagger"], progress=progress)
            rows.append(
                {
                    "target": t.name,
                    "model": f"init-{n}",
                    "epsilon": ft["ledger"].epsilon,
                    **_prf(ft["tagger"], t.test),
                }
            )
    return pd.DataFrame(rows)


def recipe_curves(train_docs, test_docs, params: DPParams, *, seed: int = 0, progress: bool = False,
                  corpus: str = "synthetic"):
    """F1 vs ε of every recipe in ``params.recipes`` (:func:`deidlib.studies.dp_recipes.recipe_curve`:
    target ε in ``recipe_epsilons``, seeds ``seed … seed + recipe_seeds − 1``), one DataFrame.
    ``corpus`` names the private corpus (the guideline a public pre-training aligns to)."""
    from .dp_recipes import recipe_curve

    frames = []
    for name in params.recipes:
        frames.append(recipe_curve(_recipe(params, name, corpus), train_docs, test_docs,
                                   epsilons=params.recipe_epsilons,
                                   seeds=range(seed, seed + params.recipe_seeds), delta=params.delta,
                                   accountant=params.accountant, progress=progress))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


#: what each model of :func:`sat_dp_cost` trains and what DP-SGD makes private
SAT_ROLES = {
    "non-private SAT": "notebook 02's self-attention tagger (pre-trained MiniLM + CRF), no DP",
    "recipe without DP": "the DP recipe's model, same lots and optimiser, no noise, no clipping",
    "DP SAT": "the DP recipe's model under DP-SGD",
}


def sat_dp_cost(train_docs, test_docs, params: DPParams, curves: pd.DataFrame, *, seed: int = 0,
                progress: bool = False) -> pd.DataFrame:
    """Table 5.3's DP cost with the self-attention tagger (SAT): one row per model and seed.

    * ``non-private SAT``: notebook 02's SAT, all-MiniLM-L6-v2 with a CRF (``params.sat_tagger``:
      cpu fine-tunes its top two layers; paper end to end), trained *without* DP for
      ``sat_epochs`` at ``sat_lr`` on exactly the sentences the ``sat_dp_recipe`` recipe trains on
      (the same PHI-free thinning, same seed);
    * ``recipe without DP`` and ``DP SAT``: that recipe's rows of the F1-vs-ε ``curves``
      (:func:`recipe_curves`) at ε = ∞ and at ``member_epsilon``, every seed.

    What is private: the DP variant of a pre-trained encoder trains only what the recipe trains
    (:func:`deidlib.studies.dp_recipes.restrict_to_recipe`: for ``minilm``, the head on top of the
    frozen encoder: casing embedding, convolution, output layer, CRF); the MiniLM encoder keeps its
    public pre-trained weights and sees no private gradient. The ``private`` column lists those
    parameters, ``trained_parameters`` counts them. The DP cost is then ``non-private SAT − DP SAT``
    (what going private costs against notebook 02's tagger) and ``recipe without DP − DP SAT``
    (what DP-SGD alone costs). Rows are empty when the recipe's curve is not in ``curves``."""
    from ..corpus.labels import thin_negatives
    from .dp_recipes import build_recipe_tagger, restrict_to_recipe

    name = params.sat_dp_recipe
    if not name or not len(curves) or name not in set(curves.recipe):
        return pd.DataFrame()
    recipe = _recipe(params, name)
    _, dp_tagger = build_recipe_tagger(recipe, train_docs[:1], seed=seed)
    private = restrict_to_recipe(dp_tagger, recipe)
    n_private = sum(p.numel() for n, p in dp_tagger.named_parameters() if n in set(private))
    heads = sorted({n.rsplit(".", 1)[0] for n in private})
    rows = []
    c = curves[curves.recipe == name]
    for role, eps in (("recipe without DP", math.inf), ("DP SAT", params.member_epsilon)):
        for _, r in c[c.target_epsilon == eps].iterrows():
            rows.append({"role": role, "model": f"{name} recipe", "seed": int(r.seed), "epsilon": float(r.epsilon),
                         "precision": r.test_precision, "recall": r.test_recall, "f1": r.test_f1,
                         "trained_parameters": n_private,
                         "private": ", ".join(heads) if role == "DP SAT" else "nothing (no DP)",
                         "sentences": int(r.sentences), "seconds": r.train_seconds})
    t0 = time.perf_counter()
    sents, tagger = prepare_tagger("minilm", train_docs, scheme=SCHEME, encoding=ENCODING, embeddings=None,
                                   seed=seed, **params.sat_tagger)
    sents = [x for x in sents if x.tokens]
    if recipe.negative_keep_rate is not None:  # the recipe's own thinning (train_recipe), same coins
        sents = thin_negatives(sents, recipe.negative_keep_rate, derive_seed(seed, "dp-thin"))
    epochs = params.sat_epochs if params.sat_epochs is not None else params.epochs
    train(tagger, sents, None, None, epochs=max(1, round(epochs)), batch_size=16, optimizer="adam",
          lr=params.sat_lr, clip=1.0, seed=seed, progress=progress)
    ft = params.sat_tagger.get("finetune_layers")
    rows.insert(0, {"role": "non-private SAT",
                    "model": "MiniLM + CRF, " + ("end to end" if ft is None else f"top {ft} layers fine-tuned"),
                    "seed": seed, "epsilon": math.inf, **_prf(tagger, test_docs),
                    "trained_parameters": sum(p.numel() for p in tagger.parameters() if p.requires_grad),
                    "private": "nothing (no DP)", "sentences": len(sents), "seconds": time.perf_counter() - t0})
    return pd.DataFrame(rows)


def dp_costs(sat_dp: pd.DataFrame) -> pd.DataFrame:
    """The DP costs of :func:`sat_dp_cost`'s rows in F1 percentage points: ``non-private SAT − DP SAT``
    and ``recipe without DP − DP SAT``, per DP seed (the non-private SAT's mean over its seeds;
    the recipe paired on the seed), as mean, min and max over the DP seeds and their number."""
    if sat_dp is None or not len(sat_dp):
        return pd.DataFrame(columns=["cost", "mean", "min", "max", "n"])
    f1 = {role: d.set_index("seed").f1 * 100 for role, d in sat_dp.groupby("role")}
    dp = f1.get("DP SAT", pd.Series(dtype=float))
    out = []
    for cost, ref in (("non-private SAT − DP SAT", "non-private SAT"), ("recipe without DP − DP SAT",
                                                                        "recipe without DP")):
        r = f1.get(ref)
        if r is None or not len(dp):
            continue
        gaps = (float(r.mean()) - dp) if ref == "non-private SAT" else (r - dp).dropna()
        out.append({"cost": cost, "mean": float(gaps.mean()), "min": float(gaps.min()), "max": float(gaps.max()),
                    "n": int(len(gaps))})
    return pd.DataFrame(out)


class DPStudyResults(TypedDict):
    """What :func:`run_study` returns (tables as DataFrames; :func:`results_json` makes it JSON-able)."""

    params: dict[str, Any]  #: asdict(DPParams)
    profile: str
    corpus: str
    seed: int
    epsilon_table: pd.DataFrame  #: Table 5.3 analog
    thesis_sequences: pd.DataFrame
    curve: pd.DataFrame  #: F1 vs ε
    recipe_curves: pd.DataFrame  #: F1 vs ε per recipe and seed (docs/dp-recipes.md)
    sat_dp: pd.DataFrame  #: Table 5.3's DP cost with the self-attention tagger (sat_dp_cost)
    members: dict[str, dict[str, Any]]  #: per site: epsilon, ledger (dict), sentences, seconds
    scenario_a: pd.DataFrame  #: Table 5.1 analog
    scenario_b: pd.DataFrame  #: Table 5.2 analog
    rules: pd.DataFrame  #: k-of-n aggregation
    fine_tuning: pd.DataFrame | None  #: Table A.3 analog
    guarantee: dict[str, Any]  #: the ensemble's (ε, δ) and composition
    fingerprint: str
    seconds: float


def run_study(
    params: DPParams,
    *,
    corpus: str = "synthetic",
    data_dir: str | None = None,
    seed: int = 0,
    device: str = "cpu",
    progress: bool = False,
    fine_tune: bool = True,
) -> DPStudyResults:
    """Everything of the notebook: ε tables, the F1-vs-ε curve (on ``corpus``), members per
    synthetic site, scenario A/B tables, rule trade-off, fine-tuning, guarantee. Returns
    DataFrames and JSON-able records (:func:`results_json`). With a real ``corpus``
    (``"physionet"``: the thesis' nursing notes) the curve is computed on it and it joins the
    three synthetic sites as a fourth member / target (its ε table row counts its sentences).
    Outputs computed on real data must not be committed (they are aggregate scores, but the
    repository holds synthetic results only). ``params`` come from :func:`params_for` /
    :meth:`DPParams.resolve` (resolved once, by the caller)."""
    if device != "cpu":
        raise ValueError("the DP study runs on CPU here (device='cpu')")
    if not isinstance(params, DPParams):
        raise TypeError("run_study takes resolved DPParams (ahmed_dp.params_for(profile, ...))")
    profile = params.profile
    t0 = time.perf_counter()
    sites = prepare_sites(profile, seed, params)
    if corpus == "synthetic":
        cur_train = [d for s in sites for d in s.train]
        cur_test = [d for s in sites for d in s.test]
    else:
        # a real corpus (the PhysioNet nursing notes) is the curve's data set and one more member/site
        sp = load_corpus(corpus, data_dir=data_dir, profile=profile, seed=seed)
        cur_train, cur_test = list(sp.train), subsample(list(sp.test), params.max_eval_documents, seed)
        sites.append(SiteData(corpus, cur_train, list(sp.dev), cur_test))
    site_sizes = {s.name: len(_sentences(s.train, None, seed)) for s in sites}
    out: DPStudyResults = {"params": asdict(params), "profile": profile, "corpus": corpus, "seed": seed}  # type: ignore[typeddict-item]
    out["epsilon_table"] = epsilon_table(
        site_sizes, params, accountants=("rdp", "gdp") if profile == "smoke" else ("prv", "rdp", "gdp")
    )
    out["thesis_sequences"] = thesis_sequence_table()
    out["curve"] = privacy_utility_curve(cur_train, cur_test, params, seed=seed, progress=progress)
    out["recipe_curves"] = recipe_curves(cur_train, cur_test, params, seed=seed, progress=progress, corpus=corpus)
    out["sat_dp"] = sat_dp_cost(cur_train, cur_test, params, out["recipe_curves"], seed=seed, progress=progress)
    members = {s.name: _published_member(s.train, s.dev, params, seed=seed, progress=progress) for s in sites}
    out["members"] = {
        n: {
            "epsilon": m["ledger"].epsilon,
            "ledger": m["ledger"].to_dict(),
            "sentences": m["sentences"],
            "seconds": m["seconds"],
        }
        for n, m in members.items()
    }
    out["scenario_a"], out["scenario_b"], out["rules"] = scenario_tables(sites, members)
    out["fine_tuning"] = (
        fine_tuning_table(sites, members, params, seed=seed, progress=progress) if fine_tune else None
    )
    g = ensemble_guarantee(
        [(m["ledger"].epsilon, m["ledger"].delta, m["ledger"].unit) for m in members.values()]
    )
    out["guarantee"] = {
        "epsilon": g.epsilon, "delta": g.delta, "composition": g.composition, "unit": g.unit,
        "text": f"{g}; seeded noise (reproducible study): does not hold against anyone holding the seed",
    }
    out["fingerprint"] = fingerprint_documents([d for s in sites for d in (*s.train, *s.dev, *s.test)])
    out["seconds"] = time.perf_counter() - t0
    return out


def results_json(out: dict[str, Any]) -> dict[str, Any]:
    """JSON-able copy of :func:`run_study`'s output (DataFrames as records; :func:`deidlib.reporting.json_ready`)."""
    return json_ready(out)


@style()
def plot_curve(curve, title: str = "F1 vs ε", epochs: int | None = None, seeds: int = 1):
    """F1 vs ε (log x), one point per σ, the non-private model as a dashed line. The title
    always states the scale (epochs, training sentences, seeds): a point near 0 from a short
    run must not read as a property of DP-SGD."""
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    dp = curve[curve.epsilon.apply(math.isfinite)].sort_values("epsilon")
    ax.plot(dp.epsilon, dp.f1, "o-", label="DP-SGD")
    for _, r in dp.iterrows():
        ax.annotate(
            f"σ={r.noise_multiplier:g}",
            (r.epsilon, r.f1),
            textcoords="offset points",
            xytext=(4, 4),
            fontsize=8,
        )
    base = curve[~curve.epsilon.apply(math.isfinite)]
    if len(base):
        ax.axhline(float(base.f1.iloc[0]), color="k", ls="--", label="non-private")
    ax.set_xscale("log")
    ax.set_xlabel(f"ε (δ = {curve.delta.iloc[0]:g})")
    ax.set_ylabel("binary token F1")
    n = int(curve.sentences.max()) if "sentences" in curve else None
    scale = f"{epochs if epochs is not None else '?'} epochs, ≤{n} training sentences, {seeds} seed(s)"
    ax.set_title(f"{title}\n({scale})", fontsize=9)
    ax.legend()
    fig.tight_layout()
    return fig


@style()
def plot_recipe_curves(df, title: str = "F1 vs ε per DP recipe", thesis_points=None):
    """F1 vs ε (log x) per recipe: the median over seeds with the min–max range as error bars
    (the number of seeds in the legend), the recipe's ε = ∞ run (same lots and optimiser, no
    noise, no clipping) as a dotted line, a recipe's public pre-training alone (its ε = 0 rows)
    as a dashed line, and the thesis' points (nursing notes) as stars.
    The title states the scale (epochs, lot, training sentences)."""
    from .dp_recipes import RECIPES, THESIS_POINTS

    fig, ax = plt.subplots(figsize=(6.2, 4.0))
    scale = []
    for i, (name, d) in enumerate(df.groupby("recipe", sort=False)):
        color = f"C{i}"
        dp = d[d.target_epsilon.apply(math.isfinite) & (d.target_epsilon > 0)]
        g = dp.groupby("target_epsilon").agg(eps=("epsilon", "median"), f1=("test_f1", "median"),
                                             lo=("test_f1", "min"), hi=("test_f1", "max"), n=("test_f1", "size"))
        n = int(g.n.max()) if len(g) else 0
        ax.errorbar(g.eps, g.f1, yerr=[g.f1 - g.lo, g.hi - g.f1], fmt="o-", color=color, capsize=3,
                    label=f"{name} ({n} seed{'s' if n != 1 else ''})")
        base = d[~d.target_epsilon.apply(math.isfinite)]
        if len(base):
            ax.axhline(float(base.test_f1.median()), color=color, ls=":", lw=1,
                       label=f"{name}, same lots without DP")
        public = d[d.target_epsilon == 0]
        if len(public):
            ax.axhline(float(public.test_f1.median()), color=color, ls="--", lw=1,
                       label=f"{name}, public pre-training alone (ε = 0)")
        r = RECIPES.get(name)
        epochs = r.epochs if r is not None else "?"
        if "steps" in d and len(dp):
            lot = int(round(float(dp.lot.median())))
            scale.append(f"{name}: lot {lot}, {int(dp.steps.median())} steps, {int(d.sentences.max())} sent.")
        elif r is not None:
            scale.append(f"{name}: {epochs} epochs")
    pts = THESIS_POINTS if thesis_points is None else thesis_points
    if pts:
        ax.plot([p["epsilon"] for p in pts], [p["f1"] for p in pts], "k*", ms=11,
                label="thesis, nursing notes (σ 0.25 / 0.55)")
    ax.set_xscale("log")
    ax.set_ylim(-0.02, 1.02)
    delta = float(df.delta.iloc[0]) if len(df) else 1e-5
    ax.set_xlabel(f"ε (δ = {delta:g}, per {df.unit.iloc[0] if len(df) else 'sentence'})")
    ax.set_ylabel("binary token F1 (test)")
    ax.set_title(f"{title}\n({'; '.join(scale)})", fontsize=8)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig


@style()
def plot_rules(rules, scale: str = ""):
    """Precision vs recall of the k-of-n aggregation rules per target site (1/n = minimality);
    ``scale`` (profile, corpus size, epochs, seed) is stated under the title."""
    from .labels import place_labels

    fig, ax = plt.subplots(figsize=(6.2, 4.4))
    pts = []
    for t, d in rules.groupby("target"):
        d = d[d.rule.str.contains("_of_")]
        ax.plot(d.recall, d.precision, "o-", label=t)
        pts += [(r.recall, r.precision, r.rule.replace("_of_", "/")) for r in d.itertuples()]
    ax.set_xlabel("recall")
    ax.set_ylabel("precision")
    ax.set_title("k-of-n aggregation (1/n = minimality)" + (f"\n{scale}" if scale else ""), fontsize=9)
    ax.legend(title="target site", fontsize=7)
    fig.tight_layout()
    if pts:
        xs, ys, names = zip(*pts)
        place_labels(ax, list(xs), list(ys), list(names), fontsize=7)
    return fig
