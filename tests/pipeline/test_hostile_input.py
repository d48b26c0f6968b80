"""Hostile or broken input never yields a traceback nor leaks through a side channel: error messages
name files and positions, never the input's column names, JSON keys, META keys or field values (they
can hold PHI); deeply nested JSON, a full disk and a lone surrogate escape end in one line; output
order, times and ids say nothing of the input's names; suffixes in any case, duplicate CSV columns and
long CSV cells are handled."""

from __future__ import annotations

import csv
import errno
import hashlib
import hmac
import json

import pytest

from deidlib.cli import main
from deidlib.corpus import Document, Span
from deidlib.corpus.i2b2 import read_i2b2_dir, to_i2b2_xml

from .conftest import STRONG_KEY, write_key

#: a PHI-looking header, key or value: it must never reach stderr
PHI = "Hortensia Villegas MRN998877"
TEXT = "Pt stable overnight. Plan: follow up in clinic.\n"
CLINIC = [Span.of(TEXT, 40, 46, "HOSPITAL")]


def _one_line_without_phi(err: str) -> str:
    assert "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    for word in ("Hortensia", "Villegas", "998877"):
        assert word.lower() not in err.lower(), err
    return lines[0]


def _csv(path, header, row):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        w.writerow(row)
    return path


def _hmac(kind: str, value: str, key: str = STRONG_KEY) -> str:
    return hmac.new(key.encode(), f"{kind}\0{value}".encode(), hashlib.sha256).hexdigest()[:16]


def _mask(*extra):
    return ["--spans", "input", "--replace", "mask", "--no-progress", *extra]


def test_errors_never_print_input_column_names_keys_or_values(tmp_path, capsys):
    """Each input format with PHI in a header, a key, a META key or a TYPE field, and a mistake that
    makes the run stop: one line, naming the file and position, none of the PHI."""
    cases = []
    cases.append((_csv(tmp_path / "c1" / "n.csv", ["note", PHI], [TEXT, "x"]), ["--no-progress"]))  # no 'text'
    cases.append((_csv(tmp_path / "c2" / "n.csv", ["text", PHI], [TEXT, "x"]),
                  ["--no-progress", "--patient-column", "pid"]))
    cases.append((_csv(tmp_path / "c3" / "n.csv", [PHI, "text", PHI], ["a", TEXT, "b"]), ["--no-progress"]))
    j = tmp_path / "j" / "n.jsonl"
    j.parent.mkdir()
    j.write_text(json.dumps({PHI: "x", "note": TEXT}) + "\n", encoding="utf-8")
    cases.append((j, ["--no-progress"]))
    j2 = tmp_path / "j2" / "n.jsonl"
    j2.parent.mkdir()
    j2.write_text(json.dumps({"text": TEXT, "pid": [PHI]}) + "\n", encoding="utf-8")
    cases.append((j2, ["--no-progress", "--patient-column", "pid"]))
    x = tmp_path / "x"
    x.mkdir()
    (x / "a-01.xml").write_text(to_i2b2_xml(Document("a", TEXT, CLINIC, "a", "", {PHI: "x"})), encoding="utf-8")
    cases.append((x, _mask("--keep-column", "ward")))
    x2 = tmp_path / "x2"
    x2.mkdir()
    meta = f'<META><![CDATA[{json.dumps({"patient_id": [PHI]})}]]></META>'
    (x2 / "a-01.xml").write_text(to_i2b2_xml(Document("a-01", TEXT, CLINIC, "a")).replace(
        "<TEXT>", meta + "\n<TEXT>"), encoding="utf-8")
    cases.append((x2, _mask()))
    pn = tmp_path / "pn"
    pn.mkdir()
    note = "Seen by Villegas today.\n"
    (pn / "id.text").write_text(f"START_OF_RECORD=1||||1||||\n{note}||||END_OF_RECORD\n", encoding="utf-8")
    (pn / "id-phi.phrase").write_text("1 1 8 16 Villegas Hortensia MRN998877\n", encoding="utf-8")  # no TYPE
    cases.append((pn, _mask()))
    for k, (src, extra) in enumerate(cases):
        assert main(["deidentify", str(src), str(tmp_path / f"o{k}"), *extra]) == 1, (k, capsys.readouterr())
        line = _one_line_without_phi(capsys.readouterr().err)
        assert not (tmp_path / f"o{k}").exists(), line
    # a header naming one column twice is refused (it would hide a note), by position
    _csv(tmp_path / "dup" / "n.csv", ["text", "text", "pid"], [TEXT, "the other note", "1"])
    assert main(["deidentify", str(tmp_path / "dup"), str(tmp_path / "od"), "--no-progress"]) == 1
    assert "#1 and #2" in _one_line_without_phi(capsys.readouterr().err)


