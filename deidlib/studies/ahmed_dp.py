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
* **Privacy unit** is the sentence (the thesis' "sequence"); ``unit="patient"`` is available.
* **Vocabulary.** Each site's word vocabulary comes from its own training sentences, as
  in the thesis; the vocabulary itself is *not* protected by DP-SGD (a published model's
  word list can reveal rare names). A deployment must build it from public text; we state
  it rather than hide it.
* **Epochs / batch.** The thesis uses lot size 16 and 100 epochs; profiles use fewer
  epochs (the ε table uses the thesis' values).
* **Scenario A** (owner without labels): for each site t, the members trained on the two
  other sites, alone and aggregated. **Scenario B** (owner with labels): the owner's own
  DP model, and the ensemble of all three. **Fine-tuning** (appendix A.3/A.4 variation):
  a DP model pre-trained on another site, fine-tuned with DP-SGD on the owner's data
  (the pre-trained model's vocabulary is kept; owner words outside it map to UNK).
* **Guarantee.** Members are trained on disjoint patients (different sites), so the
  ensemble is (max ε_i, max δ)-DP by parallel composition
  (:func:`deidlib.privacy.ensemble.ensemble_guarantee`).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

__all__ = [
    "PROFILE_PARAMS",
    "DPParams",
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
    "plot_rules",
    "results_json",
]

SCHEME, ENCODING = "binary", "BIO"


@dataclass(frozen=True)
class DPParams:
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
    max_train_sentences: int | None = None  # per site (or corpus for the curve)
    #: keep every PHI sentence and each PHI-free one with this probability (None: all), before
    #: the cap; per-sentence coins keep the DP guarantee valid for the full set (thin_negatives)
    negative_keep_rate: float | None = None
    max_eval_docs: int | None = None
    embeddings: str | None = None  # None: random init (word2vec would read the training text)
    table_noises: tuple[float, ...] = (0.25, 0.45, 0.55)
    fine_tune_per_target: int | None = None  # pre-trained members fine-tuned per target (None: all others)


PROFILE_PARAMS: dict[str, DPParams] = {
    "smoke": DPParams(
        tagger=dict(word_dim=16, char_emb_dim=8, char_hidden=8, layers=1, heads=2, ff_hidden=32),
        patients=30,
        epochs=2,
        batch_size=8,
        curve_noises=(1.0,),
        max_train_sentences=48,
        max_eval_docs=4,
        fine_tune_per_target=1,
    ),
    "cpu": DPParams(
        tagger=dict(word_dim=48, char_emb_dim=16, char_hidden=16, layers=2, heads=4, ff_hidden=128),
        patients=150,
        epochs=3,
        batch_size=16,
        curve_noises=(0.25, 0.55, 1.0),
        max_train_sentences=1000,
        max_eval_docs=60,
        fine_tune_per_target=1,  # 3 fine-tunings instead of 6 (each ~1-4 min on 2 loaded cores)
    ),
    "paper": DPParams(tagger={}, patients=None, epochs=100, batch_size=16),
}


def params_for(profile: str, **overrides: Any) -> DPParams:
    try:
        base = PROFILE_PARAMS[profile]
    except KeyError:
        raise ValueError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILE_PARAMS)}") from None
    kw = {k: v for k, v in overrides.items() if v is not None}
    unknown = set(kw) - set(DPParams.__dataclass_fields__)
    if unknown:
        raise ValueError(f"unknown ahmed_dp parameters: {sorted(unknown)}")
    if "tagger" in kw:
        kw["tagger"] = {**base.tagger, **kw["tagger"]}
    return replace(base, **kw)


@dataclass
class SiteData:
    name: str
    train: list  # Documents
    dev: list
    test: list


def _cap(items: list, n: int | None, seed: int) -> list:
    import numpy as np

    if n is None or len(items) <= n:
        return list(items)
    idx = np.sort(np.random.default_rng(seed).choice(len(items), n, replace=False))
    return [items[i] for i in idx]


def prepare_sites(profile: str = "cpu", seed: int = 0, params: DPParams | None = None) -> list[SiteData]:
    """Three (``n_sites``) synthetic hospitals, each split by patient into train/dev/test."""
    from ..corpus.splits import split_by_patient
    from ..profiles import get_profile
    from ..rng import derive_seed
    from ..synthetic import generate

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
                _cap(list(sp.test), params.max_eval_docs, derive_seed(seed, "eval", name)),
            )
        )
    return sites


