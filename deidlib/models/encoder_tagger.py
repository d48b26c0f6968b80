"""A tagger on a pre-trained transformer encoder (``--model minilm``).

Architecture. Sub-word pieces of each sentence (the encoder's own WordPiece vocabulary,
:func:`deidlib.embeddings.encoders.align_subwords`) → the pre-trained encoder
(all-MiniLM-L6-v2 by default, loaded from local files) → each word's vector is the *mean* of
its pieces' states (a choice: Devlin et al. 2019 §5.3 tag the first piece; the mean uses
every piece and is what feature-based use of a frozen encoder usually takes). The states are
the last layer's, or with ``layers`` the mean of chosen hidden states (Devlin et al. 2019
§5.3, Table 7: for feature-based NER, inner layers and sums of the last four do better than
the last layer alone) → concatenated with the casing feature (Reimers & Gurevych 2017; the
MiniLM vocabulary is uncased, so without it "Smith" and "smith" look alike) → dropout →
optionally one bidirectional GRU layer (``hidden`` > 0), or with ``head="conv"`` one convolution over
``kernel`` neighbouring words with ``hidden`` ReLU channels → linear → CRF (or softmax).

What runs. Transformer layers above the highest hidden state in ``layers`` are dropped when
the tagger is built (``layers=[3]`` keeps 3 of MiniLM's 6 layers): they would cost compute and,
when trainable, receive no gradient. Their keys in older saved weights are ignored on load.

What trains. ``finetune_layers=None`` fine-tunes the whole encoder; ``finetune_layers=k`` the
top ``k`` layers of the full encoder (only those kept train); ``0`` freezes it: only the head
trains, and a sentence's encoder vectors are computed once and cached (``cache_bytes``;
:meth:`EncoderTagger.clear_cache`, :func:`clear_encoder_caches`); a frozen BERT runs in
:mod:`deidlib.embeddings.bert` (plain PyTorch), in eval mode. The details:
docs/design/models.md.

Privacy position. The encoder and its WordPiece vocabulary are public; this tagger has no
word vocabulary built from training text (its featurizer's word list is ``<pad>``,
``<unk>``), unlike the word-embedding taggers whose vocabulary lists the training words
(ahmed_dp module docstring). Under DP-SGD with ``finetune_layers=0`` only the small head is
private: the "public features" recipe of Tramèr & Boneh (ICLR 2021). Per-sentence gradients
of such a head come in one vectorised pass (:meth:`EncoderTagger.per_sentence_gradients`),
for the BiGRU head too: ``torch.func`` has no rule for ``nn.GRU``, so that pass runs the same
equations step by step (:func:`_gru_direction`; a test checks it against ``nn.GRU``'s
microbatch gradients).

Long sentences. The encoder reads at most ``max_position_embeddings - 2`` pieces (510 for
MiniLM); longer sentences are encoded in consecutive windows of that many pieces, each with
its own ``[CLS]``/``[SEP]`` (a choice: no overlap; the nursing notes' longest sentence has 357
words).
"""

from __future__ import annotations

import hashlib
from contextlib import nullcontext
from typing import Any

import torch
from torch import nn

from ..embeddings.chars import CASINGS
from ..embeddings.encoders import encoder_config, load_encoder_model, load_subword_tokenizer
from .features import Featurizer
from .layers import RNNStack, TokenEncoder
from .protocol import Batch
from .taggers import BaseTagger, register_kind

__all__ = []

#: the default bound of all frozen encoders' cached word vectors together, in bytes (about
#: 3 GB: the training sentences of every study fit; ``deidlib deidentify`` runs with a far
#: smaller bound, :data:`deidlib.pipeline.run.INFERENCE_CACHE_BYTES`)
_DEFAULT_CACHE_BYTES = 3 << 30
#: what one cached sentence costs besides its key and its vectors' data (the tensor object,
#: its storage and the dict entry), counted so that the bound holds for the process's memory
_ENTRY_OVERHEAD = 512


