"""Mixed precision (``deidlib.training.precision``): bf16 autocast of a fine-tuned encoder on a
CUDA device only; float32, untouched, everywhere else (CPU results bit-identical). The
device side (F1 with and without) is ``benchmarks/device_check.py``."""

import pytest
import torch

from deidlib.profiles import _PROFILES, batch_size_for
from deidlib.training.precision import autocast_dtype, full_precision, mixed_precision


class _Encoderish:
    """The two attributes the policy reads of an encoder tagger."""

    compute_dtype = None

    def __init__(self, frozen=False):
        self.frozen = frozen


def test_the_cpu_never_gets_autocast():
    t = _Encoderish()
    assert autocast_dtype(t, "cpu") is None and autocast_dtype(t, torch.device("cpu")) is None
    with mixed_precision(t, "cpu") as dtype:
        assert dtype is None and t.compute_dtype is None


def test_bf16_only_for_a_trainable_encoder_on_a_bf16_cuda_device(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    t = _Encoderish()
    assert autocast_dtype(t, "cuda") is torch.bfloat16 and autocast_dtype(t, "cuda:0") is torch.bfloat16
    assert autocast_dtype(_Encoderish(frozen=True), "cuda") is None  # cached float32 vectors stay float32
    assert autocast_dtype(object(), "cuda") is None  # no encoder: word-level taggers are untouched
    with mixed_precision(t, "cuda") as dtype:
        assert dtype is torch.bfloat16 and t.compute_dtype is torch.bfloat16
        with full_precision(), mixed_precision(t, "cuda") as inner:
            assert inner is None
    assert t.compute_dtype is None  # restored after the pass
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: False)
    assert autocast_dtype(t, "cuda") is None


def test_an_encoder_taggers_cpu_emissions_ignore_the_compute_dtype():
    pytest.importorskip("all_minilm_l6_v2")
    from deidlib.datasets import load_corpus
    from deidlib.training import prepare_tagger

    sp = load_corpus("synthetic", profile="smoke", seed=5, patients=4, sites=2)
    sents, tg = prepare_tagger("minilm", sp.train, scheme="binary", seed=0, layers=[1])
    b = tg.featurizer.encode([s.words for s in sents[:6]])
    tg.eval()
    with torch.no_grad():
        before = tg.emissions(b)
        tg.compute_dtype = torch.bfloat16  # what mixed_precision would set on a CUDA device
        after = tg.emissions(b)
    assert torch.equal(before, after) and after.dtype == torch.float32


def test_the_device_batch_comes_from_the_profile_and_the_cpu_keeps_its_own():
    assert batch_size_for("cpu", "cpu", 16) == 16 and batch_size_for("paper", torch.device("cpu"), 16) == 16
    for name, prof in _PROFILES.items():
        assert batch_size_for(name, "cuda", 16) == max(16, prof.device_batch_size)
        assert batch_size_for(name, torch.device("cuda", 0), 512) == max(512, prof.device_batch_size)
    assert batch_size_for("paper", "cuda", 16) > batch_size_for("smoke", "cuda", 16) > 16
    with pytest.raises(ValueError, match="unknown profile"):
        batch_size_for("huge", "cuda", 16)
