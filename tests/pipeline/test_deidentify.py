"""``deidlib deidentify IN OUT``: every format end to end, refusals,
patient-consistent surrogates, worker-count independence, Dask == single process, and the
count of gold PHI that survives."""

from __future__ import annotations

import csv
import datetime as dt
import json
import secrets

import pytest

from deidlib.cli import main
from deidlib.corpus import Document, Span
from deidlib.corpus.i2b2 import read_i2b2_dir, write_i2b2_dir
from deidlib.pipeline.run import (
    DeidOptions,
    ModelBlob,
    _process_chunk,
    _surviving_gold,
    chunk_documents,
    run_dask,
    run_local,
)

from .conftest import write_key

SUMMARY = "deidentify.json"


def _snapshot(d):
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def _outputs(d):
    """Output files without the run summary (which holds timings and the worker count)."""
    return {k: v for k, v in _snapshot(d).items() if k != SUMMARY}


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err and "\n" not in err and "Traceback" not in err, err
    return err


def write_format(docs, fmt, root):
    """Write ``docs`` as IN in ``fmt``; returns IN."""
    root.mkdir(parents=True, exist_ok=True)
    if fmt == "i2b2":
        write_i2b2_dir(docs, root / "site")
    elif fmt == "txt":
        for d in docs:
            (root / "site").mkdir(exist_ok=True)
            with open(root / "site" / f"{d.id}.txt", "w", encoding="utf-8", newline="") as fh:
                fh.write(d.text)
    elif fmt == "jsonl":
        with open(root / "notes.jsonl", "w", encoding="utf-8") as fh:
            for d in docs:
                # UTF-8 as the command writes it (json.dumps' default \\u-escapes would differ in bytes only)
                fh.write(json.dumps({"id": d.id, "patient": d.patient_id, "text": d.text, "n": 3},
                                    ensure_ascii=False) + "\n")
    elif fmt == "csv":
        with open(root / "notes.csv", "w", encoding="utf-8", newline="") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(["id", "patient", "note"])
            for d in docs:
                w.writerow([d.id, d.patient_id, d.text])
    return root


EXTRA = {"txt": [], "i2b2": [], "jsonl": ["--patient-column", "patient", "--keep-column", "id", "--keep-column", "n"],
         "csv": ["--text-column", "note", "--patient-column", "patient", "--keep-column", "id"]}


def _texts(fmt, out):
    """Output texts by document id (txt/i2b2 run with --keep-file-names; jsonl/csv keep the id column)."""
    if fmt == "i2b2":
        return {d.id: d.text for d in read_i2b2_dir(out, recursive=True)}
    if fmt == "txt":
        return {p.stem: p.read_text(encoding="utf-8") for p in sorted(out.rglob("*.txt"))}
    (f,) = out.glob(f"*.{fmt}")
    if fmt == "jsonl":
        return {o["id"]: o["text"] for o in map(json.loads, f.read_text().splitlines())}
    with open(f, encoding="utf-8", newline="") as fh:
        return {r["id"]: r["note"] for r in csv.DictReader(fh)}


