"""``deidlib predict`` names the file it cannot read, and writes nothing that evaluate and surrogate
would refuse: an empty .txt note is refused (with its name) instead of becoming an empty i2b2 TEXT."""

from __future__ import annotations

import pytest

from deidlib.cli import main


@pytest.mark.parametrize("content, needle", [(b"caf\xe9 au lait\n", "not UTF-8 (invalid byte at byte offset 3)"),
                                             (b"", "empty note"), (b" \n\n", "empty note")])
def test_predict_refuses_unreadable_or_empty_txt_naming_the_file(tiny_model, tmp_path, capsys, content, needle):
    src = tmp_path / "in"
    (src / "site0").mkdir(parents=True)
    (src / "site0" / "001-01.txt").write_text("Seen today.\n")
    (src / "site0" / "001-02.txt").write_bytes(content)
    assert main(["predict", str(tiny_model), str(src), str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert str(src / "site0" / "001-02.txt") in err and needle in err
    assert not (tmp_path / "out").exists()
