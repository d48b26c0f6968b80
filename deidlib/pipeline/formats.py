"""Readers and writers of the inputs ``deidlib deidentify`` accepts, each writing back the
format it read (the de-identified text in place of the original, everything else as it was).

=============  ===============================================  =========================================
format         input (a file or a folder, searched recursively)  output (same relative paths under OUT)
=============  ===============================================  =========================================
``txt``        ``*.txt`` files, one note each, UTF-8             the de-identified text, same line ends
``i2b2``       ``*.xml`` i2b2 2014 files (their tags = gold)     i2b2 XML whose tags point at the replacements
``jsonl``      ``*.jsonl`` files, one JSON object a line         the same objects, text field replaced
``csv``        ``*.csv`` files with a header row                 the same rows and columns, text cell replaced
``physionet``  a PhysioNet deid folder (``id.text`` and          ``id.text`` in the same record format
               ``id-phi.phrase``: gold)
=============  ===============================================  =========================================

Document ids: the file's path relative to IN without its suffix (``site0/001-01``); for
JSONL/CSV ``path:line`` (``notes:12``, the 1-based line of the object, or the 1-based data
row of a CSV); for PhysioNet ``pid-nid``. Patient ids: an i2b2 file's own (its ``PPP-``
prefix or META), PhysioNet's ``pid``, a ``--patient-column`` of JSONL/CSV, or the first group
(else the whole match) of ``--patient-from-filename REGEX`` searched in the relative path;
otherwise none (each note is its own surrogate scope). Plain text is read and written with
``newline=""``, so ``\\r\\n`` line ends are kept and span offsets are exact.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..corpus.document import CorpusError, Document

__all__ = ["FORMATS", "SUFFIX", "InputCorpus", "detect_format", "read_input", "InputError"]

FORMATS = ("txt", "i2b2", "jsonl", "csv", "physionet")
SUFFIX = {"txt": ".txt", "i2b2": ".xml", "jsonl": ".jsonl", "csv": ".csv"}


class InputError(CorpusError):
    """Bad input (one line, naming the file)."""


@dataclass
class InputCorpus:
    """Documents read from IN and how to write their de-identified versions back.

    ``write(out_dir, docs_by_id)`` writes every file of the input with each document
    replaced by ``docs_by_id[doc.id]`` (a Document whose text is de-identified and whose
    spans point at the replacements)."""

    format: str
    docs: list[Document]
    has_gold: bool
    write: Callable[[Path, dict[str, Document]], list[Path]] = field(repr=False)


def _files(src: Path, suffix: str) -> list[Path]:
    if src.is_file():
        return [src]
    return sorted(p for p in src.rglob(f"*{suffix}") if p.is_file() and not any(
        part.startswith(".") for part in p.relative_to(src).parts))


def _rel(src: Path, f: Path) -> Path:
    return Path(f.name) if src.is_file() else f.relative_to(src)


def detect_format(src: Path) -> str:
    """The format of ``src`` from its suffix (a file) or from the files it holds (a folder)."""
    if src.is_file():
        for fmt, suf in SUFFIX.items():
            if src.name.endswith(suf):
                return fmt
        raise InputError(f"IN {src}: cannot tell the format from the file name (give --format)")
    if (src / "id.text").is_file():
        return "physionet"
    found = [fmt for fmt, suf in SUFFIX.items() if any(True for _ in _files(src, suf))]
    if not found:
        raise InputError(f"IN {src}: no .txt, .xml, .jsonl or .csv files")
    if len(found) > 1:
        raise InputError(f"IN {src}: holds {' and '.join(found)} files; give --format")
    return found[0]


def _patient_rule(regex: str | None) -> Callable[[str], str] | None:
    if regex is None:
        return None
    try:
        rx = re.compile(regex)
    except re.error as e:
        raise InputError(f"--patient-from-filename {regex!r}: not a regular expression ({e})") from None

    def rule(rel: str) -> str:
        m = rx.search(rel)
        if m is None:
            raise InputError(f"--patient-from-filename {regex!r} does not match {rel!r}")
        return next((g for g in m.groups() if g), m.group(0))

    return rule


def _read_text(f: Path) -> str:
    try:
        with open(f, encoding="utf-8", newline="") as fh:
            return fh.read()
    except UnicodeDecodeError as e:
        raise InputError(f"{f}: not UTF-8 (invalid byte at byte offset {e.start})") from None


def _write_text(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
    return path


def _doc_id(rel: Path) -> str:
    return rel.with_suffix("").as_posix()


# ---------------------------------------------------------------------------------- txt
def _read_txt(src: Path, patient: Callable | None, **_) -> InputCorpus:
    files = _files(src, ".txt")
    docs = []
    for f in files:
        rel = _rel(src, f)
        docs.append(Document(_doc_id(rel), _read_text(f), [], patient(rel.as_posix()) if patient else "",
                             metadata={"_path": rel.as_posix()}))

    def write(out: Path, new: dict[str, Document]) -> list[Path]:
        return [_write_text(out / d.metadata["_path"], new[d.id].text) for d in docs]

    return InputCorpus("txt", docs, False, write)


# ---------------------------------------------------------------------------------- i2b2
def _read_i2b2(src: Path, patient: Callable | None, **_) -> InputCorpus:
    from ..corpus.i2b2 import read_i2b2_xml, to_i2b2_xml

    docs = []
    for f in _files(src, ".xml"):
        rel = _rel(src, f)
        d = read_i2b2_xml(f, allow_overlap=True)
        d.id = _doc_id(rel)
        if patient:
            d.patient_id = patient(rel.as_posix())
        d.metadata = {**d.metadata, "_path": rel.as_posix()}
        docs.append(d)

    def write(out: Path, new: dict[str, Document]) -> list[Path]:
        paths = []
        for d in docs:
            n = new[d.id]
            rel = d.metadata["_path"]
            meta = {k: v for k, v in n.metadata.items() if not k.startswith("_")}
            x = Document(Path(rel).stem, n.text, n.spans, n.patient_id, n.site, meta)
            paths.append(_write_text(out / rel, to_i2b2_xml(x)))
        return paths

    return InputCorpus("i2b2", docs, any(d.spans for d in docs), write)


# ---------------------------------------------------------------------------------- jsonl
def _column_value(obj, col: str, where: str) -> str:
    if col not in obj:
        raise InputError(f"{where}: no column {col!r} (columns: {', '.join(map(str, obj))[:200]})")
    v = obj[col]
    if not isinstance(v, str):
        raise InputError(f"{where}: column {col!r} holds {type(v).__name__}, not text")
    return v


def _read_jsonl(src: Path, patient: Callable | None, text_column: str, patient_column: str | None, **_) -> InputCorpus:
    files = _files(src, ".jsonl")
    docs: list[Document] = []
    layout: list[tuple[Path, list]] = []
    for f in files:
        rel = _rel(src, f)
        lines = []
        for i, line in enumerate(_read_text(f).splitlines(keepends=True), 1):
            if not line.strip():
                lines.append(line)
                continue
            where = f"{f}:{i}"
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise InputError(f"{where}: not JSON ({e.msg})") from None
            if not isinstance(obj, dict):
                raise InputError(f"{where}: expected a JSON object per line")
            did = f"{_doc_id(rel)}:{i}"
            pid = str(obj.get(patient_column, "")) if patient_column else (patient(rel.as_posix()) if patient else "")
            if patient_column and patient_column not in obj:
                raise InputError(f"{where}: no patient column {patient_column!r}")
            docs.append(Document(did, _column_value(obj, text_column, where), [], pid))
            lines.append((did, obj, line.endswith("\n")))
        layout.append((rel, lines))

    def write(out: Path, new: dict[str, Document]) -> list[Path]:
        paths = []
        for rel, lines in layout:
            buf = io.StringIO()
            for item in lines:
                if isinstance(item, str):
                    buf.write(item)
                    continue
                did, obj, nl = item
                buf.write(json.dumps({**obj, text_column: new[did].text}, ensure_ascii=False) + ("\n" if nl else ""))
            paths.append(_write_text(out / rel, buf.getvalue()))
        return paths

    return InputCorpus("jsonl", docs, False, write)


# ---------------------------------------------------------------------------------- csv
def _read_csv(src: Path, patient: Callable | None, text_column: str, patient_column: str | None, **_) -> InputCorpus:
    files = _files(src, ".csv")
    docs: list[Document] = []
    layout: list[tuple[Path, list[str], list]] = []
    for f in files:
        rel = _rel(src, f)
        try:
            reader = csv.DictReader(io.StringIO(_read_text(f), newline=""))
            header = list(reader.fieldnames or [])
            rows = list(reader)
        except csv.Error as e:
            raise InputError(f"{f}: not CSV ({e})") from None
        for col, what in ((text_column, "--text-column"), (patient_column, "--patient-column")):
            if col is not None and col not in header:
                raise InputError(f"{f}: {what} {col!r} is not a column (columns: {', '.join(header)[:200]})")
        ids = []
        for i, row in enumerate(rows, 1):
            did = f"{_doc_id(rel)}:{i}"
            if None in row:
                raise InputError(f"{f}: data row {i} has more cells than the header")
            pid = row[patient_column] or "" if patient_column else (patient(rel.as_posix()) if patient else "")
            docs.append(Document(did, row[text_column] or "", [], pid))
            ids.append(did)
        layout.append((rel, header, list(zip(ids, rows))))

    def write(out: Path, new: dict[str, Document]) -> list[Path]:
        paths = []
        for rel, header, rows in layout:
            buf = io.StringIO(newline="")
            w = csv.DictWriter(buf, fieldnames=header, lineterminator="\n")
            w.writeheader()
            for did, row in rows:
                w.writerow({**row, text_column: new[did].text})
            paths.append(_write_text(out / rel, buf.getvalue()))
        return paths

    return InputCorpus("csv", docs, False, write)


# ---------------------------------------------------------------------------------- physionet
def _read_physionet(src: Path, **_) -> InputCorpus:
    from ..corpus.physionet import read_physionet

    if not src.is_dir():
        raise InputError(f"IN {src}: --format physionet needs the folder holding id.text and id-phi.phrase")
    docs = read_physionet(src)

    def write(out: Path, new: dict[str, Document]) -> list[Path]:
        parts = []
        for d in docs:
            pid, nid = d.id.split("-", 1)
            parts.append(f"START_OF_RECORD={pid}||||{nid}||||\n{new[d.id].text}||||END_OF_RECORD\n")
        return [_write_text(out / "id.text", "".join(parts))]

    return InputCorpus("physionet", docs, True, write)


_READERS = {"txt": _read_txt, "i2b2": _read_i2b2, "jsonl": _read_jsonl, "csv": _read_csv, "physionet": _read_physionet}


def read_input(src: str | os.PathLike, fmt: str | None = None, *, text_column: str = "text",
               patient_column: str | None = None, patient_from_filename: str | None = None) -> InputCorpus:
    """Read IN (a file or a folder) in ``fmt`` (``None``: :func:`detect_format`).

    Raises :class:`InputError` (a :class:`~deidlib.corpus.document.CorpusError`) with one
    line naming the file on any problem, and when IN holds no document or two documents
    would write the same output file."""
    src = Path(src)
    fmt = fmt or detect_format(src)
    if fmt not in _READERS:
        raise InputError(f"--format {fmt!r}: choose one of {', '.join(FORMATS)}")
    if fmt in ("txt", "i2b2", "physionet") and patient_column:
        raise InputError(f"--patient-column is for jsonl/csv input, not {fmt}")
    if fmt == "physionet" and patient_from_filename:
        raise InputError("--patient-from-filename is not for physionet input (its records carry patient ids)")
    if patient_column and patient_from_filename:
        raise InputError("give --patient-column or --patient-from-filename, not both")
    corpus = _READERS[fmt](src, patient=_patient_rule(patient_from_filename), text_column=text_column,
                           patient_column=patient_column)
    if not corpus.docs:
        raise InputError(f"IN {src}: no {fmt} document found")
    seen: set[str] = set()
    for d in corpus.docs:
        if d.id in seen:
            raise InputError(f"IN {src}: two documents have the id {d.id!r}")
        seen.add(d.id)
    return corpus