@pytest.mark.parametrize("fmt", ["txt", "i2b2", "jsonl", "csv"])
def test_each_format_end_to_end(fmt, tiny_model, blind_model, synth_docs, tmp_path, capsys):
    docs = synth_docs[24:30]
    src = write_format(docs, fmt, tmp_path / "in")
    before = _snapshot(src)
    # a model that tags nothing with masks: the output is the input's text byte for byte (the writers are
    # exact; i2b2: the same text, no tags left) and every gold mention survives
    assert main(["deidentify", str(src), str(tmp_path / "same"), "--model", str(blind_model), "--replace", "mask",
                 "--no-progress", "--keep-file-names", *EXTRA[fmt]]) == 0
    if fmt == "i2b2":
        same = {d.id: d for d in read_i2b2_dir(tmp_path / "same", recursive=True)}
        assert {i: d.text for i, d in same.items()} == {d.id: d.text for d in docs}
        assert not any(d.spans for d in same.values())
        g = json.loads((tmp_path / "same" / SUMMARY).read_text())["gold"]
        assert g["surviving_gold_phi_mentions"] == g["gold_phi_mentions"] == sum(len(d.spans) for d in docs)
    elif fmt == "txt":
        assert _outputs(tmp_path / "same") == before
    else:
        assert _texts(fmt, tmp_path / "same") == {d.id: d.text for d in docs}
    # the tiny tagger with seeded surrogates
    out = tmp_path / "out"
    assert main(["deidentify", str(src), str(out), "--model", str(tiny_model), "--seed", "3", "--no-progress",
                 "--keep-file-names", *EXTRA[fmt]]) == 0
    printed = capsys.readouterr().out
    assert "guarantee: " in printed and "SEEDED run" in printed
    assert _snapshot(src) == before  # IN untouched
    assert set(_outputs(out)) == set(before)  # the same files, same relative names
    orig = {d.id: d.text for d in docs}
    new = _texts(fmt, out)
    assert set(new) == set(orig)
    summary = json.loads((out / SUMMARY).read_text())
    assert summary["input"] == {"format": fmt, "documents": 6, "patients": len({d.patient_id for d in docs}) if fmt
                                in ("i2b2", "jsonl", "csv") else 0, "characters": sum(map(len, orig.values()))}
    assert summary["replaced_spans"] > 0 and summary["surrogates"]["randomness"] == "seeded (3)"
    assert sum(new[i] != orig[i] for i in orig) >= 1
    if fmt == "jsonl":  # kept fields kept, the patient field pseudonymised
        objs = list(map(json.loads, (out / "notes.jsonl").read_text().splitlines()))
        assert all(o["n"] == 3 and o["patient"] not in {d.patient_id for d in docs} for o in objs)
    if fmt == "i2b2":  # tags point at the surrogates; gold counted
        for d in read_i2b2_dir(out, recursive=True):
            assert all(d.text[s.start:s.end] == s.text for s in d.spans)
        g = summary["gold"]
        assert g["gold_phi_mentions"] == sum(len(d.spans) for d in docs)
        assert 0 <= g["surviving_gold_phi_mentions"] < g["gold_phi_mentions"]
        assert 0 < g["binary_token"]["recall"] <= 1
    # masks: every replaced span became its category mask
    assert main(["deidentify", str(src), str(tmp_path / "m"), "--model", str(tiny_model), "--replace", "mask",
                 "--no-progress", "--keep-file-names", *EXTRA[fmt]]) == 0
    masked = _texts(fmt, tmp_path / "m")
    assert any("[NAME]" in t or "[DATE]" in t for t in masked.values())


def test_txt_with_gold_folder_counts_surviving_phi(tiny_model, synth_docs, tmp_path, capsys):
    docs = synth_docs[24:28]
    src = write_format(docs, "txt", tmp_path / "in")
    write_i2b2_dir(docs, tmp_path / "gold" / "site")
    assert main(["deidentify", str(src), str(tmp_path / "out"), "--model", str(tiny_model), "--gold",
                 str(tmp_path / "gold"), "--no-progress"]) == 0
    g = json.loads((tmp_path / "out" / SUMMARY).read_text())["gold"]
    assert g["gold_phi_mentions"] == sum(len(d.spans) for d in docs)
    assert "gold PHI mentions survive" in capsys.readouterr().out


# ---- refusals -----------------------------------------------------------------------------------

