"""Building blocks of the taggers: the token-feature encoder (word + characters + casing),
character encoders, locked dropout, RNN stacks."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import cast

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from ..embeddings.chars import CASINGS, N_CHAR_IDS
from .features import UNK
from .protocol import Batch

__all__ = ["RNNStack", "run_rnn", "run_rnn_padded"]


def _reversal_index(lengths: torch.Tensor, total: int) -> torch.Tensor:
    """[B, total] time indices that reverse each row's first ``lengths[b]`` steps and keep
    its padding in place (an involution: applying it twice is the identity)."""
    ar = torch.arange(total, device=lengths.device)
    n = lengths.unsqueeze(1)
    return torch.where(ar < n, n - 1 - ar, ar)


_PACKED_ONLY = False


@contextmanager
def packed_rnns() -> Iterator[None]:
    """Inside the block every RNN runs on packed sequences (the simple path, for side-by-side
    measurements: ``benchmarks/taggers.py``, ``benchmarks/device_check.py``)."""
    global _PACKED_ONLY
    before, _PACKED_ONLY = _PACKED_ONLY, True
    try:
        yield
    finally:
        _PACKED_ONLY = before


def _padded_ok(rnn: nn.RNNBase) -> bool:
    """Whether :func:`run_rnn` (and :class:`CharEncoder`) should use :func:`run_rnn_padded`
    for ``rnn``: a plain one-layer ``nn.LSTM`` (not a subclass such as Opacus' DP layers) with
    batch-first input and no projection, outside :func:`packed_rnns`. On a padded batch-first
    input torch runs its fused oneDNN LSTM kernel (forward and backward); on a packed one a
    generic per-step loop. Side by side on one thread (``benchmarks/torch_paths.py``, packed
    time / padded time): word-level LSTM 300 → 128 1.8-2.0x in training and 1.6-1.7x in
    inference, character LSTM 25 → 25 (grouped by length) 1.75-1.8x and 1.3-1.4x; the
    friedrich tagger's prediction pass 1.15-1.55x (``benchmarks/taggers.py``, ``packed``
    column). A GRU has no fused CPU kernel in torch: padded it measured 1.0x in training and
    0.8x in inference at the gru preset's sizes (0.65-0.76x for the character GRU), so GRUs
    run packed."""
    if _PACKED_ONLY or type(rnn) is not nn.LSTM or rnn.num_layers != 1 or not rnn.batch_first:
        return False
    return not rnn.proj_size


def _length_groups(sorted_lengths: list[int], call_cost: float = 100.0, step_rows: float = 0.0) -> list[tuple[int, int]]:
    """Cut ascending ``sorted_lengths`` into ``[start, stop)`` groups, each to run as one
    padded kernel call, minimising the estimated time in row-steps: a group of ``rows``
    rows whose longest length is ``T`` costs ``call_cost + (rows + step_rows) · T`` (a
    fixed cost per call, one per time step, and its padded size). Exact minimum by dynamic
    programming over the cut points where the length changes (a few dozen distinct word
    lengths, so it is cheap). Words' character counts vary from 1 to 30 or more: one padded
    call over all distinct tokens would run mostly padding, one call per length mostly
    fixed cost. :func:`_char_group_costs` gives the costs for a character encoder."""
    n = len(sorted_lengths)
    if n == 0:
        return []
    cuts = [0] + [i for i in range(1, n) if sorted_lengths[i] != sorted_lengths[i - 1]] + [n]
    best, prev = [0.0] + [float("inf")] * (len(cuts) - 1), [0] * len(cuts)
    for k in range(1, len(cuts)):
        longest = sorted_lengths[cuts[k] - 1]
        for j in range(k):
            c = best[j] + call_cost + (cuts[k] - cuts[j] + step_rows) * longest
            if c < best[k]:
                best[k], prev[k] = c, j
    groups, k = [], len(cuts) - 1
    while k:
        groups.append((cuts[prev[k]], cuts[k]))
        k = prev[k]
    return groups[::-1]


def _char_group_costs(rnn: nn.RNNBase) -> tuple[float, float]:
    """``(call_cost, step_rows)`` of :func:`_length_groups` for a character LSTM, in row-steps
    of its own work. Fitted (least squares, time = c + a · steps + b · rows · steps, one
    thread, one direction, forward + backward) on the development machine (2-core AVX-512
    Xeon, torch 2.13) for the oneDNN LSTM: c / b = 103 for festag's character LSTM (128
    one-hot inputs, 128 hidden) and 450 for a 25/25 one (flair's sizes), a / b ≈ 0,
    summarised as ``87 + 4.5e5 / (hidden · (input + hidden))``: the per-call cost (oneDNN
    re-lays out the weights on each call) weighs more against small layers.

    Only speed depends on them: a row's result does not depend on its group (up to float
    rounding)."""
    return 87.0 + 4.5e5 / (rnn.hidden_size * (rnn.input_size + rnn.hidden_size)), 0.0


def run_rnn_padded(rnn: nn.RNNBase, x: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The same function as a packed (bidirectional) RNN, computed on the padded tensor.

    Why: torch's CPU kernels for *packed* sequences run a generic per-step loop whose batch
    shrinks step by step (and autograd records every step), while a padded batch-first
    input reaches the fused oneDNN (mkldnn) LSTM kernel, forward and backward
    (:func:`_padded_ok` says where it is used). The forward direction is causal, so its outputs at a
    row's valid steps do not depend on the padding after them; the backward direction runs
    as a forward pass over each row reversed *within its length* (padding kept at the end)
    and is reversed back. Returns ``(outputs [B, T, dirs·H]``, zero at padding as
    ``pad_packed_sequence`` gives, ``final [dirs, B, H])``: each direction's hidden state
    at its row's last valid step, as ``h_n`` of the packed RNN. Equal to the packed RNN up
    to float rounding (``tests/models/test_layers.py``). Rows of length 0 are not allowed
    (clamp them to 1, as :class:`CharEncoder` does)."""
    bsz, total, _ = x.shape
    lengths = lengths.to(x.device)
    w = rnn._flat_weights
    per_dir = len(w) // (2 if rnn.bidirectional else 1)
    lstm = isinstance(rnn, nn.LSTM)
    fn: Callable[..., tuple[torch.Tensor, ...]] = torch.lstm if lstm else torch.gru
    padded = int(lengths.min()) < total
    h0 = x.new_zeros(1, bsz, rnn.hidden_size)
    hx = (h0, h0) if lstm else h0

    def one(inp: torch.Tensor, weights) -> torch.Tensor:
        return fn(inp, hx, weights, rnn.bias, 1, 0.0, rnn.training, False, True)[0]

    last = (lengths - 1).view(bsz, 1, 1).expand(bsz, 1, rnn.hidden_size)
    outs = [one(x, w[:per_dir])]
    finals = [outs[0].gather(1, last).squeeze(1) if padded else outs[0][:, -1]]
    if rnn.bidirectional:
        # each direction its own call, also without padding: one bidirectional oneDNN call
        # measured slower than two one-directional ones (1.4x at [32, 30, 556] → 100)
        if padded:
            rev = _reversal_index(lengths, total).unsqueeze(2)
            r = one(x.gather(1, rev.expand(-1, -1, x.shape[2])), w[per_dir:])
            finals.append(r.gather(1, last).squeeze(1))
            outs.append(r.gather(1, rev.expand(-1, -1, rnn.hidden_size)))
        else:
            r = one(x.flip(1), w[per_dir:])
            finals.append(r[:, -1])
            outs.append(r.flip(1))
    out = torch.cat(outs, 2) if len(outs) > 1 else outs[0]
    if padded:  # zero the padding, as pad_packed_sequence gives
        out = out * (torch.arange(total, device=x.device) < lengths.unsqueeze(1)).unsqueeze(2).to(out.dtype)
    return out, torch.stack(finals)


