"""DP-SGD training of every tagger of :mod:`deidlib.models` (ahmed thesis §5.1.2, Algorithm 1;
Abadi et al. 2016): Poisson-sampled lots of privacy units, exact per-unit gradients, flat
clipping, Gaussian noise and a privacy ledger.

One step (:mod:`.gradients`): every unit (a sentence — the thesis' "sequence" — or a patient
with all of their sentences) joins the lot with probability ``q = batch_size / n_units``; its
gradient (the sum of its sentences' losses) is clipped to ``C`` over all trainable parameters;
``G = (Σ_u ḡ_u + N(0, σ² C² I)) / (q · n_units)``, then an ordinary optimiser step (Adam and
Nadam are post-processing of the noisy gradient). The accounting (:mod:`.accounting`, prv by
default) turns (σ, q, steps) into a :class:`~deidlib.privacy.ledger.PrivacyLedger`;
``target_epsilon`` calibrates σ for the planned steps.

Choices: per-unit gradients are computed exactly rather than with Opacus' hooks (which get the
char encoder, the CRF and the RNNs wrong for these taggers); under DP the recall penalty ρ
(thesis eq. 4.7–4.8) is computed per unit, so that no unit's contribution depends on another's.

Randomness: lots and noise come from the OS CSPRNG by default (``secure=True``,
:mod:`.secure`); ``secure=False`` derives them from ``seed`` for reproducible research runs,
and the ledger then carries :data:`~deidlib.privacy.ledger.SEEDED_NOTE` (the guarantee does
not hold against anyone who holds the seed).

What is released: ``train_dp``'s history holds only the privacy spent and scores on the
held-out documents passed to it, never a training loss or a step timing (un-noised statistics
of the private lots).

The methods, their measured speeds and the reasons behind each choice: docs/design/privacy.md.
``tests/privacy/test_dp_mutations.py`` shows that each privacy bug of this module is caught.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Sequence
from typing import Any, cast

import torch
from tqdm.auto import tqdm

from ..corpus.labels import TaggedSentence, gold_tags
from ..models.protocol import FeaturizerProtocol
from ..rng import derive_seed
from ..training.loop import make_optimizer
from ..training.predict import evaluate_tagger
from ..training.trainer import History, check_gold_paths
from .accounting import ACCOUNTANTS, MAX_NOISE_MULTIPLIER, noise_for_epsilon
from .gradients import _params, dp_step
from .ledger import DPPlan, PrivacyLedger
from .secure import SecureRandom

__all__ = ["train_dp", "patient_units"]

#: the privacy units DP-SGD can sample: one sentence, or one patient with all of their sentences
UNITS = ("sentence", "patient")


def patient_units(sentences: Sequence[TaggedSentence], docs) -> list[Hashable]:
    """The patient of every sentence (via its document id). A document without a patient id
    (``None`` or ``""``, the :class:`~deidlib.corpus.document.Document` default) is its own
    unit, keyed ``("document", id)`` so that it can equal no patient id (a conservative
    choice: never merges two people; it may split one person whose notes lack the id)."""
    pid = {d.id: (d.patient_id if d.patient_id else ("document", d.id)) for d in docs}
    missing = {s.doc_id for s in sentences} - set(pid)
    if missing:
        raise ValueError(f"no document for sentence doc ids {sorted(missing)[:5]}")
    return [pid[s.doc_id] for s in sentences]


def train_dp(
    tagger: torch.nn.Module,
    train_sentences: Sequence[TaggedSentence],
    dev_docs=None,
    test_docs=None,
    *,
    unit: str = "sentence",
    units: Sequence[Hashable] | None = None,
    epochs: float = 1,
    batch_size: int = 16,
    noise_multiplier: float | None = None,
    target_epsilon: float | None = None,
    delta: float = 1e-5,
    max_grad_norm: float = 1.0,
    accountant: str = "prv",
    optimizer: str = "sgd",
    lr: float = 0.1,
    seed: int = 0,
    device: str | torch.device = "cpu",
    method: str = "micro",
    eval_every: int = 1,
    progress: bool = True,
    history: list[tuple[float, float, int]] | None = None,
    secure: bool = True,
):
    """Train ``tagger`` in place with DP-SGD; returns ``(History, PrivacyLedger)``.

    ``unit="sentence"`` samples sentences (the thesis); ``unit="patient"`` samples the
    ``units`` keys (one per sentence, e.g. :func:`patient_units`) and treats all sentences of
    a patient as one example. ``batch_size`` is the *expected* lot size (q = batch_size /
    n_units), ``epochs`` sets the number of steps (round(epochs / q)). Give exactly one of
    ``noise_multiplier`` and ``target_epsilon``. ``history``: earlier DP phases on the same
    units (their ε composes; e.g. fine-tuning a model pre-trained on the same data).
    History records per epoch ``step``, ``epsilon`` and dev/test binary-token P/R/F1 of the
    held-out documents given; no training loss and no timing (un-noised statistics of the
    private lots: the time of a step grows with its lot's size and sentence lengths).
    ``secure=True`` (default) draws the lots and the noise from the OS CSPRNG
    (:class:`~deidlib.privacy.secure.SecureRandom`; not reproducible, ``seed`` then only fixes
    the initialisation and dropout, which the guarantee does not rely on). ``secure=False``
    derives them from ``seed`` (reproducible research runs): the guarantee then does not hold
    against anyone who holds the seed (the ledger's ``rng_note``). ``noise_multiplier=0``
    warns: no noise, ε = ∞.
    """
    _check_arguments(unit, accountant, train_sentences, noise_multiplier, target_epsilon)
    members = _unit_members(unit, units, len(train_sentences))
    n = len(members)
    if batch_size > n:
        raise ValueError(f"expected batch size {batch_size} exceeds the {n} privacy units")
    q = batch_size / n
    steps = max(1, round(epochs / q))
    if target_epsilon is not None:
        noise_multiplier = noise_for_epsilon(target_epsilon, q, steps, delta, accountant, history=history)
    if noise_multiplier is None:  # checked above: exactly one of the two is given
        raise ValueError("give exactly one of noise_multiplier and target_epsilon")
    plan = DPPlan(unit=unit, n_units=n, sample_rate=q, steps=steps, noise_multiplier=float(noise_multiplier),
                  max_grad_norm=float(max_grad_norm), delta=delta, accountant=accountant)
    ledger = PrivacyLedger.open(plan, target_epsilon=target_epsilon, history=history, secure_rng=secure)
    tagger.to(device)
    params = _params(tagger)
    opt = make_optimizer(params, optimizer, lr)
    fz = cast(FeaturizerProtocol, tagger.featurizer)  # every tagger module has one (models.protocol.Tagger)
    _check_gold(tagger, train_sentences)
    noise_gen, sampler = _noise_and_lots(secure, n, q, steps, seed)
    per_epoch = max(1, round(1 / q))
    hist = History()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        tagger.train()
        bar = tqdm(
            sampler,
            total=steps,
            desc=f"dp-sgd {getattr(tagger, 'kind', '')}",
            disable=not progress,
            unit="step",
        )
        for t, lot in enumerate(bar, start=1):
            lot = list(lot)
            groups: list[list[int]] | None
            if lot:
                sent_idx: list[int] = []
                groups = []
                for u in lot:
                    groups.append(list(range(len(sent_idx), len(sent_idx) + len(members[u]))))
                    sent_idx.extend(members[u])
                ss = [train_sentences[i] for i in sent_idx]
                batch = fz.encode([s.words for s in ss], [gold_tags(s) for s in ss]).to(device)
            else:
                batch, groups = None, None
            dp_step(
                tagger,
                batch,
                opt,
                max_grad_norm=max_grad_norm,
                noise_multiplier=noise_multiplier,
                denominator=q * n,
                groups=groups,
                generator=noise_gen,
                method=method,
            )
            ledger.steps = t
            if t % per_epoch == 0 or t == steps:
                ep = len(hist.epochs) + 1
                evaluate = ep % eval_every == 0 or t == steps
                hist.epochs.append(_epoch_record(tagger, ep, t, ledger if evaluate else None, dev_docs, test_docs,
                                                 device))
    ledger.epsilon = ledger.spent()
    return hist, ledger


def _check_arguments(unit, accountant, train_sentences, noise_multiplier, target_epsilon) -> None:
    """One-line errors for a wrong unit, accountant or noise setting; a warning for σ = 0."""
    if unit not in UNITS:
        raise ValueError(f"unknown privacy unit {unit!r}; choose one of {', '.join(UNITS)}")
    if accountant not in ACCOUNTANTS:
        raise ValueError(f"unknown accountant {accountant!r}; choose one of {', '.join(ACCOUNTANTS)}")
    if not train_sentences:
        raise ValueError("no training sentences")
    if (noise_multiplier is None) == (target_epsilon is None):
        raise ValueError("give exactly one of noise_multiplier and target_epsilon")
    if noise_multiplier is not None and not 0 <= noise_multiplier <= MAX_NOISE_MULTIPLIER:
        raise ValueError(f"noise_multiplier must lie in [0, {MAX_NOISE_MULTIPLIER:g}] (got {noise_multiplier}); "
                         "σ = ∞ adds infinite noise")
    if noise_multiplier is not None and noise_multiplier == 0:
        warnings.warn("noise_multiplier = 0: DP-SGD adds no noise, the model has no privacy guarantee (ε = ∞)",
                      UserWarning, stacklevel=3)


def _unit_members(unit: str, units: Sequence[Hashable] | None, n_sentences: int) -> list[list[int]]:
    """The training sentences of every privacy unit: one each, or all of a patient's."""
    if unit != "patient":
        return [[i] for i in range(n_sentences)]
    if units is None or len(units) != n_sentences:
        raise ValueError("unit='patient' needs `units`: one patient key per training sentence")
    keys: dict[Hashable, list[int]] = {}
    for i, u in enumerate(units):
        keys.setdefault(u, []).append(i)
    return list(keys.values())


def _check_gold(tagger: torch.nn.Module, train_sentences: Sequence[TaggedSentence]) -> None:
    """A constrained CRF cannot score an ill-formed gold tag sequence: a clear error first."""
    if not getattr(getattr(tagger, "crf", None), "constrained", False):
        return
    fz = cast(FeaturizerProtocol, tagger.featurizer)
    chunks = [list(range(i, min(i + 256, len(train_sentences)))) for i in range(0, len(train_sentences), 256)]
    encoded = [fz.encode([train_sentences[i].words for i in g], [gold_tags(train_sentences[i]) for i in g]) for g in chunks]
    check_gold_paths(tagger, encoded, chunks, train_sentences)


def _noise_and_lots(secure: bool, n: int, q: float, steps: int, seed: int):
    """The noise source and the Poisson lots: the OS CSPRNG (``secure``), else generators
    derived from ``seed`` (reproducible; no guarantee against whoever holds the seed)."""
    noise_gen: SecureRandom | torch.Generator
    if secure:
        noise_gen = SecureRandom()
        sampler = noise_gen.lots(n, q, steps)
    else:
        from opacus.utils.uniform_sampler import (
            UniformWithReplacementSampler,  # opacus takes seconds to import
        )

        sampler_gen = torch.Generator().manual_seed(derive_seed(seed, "dp-poisson") % 2**63)
        noise_gen = torch.Generator().manual_seed(derive_seed(seed, "dp-noise") % 2**63)
        sampler = UniformWithReplacementSampler(num_samples=n, sample_rate=q, generator=sampler_gen, steps=steps)
    return noise_gen, sampler


def _epoch_record(tagger, epoch: int, step: int, ledger: PrivacyLedger | None, dev_docs, test_docs,
                  device) -> dict[str, Any]:
    """One epoch of the history: its step and, when ``ledger`` is given (an evaluated epoch), the
    ε spent so far and the binary-token P/R/F1 of the held-out dev and test documents."""
    rec: dict[str, Any] = {"epoch": epoch, "step": step}
    if ledger is None:
        return rec
    rec["epsilon"] = ledger.spent()
    for name, docs in (("dev", dev_docs), ("test", test_docs)):
        if docs:
            p, r, f = evaluate_tagger(tagger, docs, device=device)
            rec.update({f"{name}_precision": p, f"{name}_recall": r, f"{name}_f1": f})
    tagger.train()
    return rec