def test_meta_patient_id_as_a_number_is_one_patient_and_a_list_is_refused(tmp_path, capsys):
    src = tmp_path / "in"
    src.mkdir()
    for k, pid in enumerate((12345, "12345")):  # a number and its text: one patient
        meta = f'<META><![CDATA[{json.dumps({"deidlib_meta": 1, "patient_id": pid})}]]></META>'
        (src / f"n{k}.xml").write_text(to_i2b2_xml(Document(f"n{k}", TEXT, CLINIC, f"n{k}")).replace(
            "<TEXT>", meta + "\n<TEXT>"), encoding="utf-8")
    key = write_key(tmp_path / "key")
    assert main(["deidentify", str(src), str(tmp_path / "o"), *_mask("--pseudonym-key-file", str(key))]) == 0
    assert {d.patient_id for d in read_i2b2_dir(tmp_path / "o")} == {_hmac("patient", "12345")}
    meta = f'<META><![CDATA[{json.dumps({"deidlib_meta": 1, "patient_id": {"mrn": PHI}})}]]></META>'
    (src / "n1.xml").write_text(to_i2b2_xml(Document("n1", TEXT, CLINIC, "n1")).replace(
        "<TEXT>", meta + "\n<TEXT>"), encoding="utf-8")
    capsys.readouterr()
    assert main(["deidentify", str(src), str(tmp_path / "o2"), *_mask()]) == 1
    assert "patient_id" in _one_line_without_phi(capsys.readouterr().err)


def test_deeply_nested_jsonl_is_one_line(tmp_path, capsys):
    src = tmp_path / "n.jsonl"
    src.write_text('{"text": "x", "deep": ' + "[" * 100_000 + "]" * 100_000 + "}\n", encoding="utf-8")
    assert main(["deidentify", str(src), str(tmp_path / "o"), "--no-progress"]) == 1
    assert "nested too deeply" in _one_line_without_phi(capsys.readouterr().err)


def test_a_lone_surrogate_stops_the_run_with_one_line(tmp_path, capsys):
    src = tmp_path / "n.jsonl"
    src.write_text(json.dumps({"text": TEXT}) + "\n" + '{"text": "Villegas \\ud800 today"}\n', encoding="utf-8")
    assert main(["deidentify", str(src), str(tmp_path / "o"), "--no-progress"]) == 1
    line = _one_line_without_phi(capsys.readouterr().err)
    assert "line 2" in line and "surrogate" in line and not (tmp_path / "o").exists()


@pytest.mark.parametrize("where", ["out", "audit"])
def test_a_full_disk_is_one_line_and_leaves_nothing(where, tmp_path, capsys, monkeypatch):
    """ENOSPC while writing OUT (a note file) or the audit: one line, neither OUT nor the audit nor a
    hidden partial of them left."""
    import os

    import deidlib.pipeline.formats as formats

    def full(*a, **kw):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    if where == "out":
        monkeypatch.setattr(formats, "_write_text", full)
    else:
        real = os.fdopen

        def fdopen(fd, *a, **kw):
            fh = real(fd, *a, **kw)
            fh.write = full
            return fh

        monkeypatch.setattr(os, "fdopen", fdopen)
    src = tmp_path / "in"
    src.mkdir()
    (src / "a-01.xml").write_text(to_i2b2_xml(Document("a-01", TEXT, CLINIC, "a")), encoding="utf-8")
    assert main(["deidentify", str(src), str(tmp_path / "out"), *_mask("--audit", str(tmp_path / "audit"))]) == 1
    line = _one_line_without_phi(capsys.readouterr().err)
    assert "No space left on device" in line and ("OUT" if where == "out" else "--audit") in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]


