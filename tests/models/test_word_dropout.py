import pytest
import torch

from deidlib.models import build_featurizer, build_tagger
from deidlib.models.layers import TokenEncoder

SENTS = [["Pt", "seen", "by", "Dr", "Smith", "today"], ["BP", "stable", "on", "neo"]] * 4
TAGS = ["O", "B-PHI", "I-PHI"]


def _batch():
    fz = build_featurizer("gru", SENTS, labels=TAGS, min_count=1)
    return fz, fz.encode(SENTS)


def test_word_dropout_replaces_known_words_by_unk_in_training_only():
    fz, batch = _batch()
    enc = TokenEncoder(fz.num_words, 8, word_dropout=0.5)
    enc.train()
    torch.manual_seed(0)
    ids = enc._word_ids(batch)
    real = batch.word_ids > 1
    assert (ids[real] == 1).any() and (ids[real] != 1).any()  # some dropped, some kept
    assert torch.equal(ids[~real], batch.word_ids[~real])  # padding (and UNK) untouched
    enc.eval()
    assert torch.equal(enc._word_ids(batch), batch.word_ids)


def test_zero_word_dropout_draws_no_random_numbers_and_keeps_configs():
    fz, batch = _batch()
    enc = TokenEncoder(fz.num_words, 8)
    enc.train()
    torch.manual_seed(0)
    before = torch.random.get_rng_state()
    assert torch.equal(enc._word_ids(batch), batch.word_ids)
    assert torch.equal(before, torch.random.get_rng_state())
    assert "word_dropout" not in build_tagger("gru", fz, seed=0).config()["hparams"]
    assert build_tagger("gru", fz, seed=0, word_dropout=0.2).config()["hparams"]["word_dropout"] == 0.2


def test_word_dropout_out_of_range_is_refused():
    with pytest.raises(ValueError, match="word_dropout"):
        TokenEncoder(10, 4, word_dropout=1.0)


def test_lowercase_chars_makes_the_character_input_case_blind_and_survives_the_config():
    from deidlib.models import Featurizer

    fz = Featurizer.build([["Dr", "QUILLFEATHER", "quillfeather", "Quillfeather"]], ["O", "B-PHI"], min_count=1,
                          lowercase_chars=True)
    b = fz.encode([["QUILLFEATHER", "quillfeather", "Quillfeather"]])
    chars = [tuple(b.char_ids[b.token_to_unique[0, i]].tolist()) for i in range(3)]
    assert chars[0] == chars[1] == chars[2]
    assert len(set(b.casing_ids[0].tolist())) > 1  # the casing feature still sees the case
    plain = Featurizer.build([["QUILLFEATHER", "quillfeather"]], ["O", "B-PHI"], min_count=1)
    pb = plain.encode([["QUILLFEATHER", "quillfeather"]])
    assert pb.char_ids[pb.token_to_unique[0, 0]].tolist() != pb.char_ids[pb.token_to_unique[0, 1]].tolist()
    assert "lowercase_chars" not in plain.config()  # old configs unchanged
    again = Featurizer.from_config(fz.config())
    assert again.lowercase_chars and not Featurizer.from_config(plain.config()).lowercase_chars