class EncoderVectorCache(dict):
    """One frozen encoder's word vectors per sentence key (``bytes`` -> [T, H] tensor), with
    the bytes they hold (:attr:`nbytes`: keys, data and :data:`_ENTRY_OVERHEAD` each)."""

    def __init__(self) -> None:
        super().__init__()
        self.nbytes = 0

    def put(self, key: bytes, vec: torch.Tensor, limit: int) -> bool:
        """Keep ``vec`` under ``key`` unless all caches together would then exceed ``limit``
        bytes (:func:`_cached_bytes`); returns whether it was kept. A full cache keeps what it
        has (no eviction: a training pass that does not fit still reuses a fixed part)."""
        size = len(key) + vec.nelement() * vec.element_size() + _ENTRY_OVERHEAD
        if key in self or _cached_bytes() + size > limit:
            return False
        self[key] = vec
        self.nbytes += size
        return True

    def clear(self) -> None:
        super().clear()
        self.nbytes = 0


#: frozen encoders' word vectors, per SHA-1 of the encoder weights (EncoderTagger._cache)
_SHARED_CACHES: dict[str, EncoderVectorCache] = {}


def _cached_bytes() -> int:
    """Bytes held by every frozen encoder's cached word vectors together."""
    return sum(c.nbytes for c in _SHARED_CACHES.values())


def clear_encoder_caches() -> None:
    """Free the word vectors cached for every frozen encoder."""
    _SHARED_CACHES.clear()


def _never_trained(encoder: str, finetune_layers: int | None, layers: tuple[int, ...]) -> bool:
    """Whether no kept layer of ``encoder`` trains (the frozen case of the module docstring),
    read from its config before the model is loaded; invalid arguments answer False (the
    constructor's checks then raise)."""
    n = int(encoder_config(encoder).get("num_hidden_layers", 0))
    k = n if finetune_layers is None else finetune_layers
    if not 0 <= k <= n or not layers or any(not -(n + 1) <= i < n + 1 for i in layers):
        return False
    return k == 0 or n - k >= max(i % (n + 1) for i in layers)