def epsilon_table(sizes: dict[str, int], params: DPParams | None = None, accountants=("prv", "rdp", "gdp")):
    """Table 5.3 analog as a DataFrame: ε per data set (number of training sequences), σ and
    accountant, with the thesis' batch size 16, 100 epochs and δ = 1e-5."""
    import pandas as pd

    from ..privacy.accounting import table_5_3

    params = params or DPParams()
    rows = table_5_3(
        sizes, params.table_noises, batch_size=16, epochs=100, delta=1e-5, accountants=tuple(accountants)
    )
    df = pd.DataFrame([r.to_dict() for r in rows])
    return df.pivot_table(index=["dataset", "n", "noise_multiplier"], columns="accountant", values="epsilon")


def thesis_sequence_table(accountants=("rdp",)):
    """For each row of the thesis' Table 5.3, the N (training sequences) reproducing its ε."""
    import pandas as pd

    from ..privacy.accounting import thesis_sequence_counts

    return pd.DataFrame(thesis_sequence_counts(tuple(accountants))).drop(columns=["note"])


def _sentences(docs, cap: int | None, seed: int, keep_rate: float | None = None):
    from ..corpus.labels import tagged_sentences
    from ..rng import derive_seed

    sents = [s for s in tagged_sentences(docs, SCHEME, ENCODING, "default") if s.tokens]
    return _thin_and_cap(sents, cap, seed, keep_rate, derive_seed(seed, "train-cap"))


def _thin_and_cap(sents, cap: int | None, seed: int, keep_rate: float | None, cap_seed: int):
    """Non-empty sentences, PHI-free ones thinned (``keep_rate``), then capped."""
    from ..corpus.labels import thin_negatives
    from ..rng import derive_seed

    sents = [s for s in sents if s.tokens]
    if keep_rate is not None:
        sents = thin_negatives(sents, keep_rate, derive_seed(seed, "dp-thin"))
    return _cap(sents, cap, cap_seed)


def train_member(
    train_docs,
    dev_docs,
    params: DPParams,
    *,
    noise_multiplier: float | None,
    seed: int = 0,
    base=None,
    progress: bool = False,
) -> dict[str, Any]:
    """Train one DP model on ``train_docs`` (σ = ``noise_multiplier``; ``None`` = non-private,
    the ordinary trainer with the same epochs/lot size). ``base``: a trained tagger to fine-tune
    (its featurizer is kept). Returns {"tagger", "history", "ledger", "seconds", "sentences"}."""
    from ..privacy.dpsgd import train_dp
    from ..training import prepare_tagger, train

    t0 = time.perf_counter()
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
        sents = _thin_and_cap(sents, params.max_train_sentences, seed, params.negative_keep_rate, seed)
    else:
        tagger = copy.deepcopy(base)
        sents = _sentences(train_docs, params.max_train_sentences, seed, params.negative_keep_rate)
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
        )
    return {
        "tagger": tagger,
        "history": hist.to_dict(),
        "ledger": ledger,
        "seconds": time.perf_counter() - t0,
        "sentences": len(sents),
    }


def _prf(tagger, docs) -> dict[str, float]:
    from ..training import evaluate_tagger

    p, r, f = evaluate_tagger(tagger, docs)
    return {"precision": p, "recall": r, "f1": f}


def privacy_utility_curve(train_docs, test_docs, params: DPParams, *, seed: int = 0, progress: bool = False):
    """F1 vs ε: one model per σ in ``params.curve_noises`` plus a non-private one (ε = ∞)."""
    import math

    import pandas as pd

    rows = []
    for s in (None, *params.curve_noises):
        m = train_member(train_docs, None, params, noise_multiplier=s, seed=seed, progress=progress)
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
    import pandas as pd

    from ..privacy.ensemble import aggregate_documents, rule_scores
    from ..training import predict_documents

    preds = {
        name: {s.name: predict_documents(m["tagger"], s.test) for s in sites} for name, m in members.items()
    }
    a_rows, b_rows, k_rows = [], [], []
    from ..evaluation import binary_token_prf

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
    fine-tuned with DP-SGD on the target's training data; ε of the fine-tuning phase (the
    target's data enter only there)."""
    import pandas as pd

    rows = []
    for t in sites:
        others = [n for n in members if n != t.name][: params.fine_tune_per_target]
        for n in others:
            m = members[n]
            ft = train_member(
                t.train,
                None,
                params,
                noise_multiplier=params.member_noise,
                seed=seed,
                base=m["tagger"],
                progress=progress,
            )
            rows.append(
                {
                    "target": t.name,
                    "model": f"init-{n}",
                    "epsilon": ft["ledger"].epsilon,
                    **_prf(ft["tagger"], t.test),
                }
            )
    return pd.DataFrame(rows)


