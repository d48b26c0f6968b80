"""One DP-SGD step (ahmed thesis §5.1.2, Algorithm 1, steps 2-4; Abadi et al. 2016): exact
per-unit gradients, flat clipping of each unit's gradient to ``C`` over all trainable
parameters, Gaussian noise ``N(0, σ² C² I)`` and the division by the expected lot size.

Four equivalent ways to the per-unit gradients (``METHODS``; why and how fast in
docs/design/privacy.md): ``micro`` (one sub-batch per unit, :func:`sub_batch`; row-sparse
embedding gradients), ``vmap`` and ``loop`` (rows of the Jacobian of the per-unit losses) and
``vectorized`` (taggers with ``per_sentence_gradients``, length-sorted chunks).
``tests/privacy/test_dpsgd.py`` checks them against each other and against single-sentence
batches; ``tests/privacy/test_dp_mutations.py`` shows that the clipping checks catch a
clipping bug in this module.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from types import SimpleNamespace

import torch

from ..models.protocol import Batch
from .secure import SecureRandom

__all__ = ["METHODS", "per_unit_gradients", "clip_and_noise", "dp_step", "sub_batch"]

METHODS = ("micro", "vmap", "loop", "vectorized")


def _clip_factor(norms: torch.Tensor, max_grad_norm: float) -> torch.Tensor:
    """Flat clipping: ``min(1, C / (‖g‖ + 1e-6))`` per unit norm (ones when ``C`` is infinite)."""
    if not math.isfinite(max_grad_norm):
        return torch.ones_like(norms)
    return (max_grad_norm / (norms + 1e-6)).clamp(max=1.0)


def _params(tagger: torch.nn.Module) -> list[torch.nn.Parameter]:
    return [p for p in tagger.parameters() if p.requires_grad]


def _unit_losses(tagger, batch: Batch, groups: Sequence[Sequence[int]]) -> torch.Tensor:
    """Per-unit losses [G]: the sum of the unit's sentence losses times the unit's own ρ."""
    em = tagger.emissions(batch)
    per_sentence = tagger.sentence_losses(batch, em)
    index = torch.zeros(len(groups), batch.batch_size, dtype=per_sentence.dtype, device=per_sentence.device)
    for g, idx in enumerate(groups):
        index[g, list(idx)] = 1.0
    losses = index @ per_sentence
    if getattr(tagger, "recall_penalty", None) and tagger.recall_penalty != 1:
        labels = batch.labels
        if labels is None:
            raise ValueError("the batch has no labels")
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
    """Per-unit losses [G] and per-unit gradients (one tensor ``[G, *p.shape]`` per trainable
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
        t2u_old = batch.token_to_unique[idx_t, :T]
        used = torch.unique(t2u_old[mask])
        remap = torch.zeros(batch.char_ids.shape[0], dtype=torch.long, device=used.device)
        remap[used] = torch.arange(used.numel(), device=used.device)
        t2u = torch.where(mask, remap[t2u_old], torch.zeros_like(t2u_old))
        if batch.char_lengths is None:
            raise ValueError("a batch with char_ids needs char_lengths")
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