def run_rnn(rnn: nn.RNNBase, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Run a (bidirectional) RNN over padded ``x`` [B, T, D] with true ``lengths``: padding
    never enters a valid step and outputs are zero at padding. A plain one-layer LSTM goes
    through :func:`run_rnn_padded` (torch's fused oneDNN kernel, :func:`_padded_ok`);
    anything else (GRUs, several layers, Opacus' DP layers) through a packed sequence."""
    if _padded_ok(rnn):
        return run_rnn_padded(rnn, x, lengths)[0]
    packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
    out, _ = rnn(packed)
    out, _ = pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
    return out


def grouped_final_states(rnn: nn.RNNBase, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """``h_n`` [dirs, B, H] of ``rnn`` over ``x`` [B, T, D] with ``lengths`` (≥ 1), computed
    by :func:`run_rnn_padded` over groups of rows of similar length (:func:`_length_groups`
    with :func:`_char_group_costs`), in the original row order."""
    order = torch.argsort(lengths)
    sl = lengths[order]
    parts = []
    for a, b in _length_groups(sl.tolist(), *_char_group_costs(rnn)):
        parts.append(run_rnn_padded(rnn, x[order[a:b], : int(sl[b - 1])], sl[a:b])[1])
    return torch.cat(parts, 1).index_select(1, torch.argsort(order))


class CharEncoder(nn.Module):
    """Bidirectional LSTM/GRU over the characters of each distinct token; returns the
    concatenated final forward and backward states, [U, 2*hidden].

    ``onehot=True`` feeds the festag one-hot ASCII vectors (a frozen identity
    embedding, festag "Preprocessing"); otherwise characters get a learned embedding of
    ``emb_dim`` (Lample et al. 2016; the ahmed thesis' char-GRU).
    """

    def __init__(self, cell: str = "lstm", hidden: int = 128, onehot: bool = True, emb_dim: int = 25) -> None:
        super().__init__()
        self.onehot = onehot
        dim = N_CHAR_IDS - 1 if onehot else emb_dim
        self.embed = nn.Embedding(N_CHAR_IDS, dim, padding_idx=0)
        if onehot:
            with torch.no_grad():
                self.embed.weight.zero_()
                self.embed.weight[1:] = torch.eye(N_CHAR_IDS - 1)
            self.embed.weight.requires_grad_(False)
        rnn = {"lstm": nn.LSTM, "gru": nn.GRU}[cell]
        self.rnn = rnn(dim, hidden, batch_first=True, bidirectional=True)
        self.out_dim = 2 * hidden

    def forward(self, char_ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        x = self.embed(char_ids)
        lengths = lengths.clamp(min=1)
        if _padded_ok(self.rnn) and isinstance(self.rnn, nn.LSTM):
            h = grouped_final_states(self.rnn, x, lengths)
        else:
            packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
            _, h = self.rnn(packed)
            if isinstance(h, tuple):
                h = h[0]
        return torch.cat([h[-2], h[-1]], dim=1)


def _keep_mask(x: torch.Tensor, shape: tuple[int, ...], p: float) -> torch.Tensor:
    """A dropout mask of ``shape``: each entry 1 / (1 - p) with probability 1 - p, else 0.
    Drawn as ``uniform < 1 - p`` (torch's generator): the same Bernoulli(1 - p) law as
    ``bernoulli_``, which on the CPU draws element by element and measured 3.5x slower
    (2.6 ms against 0.76 ms for a [32, 15, 556] mask, one thread)."""
    return (torch.rand(shape, dtype=x.dtype, device=x.device) < 1 - p).to(x.dtype) * (1.0 / (1 - p))


class Dropout(nn.Dropout):
    """``nn.Dropout`` (inverted: kept entries scaled by 1 / (1 - p), identity in eval mode)
    with its mask drawn by :func:`_keep_mask`: forward + backward of a [32, 15, 556] input
    2.2x faster than ``nn.Dropout`` on one CPU thread (3.2 → 1.4 ms)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0:
            return x
        if self.p == 1:
            return x * 0.0
        return x * _keep_mask(x, tuple(x.shape), self.p)


class LockedDropout(nn.Module):
    """Variational (locked) dropout: one mask per sentence shared over time steps
    (Gal & Ghahramani 2016; friedrich et al. 2019 use it between LSTM layers)."""

    def __init__(self, p: float) -> None:
        super().__init__()
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0:
            return x
        return x * _keep_mask(x, (x.shape[0], 1, x.shape[2]), self.p)


class RNNStack(nn.Module):
    """Bidirectional recurrent layers, e.g. ("gru", "gru") or ("lstm", "gru"), with locked
    dropout between layers."""

    def __init__(self, in_dim: int, cells: tuple[str, ...], hidden: int, between_dropout: float = 0.0) -> None:
        super().__init__()
        layers, d = [], in_dim
        for c in cells:
            layers.append({"lstm": nn.LSTM, "gru": nn.GRU}[c](d, hidden, batch_first=True, bidirectional=True))
            d = 2 * hidden
        self.layers = nn.ModuleList(layers)
        self.drop = LockedDropout(between_dropout)
        self.out_dim = d

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        for i, rnn in enumerate(self.layers):
            if i:
                x = self.drop(x)
            x = run_rnn(cast(nn.RNNBase, rnn), x, lengths)  # __init__ fills layers with LSTMs/GRUs
        return x


def sinusoidal_positions(n: int, dim: int) -> torch.Tensor:
    """Vaswani et al. (2017) sinusoidal position encodings, [n, dim]."""
    pos = torch.arange(n, dtype=torch.float32).unsqueeze(1)
    div = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
    pe = torch.zeros(n, dim)
    pe[:, 0::2] = torch.sin(pos * div)
    pe[:, 1::2] = torch.cos(pos * div)[:, : dim // 2]
    return pe


class TokenEncoder(nn.Module):
    """The input of every tagger: per token, its word embedding, optionally followed by its
    character encoding (:class:`CharEncoder`) and its casing vector, concatenated,
    [B, T, :attr:`out_dim`].

    Word embeddings: ``nn.Embedding(num_words, word_dim)`` (row 0 = padding), initialised
    from ``embeddings`` (a ``[num_words, word_dim]`` matrix, e.g. word2vec; any other shape
    is a ``ValueError``) when given, frozen when ``freeze_embeddings``. Casing: the
    Reimers & Gurevych (2017) casing feature of :data:`deidlib.embeddings.chars.CASINGS`;
    ``onehot_casing=True`` starts the vectors one-hot (the RNN taggers), ``False`` keeps
    the random ``nn.Embedding`` start (the transformer tagger, as it has always trained).
    ``word_dropout``: in training, replace known words by ``<unk>`` at this rate (default 0:
    off, and then no random numbers are drawn).

    Sub-modules are created in the order word, char, casing: with the same torch seed
    a tagger draws the same initial parameters as when each tagger built these itself.
    """

    _char_cache: dict[bytes, torch.Tensor] | None  # set by char_cache() only

    def __init__(
        self,
        num_words: int,
        word_dim: int,
        *,
        char: str | None = None,
        char_onehot: bool = True,
        char_emb_dim: int = 25,
        char_hidden: int = 128,
        casing: bool = False,
        casing_dim: int = len(CASINGS),
        onehot_casing: bool = True,
        embeddings: np.ndarray | None = None,
        freeze_embeddings: bool = False,
        word_dropout: float = 0.0,
    ) -> None:
        super().__init__()
        if not 0.0 <= word_dropout < 1.0:
            raise ValueError(f"word_dropout must be in [0, 1), got {word_dropout}")
        self.word_dropout = float(word_dropout)
        self.word = nn.Embedding(num_words, word_dim, padding_idx=0)
        if embeddings is not None:
            if tuple(embeddings.shape) != (num_words, word_dim):
                raise ValueError(f"embedding matrix {tuple(embeddings.shape)} != ({num_words}, {word_dim})")
            with torch.no_grad():
                self.word.weight.copy_(torch.as_tensor(embeddings))
        self.word.weight.requires_grad_(not freeze_embeddings)
        self.out_dim = word_dim
        self.char = CharEncoder(char, char_hidden, char_onehot, char_emb_dim) if char else None
        if self.char is not None:
            self.out_dim += self.char.out_dim
        self.casing = nn.Embedding(len(CASINGS), casing_dim, padding_idx=0) if casing else None
        if self.casing is not None:
            if onehot_casing:
                with torch.no_grad():
                    self.casing.weight.zero_()
                    self.casing.weight[1:, : len(CASINGS) - 1] = torch.eye(len(CASINGS) - 1)[:, :casing_dim]
            self.out_dim += casing_dim

    @contextmanager
    def char_cache(self) -> Iterator[None]:
        """Inside the block, in eval mode without autograd, each distinct character sequence
        is encoded once and reused by every later batch (an inference pass over many
        batches encodes each distinct token once, not once per batch). Keyed by the
        token's character ids, so batches of different featurizer calls share it; dropped on
        exit, so weights that change later are never served stale encodings. Rows of an
        RNN batch do not interact, so a cached encoding equals a fresh one up to float
        rounding of the batched matrix products."""
        self._char_cache = {}
        try:
            yield
        finally:
            self._char_cache = None

    def _chars(self, batch: Batch) -> torch.Tensor:
        """Character encodings of the batch's distinct tokens, [U, char.out_dim]."""
        char, char_ids, char_lengths = self.char, batch.char_ids, batch.char_lengths
        if char is None or char_ids is None or char_lengths is None:
            raise ValueError("character encodings need a character encoder and a batch with char_ids")
        cache = getattr(self, "_char_cache", None)
        if cache is None or self.training or torch.is_grad_enabled():
            return char(char_ids, char_lengths)
        ids, lens = char_ids.cpu().numpy(), char_lengths.clamp(min=1).tolist()
        keys = [ids[u, :n].tobytes() for u, n in enumerate(lens)]
        todo = [u for u, k in enumerate(keys) if k not in cache]
        if todo:
            idx = torch.tensor(todo, device=char_ids.device)
            new = char(char_ids[idx], char_lengths[idx])
            for u, row in zip(todo, new):
                cache[keys[u]] = row
        return torch.stack([cache[k] for k in keys])

    def _word_ids(self, batch: Batch) -> torch.Tensor:
        """The batch's word ids; in training with ``word_dropout`` > 0 each known word is
        replaced by ``<unk>`` with that probability (Lample et al. 2016, section 4: the UNK
        vector then learns from ordinary words too, not only from rare ones — which in a
        synthetic corpus are mostly PHI — so an unseen word of a real note is not read as
        PHI). Draws from torch's generator only when the rate is > 0."""
        ids = batch.word_ids
        if self.training and self.word_dropout > 0:
            drop = torch.rand(ids.shape, device=ids.device) < self.word_dropout
            ids = ids.masked_fill(drop & (ids > UNK), UNK)
        return ids

    def forward(self, batch: Batch) -> torch.Tensor:
        parts = [self.word(self._word_ids(batch))]
        if self.char is not None:
            parts.append(self._chars(batch)[batch.token_to_unique])
        if self.casing is not None:
            parts.append(self.casing(batch.casing_ids))
        return torch.cat(parts, -1) if len(parts) > 1 else parts[0]
