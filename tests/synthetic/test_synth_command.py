"""``deidlib synth``: i2b2 XML per site + metadata.tsv."""

from __future__ import annotations

import csv

import pytest

from deidlib.commands.synth import metadata_tsv
from deidlib.synthetic import generate


def main(argv):
    """Run ``deidlib synth`` through the CLI entry point (one-line errors, exit codes)."""
    from deidlib.cli import main as cli_main

    assert argv[0] == "synth"
    return cli_main(argv)


def test_registered_in_cli():
    from deidlib.cli import _COMMANDS

    assert _COMMANDS["synth"] == "deidlib.commands.synth"


def test_metadata_tsv_rows():
    docs = generate(patients=6, sites=3, seed=2, note_mix={"pathology_report": 1, "progress_note": 1})
    rows = list(csv.DictReader(metadata_tsv(docs).splitlines(), delimiter="\t"))
    assert [r["id"] for r in rows] == [d.id for d in docs]
    for r, d in zip(rows, docs):
        assert r["site"] == d.site and r["diagnosis"] == d.metadata["diagnosis"]
        assert int(r["phi"]) == len(d.spans) and int(r["chars"]) == len(d.text)
        assert r["subsite"] == (d.metadata.get("subsite") or "")


def test_refuses_non_empty_dir(tmp_path, capsys):
    (tmp_path / "x.txt").write_text("x")
    assert main(["synth", str(tmp_path), "--patients", "2"]) == 2
    assert "not empty" in capsys.readouterr().err


def test_bad_size_is_a_clear_error(tmp_path, capsys):
    pytest.importorskip("deidlib.corpus.i2b2")
    assert main(["synth", str(tmp_path / "o"), "--patients", "2", "--sites", "0"]) == 2
    assert "sites" in capsys.readouterr().err


def test_writes_i2b2_per_site_and_reads_back(tmp_path, capsys):
    i2b2 = pytest.importorskip("deidlib.corpus.i2b2")
    out = tmp_path / "corpus"
    assert main(["synth", str(out), "--patients", "6", "--sites", "2", "--seed", "3"]) == 0
    summary = capsys.readouterr().out
    assert "documents" in summary and "MB/s" in summary
    docs = generate(patients=6, sites=2, seed=3)
    assert sorted(p.name for p in out.iterdir()) == ["metadata.tsv", "site0", "site1"]
    back = {}
    for site in ("site0", "site1"):
        for d in i2b2.read_i2b2_dir(out / site):
            back[d.id] = d
    assert set(back) == {d.id for d in docs}
    for d in docs:
        b = back[d.id]
        assert b.text == d.text
        assert [(s.start, s.end, s.subtype, s.text) for s in b.spans] == [
            (s.start, s.end, s.subtype, s.text) for s in d.spans
        ]
        assert (out / d.site / f"{d.id}.xml").exists()


def test_more_sites_than_patients_is_refused_and_empty_sites_are_announced(tmp_path, capsys):
    assert main(["synth", str(tmp_path / "o"), "--patients", "2", "--sites", "5"]) == 2
    err = capsys.readouterr().err
    assert "--sites 5 is more than --patients 2" in err and not (tmp_path / "o").exists()
    # a site no patient was drawn to is announced (seed 2: both patients fall into one of two sites)
    assert main(["synth", str(tmp_path / "d"), "--patients", "2", "--sites", "2", "--seed", "2",
                 "--notes-min", "1", "--notes-max", "1"]) == 0
    assert len([p for p in (tmp_path / "d").iterdir() if p.is_dir()]) == 1
    assert "2 sites asked, but the 2 patients (drawn at random to sites) fell into 1 of them" in capsys.readouterr().err
    # default: 5 sites, or as many as there are patients (no longer 5 for 2 patients)
    assert main(["synth", str(tmp_path / "e"), "--patients", "2", "--seed", "0", "--notes-min", "1",
                 "--notes-max", "1"]) == 0
    assert len([p for p in (tmp_path / "e").iterdir() if p.is_dir()]) == 2 and "warning" not in capsys.readouterr().err