def test_refusals_are_one_line_and_leave_inputs_alone(tiny_model, synth_docs, tmp_path, capsys):
    src = write_format(synth_docs[:2], "txt", tmp_path / "in")
    before = _snapshot(src)
    m = ["--model", str(tiny_model), "--no-progress"]
    cases = [
        ([str(src), str(src)], "OUT"),  # OUT is IN
        ([str(src), str(src / "sub")], "OUT"),  # OUT inside IN
        ([str(src / "site"), str(src)], "OUT"),  # OUT contains IN
        ([str(src), str(tmp_path / "o"), "--audit", str(tmp_path / "o" / "a.jsonl")], "--audit"),  # audit in OUT
        ([str(src), str(tmp_path / "o"), "--audit", str(src / "a.jsonl")], "--audit"),  # audit in IN
        ([str(src), str(tmp_path / "o"), "--scheduler", "tcp://x:1"], "--engine dask"),
        ([str(src), str(tmp_path / "o"), "--format", "txt", "--patient-column", "p"], "--patient-column"),
        ([str(src), str(tmp_path / "o"), "--patient-from-filename", "(["], "regular expression"),
        ([str(src), str(tmp_path / "o"), "--spans", "input"], "no tags"),
        ([str(tmp_path / "nope"), str(tmp_path / "o")], "no such file"),
    ]
    for argv, needle in cases:
        rc = main(["deidentify", *argv, *(m if "--spans" not in argv else ["--no-progress"])])
        err = _one_line_error(capsys)
        assert rc in (1, 2) and needle in err, (argv, err)
    assert main(["deidentify", str(src), str(tmp_path / "o2"), "--model", str(tmp_path)]) == 1
    assert "not a model" in _one_line_error(capsys)
    assert main(["deidentify", str(src), str(tmp_path / "o2"), "--workers", "0"]) == 2
    capsys.readouterr()
    full = tmp_path / "full"
    full.mkdir()
    (full / "mine.txt").write_text("keep")
    assert main(["deidentify", str(src), str(full), *m]) == 2
    assert "not empty" in _one_line_error(capsys)
    assert sorted(p.name for p in full.iterdir()) == ["mine.txt"]
    assert main(["deidentify", str(src), str(full), "--force", *m]) == 0
    assert not (full / "mine.txt").exists() and (full / SUMMARY).is_file()  # --force replaces OUT whole
    assert _snapshot(src) == before
    assert not (tmp_path / "o").exists()


def test_jsonl_and_csv_column_errors(tiny_model, synth_docs, tmp_path, capsys):
    src = write_format(synth_docs[:2], "csv", tmp_path / "in")
    assert main(["deidentify", str(src), str(tmp_path / "o"), "--model", str(tiny_model)]) == 1
    assert "--text-column 'text' is not a column" in _one_line_error(capsys)
    # a file as IN: OUT may sit next to it, not be it nor hold it
    f = src / "notes.csv"
    assert main(["deidentify", str(f), str(src), "--model", str(tiny_model), "--text-column", "note", "--force"]) == 2
    assert "contains IN" in _one_line_error(capsys)
    assert main(["deidentify", str(f), str(src / "out"), "--model", str(tiny_model), "--text-column", "note",
                 "--no-progress"]) == 0
    assert len(list((src / "out").glob("*.csv"))) == 1
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "n.jsonl").write_text('{"text": "ok"}\nnot json\n')
    assert main(["deidentify", str(bad), str(tmp_path / "o"), "--model", str(tiny_model)]) == 1
    assert "IN file #1 of 1, line 2: not JSON" in _one_line_error(capsys)
    assert main(["deidentify", str(bad), str(tmp_path / "o"), "--model", str(tiny_model), "--keep-file-names"]) == 1
    assert "n.jsonl:2: not JSON" in capsys.readouterr().err


# ---- surrogates: patients, randomness -------------------------------------------------------------

T1 = "Seen by Dr. Brown on 12/02/2020 in Boston."
T2 = "Dr. Brown called on 12/03/2020."


def _planted(tmp_path):
    docs = [Document("001-01", T1, [Span.of(T1, 12, 17, "DOCTOR"), Span.of(T1, 21, 31, "DATE"),
                                    Span.of(T1, 35, 41, "CITY")], "001"),
            Document("001-02", T2, [Span.of(T2, 4, 9, "DOCTOR"), Span.of(T2, 20, 30, "DATE")], "001"),
            Document("002-01", T2, [Span.of(T2, 4, 9, "DOCTOR"), Span.of(T2, 20, 30, "DATE")], "002")]
    write_i2b2_dir(docs, tmp_path / "gold")
    return tmp_path / "gold", docs