def run_study(
    profile: str = "cpu",
    corpus: str = "synthetic",
    data_dir: str | None = None,
    seed: int = 0,
    device: str = "cpu",
    progress: bool = False,
    fine_tune: bool = True,
    **overrides: Any,
) -> dict[str, Any]:
    """Everything of the notebook: ε tables, the F1-vs-ε curve (on ``corpus``), members per
    synthetic site, scenario A/B tables, rule trade-off, fine-tuning, guarantee. Returns
    DataFrames and JSON-able records (:func:`results_json`). With a real ``corpus``
    (``"physionet"``: the thesis' nursing notes) the curve is computed on it and it joins the
    three synthetic sites as a fourth member / target (its ε table row counts its sentences).
    Outputs computed on real data must not be committed (they are aggregate scores, but the
    repository holds synthetic results only)."""
    from ..datasets import load_corpus
    from ..privacy.ensemble import ensemble_guarantee

    if device != "cpu":
        raise ValueError("the DP study runs on CPU here (device='cpu')")
    params = params_for(profile, **overrides)
    t0 = time.perf_counter()
    sites = prepare_sites(profile, seed, params)
    if corpus == "synthetic":
        cur_train = [d for s in sites for d in s.train]
        cur_test = [d for s in sites for d in s.test]
    else:
        # a real corpus (the PhysioNet nursing notes) is the curve's data set and one more member/site
        sp = load_corpus(corpus, data_dir=data_dir, profile=profile, seed=seed)
        cur_train, cur_test = list(sp.train), _cap(list(sp.test), params.max_eval_docs, seed)
        sites.append(SiteData(corpus, cur_train, list(sp.dev), cur_test))
    site_sizes = {s.name: len(_sentences(s.train, None, seed)) for s in sites}
    out: dict[str, Any] = {"params": asdict(params), "profile": profile, "corpus": corpus, "seed": seed}
    out["epsilon_table"] = epsilon_table(
        site_sizes, params, accountants=("rdp", "gdp") if profile == "smoke" else ("prv", "rdp", "gdp")
    )
    out["thesis_sequences"] = thesis_sequence_table()
    out["curve"] = privacy_utility_curve(cur_train, cur_test, params, seed=seed, progress=progress)
    members = {
        s.name: train_member(
            s.train, s.dev, params, noise_multiplier=params.member_noise, seed=seed, progress=progress
        )
        for s in sites
    }
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
    g = ensemble_guarantee([(m["ledger"].epsilon, m["ledger"].delta) for m in members.values()])
    out["guarantee"] = {"epsilon": g.epsilon, "delta": g.delta, "composition": g.composition, "text": str(g)}
    out["seconds"] = time.perf_counter() - t0
    return out


def results_json(out: dict[str, Any]) -> dict[str, Any]:
    """JSON-able copy of :func:`run_study`'s output (DataFrames as records)."""
    import math

    import pandas as pd

    def conv(v):
        if isinstance(v, pd.DataFrame):
            return conv(v.reset_index().to_dict(orient="records"))
        if isinstance(v, dict):
            return {str(k): conv(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [conv(x) for x in v]
        if isinstance(v, float) and not math.isfinite(v):
            return str(v)
        return v

    return conv({k: v for k, v in out.items()})


def plot_curve(curve, title: str = "F1 vs ε"):
    import math

    import matplotlib.pyplot as plt

    from ..plotting import apply_style

    apply_style()
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
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    return fig


def plot_rules(rules):
    import matplotlib.pyplot as plt

    from ..plotting import apply_style

    apply_style()
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for t, d in rules.groupby("target"):
        d = d[d.rule.str.contains("_of_")]
        ax.plot(d.recall, d.precision, "o-", label=t)
        for _, r in d.iterrows():
            ax.annotate(
                r.rule.replace("_of_", "/"),
                (r.recall, r.precision),
                textcoords="offset points",
                xytext=(3, 3),
                fontsize=8,
            )
    ax.set_xlabel("recall")
    ax.set_ylabel("precision")
    ax.set_title("k-of-n aggregation (1/n = minimality)")
    ax.legend(title="target site")
    fig.tight_layout()
    return fig
