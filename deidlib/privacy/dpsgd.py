"""DP-SGD for every tagger of :mod:`deidlib.models` (ahmed thesis §5.1.2, Algorithm 1;
Abadi et al. 2016), with exact per-unit gradients, Poisson sampling and a privacy ledger.

Algorithm 1 as implemented (one step):

1. Poisson sampling: every privacy *unit* (a sentence — the thesis' "sequence" — or a
   patient with all of their sentences) joins the lot independently with probability
   ``q = batch_size / n_units`` (``opacus.utils.uniform_sampler.UniformWithReplacementSampler``).
2. Per-unit gradients ``g_u = ∇_θ L_u`` where ``L_u`` is the sum of the unit's sentence
   losses (CRF NLL or summed token cross-entropy, ``BaseTagger.sentence_losses``).
3. Clipping: ``ḡ_u = g_u · min(1, C / (‖g_u‖₂ + 1e-6))`` over *all* trainable parameters
   (flat clipping, ``max_grad_norm = C``; ``C = inf`` disables clipping).
4. Noise: ``G = (Σ_u ḡ_u + N(0, σ² C² I)) / L`` with ``L`` the *expected* lot size
   ``q · n_units`` (Opacus' ``loss_reduction="mean"``; the thesis' 1/L), then an ordinary
   optimiser step (plain SGD in Algorithm 1; Adam/Nadam are post-processing of the noisy
   gradient and cost no privacy).
5. Accounting with Opacus (:mod:`.accounting`, prv default) over (σ, q, steps) into a
   :class:`PrivacyLedger`; ``target_epsilon`` calibrates σ for the planned number of steps
   (``opacus.accountants.utils.get_noise_multiplier``).

Per-sample gradients. Opacus' hook-based ``GradSampleModule`` gets three things wrong or
not at all for these taggers (the char encoder runs once per *distinct token of the batch*,
so its per-row gradients belong to tokens, not sentences; the CRF parameters have no grad
sampler; ``nn.LSTM``/``nn.GRU`` need ``DPLSTM``/``DPGRU`` replacements). We compute exact
per-unit gradients by differentiating each unit's loss on its own, with three equivalent
methods (tests check them against each other and against single-sentence batches):

``micro`` (default)
    microbatches of one unit (TF-Privacy's ``num_microbatches = lot size``): the lot is cut
    into one sub-batch per unit (:func:`sub_batch`: its sentences, padding trimmed, only its
    distinct tokens for the char encoder), forward + backward per unit, clip and accumulate
    on the fly (no [G, *θ] tensor). Embedding tables get row-sparse per-unit gradients
    (w.r.t. the lookup output, scattered to the unit's ids) instead of dense [V, d] ones. Every module — char encoder, LSTM/GRU, attention, CRF
    transitions/start/end — is covered because nothing is per-module. It is also the fastest
    here on CPU: a random (Poisson) lot pads every sentence to the longest one, and the CRF
    and RNN loops over time steps cost the padding too; per-unit sub-batches have none
    (``benchmarks/dpsgd.py``).
``vmap``
    the rows of the Jacobian of the vector of per-unit losses: one forward pass over the
    whole lot, one *vectorised* backward pass (``torch.autograd.grad(...,
    is_grads_batched=True)``, ``vmap`` over the backward with the rows of the identity as
    output gradients). A character encoding shared by several sentences contributes
    ``∂L_u/∂h · ∂h/∂θ`` to each unit separately. Exact, but each row back-propagates
    through the whole lot (G × a full backward; cost in CHANGELOG.md, "Measurements behind design choices").
``loop``
    the same Jacobian rows with one backward pass per unit (a cross-check).
``vectorized``
    for taggers that compute exact per-sentence gradients in one vectorised pass
    (``per_sentence_gradients``: ``torch.func.vmap`` over ``torch.func.grad`` of one sentence's
    loss; the frozen-encoder tagger with a linear, convolutional or BiGRU head,
    :mod:`deidlib.models.encoder_tagger`). A unit's gradient is the sum of its sentences';
    units are processed in length-sorted chunks of at most ``chunk`` sentences and
    ``chunk_tokens`` padded tokens: a recurrent head loops over the chunk's longest sentence,
    so one long sentence in a chunk of 256 made every step pay for its length (a lot of
    nursing sentences reaches 300+ words). Speed against ``micro``: measured by
    ``benchmarks/dp_vectorized.py`` (``--head conv`` and ``--head gru``; docs/dp-recipes.md).

All three require only that no sentence's loss depends on another sentence's data in the
forward pass, which holds for all taggers (padding is masked; dropout masks are per
element; no batch normalisation). With ``micro`` the dropout masks are drawn per sub-batch,
so a ``micro`` step and an ordinary step agree exactly only in eval mode; ``vmap`` runs the
same forward as the ordinary step and agrees in train mode too.
The recall penalty ρ (thesis eq. 4.7–4.8) is batch-level in ``BaseTagger.loss``; a
batch-level weight would make a unit's contribution depend on other units and break the
sensitivity bound, so under DP ρ is computed *per unit* from the unit's own sentences.

Randomness. ``train_dp`` draws the noise and the Poisson lots from the OS CSPRNG by default
(``secure=True``, :mod:`.secure`; Opacus' ``secure_mode`` needs torchcsprng, which is not
installed here). ``secure=False`` derives both from ``seed`` with seeded ``torch.Generator``
objects, for reproducible research runs only: anyone who holds the seed can regenerate the
noise and subtract it (from θ₀, θ_T and the seed the noise-free sum of clipped gradients is
recovered), so the (ε, δ) guarantee does not hold against them; the ledger then carries
:data:`SEEDED_NOTE`. ``dp_step`` takes the ``generator`` it is given.

What is released. ``train_dp``'s history holds only the privacy spent and scores on the
*held-out* dev/test documents passed to it (statistics of those documents, not of the
training units; they are not DP w.r.t. the dev/test documents). It records no training loss
and no step timings: both are un-noised statistics of the private lots.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from types import SimpleNamespace
from typing import Any, cast

import torch

from ..corpus.labels import TaggedSentence, gold_tags
from ..models.protocol import Batch, FeaturizerProtocol
from ..rng import derive_seed
from .accounting import ACCOUNTANTS, MAX_NOISE_MULTIPLIER, epsilon, noise_for_epsilon
from .secure import SecureRandom

__all__ = [
    "SEEDED_NOTE",
    "PrivacyLedger",
    "per_unit_gradients",
    "clip_and_noise",
    "dp_step",
    "train_dp",
    "patient_units",
    "sub_batch",
    "UNITS",
    "METHODS",
]

UNITS = ("sentence", "patient")
METHODS = ("micro", "vmap", "loop", "vectorized")

#: what a ledger of a seeded run (``secure_rng=False``) says about its guarantee
SEEDED_NOTE = (
    "noise and lots were drawn from generators seeded with the recorded seed: the (ε, δ) guarantee "
    "does NOT hold against anyone who holds the seed (they can regenerate and subtract the noise)"
)


@dataclass
class PrivacyLedger:
    """What a DP-SGD run spent: unit, σ, q, steps, accountant, δ and the resulting ε.
    ``history`` lists earlier phases [(σ, q, steps)] on the same units (e.g. pre-training)."""

    unit: str
    noise_multiplier: float
    sample_rate: float
    steps: int
    accountant: str
    delta: float
    max_grad_norm: float
    n_units: int
    expected_batch_size: float
    epsilon: float = math.inf
    target_epsilon: float | None = None
    history: list[tuple[float, float, int]] = field(default_factory=list)
    #: True when lots and noise came from the OS CSPRNG (``train_dp(secure=True)``, the default)
    secure_rng: bool = False

    def spent(self, steps: int | None = None) -> float:
        """ε after ``steps`` steps (default: the ledger's steps), with the earlier phases."""
        s = self.steps if steps is None else steps
        if s == 0 and not self.history:
            return 0.0
        if self.noise_multiplier == 0 or not math.isfinite(self.max_grad_norm):
            return math.inf
        if s == 0:
            h = self.history
            return epsilon(h[-1][0], h[-1][1], h[-1][2], self.delta, self.accountant, history=h[:-1])
        return epsilon(
            self.noise_multiplier, self.sample_rate, s, self.delta, self.accountant, history=self.history
        )

    def to_dict(self) -> dict[str, Any]:
        """The fields, plus ``rng_note`` (:data:`SEEDED_NOTE`) when the run was seeded."""
        d = asdict(self)
        for k in ("epsilon", "max_grad_norm"):
            if not math.isfinite(d[k]):
                d[k] = str(d[k])
        if not self.secure_rng:
            d["rng_note"] = SEEDED_NOTE
        return d


def _clip_factor(norms: torch.Tensor, max_grad_norm: float) -> torch.Tensor:
    """Flat clipping: ``min(1, C / (‖g‖ + 1e-6))`` per unit norm (ones when ``C`` is infinite)."""
    if not math.isfinite(max_grad_norm):
        return torch.ones_like(norms)
    return (max_grad_norm / (norms + 1e-6)).clamp(max=1.0)


def _params(tagger: torch.nn.Module) -> list[torch.nn.Parameter]:
    return [p for p in tagger.parameters() if p.requires_grad]


def _unit_losses(tagger, batch: Batch, groups: Sequence[Sequence[int]]) -> torch.Tensor:
    """Per-unit losses [G]: the sum of the unit's sentence losses times the unit's own ρ."""
    labels = batch.labels
    if labels is None:
        raise ValueError("the batch has no labels")
    em = tagger.emissions(batch)
    per_sentence = tagger.sentence_losses(batch, em)
    index = torch.zeros(len(groups), batch.batch_size, dtype=per_sentence.dtype, device=per_sentence.device)
    for g, idx in enumerate(groups):
        index[g, list(idx)] = 1.0
    losses = index @ per_sentence
    if getattr(tagger, "recall_penalty", None) and tagger.recall_penalty != 1:
        rho = torch.stack(
            [
                tagger.penalty(
                    SimpleNamespace(labels=labels[list(i)], mask=batch.mask[list(i)]), em[list(i)]
                )
                for i in groups
            ]
        )
        losses = losses * rho
    return losses


def per_unit_gradients(
    tagger: torch.nn.Module,
    batch: Batch,
    groups: Sequence[Sequence[int]] | None = None,
    *,
    method: str = "vmap",
) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """Per-unit losses [G] and per-unit gradients (one tensor [G, *p.shape] per trainable
    parameter, zeros for parameters a unit does not reach). ``groups``: sentence positions
    of each unit in ``batch`` (default: every sentence is a unit)."""
    if method not in ("vmap", "loop"):
        raise ValueError(f"unknown method {method!r}; per_unit_gradients computes 'vmap' or 'loop'")
    if batch.labels is None:
        raise ValueError("the batch has no labels")
    B = batch.batch_size
    groups = [[i] for i in range(B)] if groups is None else [list(g) for g in groups]
    seen = [i for g in groups for i in g]
    if sorted(seen) != list(range(B)):
        raise ValueError("groups must partition the sentences of the batch")
    params = _params(tagger)
    losses = _unit_losses(tagger, batch, groups)
    G = len(groups)
    grads: Sequence[torch.Tensor | None]
    if method == "vmap":
        eye = torch.eye(G, dtype=losses.dtype, device=losses.device)
        grads = torch.autograd.grad(
            losses, params, grad_outputs=eye, is_grads_batched=True, allow_unused=True
        )
    else:
        rows = [
            torch.autograd.grad(losses[g], params, retain_graph=g + 1 < G, allow_unused=True)
            for g in range(G)
        ]
        grads = [
            None
            if all(r[j] is None for r in rows)
            else torch.stack([r[j] if r[j] is not None else torch.zeros_like(p) for r in rows])
            for j, p in enumerate(params)
        ]
    out = [g if g is not None else p.new_zeros((G, *p.shape)) for g, p in zip(grads, params)]
    return losses.detach(), out


def sub_batch(batch: Batch, idx: Sequence[int]) -> Batch:
    """The sentences ``idx`` of ``batch`` as a batch of their own: padding trimmed to their
    longest sentence, and only their distinct tokens kept for the character encoder.
    ``extra`` tensors are per-sentence rows ([B, ...]); the sub-word ones of
    :class:`~deidlib.models.features.EncoderFeaturizer` (``sub_*``) are trimmed to the kept
    rows' longest piece sequence (``sub_mask``); any other ``extra`` key is a ``ValueError``."""
    unknown = set(batch.extra) - {"sub_ids", "sub_mask", "sub_word"}
    if unknown:
        raise ValueError(f"sub_batch does not know how to slice model-specific `extra` tensors {sorted(unknown)}")
    idx_t = torch.as_tensor(list(idx), dtype=torch.long, device=batch.word_ids.device)
    mask = batch.mask[idx_t]
    T = int(mask.sum(1).max())
    mask = mask[:, :T]

    def cut(x):
        return None if x is None else x[idx_t, :T]

    char_ids = char_lengths = t2u = None
    if batch.token_to_unique is not None and batch.char_ids is not None:
        if batch.char_lengths is None:
            raise ValueError("a batch with char_ids needs char_lengths")
        t2u_old = batch.token_to_unique[idx_t, :T]
        used = torch.unique(t2u_old[mask])
        remap = torch.zeros(batch.char_ids.shape[0], dtype=torch.long, device=used.device)
        remap[used] = torch.arange(used.numel(), device=used.device)
        t2u = torch.where(mask, remap[t2u_old], torch.zeros_like(t2u_old))
        char_lengths = batch.char_lengths[used]
        char_ids = batch.char_ids[used][:, : int(char_lengths.max())]
    extra = {k: v[idx_t] for k, v in batch.extra.items()}
    if extra:
        S = max(1, int(extra["sub_mask"].sum(1).max()))
        extra = {k: v[:, :S] for k, v in extra.items()}
    return Batch(
        cut(batch.word_ids), mask, cut(batch.labels), cut(batch.casing_ids), char_ids, char_lengths, t2u, extra
    )


def _sparse_embeddings(tagger, params) -> dict[int, torch.nn.Embedding]:
    """Position in ``params`` -> trainable ``nn.Embedding`` whose per-unit gradient can be taken
    row-sparse (plain lookups: no max_norm, no scale_grad_by_freq, no sparse gradients)."""
    pos = {id(p): j for j, p in enumerate(params)}
    out = {}
    for m in tagger.modules():
        if (
            isinstance(m, torch.nn.Embedding)
            and m.weight.requires_grad
            and id(m.weight) in pos
            and m.max_norm is None
            and not m.scale_grad_by_freq
            and not m.sparse
        ):
            out[pos[id(m.weight)]] = m
    return out


def _micro_clipped_sum(
    tagger,
    batch: Batch,
    groups: Sequence[Sequence[int]],
    max_grad_norm: float,
    sparse_embeddings: bool = True,
) -> tuple[torch.Tensor, list[torch.Tensor], torch.Tensor]:
    """Per-unit microbatches: forward + backward of each unit on its own sub-batch, clipped
    and accumulated on the fly. Returns (unit losses [G], clipped sums, unit norms [G]).

    ``sparse_embeddings``: the gradient of an embedding table is taken w.r.t. the lookup's
    *output* (captured by a forward hook) and scattered to the rows of the unit's ids, instead
    of a dense [vocabulary, dim] gradient per unit; the same numbers (duplicate ids summed,
    the padding row excluded as ``nn.Embedding`` does), at the cost of the unit's tokens
    rather than the vocabulary size (Opacus' embedding grad sampler does the same)."""
    params = _params(tagger)
    acc = [torch.zeros_like(p) for p in params]
    emb = _sparse_embeddings(tagger, params) if sparse_embeddings else {}
    dense_idx = [j for j in range(len(params)) if j not in emb]
    dense_params = [params[j] for j in dense_idx]
    calls: dict[int, list[tuple[torch.Tensor, torch.Tensor]]] = {j: [] for j in emb}
    hooks = [
        m.register_forward_hook(lambda mod, inp, out, j=j: calls[j].append((inp[0], out)))
        for j, m in emb.items()
    ]
    losses, norms = [], []
    try:
        for idx in groups:
            for c in calls.values():
                c.clear()
            sb = sub_batch(batch, idx)
            loss = _unit_losses(tagger, sb, [list(range(len(idx)))])[0]
            outs = [o for j in emb for _, o in calls[j]]
            grads = torch.autograd.grad(loss, dense_params + outs, allow_unused=True)
            dense, out_grads = grads[: len(dense_params)], grads[len(dense_params) :]
            sq = loss.new_zeros(())
            for g in dense:
                if g is not None:
                    sq = sq + g.pow(2).sum()
            rows = {}
            k = 0
            for j, m in emb.items():
                ids_all, vals_all = [], []
                for ids, _ in calls[j]:
                    g = out_grads[k]
                    k += 1
                    if g is None:
                        continue
                    ids = ids.reshape(-1)
                    g = g.reshape(ids.numel(), -1)
                    if m.padding_idx is not None:
                        keep = ids != m.padding_idx
                        ids, g = ids[keep], g[keep]
                    ids_all.append(ids)
                    vals_all.append(g)
                if ids_all:
                    ids = torch.cat(ids_all)
                    uniq, inv = torch.unique(ids, return_inverse=True)
                    vals = torch.zeros(uniq.numel(), m.embedding_dim, dtype=m.weight.dtype, device=ids.device)
                    vals.index_add_(0, inv, torch.cat(vals_all).to(vals.dtype))
                    sq = sq + vals.pow(2).sum()
                    rows[j] = (uniq, vals)
            norm = sq.sqrt()
            f = _clip_factor(norm, max_grad_norm)
            for j, g in zip(dense_idx, dense):
                if g is not None:
                    acc[j].add_(g * f)
            for j, (uniq, vals) in rows.items():
                acc[j].index_add_(0, uniq, vals * f)
            losses.append(loss.detach())
            norms.append(norm.detach())
    finally:
        for h in hooks:
            h.remove()
        for c in calls.values():
            c.clear()
    return torch.stack(losses), acc, torch.stack(norms)


#: per-unit gradient buffers of :func:`_vectorized_clipped_sum` held at once (floats; 2**27: 512 MB)
UNIT_BUFFER_FLOATS = 2**27


def _chunks(order: Sequence[int], sizes: Sequence[int] | Mapping[int, int], longest: Sequence[int] | Mapping[int, int],
            chunk: int, chunk_tokens: int) -> Iterator[list[int]]:
    """Consecutive runs of ``order`` (sorted by ``longest``) of at most ``chunk`` sentences and
    ``chunk_tokens`` padded tokens (an item larger than that is a run of its own)."""
    pos = 0
    while pos < len(order):
        take: list[int] = []
        n = 0
        while pos < len(order):
            k = order[pos]
            if take and (n + sizes[k] > chunk or (n + sizes[k]) * longest[k] > chunk_tokens):
                break
            take.append(k)
            n += sizes[k]
            pos += 1
        yield take


def _vectorized_clipped_sum(
    tagger, batch: Batch, groups: Sequence[Sequence[int]], max_grad_norm: float, chunk: int = 256,
    chunk_tokens: int = 2048,
) -> tuple[torch.Tensor, list[torch.Tensor], torch.Tensor]:
    """Like :func:`_micro_clipped_sum`, with the per-sentence gradients of a tagger that computes
    them in one vectorised pass (``tagger.per_sentence_gradients``, e.g. the frozen-encoder
    tagger with a linear, conv or BiGRU head), in length-sorted chunks of at most ``chunk``
    sentences and ``chunk_tokens`` padded tokens (a recurrent head loops over a chunk's longest
    sentence). A unit's gradient is the sum of its sentences'; it is clipped, then accumulated.
    Units of one sentence are clipped chunk by chunk. Units of several sentences (patients) are
    summed in one buffer per unit first, so that their sentences are chunked by length like any
    others instead of padding each unit to its longest sentence; at most
    :data:`UNIT_BUFFER_FLOATS` floats of buffers at a time. Returns (unit losses [G], clipped sums,
    unit norms [G]) in the order of ``groups``."""
    if not getattr(tagger, "supports_vectorized", False):
        raise ValueError(f"method 'vectorized' needs a tagger with per_sentence_gradients (got "
                         f"{type(tagger).__name__}{'' if not hasattr(tagger, 'kind') else ' ' + tagger.kind}); "
                         "use 'micro'")
    names = [n for n, p in tagger.named_parameters() if p.requires_grad]
    params = _params(tagger)
    acc = [torch.zeros_like(p) for p in params]
    lengths = batch.mask.sum(1).tolist()
    losses = torch.zeros(len(groups), dtype=acc[0].dtype, device=acc[0].device)
    norms = torch.zeros(len(groups), dtype=acc[0].dtype, device=acc[0].device)

    def clip_into_acc(unit: list[torch.Tensor], rows: list[int]) -> None:
        norm = torch.stack([u.flatten(1).pow(2).sum(1) for u in unit]).sum(0).sqrt()
        f = _clip_factor(norm, max_grad_norm)
        for a, u in zip(acc, unit):
            a.add_(torch.einsum("g,g...->...", f, u))
        norms[rows] = norm.detach().to(norms.dtype)

    if all(len(g) == 1 for g in groups):  # one sentence per unit: clip chunk by chunk
        sent = [g[0] for g in groups]
        order = sorted(range(len(groups)), key=lambda g: lengths[sent[g]])
        for take in _chunks(order, [1] * len(groups), [lengths[i] for i in sent], chunk, chunk_tokens):
            sl, grads = tagger.per_sentence_gradients(sub_batch(batch, [sent[g] for g in take]), names)
            clip_into_acc(grads, take)
            losses[take] = sl.to(losses.dtype)
        return losses, acc, norms
    per = max(1, UNIT_BUFFER_FLOATS // max(1, sum(p.numel() for p in params)))
    for u0 in range(0, len(groups), per):
        rows = list(range(u0, min(len(groups), u0 + per)))
        owner = {i: r for r, g in enumerate(rows) for i in groups[g]}
        unit = [p.new_zeros((len(rows), *p.shape)) for p in params]
        unit_loss = losses.new_zeros(len(rows))
        order = sorted(owner, key=lengths.__getitem__)
        for take in _chunks(order, {i: 1 for i in order}, lengths, chunk, chunk_tokens):
            sl, grads = tagger.per_sentence_gradients(sub_batch(batch, take), names)
            who = torch.tensor([owner[i] for i in take], device=sl.device)
            for u, gr in zip(unit, grads):
                u.index_add_(0, who, gr.to(u.dtype))
            unit_loss.index_add_(0, who, sl.to(unit_loss.dtype))
        clip_into_acc(unit, rows)
        losses[rows] = unit_loss
    return losses, acc, norms


def _check_noise(max_grad_norm: float, noise_multiplier: float, denominator: float) -> None:
    if not max_grad_norm > 0:
        raise ValueError(f"max_grad_norm must be > 0 (got {max_grad_norm})")
    if noise_multiplier < 0:
        raise ValueError(f"noise_multiplier must be >= 0 (got {noise_multiplier})")
    if noise_multiplier > 0 and not math.isfinite(max_grad_norm):
        raise ValueError("noise needs a finite max_grad_norm (the noise scale is σ·C)")
    if not denominator > 0:
        raise ValueError(f"denominator must be > 0 (got {denominator})")


def _add_noise(summed, max_grad_norm, noise_multiplier, denominator, generator) -> list[torch.Tensor]:
    """``generator``: a ``torch.Generator`` (seeded, reproducible), ``None`` (torch's global
    RNG) or a :class:`~deidlib.privacy.secure.SecureRandom` (OS CSPRNG)."""
    out = []
    for s in summed:
        if noise_multiplier > 0:
            std = noise_multiplier * max_grad_norm
            if isinstance(generator, SecureRandom):
                s = s + generator.normal(std, s.shape, dtype=s.dtype, device=s.device)
            else:
                s = s + torch.normal(0.0, std, s.shape, generator=generator).to(s)
        out.append(s / denominator)
    return out


def clip_and_noise(
    grads: Sequence[torch.Tensor],
    max_grad_norm: float,
    noise_multiplier: float,
    denominator: float,
    generator: torch.Generator | SecureRandom | None = None,
) -> tuple[list[torch.Tensor], torch.Tensor]:
    """Clip every unit's flat gradient to ``max_grad_norm``, sum, add N(0, σ²C²) and divide by
    ``denominator``. Returns the noisy mean gradient per parameter and the unit norms [G]."""
    _check_noise(max_grad_norm, noise_multiplier, denominator)
    norms = torch.stack([g.flatten(1).pow(2).sum(1) for g in grads]).sum(0).sqrt()
    factor = _clip_factor(norms, max_grad_norm)
    summed = [torch.einsum("g,g...->...", factor, g) for g in grads]
    return _add_noise(summed, max_grad_norm, noise_multiplier, denominator, generator), norms


def dp_step(
    tagger: torch.nn.Module,
    batch: Batch | None,
    optimizer: torch.optim.Optimizer,
    *,
    max_grad_norm: float,
    noise_multiplier: float,
    denominator: float,
    groups: Sequence[Sequence[int]] | None = None,
    generator: torch.Generator | SecureRandom | None = None,
    method: str = "micro",
) -> float:
    """One DP-SGD step on a (Poisson-sampled) lot; ``batch=None`` is an empty lot (noise
    only, as Opacus). Returns the mean per-unit loss (nan for an empty lot)."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    params = _params(tagger)
    optimizer.zero_grad(set_to_none=True)
    if batch is None:
        grads = [p.new_zeros((0, *p.shape)) for p in params]
        loss = math.nan
        noisy, _ = clip_and_noise(grads, max_grad_norm, noise_multiplier, denominator, generator)
    elif method in ("micro", "vectorized"):
        _check_noise(max_grad_norm, noise_multiplier, denominator)
        groups = [[i] for i in range(batch.batch_size)] if groups is None else [list(g) for g in groups]
        clipped_sum = _micro_clipped_sum if method == "micro" else _vectorized_clipped_sum
        losses, summed, _ = clipped_sum(tagger, batch, groups, max_grad_norm)
        loss = float(losses.mean())
        noisy = _add_noise(summed, max_grad_norm, noise_multiplier, denominator, generator)
    else:
        losses, grads = per_unit_gradients(tagger, batch, groups, method=method)
        loss = float(losses.mean())
        noisy, _ = clip_and_noise(grads, max_grad_norm, noise_multiplier, denominator, generator)
    for p, g in zip(params, noisy):
        p.grad = g
    optimizer.step()
    return loss


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
    import warnings

    from opacus.utils.uniform_sampler import UniformWithReplacementSampler
    from tqdm.auto import tqdm

    from ..training.loop import make_optimizer
    from ..training.predict import evaluate_tagger
    from ..training.trainer import History

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
                      UserWarning, stacklevel=2)
    if unit == "patient":
        if units is None or len(units) != len(train_sentences):
            raise ValueError("unit='patient' needs `units`: one patient key per training sentence")
        keys: dict[Hashable, list[int]] = {}
        for i, u in enumerate(units):
            keys.setdefault(u, []).append(i)
        members = list(keys.values())
    else:
        members = [[i] for i in range(len(train_sentences))]
    n = len(members)
    if batch_size > n:
        raise ValueError(f"expected batch size {batch_size} exceeds the {n} privacy units")
    q = batch_size / n
    steps = max(1, round(epochs / q))
    if target_epsilon is not None:
        noise_multiplier = noise_for_epsilon(target_epsilon, q, steps, delta, accountant, history=history)
    if noise_multiplier is None:  # checked above: exactly one of the two is given
        raise ValueError("give exactly one of noise_multiplier and target_epsilon")
    ledger = PrivacyLedger(
        unit,
        float(noise_multiplier),
        q,
        0,
        accountant,
        delta,
        float(max_grad_norm),
        n,
        q * n,
        target_epsilon=target_epsilon,
        history=list(history or []),
        secure_rng=bool(secure),
    )
    tagger.to(device)
    params = _params(tagger)
    opt = make_optimizer(params, optimizer, lr)
    fz = cast(FeaturizerProtocol, tagger.featurizer)  # every tagger module has one (models.protocol.Tagger)
    if getattr(getattr(tagger, "crf", None), "constrained", False):  # ill-formed gold tags: a clear error first
        from ..training.trainer import check_gold_paths

        chunks = [list(range(i, min(i + 256, len(train_sentences)))) for i in range(0, len(train_sentences), 256)]
        encoded = [fz.encode([train_sentences[i].words for i in g], [gold_tags(train_sentences[i]) for i in g]) for g in chunks]
        check_gold_paths(tagger, encoded, chunks, train_sentences)
    noise_gen: SecureRandom | torch.Generator
    if secure:
        noise_gen = SecureRandom()
        sampler = noise_gen.lots(n, q, steps)
    else:
        sampler_gen = torch.Generator().manual_seed(derive_seed(seed, "dp-poisson") % 2**63)
        noise_gen = torch.Generator().manual_seed(derive_seed(seed, "dp-noise") % 2**63)
        sampler = UniformWithReplacementSampler(num_samples=n, sample_rate=q, generator=sampler_gen, steps=steps)
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
                rec: dict[str, Any] = {
                    "epoch": ep,
                    "step": t,
                }
                if ep % eval_every == 0 or t == steps:
                    rec["epsilon"] = ledger.spent()
                    for name, docs in (("dev", dev_docs), ("test", test_docs)):
                        if docs:
                            p, r, f = evaluate_tagger(tagger, docs, device=device)
                            rec.update({f"{name}_precision": p, f"{name}_recall": r, f"{name}_f1": f})
                    tagger.train()
                hist.epochs.append(rec)
    ledger.epsilon = ledger.spent()
    return hist, ledger