def test_one_surrogate_identity_per_patient(tmp_path):
    gold, _ = _planted(tmp_path)
    assert main(["deidentify", str(gold), str(tmp_path / "o"), "--spans", "input", "--seed", "0",
                 "--no-progress"]) == 0
    out = read_i2b2_dir(tmp_path / "o")
    by_patient = {}
    for d in out:  # pseudonymised names <patient>-<file>.xml: the patient pseudonym is the prefix
        by_patient.setdefault(d.patient_id, []).append(d.spans[0].text)
    assert sorted(map(len, by_patient.values())) == [1, 2] and not {"001", "002"} & set(by_patient)
    two = next(v for v in by_patient.values() if len(v) == 2)
    assert two[0] == two[1] != "Brown"  # one patient, one identity
    assert json.loads((tmp_path / "o" / SUMMARY).read_text())["surrogates"]["scope"] == "patient"


def test_secure_randomness_by_default(tmp_path):
    gold, _ = _planted(tmp_path)
    runs = []
    for k in range(3):
        assert main(["deidentify", str(gold), str(tmp_path / f"o{k}"), "--spans", "input", "--no-progress"]) == 0
        runs.append(sorted(_outputs(tmp_path / f"o{k}").values()))  # contents: names are random per run
        s = json.loads((tmp_path / f"o{k}" / SUMMARY).read_text())["surrogates"]
        assert s["randomness"] == "OS CSPRNG" and "SEEDED" not in s["guarantee"]
    assert runs[0] != runs[1] or runs[1] != runs[2]  # unseeded output is not reproducible
    write_key(tmp_path / "key", "8d3f0a6e5b21c7f49e0d2a6b13c58f70")
    for k in (3, 4):
        assert main(["deidentify", str(gold), str(tmp_path / f"o{k}"), "--spans", "input", "--seed", "7",
                     "--no-progress", "--pseudonym-key-file", str(tmp_path / "key")]) == 0
    assert _outputs(tmp_path / "o3") == _outputs(tmp_path / "o4")


# ---- surviving gold PHI --------------------------------------------------------------------------

def test_surviving_gold_counts_whole_tokens():
    t = "Brown saw 12 patients in 2012"
    spans = [Span(0, 5, "NAME", "DOCTOR", "Brown"), Span(0, 2, "DATE", "DATE", "12"),
             Span(0, 4, "DATE", "DATE", "2012"), Span(0, 3, "NAME", "PATIENT", "Bro")]
    assert _surviving_gold(spans, t) == ["Brown", "12", "2012"]  # "Bro" is inside "Brown": not a token
    assert _surviving_gold(spans, "[NAME] saw [DATE] patients in [DATE]") == []
    # a gold span inside a token of the original ("MWilliams", NAME = "Williams") survives as it was written
    o = "Seen by MWilliams today"
    w = [Span(9, 17, "NAME", "DOCTOR", "Williams")]
    assert _surviving_gold(w, o, o) == ["Williams"] and _surviving_gold(w, o) == []
    assert _surviving_gold(w, "Seen by M[NAME] today", o) == []


def test_missed_phi_all_survive_and_replaced_gold_spans_none(blind_model, tmp_path, capsys):
    gold, docs = _planted(tmp_path)
    n = sum(len(d.spans) for d in docs)
    assert main(["deidentify", str(gold), str(tmp_path / "blind"), "--model", str(blind_model), "--replace", "mask",
                 "--no-progress"]) == 0
    g = json.loads((tmp_path / "blind" / SUMMARY).read_text())["gold"]
    assert g["gold_phi_mentions"] == n and g["surviving_gold_phi_mentions"] == n
    assert g["binary_token"]["recall"] == 0
    assert f"{n} of {n} gold PHI mentions survive" in capsys.readouterr().out
    assert main(["deidentify", str(gold), str(tmp_path / "masked"), "--spans", "input", "--replace", "mask",
                 "--no-progress", "--audit", str(tmp_path / "audit.jsonl")]) == 0
    g = json.loads((tmp_path / "masked" / SUMMARY).read_text())["gold"]
    assert g["surviving_gold_phi_mentions"] == 0 and g["binary_token"]["recall"] == 1
    recs = [r for r in map(json.loads, (tmp_path / "audit.jsonl").read_text().splitlines()) if "original" in r]
    assert sorted(r["original"] for r in recs) == sorted(s.text for d in docs for s in d.spans)
    assert "Brown" not in (tmp_path / "masked" / SUMMARY).read_text()  # the summary holds no PHI


