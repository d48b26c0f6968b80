"""``deidlib deidentify`` lets nothing but de-identified text out: identifiers planted in every side
channel of every input format (file and folder names, CSV columns, JSON fields, the patient column,
``--patient-from-filename``, i2b2 file-name prefixes and META, PhysioNet pids) appear neither in
OUT (file names and contents, ``deidentify.json``) nor on stdout/stderr, also when the run fails."""

from __future__ import annotations

import csv
import hashlib
import hmac
import json

from deidlib.cli import main
from deidlib.corpus import Document, Span
from deidlib.corpus.i2b2 import read_i2b2_dir, to_i2b2_xml

from .conftest import write_key

#: the identifiers planted in the side channels (never in the note text: the text is the model's job)
IDS = ("Villegas", "Hortensia", "998877", "Quixley", "Oakhurst")
TEXT = "Pt stable overnight. Plan: follow up in clinic.\n"
CLINIC = [Span.of(TEXT, 40, 46, "HOSPITAL")]  # "clinic": i2b2 input needs a tag for --spans input
KEY = "side-channel test key, 32 bytes"
BASENAME = "Hortensia_Villegas_MRN998877"


def _leaks(*texts: str) -> list[str]:
    blob = "\n".join(texts).lower()
    return [i for i in IDS if i.lower() in blob]


def _everything_in(out) -> str:
    """Every relative path and every file's content under ``out``."""
    parts = []
    for p in sorted(out.rglob("*")):
        parts.append(p.relative_to(out).as_posix())
        if p.is_file():
            parts.append(p.read_bytes().decode("utf-8", "replace"))
    return "\n".join(parts)