def test_output_order_and_times_carry_no_input_names(tmp_path, capsys):
    """Files written in sorted input order would get increasing inode numbers (and times): OUT's
    inode order, mapped back to the inputs through the audit's file map, must not replay the sorted
    names (chance 1/40! if shuffled), and every file has one modification time."""
    src = tmp_path / "in"
    src.mkdir()
    for k in range(40):
        (src / f"{k:03d}.xml").write_text(to_i2b2_xml(Document(f"{k:03d}", TEXT, CLINIC, "")), encoding="utf-8")
    audit = tmp_path / "audit.jsonl"
    assert main(["deidentify", str(src), str(tmp_path / "o"), *_mask("--audit", str(audit))]) == 0
    files = json.loads(audit.read_text(encoding="utf-8").splitlines()[-1])["pseudonyms"]["file"]
    back = {name: rel for rel, name in files.items()}
    out = tmp_path / "o"
    by_inode = sorted(out.glob("*.xml"), key=lambda p: p.stat().st_ino)
    assert sorted(back[p.name] for p in by_inode) == sorted(files)
    assert [back[p.name] for p in by_inode] != sorted(files)
    assert len({p.stat().st_mtime for p in out.iterdir()}) == 1


def test_physionet_note_ids_are_pseudonymised_and_records_shuffled(tmp_path, capsys):
    src = tmp_path / "pn"
    src.mkdir()
    recs = "".join(f"START_OF_RECORD=77{k:02d}||||{900 + k}||||\n{TEXT}||||END_OF_RECORD\n" for k in range(30))
    (src / "id.text").write_text(recs, encoding="utf-8")
    (src / "id-phi.phrase").write_text("", encoding="utf-8")
    key = write_key(tmp_path / "key")
    assert main(["deidentify", str(src), str(tmp_path / "o"), *_mask("--pseudonym-key-file", str(key))]) == 0
    out = (tmp_path / "o" / "id.text").read_text(encoding="utf-8")
    heads = [ln.split("=", 1)[1].split("||||")[:2] for ln in out.splitlines() if ln.startswith("START_OF_RECORD")]
    expected = [[_hmac("patient", f"77{k:02d}"), _hmac("note", f"77{k:02d}-{900 + k}")] for k in range(30)]
    assert sorted(heads) == sorted(expected)
    assert heads != expected  # not in the input's (sorted) order: chance 1/30! if shuffled


def test_xml_suffix_in_any_case_is_i2b2(tmp_path, capsys):
    src = tmp_path / "in"
    src.mkdir()
    for k, suffix in enumerate((".xml", ".XML", ".Xml")):
        (src / f"a-0{k}{suffix}").write_text(to_i2b2_xml(Document(f"a-0{k}", TEXT, CLINIC, "a")), encoding="utf-8")
    assert main(["deidentify", str(src), str(tmp_path / "o"), *_mask()]) == 0
    assert len(read_i2b2_dir(tmp_path / "o")) == 3


def test_a_csv_cell_longer_than_the_csv_default_limit_is_read(blind_model, tmp_path, capsys):
    long_note = ("Pt stable. " * 20_000)[:210_000]
    src = _csv(tmp_path / "in" / "n.csv", ["text", "pid"], [long_note, "1"])
    before = csv.field_size_limit()
    assert main(["deidentify", str(src), str(tmp_path / "o"), "--no-progress", "--replace", "mask",
                 "--model", str(blind_model)]) == 0, capsys.readouterr().err
    (out,) = (tmp_path / "o").glob("*.csv")
    with _csv_limit(), open(out, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [len(r["text"]) for r in rows] == [210_000]  # the blind model tags nothing: the note is whole
    assert csv.field_size_limit() == before  # the limit is raised only while reading


class _csv_limit:
    def __enter__(self):
        self.old = csv.field_size_limit(1 << 30)

    def __exit__(self, *exc):
        csv.field_size_limit(self.old)