# ---- scale: workers and Dask give the output of one process ---------------------------------------

def test_two_workers_equal_one_worker_with_a_seed(tiny_model, synth_docs, tmp_path):
    src = write_format(synth_docs[24:48], "i2b2", tmp_path / "in")
    write_key(tmp_path / "key", "a key of at least sixteen bytes\n")
    for w in ("1", "2"):  # one pseudonym key: the same file names
        assert main(["deidentify", str(src), str(tmp_path / f"w{w}"), "--model", str(tiny_model), "--seed", "5",
                     "--workers", w, "--no-progress", "--pseudonym-key-file", str(tmp_path / "key")]) == 0
    one, two = _outputs(tmp_path / "w1"), _outputs(tmp_path / "w2")
    assert one == two and len(one) == 24
    s1, s2 = (json.loads((tmp_path / w / SUMMARY).read_text()) for w in ("w1", "w2"))
    assert s2["engine"] == "processes" and s2["workers"] == 2
    assert s1["gold"] == s2["gold"]


def test_chunks_do_not_depend_on_workers_and_keep_patients_whole(synth_docs):
    chunks = chunk_documents(synth_docs, chunk_docs=5)
    # the synthetic notes come patient by patient, so chunking keeps the input order
    assert [d.id for c in chunks for d in c] == [d.id for d in synth_docs]
    assert all(len(c) <= 5 or len({d.patient_id for d in c}) == 1 for c in chunks)
    where = {}
    for i, c in enumerate(chunks):
        for d in c:
            where.setdefault(d.patient_id, set()).add(i)
    assert all(len(v) == 1 for v in where.values())


def test_dask_local_cluster_equals_single_process(tiny_model, synth_docs):
    from dask.distributed import Client, LocalCluster

    docs = synth_docs[24:40]
    blob = ModelBlob.from_dir(tiny_model)
    opts = DeidOptions(seed=11, memo_scope="patient")
    chunks = chunk_documents(docs, chunk_docs=4)
    local = {r.id: r for _, res in run_local(chunks, blob, opts) for r in res}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        dist = {r.id: r for _, res in run_dask(chunks, blob, opts, client=client) for r in res}
        assert len(client.scheduler_info()["workers"]) == 2
    assert set(dist) == set(local) == {d.id for d in docs}
    for i in local:
        assert dist[i].document == local[i].document and dist[i].predicted == local[i].predicted
    assert _process_chunk(blob, opts, chunks[0])[0].document == local[chunks[0][0].id].document


