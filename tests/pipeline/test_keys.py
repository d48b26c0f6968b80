"""Pseudonym keys that can be guessed or read are refused: under 128 bits of estimated entropy
(short, constant, periodic, small-alphabet keys) or a key file open to group or others; with
``--allow-weak-key`` such a key is used, with a warning. Strong keys pass."""

from __future__ import annotations

import secrets
import sys

import pytest

from deidlib.cli import main
from deidlib.corpus import Document, Span
from deidlib.corpus.i2b2 import to_i2b2_xml
from deidlib.pipeline.pseudonyms import _MIN_KEY_BITS, PseudonymError, _key_bits, load_key

from .conftest import write_key

TEXT = "Pt stable overnight. Plan: follow up in clinic.\n"
WEAK = {
    "all zero bytes": b"\0" * 32,
    "all the same character": b"0" * 64,
    "short": b"hunter2",
    "periodic": b"abc123" * 8,
    "64-bit hex": secrets.token_hex(8).encode(),
    "digits": b"12345678901234567890123456789012"[:30],
}


@pytest.mark.parametrize("name", sorted(WEAK))
def test_keys_weaker_than_128_bits_are_refused(name, tmp_path):
    key = write_key(tmp_path / "key", "")
    key.write_bytes(WEAK[name])
    assert _key_bits(WEAK[name].strip()) < _MIN_KEY_BITS
    with pytest.raises(PseudonymError, match="bits of entropy"):
        load_key(key, {})
    k, warnings = load_key(key, {}, allow_weak=True)
    assert k == WEAK[name].strip() and warnings


@pytest.mark.parametrize("key", [secrets.token_hex(16), secrets.token_hex(32), secrets.token_urlsafe(32),
                                 "side-channel test key, 32 bytes"],
                         ids=["hex16", "hex32", "urlsafe32", "phrase"])  # fixed ids: every xdist worker collects the same
def test_strong_keys_pass(key, tmp_path):
    assert load_key(write_key(tmp_path / "key", key), {}) == (key.encode(), [])
    assert load_key(None, {"DEIDLIB_PSEUDONYM_KEY": key}) == (key.encode(), [])


def test_a_random_binary_key_of_32_bytes_passes(tmp_path):
    raw = secrets.token_bytes(32)
    key = write_key(tmp_path / "key", "")
    key.write_bytes(raw)
    assert load_key(key, {})[0] == raw.strip()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes")
@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660])
def test_a_key_file_readable_by_group_or_others_is_refused(mode, tmp_path):
    key = write_key(tmp_path / "key")
    key.chmod(mode)
    with pytest.raises(PseudonymError, match="group or others"):
        load_key(key, {})
    assert load_key(key, {}, allow_weak=True)[1]


def test_the_command_refuses_a_weak_key_in_one_line_unless_allowed(tmp_path, capsys):
    src = tmp_path / "in"
    src.mkdir()
    (src / "a-01.xml").write_text(to_i2b2_xml(Document("a-01", TEXT, [Span.of(TEXT, 40, 46, "HOSPITAL")], "a")))
    key = tmp_path / "key"
    key.write_bytes(b"\0" * 32)
    key.chmod(0o644)
    argv = ["deidentify", str(src), str(tmp_path / "o"), "--spans", "input", "--replace", "mask", "--no-progress",
            "--pseudonym-key-file", str(key)]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--allow-weak-key" in err and "group or others" in err
    assert not (tmp_path / "o").exists()
    assert main([*argv, "--allow-weak-key"]) == 0
    err = capsys.readouterr().err
    assert err.count("WARNING (--allow-weak-key)") == 2  # the entropy and the file mode
