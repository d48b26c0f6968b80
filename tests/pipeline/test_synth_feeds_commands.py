"""``deidlib synth`` output feeds every command as it is (its per-site folders are
read recursively), and it exports plain text."""

from __future__ import annotations

import json

from deidlib.cli import main
from deidlib.corpus.i2b2 import read_i2b2_dir

TINY = ["--epochs", "1", "--embeddings", "none", "--scheme", "binary", "--set", "word_dim=8", "--set", "hidden=8",
        "--set", "char_hidden=4", "--set", "char_emb_dim=4", "--set", "ff_dim=8"]


def test_per_site_corpus_feeds_evaluate_predict_surrogate_train_deidentify(tmp_path, capsys):
    syn = tmp_path / "syn"
    assert main(["synth", str(syn), "--patients", "5", "--sites", "2"]) == 0
    assert sorted(p.name for p in syn.iterdir()) == ["metadata.tsv", "site0", "site1"]
    n = len(list(syn.rglob("*.xml")))
    assert len(read_i2b2_dir(syn, recursive=True)) == n > 0 and read_i2b2_dir(syn) == []
    capsys.readouterr()
    assert main(["evaluate", str(syn), str(syn), "--measure", "binary_token", "--json", str(tmp_path / "e.json")]) == 0
    rep = json.loads((tmp_path / "e.json").read_text())
    assert rep["n_documents"] == n
    assert main(["train", str(tmp_path / "run"), "--corpus", "i2b2", "--data-dir", str(syn), *TINY]) == 0
    scores = json.loads((tmp_path / "run" / "scores.json").read_text())
    assert scores["train_documents"] + scores["test_documents"] <= n and scores["train_documents"] > 0
    assert main(["predict", str(tmp_path / "run"), str(syn), str(tmp_path / "pred")]) == 0
    assert len(list((tmp_path / "pred").glob("*.xml"))) == n
    assert main(["evaluate", str(syn), str(tmp_path / "pred"), "--measure", "binary_token"]) == 0
    assert main(["surrogate", str(syn), str(tmp_path / "sur"), "--seed", "0"]) == 0
    assert len(list((tmp_path / "sur").glob("*.xml"))) == n
    assert main(["deidentify", str(syn), str(tmp_path / "deid"), "--model", str(tmp_path / "run"), "--seed", "0",
                 "--no-progress"]) == 0
    assert len(list((tmp_path / "deid").glob("*.xml"))) == n  # flat, pseudonymised names


def test_plain_text_export_and_flat_layout(tmp_path, tiny_model):
    syn = tmp_path / "syn"
    assert main(["synth", str(syn), "--patients", "3", "--sites", "2", "--format", "both", "--flat"]) == 0
    xml = {p.stem: p for p in syn.glob("*.xml")}
    txt = {p.stem: p for p in syn.glob("*.txt")}
    assert set(xml) == set(txt) and xml and not any(p.is_dir() for p in syn.iterdir())
    docs = read_i2b2_dir(syn)
    for d in docs:
        with open(txt[d.id], encoding="utf-8", newline="") as fh:
            assert fh.read() == d.text  # exact text, the gold offsets hold
    # the text notes de-identified with the XML files of the same folder as gold
    assert main(["deidentify", str(syn), str(tmp_path / "deid"), "--format", "txt", "--gold", str(syn),
                 "--model", str(tiny_model), "--no-progress"]) == 0
    g = json.loads((tmp_path / "deid" / "deidentify.json").read_text())["gold"]
    assert g["gold_phi_mentions"] == sum(len(d.spans) for d in docs)
    names = sorted(p.name for p in (tmp_path / "deid").iterdir())
    assert len(names) == len(txt) + 1 and "deidentify.json" in names and not set(names) & {f"{i}.txt" for i in txt}
    # --force replaces a flat corpus (files synth wrote) by a per-site text-only one
    assert main(["synth", str(syn), "--patients", "3", "--sites", "2", "--format", "txt", "--force"]) == 0
    assert sorted(p.name for p in syn.iterdir()) == ["metadata.tsv", "site0", "site1"]
    assert all(p.suffix == ".txt" for p in syn.rglob("*") if p.is_file() and p.name != "metadata.tsv")
