"""Every long-running command takes ``--threads N``, set by one helper,
default one thread (measured faster than torch's default 2 on the loaded 2-core machine)."""

from __future__ import annotations

import pytest
import torch

from deidlib.cli import _build_parser, main


@pytest.fixture
def restore_threads(monkeypatch):
    n = torch.get_num_threads()
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.delenv(var, raising=False)
    yield
    torch.set_num_threads(n)


@pytest.mark.parametrize("command", ["train", "predict", "reproduce", "surrogate"])
def test_long_running_commands_take_threads_and_refuse_zero(command, capsys):
    sub = next(a for a in _build_parser()._actions if a.dest == "command").choices[command]
    assert any("--threads" in a.option_strings for a in sub._actions)
    positionals = {"train": ["o"], "predict": ["m", "i", "o"], "reproduce": [], "surrogate": ["i", "o"]}[command]
    assert main([command, "--threads", "0", *positionals]) == 2
    assert "--threads" in capsys.readouterr().err


def test_set_threads_default_is_one_and_an_explicit_value_wins(restore_threads):
    import os

    from deidlib.commands._safety import set_threads

    torch.set_num_threads(2)
    assert set_threads(None) == 1 and torch.get_num_threads() == 1 and os.environ["OMP_NUM_THREADS"] == "1"
    assert set_threads(2) == 2 and torch.get_num_threads() == 2


def test_predict_applies_threads(restore_threads, tmp_path):
    from deidlib.corpus import Document
    from deidlib.training import prepare_tagger, save_tagger

    docs = [Document("001-01", "Seen by Dr. Brown.", [])]
    _, tagger = prepare_tagger("gru", docs, scheme="binary", embeddings=None, word_dim=8, hidden=8,
                               char_hidden=4, char_emb_dim=4, ff_dim=8)
    save_tagger(tagger, tmp_path / "m")
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "001-01.txt").write_text("Seen by Dr. Brown.")
    torch.set_num_threads(1)
    assert main(["predict", str(tmp_path / "m"), str(tmp_path / "in"), str(tmp_path / "o"), "--threads", "2"]) == 0
    assert torch.get_num_threads() == 2
