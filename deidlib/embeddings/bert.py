"""A BERT encoder for inference in plain PyTorch: the frozen encoder of the default model
without importing ``transformers``.

Why. ``deidlib deidentify`` reads each note once through a frozen all-MiniLM-L6-v2
(:mod:`deidlib.embeddings.encoders`). Importing ``transformers`` and building its
``BertModel`` costs seconds of CPU per call (it pulls in ``torch._dynamo``, ``sympy`` and
``torch.distributed``), more than the tagging of a hundred notes. A frozen encoder in eval
mode needs none of that: its forward pass is the BERT equations (Devlin et al. 2019 §3,
Vaswani et al. 2017 §3.2) on a few ``nn.Linear``, ``nn.Embedding`` and ``nn.LayerNorm``
layers, with torch's own ``scaled_dot_product_attention``.

What it computes. Exactly what ``transformers.BertModel`` computes in eval mode for
``model_type == "bert"`` with absolute positions: word + position + token-type (all 0)
embeddings, LayerNorm; per layer, multi-head self-attention over the unmasked keys, output
projection, residual and LayerNorm, then GELU (exact, erf) feed-forward, residual and
LayerNorm. No dropout (inference only) and no pooler. The parameters have the names of
``BertModel``'s, so the state dicts of the two load into each other and the frozen encoder's
cache fingerprint is the same (``tests/embeddings/test_bert.py`` checks the names and that the
hidden states agree with ``BertModel``'s to float rounding). Any other encoder (another model
type, relative positions) is loaded by ``transformers``.

Weights come from the folder's ``model.safetensors`` (``safetensors``, which ``transformers``
uses too), local files only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

__all__ = []

#: the weights file read (the format all-MiniLM-L6-v2's package ships)
WEIGHTS_FILE = "model.safetensors"
#: ``BertModel`` buffers some weight files hold: positions and token types are computed here
_BUFFERS = ("embeddings.position_ids", "embeddings.token_type_ids")


@dataclass
class BertShape:
    """The fields of a BERT ``config.json`` that the forward pass reads (attribute names as in
    ``transformers.BertConfig``, so code written for either reads both)."""

    vocab_size: int
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    intermediate_size: int
    max_position_embeddings: int
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12

    @classmethod
    def from_json(cls, cfg: dict) -> BertShape:
        return cls(**{k: cfg[k] for k in cls.__dataclass_fields__ if k in cfg})


def plain_bert_supported(folder: str | Path) -> bool:
    """Whether :class:`PlainBert` can stand in for ``transformers`` on the encoder in ``folder``:
    a BERT with absolute positions, GELU and a ``model.safetensors`` file."""
    folder = Path(folder)
    try:
        cfg = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (cfg.get("model_type") == "bert" and cfg.get("hidden_act", "gelu") == "gelu"
            and cfg.get("position_embedding_type", "absolute") == "absolute"
            and (folder / WEIGHTS_FILE).is_file())


def _named(**children: nn.Module) -> Any:
    """An ``nn.Module`` holding ``children`` under their names (``self`` included), to mirror
    ``BertModel``'s parameter names (typed ``Any``: its children are attributes by name)."""
    m = nn.Module()
    for k, v in children.items():
        m.add_module(k, v)
    return m


class PlainBertLayer(nn.Module):
    """One BERT transformer layer (post-LayerNorm), eval mode."""

    def __init__(self, s: BertShape) -> None:
        super().__init__()
        h, i = s.hidden_size, s.intermediate_size
        self.heads = s.num_attention_heads
        self.attention = _named(self=_named(query=nn.Linear(h, h), key=nn.Linear(h, h), value=nn.Linear(h, h)),
                                output=_named(dense=nn.Linear(h, h), LayerNorm=nn.LayerNorm(h, eps=s.layer_norm_eps)))
        self.intermediate = _named(dense=nn.Linear(h, i))
        self.output = _named(dense=nn.Linear(i, h), LayerNorm=nn.LayerNorm(h, eps=s.layer_norm_eps))

    def forward(self, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        """``x`` [B, S, H]; ``keep`` [B, 1, 1, S] bool (True: a key that may be attended to)."""
        B, S, H = x.shape
        att = self.attention.self

        def split(t):
            return t.view(B, S, self.heads, H // self.heads).transpose(1, 2)

        ctx = F.scaled_dot_product_attention(split(att.query(x)), split(att.key(x)), split(att.value(x)),
                                             attn_mask=keep)
        ctx = ctx.transpose(1, 2).reshape(B, S, H)
        out = self.attention.output
        a = out.LayerNorm(out.dense(ctx) + x)
        ff = self.output.dense(F.gelu(self.intermediate.dense(a)))
        return self.output.LayerNorm(ff + a)


class PlainBert(nn.Module):
    """``transformers.BertModel`` without pooler, in eval mode, in plain PyTorch (module
    docstring). ``forward`` answers like ``BertModel``'s: ``.last_hidden_state`` and, with
    ``output_hidden_states=True``, ``.hidden_states`` (embeddings first)."""

    def __init__(self, shape: BertShape) -> None:
        super().__init__()
        if shape.hidden_size % shape.num_attention_heads:
            raise ValueError(f"hidden size {shape.hidden_size} is not a multiple of "
                             f"{shape.num_attention_heads} attention heads")
        self.config = shape
        h = shape.hidden_size
        self.embeddings = _named(word_embeddings=nn.Embedding(shape.vocab_size, h),
                                 position_embeddings=nn.Embedding(shape.max_position_embeddings, h),
                                 token_type_embeddings=nn.Embedding(shape.type_vocab_size, h),
                                 LayerNorm=nn.LayerNorm(h, eps=shape.layer_norm_eps))
        self.encoder = _named(layer=nn.ModuleList(PlainBertLayer(shape) for _ in range(shape.num_hidden_layers)))
        self.pooler = None
        self.requires_grad_(False)
        self.eval()

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None,
                output_hidden_states: bool = False) -> SimpleNamespace:
        B, S = input_ids.shape
        e = self.embeddings
        pos = torch.arange(S, device=input_ids.device)
        x = e.word_embeddings(input_ids) + e.position_embeddings(pos) + e.token_type_embeddings.weight[0]
        x = e.LayerNorm(x)
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        keep = attention_mask.bool()[:, None, None, :]
        states = [x]
        for layer in self.encoder.layer:
            x = layer(x, keep)
            states.append(x)
        return SimpleNamespace(last_hidden_state=x, hidden_states=tuple(states) if output_hidden_states else None)


def load_plain_bert(folder: str | Path) -> PlainBert:
    """A :class:`PlainBert` with the weights of the encoder in ``folder`` (``config.json`` and
    ``model.safetensors``; keys with or without the ``bert.`` prefix; pooler keys ignored)."""
    from safetensors.torch import load_file

    folder = Path(folder)
    shape = BertShape.from_json(json.loads((folder / "config.json").read_text(encoding="utf-8")))
    model = PlainBert(shape)  # (not built on the meta device: that imports torch._dynamo, seconds)
    raw = load_file(str(folder / WEIGHTS_FILE))
    sd = {(k[5:] if k.startswith("bert.") else k): v for k, v in raw.items()}
    sd = {k: v for k, v in sd.items() if not k.startswith("pooler.") and k not in _BUFFERS}
    missing, unexpected = model.load_state_dict(sd, strict=False)
    if missing or unexpected:
        raise ValueError(f"{folder}: not a BERT encoder's weights (missing {missing[:3]}, unexpected {unexpected[:3]})")
    return model.requires_grad_(False).eval()

