"""Every tagger: overfits a tiny task, predict shapes, masks, determinism, config round trip."""

from __future__ import annotations

import pytest
import torch

from deidlib.models import PRESETS, build_tagger, count_parameters, tagger_from_config
from deidlib.models.features import Featurizer
from deidlib.models.presets import encoder_of

SENTS = [["Seen", "by", "Dr", "Smith", "on", "12/01/2010", "."],
         ["Smith", "seen", "again", "at", "Boston", "."],
         ["Call", "555-1234", "."]]
TAGS = [["O", "O", "O", "B-DOCTOR", "O", "B-DATE", "O"],
        ["B-DOCTOR", "O", "O", "O", "B-CITY", "O"],
        ["O", "B-PHONE", "O"]]
LABELS = ["O", "B-DOCTOR", "B-DATE", "B-CITY", "B-PHONE"]
SMALL = dict(word_dim=16, hidden=16, char_hidden=8)
#: the word-based kinds (the encoder kind, minilm, has its own tests: test_encoder_tagger.py)
WORD_KINDS = [k for k in PRESETS if encoder_of(k) is None]
KINDS = [(k, crf) for k in WORD_KINDS for crf in (False, True)]


def _small(kind):
    if kind == "transformer":
        return dict(word_dim=16, layers=1, heads=2, ff_hidden=32, char_hidden=8)
    hp = dict(SMALL)
    if kind == "friedrich":
        hp.pop("char_hidden")
    else:
        hp["ff_dim"] = 16
    return hp


@pytest.fixture(scope="module")
def fz():
    return Featurizer.build(SENTS, LABELS)


@pytest.mark.parametrize("kind,crf", KINDS)
def test_overfits_tiny_task_and_predicts(fz, kind, crf):
    torch.manual_seed(0)  # dropout draws only; init is seeded by build_tagger
    tagger = build_tagger(kind, fz, seed=1, crf=crf, **_small(kind))
    batch = fz.encode(SENTS, TAGS)
    opt = torch.optim.Adam([p for p in tagger.parameters() if p.requires_grad], lr=0.05)
    tagger.train()
    first = float(tagger.loss(batch).detach())
    for _ in range(40):
        opt.zero_grad()
        loss = tagger.loss(batch)
        loss.backward()
        opt.step()
    tagger.eval()
    assert float(tagger.loss(batch)) < 0.5 * first
    pred = tagger.predict(batch)
    assert [len(p) for p in pred] == [len(s) for s in SENTS]
    assert all(0 <= i < len(LABELS) for p in pred for i in p)
    hit = sum(fz.labels[i] == t for p, ts in zip(pred, TAGS) for i, t in zip(p, ts))
    assert hit >= 14  # of 16 tokens


@pytest.mark.parametrize("kind,crf", KINDS)
def test_padding_does_not_change_a_sentences_loss(fz, kind, crf):
    tagger = build_tagger(kind, fz, seed=0, crf=crf, **_small(kind)).eval()
    alone = fz.encode(SENTS[2:], TAGS[2:])
    together = fz.encode(SENTS, TAGS)
    with torch.no_grad():
        l_alone = tagger.sentence_losses(alone)[0]
        l_together = tagger.sentence_losses(together)[2]
    assert torch.allclose(l_alone, l_together, atol=1e-5)
    assert tagger.predict(alone)[0] == tagger.predict(together)[2]


@pytest.mark.parametrize("kind", WORD_KINDS)
def test_seed_determinism_and_config_round_trip(fz, kind):
    a = build_tagger(kind, fz, seed=3, **_small(kind))
    state = torch.random.get_rng_state()
    b = build_tagger(kind, fz, seed=3, **_small(kind))
    assert torch.equal(state, torch.random.get_rng_state()), "building must not touch global RNG"
    c = build_tagger(kind, fz, seed=4, **_small(kind))
    sa, sb, sc = a.state_dict(), b.state_dict(), c.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    assert any(not torch.equal(sa[k], sc[k]) for k in sa)
    r = tagger_from_config(a.config(), Featurizer.from_config(fz.config()))
    r.load_state_dict(sa)
    batch = fz.encode(SENTS, TAGS)
    a.eval(), r.eval()
    with torch.no_grad():
        assert torch.allclose(a.loss(batch), r.loss(batch))
    assert r.config() == a.config() and count_parameters(r) == count_parameters(a)


def test_paper_sizes(fz):
    t = build_tagger("festag", fz)
    assert t.char.rnn.hidden_size == 128 and t.word.embedding_dim == 300
    assert t.rnn.layers[0].hidden_size == 100 and t.ff[0].out_features == 100 and t.crf is None
    f = build_tagger("friedrich", fz)
    assert [layer.hidden_size for layer in f.rnn.layers] == [128, 128] and f.char is None and f.crf is not None
    assert f.default_optimizer() == {"optimizer": "nadam", "lr": 2e-3, "clip": 1.0}
    g = build_tagger("lstm_gru", fz)
    assert [type(layer).__name__ for layer in g.rnn.layers] == ["LSTM", "GRU"] and g.char.rnn.hidden_size == 25
    assert not build_tagger("gru", fz, char=None).char