class EncoderTagger(BaseTagger):
    """See the module docstring."""

    kind = "minilm"
    #: the encoder's autocast dtype on a CUDA device (``None``: float32); set for a pass by
    #: :func:`deidlib.training.precision.mixed_precision`
    compute_dtype: torch.dtype | None = None
    #: a ``transformers`` BertModel or :class:`deidlib.embeddings.bert.PlainBert`: its config and
    #: layers are read by name, as both spell them
    encoder: Any

    def __init__(
        self,
        featurizer: Featurizer,
        *,
        encoder: str = "minilm",
        finetune_layers: int | None = None,
        layers: int | tuple[int, ...] | list[int] = -1,
        casing: bool = True,
        input_dropout: float = 0.1,
        hidden: int = 0,
        head: str = "gru",
        kernel: int = 5,
        crf: bool = True,
        constrain_crf: bool = True,
        recall_penalty: float | None = None,
        cache_bytes: int = _DEFAULT_CACHE_BYTES,
        embeddings=None,
        freeze_embeddings: bool = False,
        word_dim: int = 0,
    ) -> None:
        from .features import EncoderFeaturizer

        if not isinstance(featurizer, EncoderFeaturizer):
            raise TypeError("the encoder tagger needs an EncoderFeaturizer (build_featurizer('minilm', ...)), "
                            f"got {type(featurizer).__name__}")
        if featurizer.encoder != encoder:
            raise ValueError(f"featurizer pieces come from encoder {featurizer.encoder!r}, the tagger's is {encoder!r}")
        if embeddings is not None:
            raise ValueError("the encoder tagger has no word embeddings to initialise (embeddings must be None)")
        self.layers = (layers,) if isinstance(layers, int) else tuple(int(i) for i in layers)
        hp = dict(encoder=encoder, finetune_layers=finetune_layers, layers=list(self.layers), casing=casing,
                  input_dropout=input_dropout,
                  hidden=hidden, **({"head": head, "kernel": kernel} if head != "gru" else {}))
        super().__init__(featurizer, crf=crf, recall_penalty=recall_penalty, hparams=hp,
                         constrain_crf=constrain_crf)
        self.encoder = load_encoder_model(encoder, frozen=_never_trained(encoder, finetune_layers, self.layers))
        if getattr(self.encoder, "pooler", None) is not None:
            self.encoder.pooler = None
        tok = load_subword_tokenizer(encoder)
        self.cls_id, self.sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
        if self.cls_id is None or self.sep_id is None:
            raise ValueError(f"encoder {encoder!r}: its tokenizer has no [CLS]/[SEP] pieces")
        self.window = int(self.encoder.config.max_position_embeddings) - 2
        n_states = int(self.encoder.config.num_hidden_layers) + 1
        if not self.layers or any(not -n_states <= i < n_states for i in self.layers):
            raise ValueError(f"layers must index the {n_states} hidden states (0 = embeddings, -1 = last), "
                             f"got {layers!r}")
        blocks = list(self.encoder.encoder.layer)
        n = len(blocks)
        if finetune_layers is not None and not 0 <= finetune_layers <= n:
            raise ValueError(f"finetune_layers must be None or in [0, {n}] (got {finetune_layers})")
        k = n if finetune_layers is None else finetune_layers
        # layers above the highest state read are never used: drop them (no compute, no weights)
        self.kept_layers = max(i % n_states for i in self.layers)
        if self.kept_layers < n:
            blocks = blocks[: self.kept_layers]
            self.encoder.encoder.layer = nn.ModuleList(blocks)
            self.encoder.config.num_hidden_layers = self.kept_layers
            self._register_load_state_dict_pre_hook(self._drop_unused_layer_keys)
        trained = blocks[max(0, n - k):]  # the top k of the full encoder, those still kept
        self._frozen: list[nn.Module] = []
        if not trained:
            self._frozen = [self.encoder]
        elif k < n:
            self._frozen = [self.encoder.embeddings, *blocks[: n - k]]
        for m in self._frozen:
            m.requires_grad_(False)
        self.frozen = not trained
        #: bound of all frozen encoders' cached vectors together, in bytes (0: no cache)
        self.cache_bytes = int(cache_bytes)
        self._fingerprint: str | None = None
        # no word vector: a zero-width word embedding keeps BaseTagger's token interface
        self.tokens = TokenEncoder(featurizer.num_words, 0, casing=casing, casing_dim=len(CASINGS))
        self.tokens.word.weight.requires_grad_(False)
        d = int(self.encoder.config.hidden_size) + self.tokens.out_dim
        self.in_drop = nn.Dropout(input_dropout)
        if head not in ("gru", "conv"):
            raise ValueError(f"head must be 'gru' or 'conv', got {head!r}")
        if head == "conv" and kernel % 2 != 1:
            raise ValueError(f"the conv head needs an odd kernel, got {kernel}")
        self.rnn = RNNStack(d, ("gru",), hidden) if hidden and head == "gru" else None
        self.conv = nn.Conv1d(d, hidden, kernel, padding=kernel // 2) if hidden and head == "conv" else None
        self.out = nn.Linear(hidden * (2 if self.rnn is not None else 1) if hidden else d, featurizer.num_labels)
        self.default_training = {"optimizer": "adam", "lr": 1e-4 if trained else 3e-3, "clip": 1.0}
        self.train(self.training)

    def train(self, mode: bool = True):
        super().train(mode)
        for m in self._frozen if hasattr(self, "_frozen") else ():
            m.eval()  # frozen parts never drop out: deterministic, cacheable
        return self

    @property
    def _cache(self) -> EncoderVectorCache:
        """The frozen encoder's word vectors per sentence, shared by every tagger whose frozen
        encoder has the same weights (a SHA-1 of them, computed once): the taggers of a
        sweep (seeds, ε) encode each sentence once."""
        if self._fingerprint is None:
            h = hashlib.sha1(repr(self.layers).encode())
            for name, t in self.encoder.state_dict().items():
                h.update(name.encode())
                h.update(t.detach().cpu().contiguous().numpy().tobytes())
            self._fingerprint = h.hexdigest()
        return _SHARED_CACHES.setdefault(self._fingerprint, EncoderVectorCache())

    def precompute(self, sentences, batch_size: int = 64, progress: bool = False) -> int:
        """Encode ``sentences`` (token lists, or objects with ``.words``) into the cache of a
        frozen encoder, in length-sorted batches (little padding); returns how many were new.
        Only a speed-up: :meth:`word_vectors` fills the cache on demand too."""
        from tqdm.auto import tqdm

        if not self.frozen:
            raise ValueError("precompute caches a frozen encoder's vectors (finetune_layers=0)")
        words = [list(getattr(s, "words", s)) for s in sentences]
        words = [w for w in words if w]
        order = sorted(range(len(words)), key=lambda i: len(words[i]))
        n0 = len(self._cache)
        was = self.training
        self.eval()
        try:
            for i in tqdm(range(0, len(order), batch_size), desc="encode", disable=not progress, unit="batch"):
                self.word_vectors(self.featurizer.encode([words[j] for j in order[i : i + batch_size]]))
        finally:
            self.train(was)
        return len(self._cache) - n0

    def clear_cache(self) -> None:
        """Forget the cached word vectors of this tagger's (frozen) encoder weights."""
        self._cache.clear()

    def _drop_unused_layer_keys(self, state_dict, prefix, *args) -> None:
        """``load_state_dict`` pre-hook: weights saved before unused top layers were dropped
        (or by a tagger reading higher states) still load; the dropped layers' keys are ignored."""
        head = prefix + "encoder.encoder.layer."
        for key in [k for k in state_dict if k.startswith(head)]:
            if int(key[len(head):].split(".", 1)[0]) >= self.kept_layers:
                del state_dict[key]

    def _load_from_state_dict(self, *args, **kwargs):
        self._fingerprint = None  # new encoder weights: look the cache up afresh
        super()._load_from_state_dict(*args, **kwargs)

    def _run(self, sub_ids: torch.Tensor, sub_mask: torch.Tensor) -> torch.Tensor:
        """The pieces' states, [B, S, H], window by window: the last layer, or the mean of the
        hidden states ``layers``."""
        B, S = sub_ids.shape
        outs = []
        for s0 in range(0, S, self.window):
            ids, m = sub_ids[:, s0 : s0 + self.window], sub_mask[:, s0 : s0 + self.window]
            w = ids.shape[1]
            n = m.sum(1)
            full = ids.new_zeros(B, w + 2)
            full[:, 0] = self.cls_id
            full[:, 1 : w + 1] = ids * m
            full[torch.arange(B, device=ids.device), n + 1] = self.sep_id
            att = torch.arange(w + 2, device=ids.device).unsqueeze(0) <= (n + 1).unsqueeze(1)
            with self._autocast(ids.device):
                if self.layers == (-1,):
                    h = self.encoder(input_ids=full, attention_mask=att.long()).last_hidden_state
                else:
                    states = self.encoder(input_ids=full, attention_mask=att.long(),
                                          output_hidden_states=True).hidden_states
                    h = torch.stack([states[i] for i in self.layers]).mean(0)
            if h.dtype in (torch.bfloat16, torch.float16):  # autocast's states: the head reads float32
                h = h.float()
            outs.append(h[:, 1 : w + 1])
        return torch.cat(outs, 1)

    def _autocast(self, device: torch.device):
        """bf16 autocast of the encoder on a CUDA device when :attr:`compute_dtype` is set."""
        if self.compute_dtype is None or device.type != "cuda":
            return nullcontext()
        return torch.autocast("cuda", dtype=self.compute_dtype)

    @staticmethod
    def _pool(states: torch.Tensor, sub_mask: torch.Tensor, sub_word: torch.Tensor, T: int) -> torch.Tensor:
        """Mean of each word's piece states, [B, T, H]."""
        B, S, H = states.shape
        idx = sub_word.clamp(min=0).unsqueeze(-1).expand(B, S, H)
        w = sub_mask.to(states.dtype).unsqueeze(-1)
        total = states.new_zeros(B, T, H).scatter_add_(1, idx, states * w)
        count = states.new_zeros(B, T, 1).scatter_add_(1, idx[..., :1], w)
        return total / count.clamp(min=1.0)

    def word_vectors(self, batch: Batch) -> torch.Tensor:
        """The encoder's vector of every word, [B, T, H] (cached when the encoder is frozen)."""
        sub_ids, sub_mask, sub_word = (batch.extra[k] for k in ("sub_ids", "sub_mask", "sub_word"))
        T = batch.mask.shape[1]
        if not self.frozen:
            return self._pool(self._run(sub_ids, sub_mask), sub_mask, sub_word, T)
        lens = sub_mask.sum(1).tolist()
        if self.cache_bytes <= 0:  # no cache: every sentence is encoded (no fingerprint, no keys)
            return self._encode_rows(batch, list(range(len(lens))), lens)
        cache = self._cache
        ids_np, word_np = sub_ids.cpu().numpy(), sub_word.cpu().numpy()
        # the pieces *and* their words: "3/14" and "3 / 14" have the same pieces
        keys = [ids_np[b, :n].tobytes() + word_np[b, :n].tobytes() for b, n in enumerate(lens)]
        todo = [b for b, k in enumerate(keys) if k not in cache]
        fresh: dict[int, torch.Tensor] = {}
        if todo:
            vec = self._encode_rows(batch, todo, lens)
            n_words = batch.mask.sum(1).tolist()
            for j, b in enumerate(todo):
                fresh[b] = vec[j, : n_words[b]].detach().clone()  # not a view: the padded batch is freed
                cache.put(keys[b], fresh[b], self.cache_bytes)
        H = int(self.encoder.config.hidden_size)
        out = batch.mask.new_zeros(batch.mask.shape[0], T, H, dtype=torch.float32)
        for b, k in enumerate(keys):
            v = fresh.get(b)
            if v is None:
                v = cache[k]
            out[b, : v.shape[0]] = v
        return out

    def _encode_rows(self, batch: Batch, rows: list[int], lens: list[int]) -> torch.Tensor:
        """The frozen encoder's word vectors of the sentences ``rows`` of ``batch``,
        [len(rows), T, H], run in groups of similar piece counts (:func:`_length_groups`): a batch
        sorted by words still mixes short and long piece counts, and padding would cost as much
        as the pieces themselves. Each sentence's vectors do not depend on its group (padding
        invariance, ``tests/models/test_encoder_tagger.py``)."""
        sub_ids, sub_mask, sub_word = (batch.extra[k] for k in ("sub_ids", "sub_mask", "sub_word"))
        T = batch.mask.shape[1]
        out = batch.mask.new_zeros(len(rows), T, int(self.encoder.config.hidden_size), dtype=torch.float32)
        order = sorted(range(len(rows)), key=lambda j: lens[rows[j]])
        with torch.no_grad():
            for group in _length_groups([lens[rows[j]] for j in order]):
                at = [order[j] for j in group]
                sel = torch.tensor([rows[j] for j in at], device=sub_ids.device)
                S = max(1, max(lens[rows[j]] for j in at))
                ids, m, w = sub_ids[sel, :S], sub_mask[sel, :S], sub_word[sel, :S]
                out[torch.tensor(at, device=out.device)] = self._pool(self._run(ids, m), m, w, T)
        return out

    def emissions(self, batch: Batch) -> torch.Tensor:
        parts = [self.word_vectors(batch)]
        if self.tokens.out_dim:
            parts.append(self.tokens(batch))
        x = self.in_drop(torch.cat(parts, -1))
        return self.head(x, batch.mask)

    def head(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Emissions [B, T, L] from the token inputs ``x`` [B, T, D] (encoder vectors + casing)."""
        if self.rnn is not None:
            x = self.rnn(x, mask.sum(1))
        elif self.conv is not None:
            # padded positions are zeros, as the convolution's own zero padding: a sentence's
            # emissions do not depend on how much padding its batch has
            x = x * mask.unsqueeze(-1).to(x.dtype)
            x = torch.relu(self.conv(x.transpose(1, 2))).transpose(1, 2)
        return self.out(x)

    # -- vectorised per-sentence gradients (DP-SGD, deidlib.privacy.dpsgd method "vectorized") --

    @property
    def supports_vectorized(self) -> bool:
        """Whether :meth:`per_sentence_gradients` applies: a frozen encoder, no recall penalty,
        and a linear, convolutional or BiGRU head (the BiGRU is run by :func:`_gru_direction`,
        written for ``torch.func``, which has no rule for ``nn.GRU``)."""
        return self.frozen and not (self.recall_penalty and self.recall_penalty != 1)

    def _sentence_loss(self, params: dict[str, torch.Tensor], x, casing, mask, labels) -> torch.Tensor:
        """One sentence's loss from its encoder vectors ``x`` [T, H] (padding allowed: masked),
        written with ``torch.func``-friendly operations only (no data-dependent control flow):
        the same value as :meth:`sentence_losses` for that sentence."""
        F = nn.functional
        parts = [x]
        if self.tokens.casing is not None:
            parts.append(F.embedding(casing, params["tokens.casing.weight"], padding_idx=0))
        h = torch.cat(parts, -1)
        if self.training and self.in_drop.p > 0:
            h = F.dropout(h, self.in_drop.p, training=True)
        m = mask.to(h.dtype)
        if self.rnn is not None:
            pre = "rnn.layers.0."
            h = torch.cat([_gru_direction(h, mask, *(params[pre + w + sfx] for w in _GRU_WEIGHTS), reverse=bool(sfx))
                           for sfx in ("", "_reverse")], -1)
        elif self.conv is not None:
            h = h * m.unsqueeze(-1)
            h = torch.relu(F.conv1d(h.t().unsqueeze(0), params["conv.weight"], params["conv.bias"],
                                    padding=self.conv.padding[0])[0].t())
        em = F.linear(h, params["out.weight"], params["out.bias"])  # [T, L]
        y = labels.clamp(min=0)
        if self.crf is None:
            ce = F.cross_entropy(em, y, reduction="none")
            return (ce * m).sum()
        trans, start, end = params["crf.transitions"], params["crf.start"], params["crf.end"]
        if self.crf.constrained:
            trans_bias, start_bias, end_bias = self.crf.constraint_biases()
            trans, start, end = trans + trans_bias, start + start_bias, end + end_bias
        alpha = start + em[0]
        for t in range(1, em.shape[0]):
            nxt = torch.logsumexp(alpha.unsqueeze(1) + trans, 0) + em[t]
            alpha = torch.where(mask[t], nxt, alpha)
        log_z = torch.logsumexp(alpha + end, 0)
        gold = start.gather(0, y[:1])[0] + (em.gather(1, y.unsqueeze(1)).squeeze(1) * m).sum()
        if em.shape[0] > 1:
            moves = trans.index_select(0, y[:-1]).gather(1, y[1:].unsqueeze(1)).squeeze(1)
            gold = gold + (moves * m[1:]).sum()
        last = mask.long().sum() - 1
        return log_z - (gold + end.gather(0, y.gather(0, last.unsqueeze(0)))[0])

    def per_sentence_gradients(self, batch: Batch, names: list[str]) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """Losses [B] and exact per-sentence gradients (``[B, *p]`` per trainable parameter, in the
        order of ``names``) in one vectorised pass (``torch.func.vmap`` over ``torch.func.grad``
        of :meth:`_sentence_loss`; dropout masks drawn per sentence). The frozen encoder's vectors
        are inputs, not parameters: they come from the cache."""
        from torch.func import grad_and_value, vmap

        if not self.supports_vectorized:
            raise ValueError("per_sentence_gradients needs a frozen encoder and no recall penalty")
        if batch.labels is None:
            raise ValueError("the batch has no labels")
        own = {n: p.detach() for n, p in self.named_parameters()}
        trained = {n: own[n] for n in names}
        fixed = {n: p for n, p in own.items() if n not in trained}  # frozen parts the loss reads too
        x = self.word_vectors(batch)
        casing = batch.casing_ids if batch.casing_ids is not None else torch.zeros_like(batch.word_ids)

        def loss(p, q, *args):
            return self._sentence_loss({**q, **p}, *args)

        g, v = vmap(grad_and_value(loss), in_dims=(None, None, 0, 0, 0, 0), randomness="different")(
            trained, fixed, x, casing, batch.mask, batch.labels)
        return v.detach(), [g[n] for n in names]


def _length_groups(lengths: list[int], slack: float = 0.15, max_tokens: int = 4096) -> list[list[int]]:
    """Consecutive groups of the positions of ``lengths`` (sorted ascending) such that padding
    each group to its longest member costs at most ``slack`` of its real tokens (with the two
    special pieces each) and a group holds at most ``max_tokens`` padded tokens (a longer
    sentence is a group of its own)."""
    groups: list[list[int]] = []
    real = 0
    for i, n in enumerate(lengths):
        n = n + 2
        if groups and (len(groups[-1]) + 1) * n <= max_tokens and \
                (len(groups[-1]) + 1) * n <= (1 + slack) * (real + n):
            groups[-1].append(i)
            real += n
        else:
            groups.append([i])
            real = n
    return groups


#: ``nn.GRU``'s parameters of one direction, in the order :func:`_gru_direction` takes them
_GRU_WEIGHTS = ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0")


def _gru_direction(x, mask, w_ih, w_hh, b_ih, b_hh, *, reverse: bool = False) -> torch.Tensor:
    """One direction of ``nn.GRU`` over one sentence ``x`` [T, D] with its ``mask`` [T]
    (padding at the end), written with ``torch.func``-friendly operations only (no rule for
    ``nn.GRU`` exists; :meth:`EncoderTagger.per_sentence_gradients`). PyTorch's GRU
    equations and gate order (r, z, n): r = σ(W_ir x + b_ir + W_hr h + b_hr),
    z = σ(W_iz x + b_iz + W_hz h + b_hz), n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn)),
    h' = (1 − z) ⊙ n + z ⊙ h, from h = 0. The state does not move on padded steps, so the
    reverse direction starts at the sentence's last word, as with packed sequences; padded
    positions output zeros, as ``pad_packed_sequence`` does. Returns [T, H]."""
    F = nn.functional
    T, H = x.shape[0], w_hh.shape[1]
    gi = F.linear(x, w_ih, b_ih)  # the input half of every gate, all steps at once
    h = x.new_zeros(H)
    out: dict[int, torch.Tensor] = {}
    for t in range(T - 1, -1, -1) if reverse else range(T):
        i_r, i_z, i_n = gi[t].chunk(3)
        h_r, h_z, h_n = F.linear(h, w_hh, b_hh).chunk(3)
        r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
        n = torch.tanh(i_n + r * h_n)
        h = torch.where(mask[t], (1 - z) * n + z * h, h)
        out[t] = h * mask[t].to(h.dtype)
    return torch.stack([out[t] for t in range(T)])


register_kind("minilm", EncoderTagger)