def test_deidentify_warns_that_a_huge_epsilon_releases_values_nearly_unchanged(tmp_path, tiny_model, capsys):
    """Surrogates at a budget above NEARLY_UNCHANGED_EPSILON keep dates, ages and cities almost
    exactly: deidentify says so, as `deidlib surrogate` does; masks release no values, so no warning."""
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.txt").write_text("Seen on 03/04/2019 in Boston by Dr. Smith.\n", encoding="utf-8")
    assert main(["deidentify", str(src), str(tmp_path / "o1"), "--model", str(tiny_model), "--epsilon", "1e308",
                 "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "deidlib deidentify: WARNING: epsilon 1e+308 per document is above 20" in err
    assert main(["deidentify", str(src), str(tmp_path / "o2"), "--model", str(tiny_model), "--epsilon", "20",
                 "--no-progress"]) == 0
    assert "WARNING" not in capsys.readouterr().err
    assert main(["deidentify", str(src), str(tmp_path / "o3"), "--model", str(tiny_model), "--epsilon", "1e308",
                 "--replace", "mask", "--no-progress"]) == 0
    assert "WARNING" not in capsys.readouterr().err


# ---- what the release keeps: surrogates never equal to their originals, dates shifted per patient ----

def test_release_checks_and_verbatim_types_in_the_summary(tmp_path, capsys):
    gold, docs = _planted(tmp_path)
    assert main(["deidentify", str(gold), str(tmp_path / "o"), "--spans", "input", "--no-progress"]) == 0
    out = capsys.readouterr().out
    s = json.loads((tmp_path / "o" / SUMMARY).read_text())
    n = sum(len(d.spans) for d in docs)
    assert s["release_checks"]["replacements"] == n and s["release_checks"]["equal_to_original"] == 0
    assert f"released: 0 of {n} replacements equal their original (must be 0)" in out
    assert s["surrogates"]["date_method"] == "shift" and "30-365 days" in s["surrogates"]["guarantee"]
    assert "dates (" not in out  # the within-a-day line is for the d-private mechanisms
    by = s["gold"]["by_type"]
    assert {t: v["mentions"] for t, v in by.items()} == {"DATE": 3, "LOCATION": 1, "NAME": 3}
    assert all(v["verbatim"] == 0 and v["token_recall"] == 1 for v in by.values())
    assert "gold mentions left verbatim by type: none" in out


def test_missed_mentions_are_listed_by_type(blind_model, tmp_path, capsys):
    gold, docs = _planted(tmp_path)
    assert main(["deidentify", str(gold), str(tmp_path / "b"), "--model", str(blind_model), "--no-progress"]) == 0
    by = json.loads((tmp_path / "b" / SUMMARY).read_text())["gold"]["by_type"]
    assert {t: v["verbatim"] for t, v in by.items()} == {"DATE": 3, "LOCATION": 1, "NAME": 3}
    assert all(v["token_recall"] == 0 for v in by.values())
    assert "gold mentions left verbatim by type: DATE 3, LOCATION 1, NAME 3" in capsys.readouterr().out


def _dates(out_dir):
    return sorted(s.text for d in read_i2b2_dir(out_dir) for s in d.spans if s.category == "DATE")


def test_date_shift_follows_the_pseudonym_key_and_dp_reports_dates_near_the_truth(tmp_path, capsys):
    gold, _ = _planted(tmp_path)
    (tmp_path / "key").write_text(secrets.token_hex(32))
    (tmp_path / "key").chmod(0o600)
    runs = []
    for k in range(2):
        assert main(["deidentify", str(gold), str(tmp_path / f"k{k}"), "--spans", "input", "--no-progress",
                     "--pseudonym-key-file", str(tmp_path / "key")]) == 0
        runs.append(_dates(tmp_path / f"k{k}"))
    assert runs[0] == runs[1]  # no seed, same key: the same shifted dates (no averaging across releases)
    fresh = []
    for k in range(3):
        assert main(["deidentify", str(gold), str(tmp_path / f"f{k}"), "--spans", "input", "--no-progress"]) == 0
        fresh.append(_dates(tmp_path / f"f{k}"))
    assert fresh[0] != fresh[1] or fresh[1] != fresh[2]  # without a key: a fresh secret shift per run
    for r in runs + fresh:  # no released date lies within 30 days of a true one
        assert all(abs((dt.datetime.strptime(t, "%m/%d/%Y").date() - y).days) >= 30 for t in r
                   for y in (dt.date(2020, 12, 2), dt.date(2020, 12, 3)))
    capsys.readouterr()
    assert main(["deidentify", str(gold), str(tmp_path / "dp"), "--spans", "input", "--no-progress",
                 "--date-method", "dp"]) == 0
    out = capsys.readouterr().out
    s = json.loads((tmp_path / "dp" / SUMMARY).read_text())
    c = s["release_checks"]
    assert c["equal_to_original"] == 0 and c["dates_unchanged"] == 0 and c["dates_to_the_day"] == 3
    assert (f"dates (dp, measured): {c['dates_within_a_day']} of 3 dates written to the day were released "
            "unchanged or within a day") in out


def test_verbatim_survival_judges_the_released_text():
    from deidlib.pipeline.run import mask_document, verbatim_survival

    t = "Dr. Brown saw Ann Lee on 03/04/2019 in Boston; Brown again 03/05/2019."
    spans = [Span.of(t, 4, 9, "DOCTOR"), Span.of(t, 14, 21, "PATIENT"), Span.of(t, 25, 35, "DATE"),
             Span.of(t, 39, 45, "CITY"), Span.of(t, 47, 52, "DOCTOR"), Span.of(t, 59, 69, "DATE")]
    gold = Document("n1", t, spans, "p1")
    # everything tagged and masked: nothing survives
    masked = mask_document(gold)[0]
    v = verbatim_survival([gold], [masked])
    assert (v["mentions"], v["verbatim"]) == (6, 0)
    # a tagger that missed the second "Brown": the first is masked, yet "Brown" is still in the
    # released text, so both mentions of Brown survive; the missed date survives too
    missed = mask_document(gold.with_spans([s for i, s in enumerate(spans) if i not in (4, 5)]))[0]
    v = verbatim_survival([gold], [missed])
    assert v["verbatim"] == 3 and v["by_type"]["NAME"] == {"mentions": 3, "verbatim": 2}
    assert v["by_type"]["DATE"] == {"mentions": 2, "verbatim": 1} and v["fraction"] == 0.5
    # a surrogate equal to its original survives as well (judged on the text, not on the tags)
    same = Document("n1", t.replace("Ann Lee", "Ada Lin"), [], "p1")
    assert verbatim_survival([gold], [same])["verbatim"] == 5
    with pytest.raises(ValueError):
        verbatim_survival([gold], [Document("n2", t, [], "p1")])


def test_the_peer_benchmark_judges_ours_on_the_notes_the_command_wrote_and_peers_on_masks(tmp_path):
    """Ours: the released notes are read back from the command's OUT (pseudonymised file names,
    shuffled order), paired with the gold notes by document id through the audit's file map, and
    equal the files the command wrote; no surrogate is drawn again in the benchmark. Peers: their
    spans masked."""
    import importlib.util
    import pathlib

    spec = importlib.util.spec_from_file_location(
        "deid_peers", pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "deid_peers.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    from deidlib.pipeline.run import verbatim_survival

    texts = {"n1": "Seen 03/04/2019 by Dr. Brown.", "n2": "Mr. Olsen called 617-555-0199 today.",
             "n3": "No identifiers here, only Dr. Brown."}
    spans = {"n1": [(5, 15, "DATE"), (23, 28, "DOCTOR")], "n2": [(4, 9, "PATIENT"), (17, 29, "PHONE")],
             "n3": []}  # n3's Brown is not tagged: it must survive verbatim
    gold = [Document(k, t, [Span.of(t, a, b, c) for a, b, c in spans[k]], "p1" if k != "n2" else "p2")
            for k, t in texts.items()]
    write_i2b2_dir(gold, tmp_path / "in")
    out, audit = tmp_path / "out", tmp_path / "audit.jsonl"
    assert main(["deidentify", str(tmp_path / "in"), str(out), "--spans", "input", "--audit", str(audit),
                 "--no-progress"]) == 0
    written = {p.read_text() for p in out.glob("*.xml")}
    assert not {f"{k}.xml" for k in texts} & {p.name for p in out.glob("*.xml")}  # names are pseudonyms
    order = [gold[2], gold[0], gold[1]]
    released = bench.released_from_out(order, out, audit)
    assert [r.id for r in released] == ["n3", "n1", "n2"]
    assert {r.text for r in released} == {d.text for d in read_i2b2_dir(out)} and len(written) == 3
    by_id = {r.id: r.text for r in released}
    assert "03/04/2019" not in by_id["n1"] and "Brown" not in by_id["n1"] and "617-555-0199" not in by_id["n2"]
    assert by_id["n3"] == texts["n3"]
    assert verbatim_survival(order, released)["verbatim"] == 0
    with pytest.raises(SystemExit, match="no released file"):
        bench.released_from_out([Document("n9", "x", [], "")], out, audit)
    t = texts["n1"]
    peer = bench.peer_released_text([gold[0].with_spans([Span.of(t, 5, 15, "OTHER")])])[0]
    assert peer.text == "Seen [OTHER] by Dr. Brown."
    assert verbatim_survival([gold[0]], [peer])["verbatim"] == 1  # the peer missed Brown