def test_recall_penalty_weights_loss(fz):
    batch = fz.encode(SENTS, TAGS)
    base = build_tagger("gru", fz, seed=0, crf=False, **_small("gru")).eval()
    pen = build_tagger("gru", fz, seed=0, crf=False, recall_penalty=5.0, **_small("gru")).eval()
    with torch.no_grad():
        em = base.emissions(batch)
        rho = float(pen.penalty(batch, em))
        # untrained: few PHI tokens predicted, so FNR > 0 and 1 < rho <= 5
        assert 1.0 < rho <= 5.0
        assert torch.allclose(pen.loss(batch), base.loss(batch) * rho)
        gold = (batch.labels != 0) & batch.mask
        predp = (em.argmax(-1) != 0) & batch.mask
        tp, fn = float((gold & predp).sum()), float((gold & ~predp).sum())
        assert rho == pytest.approx(1 + fn / (1 + fn + tp) * 4)


def test_bad_kind_and_embedding_shape(fz):
    import numpy as np

    with pytest.raises(ValueError, match="unknown tagger kind"):
        build_tagger("bert", fz)
    for kind in WORD_KINDS:  # one TokenEncoder: every kind checks the matrix's shape
        with pytest.raises(ValueError, match="embedding matrix"):
            build_tagger(kind, fz, embeddings=np.zeros((fz.num_words, 1), dtype=np.float32))
    emb = np.arange(fz.num_words * 16, dtype=np.float32).reshape(fz.num_words, 16)
    t = build_tagger("friedrich", fz, embeddings=emb, freeze_embeddings=True, word_dim=16, hidden=8)
    assert torch.equal(t.word.weight, torch.as_tensor(emb)) and not t.word.weight.requires_grad


def test_hparam_aliases(fz):
    t = build_tagger("festag", fz, word_dim=16, char_dim=8, char_hidden=8, token_hidden=12, ff_hidden=10, dropout=0.3)
    assert t.char.embed.embedding_dim == 8 and t.char.embed.weight.requires_grad  # learned chars
    assert t.rnn.layers[0].hidden_size == 12 and t.ff[0].out_features == 10 and t.in_drop.p == 0.3
    assert t.hparams["char_emb_dim"] == 8 and "char_dim" not in t.hparams
    with pytest.raises(ValueError, match="alias"):
        build_tagger("festag", fz, hidden=4, token_hidden=4)


@pytest.mark.parametrize("kind", ["festag", "friedrich", "transformer"])
def test_weights_saved_before_the_token_encoder_still_load(fz, kind):
    """State dicts with the old keys (``word.weight``, ``char.*``, ``casing.weight`` on the
    tagger itself) load into ``tokens.*`` and give the same outputs."""
    ref = build_tagger(kind, fz, seed=1, **_small(kind))
    old = {(k[len("tokens."):] if k.startswith("tokens.") else k): v for k, v in ref.state_dict().items()}
    assert "word.weight" in old and not any(k.startswith("tokens.") for k in old)
    new = build_tagger(kind, fz, seed=2, **_small(kind))
    new.load_state_dict(old)
    ref.eval(), new.eval()
    batch = fz.encode(SENTS, TAGS)
    assert torch.equal(ref.emissions(batch), new.emissions(batch))
    assert new.word is new.tokens.word and new.casing is new.tokens.casing


@pytest.mark.parametrize("kind", ["festag", "gru", "transformer"])
def test_char_cache_encodes_each_distinct_token_once_and_changes_nothing(fz, kind):
    """Inside ``tokens.char_cache()`` (eval, no grad) a token seen in an earlier batch is not
    encoded again, and emissions and predictions equal those without the cache."""
    tagger = build_tagger(kind, fz, seed=0, **_small(kind)).eval()
    batches = [fz.encode(SENTS[:2]), fz.encode(SENTS[1:]), fz.encode(SENTS)]
    rows: list[int] = []
    hook = tagger.tokens.char.register_forward_hook(lambda _m, args, _o: rows.append(args[0].shape[0]))
    with torch.no_grad():
        plain = [(tagger.emissions(b), tagger.predict(b)) for b in batches]
        n_plain = sum(rows)
        rows.clear()
        with tagger.tokens.char_cache():
            cached = [(tagger.emissions(b), tagger.predict(b)) for b in batches]
        hook.remove()
    distinct = len({t for s in SENTS for t in s})
    assert sum(rows) == distinct < n_plain  # each distinct token once over the whole pass
    for (e0, p0), (e1, p1) in zip(plain, cached):
        torch.testing.assert_close(e1, e0, rtol=1e-5, atol=1e-6)
        assert p1 == p0
    assert tagger.tokens._char_cache is None  # dropped on exit
    tagger.train()  # training mode never uses a cache
    with tagger.tokens.char_cache():
        tagger.loss(fz.encode(SENTS, TAGS)).backward()
        assert tagger.tokens._char_cache == {}
