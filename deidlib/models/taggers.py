"""The taggers of the five studies behind one interface (:mod:`.protocol`).

Kinds (``build_tagger(kind, featurizer, ...)``; defaults are the papers' values):

``festag``
    festag & Spreckelsen 2020, Fig. 1 (NeuroNER): char BiLSTM (128) + 300-d word2vec →
    dropout 0.5 → token BiLSTM (100) → tanh feed-forward (100) → softmax (``crf=True``: CRF).
``friedrich``
    friedrich et al. 2019, section 4: BiLSTM-CRF (2 layers × 128 per direction) over
    pre-trained word embeddings + casing, no character features; dropout 0.1 on the input,
    0.25 (variational) between layers, 0.5 after; Nadam, clipping 1.0 (:attr:`default_training`).
``gru`` / ``gru_gru`` / ``lstm_gru``
    ahmed thesis §4.1 (Table 4.2): character GRU (25) + word embedding (100) → one or two
    bidirectional context layers (150) → feed-forward → CRF (or softmax), BIOES labels.
    The feed-forward activation is tanh (NeuroNER's), ``ff_activation="relu"`` a ReLU.

``transformer``
    ahmed thesis §4.1.4 self-attention tagger: a Transformer encoder (blocks, heads,
    hidden size are parameters; a small one trained from scratch is the CPU default)
    over word + character features and sinusoidal positions → CRF or softmax.
``minilm``
    the pre-trained all-MiniLM-L6-v2 encoder (public, loaded from local files)
    fine-tuned, or frozen (``finetune_layers=0``), + casing → linear (or a GRU) → CRF
    (:mod:`.encoder_tagger`).

CRF outputs are constrained to well-formed BIO/BIOES paths by default (``constrain_crf``;
why: :mod:`.crf`).

The recall penalty of the ahmed thesis (§4.1.5, eq. 4.7–4.9) is ``recall_penalty=δ_p``:
``FNR = FN / (1 + FN + TP)`` over the PHI tokens of the batch (binary: label ≠ O,
predictions by argmax of the emissions), ``ρ = 1 + FNR·(δ_p − 1)`` and
``L_recall = ρ · L``. Eq. 4.8 is garbled in the text ("FNR × [(δ_p − 1) + 1]"); we read it
as ``FNR·(δ_p − 1) + 1`` so that δ_p = 1 gives the ordinary loss, as Table 4.4's
baseline row requires, and ρ ∈ [1, δ_p]. FNR is computed per batch; ρ is a weight (no
gradient flows through it) and multiplies the CRF NLL too, false negatives judged from the
argmax of the emissions. Why not the thesis' literal ρ: docs/design/models.md.

Parameters are initialised under a forked, seeded torch RNG (``seed``), so building a
tagger neither reads nor disturbs global random state.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from ..embeddings.chars import CASINGS
from .crf import CRF
from .features import Featurizer
from .layers import Dropout, RNNStack, TokenEncoder, sinusoidal_positions
from .presets import ALIASES, DEFAULT_TRAINING, PRESETS, check_kind
from .protocol import Batch

#: activations of the RNN taggers' feed-forward layer (``ff_activation``)
FF_ACTIVATIONS: dict[str, type[nn.Module]] = {"tanh": nn.Tanh, "relu": nn.ReLU}

__all__ = ["build_tagger", "tagger_from_config", "count_parameters"]

def count_parameters(model: nn.Module, trainable_only: bool = True) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)


#: sub-modules of :class:`TokenEncoder` that taggers held directly before it existed
_TOKEN_PARTS = ("word.", "char.", "casing.")


def _legacy_token_keys(state_dict, prefix, *_args) -> None:
    """``load_state_dict`` pre-hook: weights saved when ``word``/``char``/``casing`` sat on
    the tagger itself (``word.weight``) load into :attr:`BaseTagger.tokens` (``tokens.word.weight``)."""
    for key in [k for k in state_dict if k.startswith(prefix)]:
        rest = key[len(prefix):]
        if rest.startswith(_TOKEN_PARTS):
            state_dict[f"{prefix}tokens.{rest}"] = state_dict.pop(key)


class BaseTagger(nn.Module):
    """Shared token input (:class:`TokenEncoder`, built by the subclass as ``self.tokens``),
    output layer (softmax or CRF), loss, recall penalty, prediction, config."""

    kind = "base"
    tokens: TokenEncoder
    #: what it was trained for (``scheme``, ``encoding``, ``mode``, ...), set by whoever builds it
    task: dict[str, Any]

    def __init__(self, featurizer: Featurizer, *, crf: bool, recall_penalty: float | None, hparams: dict[str, Any],
                 constrain_crf: bool = True):
        super().__init__()
        self.featurizer = featurizer
        self.num_labels = featurizer.num_labels
        self.crf = CRF(self.num_labels, labels=featurizer.labels if constrain_crf else None) if crf else None
        self.recall_penalty = recall_penalty
        self.hparams = dict(hparams, crf=crf, recall_penalty=recall_penalty, constrain_crf=constrain_crf)
        self.o_index = featurizer.label_index.get("O", 0)
        self.default_training = dict(DEFAULT_TRAINING.get(self.kind, {"optimizer": "adam", "lr": 1e-3, "clip": 5.0}))
        self._register_load_state_dict_pre_hook(_legacy_token_keys)

    @property
    def word(self) -> nn.Embedding:
        """The word embedding (``self.tokens.word``)."""
        return self.tokens.word

    @property
    def char(self) -> nn.Module | None:
        """The character encoder, or ``None`` (``self.tokens.char``)."""
        return self.tokens.char

    @property
    def casing(self) -> nn.Embedding | None:
        """The casing embedding, or ``None`` (``self.tokens.casing``)."""
        return self.tokens.casing

    def default_optimizer(self) -> dict[str, Any]:
        """Optimiser hints of the paper ({"optimizer", "lr", "clip"}) the trainer reads."""
        return dict(self.default_training)

    # subclasses implement emissions(batch) -> [B, T, L]
    def emissions(self, batch: Batch) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def sentence_losses(self, batch: Batch, emissions: torch.Tensor | None = None) -> torch.Tensor:
        """Loss of each sentence, [B] (CRF NLL, or summed token cross-entropy)."""
        if batch.labels is None:
            raise ValueError("the batch has no labels")
        em = self.emissions(batch) if emissions is None else emissions
        if self.crf is not None:
            return self.crf.nll(em, batch.labels, batch.mask, reduction="none")
        ce = nn.functional.cross_entropy(em.transpose(1, 2), batch.labels, ignore_index=-100, reduction="none")
        return ce.sum(1)

    def penalty(self, batch: Batch, emissions: torch.Tensor) -> torch.Tensor:
        """ρ of the ahmed recall penalty (eq. 4.7–4.8, see module docstring); 1 when off."""
        if not self.recall_penalty or self.recall_penalty == 1:
            return emissions.new_ones(())
        with torch.no_grad():
            gold = (batch.labels != self.o_index) & batch.mask
            pred = (emissions.argmax(-1) != self.o_index) & batch.mask
            tp = (gold & pred).sum().float()
            fn = (gold & ~pred).sum().float()
            fnr = fn / (1 + fn + tp)
            return 1 + fnr * (self.recall_penalty - 1)

    def loss(self, batch: Batch) -> torch.Tensor:
        em = self.emissions(batch)
        return self.sentence_losses(batch, em).mean() * self.penalty(batch, em)

    @torch.no_grad()
    def marginals(self, batch: Batch) -> torch.Tensor:
        """Posterior tag probabilities per token, [B, T, K] (CRF forward–backward, or softmax)."""
        em = self.emissions(batch)
        if self.crf is not None:
            return self.crf.marginals(em, batch.mask)
        return torch.softmax(em, -1) * batch.mask.unsqueeze(-1).to(em.dtype)

    @torch.no_grad()
    def predict(self, batch: Batch, phi_threshold: float | None = None, encoding: str = "BIO") -> list[list[int]]:
        """Tag ids per sentence: the model's own decision, or with ``phi_threshold`` the
        recall-oriented one of :func:`deidlib.models.decoding.threshold_tags`."""
        if phi_threshold is not None:
            from .decoding import threshold_tags

            m = self.marginals(batch)
            labels = self.featurizer.labels
            return [threshold_tags(m[b, :n], labels, phi_threshold, encoding)
                    for b, n in enumerate(batch.mask.sum(1).tolist())]
        em = self.emissions(batch)
        if self.crf is not None:
            return self.crf.decode(em, batch.mask)
        best = em.argmax(-1).tolist()
        return [row[:n] for row, n in zip(best, batch.mask.sum(1).tolist())]

    def config(self) -> dict[str, Any]:
        return {"kind": self.kind, "hparams": self.hparams}


class RNNTagger(BaseTagger):
    """Character encoder (optional) + word embedding (+ casing) → recurrent layers →
    feed-forward (optional) → softmax or CRF. Covers festag, friedrich and the ahmed RNNs."""

    def __init__(
        self,
        featurizer: Featurizer,
        *,
        kind: str = "festag",
        char: str | None = "lstm",
        char_onehot: bool = True,
        char_emb_dim: int = 25,
        char_hidden: int = 128,
        word_dim: int = 300,
        casing: bool = False,
        casing_dim: int = len(CASINGS),
        input_dropout: float = 0.5,
        cells: tuple[str, ...] | list[str] = ("lstm",),
        hidden: int = 100,
        between_dropout: float = 0.0,
        output_dropout: float = 0.0,
        ff_dim: int = 100,
        ff_activation: str = "tanh",
        crf: bool = False,
        constrain_crf: bool = True,
        recall_penalty: float | None = None,
        embeddings: np.ndarray | None = None,
        freeze_embeddings: bool = False,
        word_dropout: float = 0.0,
    ) -> None:
        self.kind = kind
        if ff_activation not in FF_ACTIVATIONS:
            raise ValueError(f"ff_activation must be one of {sorted(FF_ACTIVATIONS)}, got {ff_activation!r}")
        hp = dict(char=char, char_onehot=char_onehot, char_emb_dim=char_emb_dim, char_hidden=char_hidden, word_dim=word_dim,
                  casing=casing, casing_dim=casing_dim, input_dropout=input_dropout, cells=list(cells), hidden=hidden,
                  between_dropout=between_dropout, output_dropout=output_dropout, ff_dim=ff_dim,
                  freeze_embeddings=freeze_embeddings)
        if ff_activation != "tanh":  # recorded only when not the default, so earlier configs are unchanged
            hp["ff_activation"] = ff_activation
        if word_dropout:  # recorded only when used, so configs of earlier models are unchanged
            hp["word_dropout"] = word_dropout
        super().__init__(featurizer, crf=crf, recall_penalty=recall_penalty, hparams=hp, constrain_crf=constrain_crf)
        self.tokens = TokenEncoder(featurizer.num_words, word_dim, char=char, char_onehot=char_onehot,
                                   char_emb_dim=char_emb_dim, char_hidden=char_hidden, casing=casing,
                                   casing_dim=casing_dim, embeddings=embeddings, freeze_embeddings=freeze_embeddings,
                                   word_dropout=word_dropout)
        self.in_drop = Dropout(input_dropout)
        self.rnn = RNNStack(self.tokens.out_dim, tuple(cells), hidden, between_dropout)
        self.out_drop = Dropout(output_dropout)
        self.ff = nn.Sequential(nn.Linear(self.rnn.out_dim, ff_dim), FF_ACTIVATIONS[ff_activation]()) if ff_dim else None
        self.out = nn.Linear(ff_dim or self.rnn.out_dim, featurizer.num_labels)

    def emissions(self, batch: Batch) -> torch.Tensor:
        x = self.in_drop(self.tokens(batch))
        h = self.out_drop(self.rnn(x, batch.mask.sum(1)))
        if self.ff is not None:
            h = self.ff(h)
        return self.out(h)


class TransformerTagger(BaseTagger):
    """ahmed thesis §4.1.4: self-attention (Transformer encoder) tagger trained from scratch."""

    kind = "transformer"
    positions: torch.Tensor  # the sinusoidal position table, a buffer

    def __init__(
        self,
        featurizer: Featurizer,
        *,
        char: str | None = "gru",
        char_onehot: bool = False,
        char_emb_dim: int = 25,
        char_hidden: int = 25,
        word_dim: int = 128,
        casing: bool = True,
        layers: int = 2,
        heads: int = 4,
        ff_hidden: int = 256,
        input_dropout: float = 0.1,
        attn_dropout: float = 0.1,
        max_len: int = 1024,
        crf: bool = True,
        constrain_crf: bool = True,
        recall_penalty: float | None = None,
        embeddings: np.ndarray | None = None,
        freeze_embeddings: bool = False,
    ) -> None:
        hp = dict(char=char, char_onehot=char_onehot, char_emb_dim=char_emb_dim, char_hidden=char_hidden, word_dim=word_dim,
                  casing=casing, layers=layers, heads=heads, ff_hidden=ff_hidden, input_dropout=input_dropout,
                  attn_dropout=attn_dropout, max_len=max_len, freeze_embeddings=freeze_embeddings)
        super().__init__(featurizer, crf=crf, recall_penalty=recall_penalty, hparams=hp, constrain_crf=constrain_crf)
        self.tokens = TokenEncoder(featurizer.num_words, word_dim, char=char, char_onehot=char_onehot,
                                   char_emb_dim=char_emb_dim, char_hidden=char_hidden, casing=casing,
                                   onehot_casing=False, embeddings=embeddings, freeze_embeddings=freeze_embeddings)
        d = self.tokens.out_dim
        self.d_model = heads * max(8, round(d / heads / 8) * 8) if d % heads else d
        self.proj = nn.Linear(d, self.d_model)
        self.register_buffer("positions", sinusoidal_positions(max_len, self.d_model), persistent=False)
        self.in_drop = Dropout(input_dropout)
        layer = nn.TransformerEncoderLayer(self.d_model, heads, ff_hidden, attn_dropout, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.out = nn.Linear(self.d_model, featurizer.num_labels)

    def emissions(self, batch: Batch) -> torch.Tensor:
        x = self.proj(self.tokens(batch))
        T = x.shape[1]
        if T > self.positions.shape[0]:
            raise ValueError(f"sentence of {T} tokens is longer than max_len={self.positions.shape[0]}")
        x = self.in_drop(x + self.positions[:T])
        h = self.encoder(x, src_key_padding_mask=~batch.mask)
        return self.out(h)


#: tagger classes of kinds defined in other modules (``minilm``: :mod:`.encoder_tagger`, which
#: registers itself when ``deidlib.models`` is imported), so that this module imports none of them
_EXTRA_KINDS: dict[str, type] = {}


def register_kind(kind: str, cls: type) -> None:
    """Let :func:`build_tagger` build ``kind`` (a preset of :data:`PRESETS`) with ``cls``."""
    check_kind(kind)
    _EXTRA_KINDS[kind] = cls


def build_tagger(kind: str, featurizer: Featurizer, *, seed: int = 0, embeddings: np.ndarray | None = None, **hparams) -> BaseTagger:
    """A tagger of ``kind`` with the paper's hyperparameters, overridden by ``hparams``
    (canonical names or the :data:`ALIASES`; ``config()`` stores canonical names).
    Parameters are drawn under ``torch.random.fork_rng`` seeded with ``seed``: the
    ambient global RNG state is neither read nor changed."""
    check_kind(kind)
    hparams = dict(hparams)
    for alias, name in ALIASES.items():
        if alias in hparams and kind not in ("transformer", "minilm"):  # the transformer's own names (ff_hidden) win
            if name in hparams:
                raise ValueError(f"give {name!r} or its alias {alias!r}, not both")
            hparams[name] = hparams.pop(alias)
            if alias == "char_dim":  # a character embedding size implies learned (not one-hot) characters
                hparams.setdefault("char_onehot", False)
    hp = {**PRESETS[kind], **hparams}
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        if kind == "transformer":
            return TransformerTagger(featurizer, embeddings=embeddings, **hp)
        if kind in _EXTRA_KINDS:
            return _EXTRA_KINDS[kind](featurizer, embeddings=embeddings, **hp)
        return RNNTagger(featurizer, kind=kind, embeddings=embeddings, **hp)


def tagger_from_config(cfg: dict[str, Any], featurizer: Featurizer) -> BaseTagger:
    """Rebuild a tagger from :meth:`BaseTagger.config` (weights are loaded separately)."""
    return build_tagger(cfg["kind"], featurizer, **cfg["hparams"])