def _inputs(root):
    """IN for every format, identifiers in every side channel; returns {format: (IN, extra argv)}."""
    made = {}
    d = root / "txt" / "Oakhurst_clinic"
    d.mkdir(parents=True)
    (d / f"{BASENAME}.txt").write_text(TEXT, encoding="utf-8")
    made["txt"] = (root / "txt", ["--patient-from-filename", r"([A-Za-z]+_MRN\d+)"])

    d = root / "i2b2" / "Oakhurst_clinic"
    d.mkdir(parents=True)
    meta = Document("x", TEXT, CLINIC, "MRN998877", "Oakhurst General",
                    {"patient_name": "Hortensia Villegas", "attending": "Dr Quixley", "note_type": "progress"})
    (d / f"{BASENAME}-01.xml").write_text(to_i2b2_xml(meta), encoding="utf-8")
    plain = Document(f"{BASENAME}-02", TEXT, CLINIC, BASENAME)  # patient id from the file-name prefix, no META
    (d / f"{BASENAME}-02.xml").write_text(to_i2b2_xml(plain), encoding="utf-8")
    made["i2b2"] = (root / "i2b2", ["--spans", "input", "--replace", "mask"])

    d = root / "jsonl"
    d.mkdir()
    with open(d / f"{BASENAME}.jsonl", "w", encoding="utf-8") as fh:
        for obj in ({"mrn": "MRN998877", "patient_name": "Hortensia Villegas", "text": TEXT,
                     "care": {"attending": "Dr Quixley"}}, {"mrn": 998877, "text": TEXT, "site": "Oakhurst"}):
            fh.write(json.dumps(obj) + "\n")
    made["jsonl"] = (d, ["--patient-column", "mrn"])

    d = root / "csv"
    d.mkdir()
    with open(d / f"{BASENAME}.csv", "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["mrn", "patient_name", "note", "attending"])
        w.writerow(["MRN998877", "Hortensia Villegas", TEXT, "Dr Quixley"])
    made["csv"] = (d, ["--text-column", "note", "--patient-column", "mrn"])

    d = root / "physionet"
    d.mkdir()
    (d / "id.text").write_text(f"START_OF_RECORD=998877||||1||||\n{TEXT}||||END_OF_RECORD\n", encoding="utf-8")
    (d / "id-phi.phrase").write_text("", encoding="utf-8")
    made["physionet"] = (d, ["--spans", "input", "--replace", "mask"])
    return made


def test_no_identifier_leaves_through_any_side_channel(blind_model, tmp_path, capsys):
    key = tmp_path / "key"
    write_key(key, KEY)
    for fmt, (src, extra) in _inputs(tmp_path / "in").items():
        assert _leaks(_everything_in(src)), fmt  # the attack is real: IN holds the identifiers
        out = tmp_path / "out" / fmt
        model = [] if "--spans" in extra else ["--model", str(blind_model), "--replace", "mask"]
        assert main(["deidentify", str(src), str(out), "--no-progress", "--pseudonym-key-file", str(key),
                     *model, *extra]) == 0, fmt
        printed = capsys.readouterr()
        assert not _leaks(_everything_in(out), printed.out, printed.err), (fmt, _leaks(_everything_in(out)))
        assert "Pt stable overnight. Plan: follow up in" in _everything_in(out)  # the note itself is there
    # the patient id is replaced by HMAC-SHA256(key, "patient" NUL id), consistently across formats
    pseudo = hmac.new(KEY.encode(), b"patient\0MRN998877", hashlib.sha256).hexdigest()[:16]
    with open(next((tmp_path / "out" / "csv").glob("*.csv")), encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows == [{"mrn": pseudo, "note": TEXT}]  # other columns dropped
    objs = [json.loads(x) for x in next((tmp_path / "out" / "jsonl").glob("*.jsonl")).read_text().splitlines()]
    assert objs[0] == {"mrn": pseudo, "text": TEXT}
    assert objs[1]["mrn"] == hmac.new(KEY.encode(), b"patient\0998877", hashlib.sha256).hexdigest()[:16]
    i2b2 = read_i2b2_dir(tmp_path / "out" / "i2b2")
    assert pseudo in {d.patient_id for d in i2b2} and all(d.site == "" for d in i2b2)
    assert all(set(d.metadata) == {"masks"} for d in i2b2)  # deidentify's own settings only


def test_kept_columns_are_written_verbatim_and_only_on_request(blind_model, tmp_path, capsys):
    src, extra = _inputs(tmp_path / "in")["csv"]
    assert main(["deidentify", str(src), str(tmp_path / "o"), "--no-progress", "--model", str(blind_model),
                 "--replace", "mask", "--keep-column", "attending", *extra]) == 0
    with open(next((tmp_path / "o").glob("*.csv")), encoding="utf-8", newline="") as fh:
        (row,) = csv.DictReader(fh)
    assert set(row) == {"mrn", "note", "attending"} and row["attending"] == "Dr Quixley"
    assert main(["deidentify", str(src), str(tmp_path / "o2"), "--no-progress", "--model", str(blind_model),
                 "--keep-column", "nope", *extra]) == 1
    assert "--keep-column 'nope' is not a column" in capsys.readouterr().err


def test_random_pseudonyms_are_kept_only_in_the_audit(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("DEIDLIB_PSEUDONYM_KEY", raising=False)
    src, extra = _inputs(tmp_path / "in")["i2b2"]
    names = []
    for k in range(2):
        assert main(["deidentify", str(src), str(tmp_path / f"o{k}"), "--no-progress", *extra,
                     "--audit", str(tmp_path / f"audit{k}.jsonl")]) == 0
        names.append(sorted(p.name for p in (tmp_path / f"o{k}").glob("*.xml")))
        assert not _leaks(_everything_in(tmp_path / f"o{k}"), *capsys.readouterr())
    assert names[0] != names[1]  # a fresh random key per run: nothing links the two releases
    last = json.loads((tmp_path / "audit1.jsonl").read_text().splitlines()[-1])["pseudonyms"]
    out_patients = {d.patient_id for d in read_i2b2_dir(tmp_path / "o1")}
    assert set(last["patient"]) == {"MRN998877", BASENAME} and set(last["patient"].values()) == out_patients
    assert sorted(n.split("/")[-1] for n in last["file"].values()) == names[1]
    # the key may also come from the environment; a short key is refused
    monkeypatch.setenv("DEIDLIB_PSEUDONYM_KEY", "short")
    assert main(["deidentify", str(src), str(tmp_path / "o3"), "--no-progress", *extra]) == 1
    assert "at least 16" in capsys.readouterr().err and not (tmp_path / "o3").exists()


def test_file_names_are_kept_only_on_request_with_a_warning(tmp_path, capsys):
    src, extra = _inputs(tmp_path / "in")["i2b2"]
    write_key(tmp_path / "key", KEY)
    assert main(["deidentify", str(src), str(tmp_path / "o"), "--no-progress", "--keep-file-names",
                 "--pseudonym-key-file", str(tmp_path / "key"), *extra]) == 0
    assert "warning: --keep-file-names" in capsys.readouterr().err
    assert sorted(p.relative_to(tmp_path / "o").as_posix() for p in (tmp_path / "o").rglob("*.xml")) == \
        [f"Oakhurst_clinic/{BASENAME}-0{k}.xml" for k in (1, 2)]
    # the patient ids are still pseudonyms (in META, as the names no longer carry them)
    assert not {"MRN998877", BASENAME} & {d.patient_id for d in read_i2b2_dir(tmp_path / "o", recursive=True)}


def test_error_messages_name_no_identifier_and_quote_no_text(blind_model, tmp_path, capsys):
    bad = tmp_path / "bad"
    (bad / "Oakhurst_clinic").mkdir(parents=True)
    # a tag whose text attribute disagrees with the note: both strings are PHI
    xml = to_i2b2_xml(Document("x", "Seen by Quixley today.", [], "1")).replace(
        "<TAGS>\n", '<TAGS>\n<NAME id="P0" start="8" end="15" text="Villegas" TYPE="DOCTOR" comment="" />\n')
    (bad / "Oakhurst_clinic" / f"{BASENAME}-01.xml").write_text(xml, encoding="utf-8")
    txt = tmp_path / "txt" / "Oakhurst_clinic"
    txt.mkdir(parents=True)
    (txt / f"{BASENAME}.txt").write_bytes(b"Villegas \xff Quixley")  # not UTF-8
    nomatch = tmp_path / "nomatch"
    nomatch.mkdir()
    (nomatch / f"{BASENAME}.txt").write_text(TEXT)
    runs = [(bad, ["--spans", "input"]), (tmp_path / "txt", ["--model", str(blind_model)]),
            (nomatch, ["--patient-from-filename", r"^\d+", "--model", str(blind_model)])]
    for src, extra in runs:
        rc = main(["deidentify", str(src), str(tmp_path / "o"), "--no-progress", *extra])
        err = capsys.readouterr().err
        assert rc == 1 and not _leaks(err) and err.count("\n") == 1, err
        if "--spans" in extra:
            assert "IN file #1 of 1" in err and "P0" in err, err
    assert not (tmp_path / "o").exists()
    # a --gold file whose text differs from the input's: named by number, the offset given, no text
    gold = tmp_path / "gold" / "Oakhurst_clinic"
    gold.mkdir(parents=True)
    (gold / f"{BASENAME}.xml").write_text(to_i2b2_xml(Document("x", TEXT.replace("stable", "Quixley"), [], "1")))
    txt2 = tmp_path / "txt2" / "Oakhurst_clinic"
    txt2.mkdir(parents=True)
    (txt2 / f"{BASENAME}.txt").write_text(TEXT)
    assert main(["deidentify", str(tmp_path / "txt2"), str(tmp_path / "o"), "--no-progress", "--gold",
                 str(tmp_path / "gold"), "--model", str(blind_model)]) == 1
    err = capsys.readouterr().err
    assert not _leaks(err) and "from character 3 on" in err, err


def test_the_key_file_is_never_read_as_input_nor_written_into_out(tmp_path, capsys):
    src, extra = _inputs(tmp_path / "in")["i2b2"]
    write_key(src / "key.xml", KEY)
    assert main(["deidentify", str(src), str(tmp_path / "o"), "--pseudonym-key-file", str(src / "key.xml"),
                 *extra]) == 2
    assert "--pseudonym-key-file" in capsys.readouterr().err
    (tmp_path / "o").mkdir()
    write_key(tmp_path / "o" / "key", KEY)
    assert main(["deidentify", str(src), str(tmp_path / "o"), "--pseudonym-key-file", str(tmp_path / "o" / "key"),
                 "--force", *extra]) == 2
    assert "--pseudonym-key-file" in capsys.readouterr().err
