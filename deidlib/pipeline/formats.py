"""Readers and writers of the inputs ``deidlib deidentify`` accepts, each writing back the
format it read: the de-identified text, pseudonymised patient ids, and nothing else unless asked.

=============  ===============================================  =========================================
format         input (a file or a folder, searched recursively)  output (in OUT)
=============  ===============================================  =========================================
``txt``        ``*.txt`` files, one note each, UTF-8             the de-identified text, same line ends
``i2b2``       ``*.xml`` i2b2 2014 files (their tags = gold)     i2b2 XML whose tags point at the replacements
``jsonl``      ``*.jsonl`` files, one JSON object a line         one object a line: the text field, the
                                                                 patient field (pseudonymised), kept fields
``csv``        ``*.csv`` files with a header row                 the text column, the patient column
                                                                 (pseudonymised), kept columns
``physionet``  a PhysioNet deid folder (``id.text`` and          ``id.text`` in the same record format,
               ``id-phi.phrase``: gold)                          pids and nids pseudonymised
=============  ===============================================  =========================================

**What is written (privacy choices).** Only the text leaves de-identified; every other part
of the input may hold identifiers, so:

* Columns (CSV), fields (JSONL) and META entries (i2b2: ``site`` and its metadata keys) other
  than the text and the patient id are dropped. ``keep_columns`` keeps the named ones
  verbatim, on the user's responsibility (they are not de-identified).
* Patient ids (``patient_column``, ``patient_from_filename``, an i2b2 file's ``PPP-`` prefix
  or META ``patient_id``, a PhysioNet ``pid``) are written as keyed pseudonyms
  (:class:`~deidlib.pipeline.pseudonyms.Pseudonyms`).
* Output files are named by pseudonyms, flat in OUT: ``<patient>-<file>.txt``/``.xml`` when
  the note has a patient id (so an i2b2 reader takes the patient pseudonym from the name),
  ``<file>.<suffix>`` otherwise, ``<file>`` being the keyed pseudonym of the input's path
  relative to IN. ``keep_file_names=True`` keeps IN's relative paths instead.
* Error messages never quote note text, nor column names, JSON keys, META keys or field
  values of the input (a header can hold a name or an MRN): they name the file, the line or
  row and the column's position. A file found inside IN is named by its number (``IN file #3
  of 12``, in sorted path order) unless ``keep_file_names``: names often hold patient names
  or MRNs.
* Output order and times carry nothing of IN's names (shuffled order, one modification time,
  keyed PhysioNet note ids; guarded by ``tests/pipeline/test_hostile_input.py``).

**Hostile or broken input** stops the run with one line naming the file and position, never
a traceback. The cases, and how document and patient ids are formed: docs/design/pipeline.md.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
import secrets
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..corpus.document import CorpusError, Document
from .pseudonyms import Pseudonyms

__all__ = ["FORMATS", "InputCorpus", "read_input", "InputError"]

FORMATS = ("txt", "i2b2", "jsonl", "csv", "physionet")
_SUFFIX = {"txt": ".txt", "i2b2": ".xml", "jsonl": ".jsonl", "csv": ".csv"}
#: appended to a message that names a file by its number
_NAMES_HIDDEN = "files are numbered in sorted path order; their names are not printed as they may hold PHI"
#: META entries deidentify itself writes into i2b2 output (settings, no PHI)
_OWN_META = ("surrogates", "masks")


class InputError(CorpusError):
    """Bad input (one line, naming the file, never quoting its text)."""


Writer = Callable[[Path, dict[str, Document], Pseudonyms], list[Path]]


@dataclass
class InputCorpus:
    """Documents read from IN and how to write their de-identified versions back.

    ``write(out_dir, docs_by_id, pseudonyms)`` writes every file of the input with each
    document replaced by ``docs_by_id[doc.id]`` (a Document whose text is de-identified and
    whose spans point at the replacements), patient ids and file names pseudonymised, and
    only the kept columns besides (module docstring). ``labels[doc.id]`` is how messages
    name the document's file."""

    format: str
    docs: list[Document]
    has_gold: bool
    write: Writer = field(repr=False)
    labels: dict[str, str] = field(default_factory=dict, repr=False)
    kept_columns: tuple[str, ...] = ()
    file_names: dict[str, str] = field(default_factory=dict, repr=False)  #: input path -> output name, after write


def _has_suffix(name: str, suffix: str) -> bool:
    return name.lower().endswith(suffix)


def _files(src: Path, suffix: str) -> list[Path]:
    """IN itself (a file), or IN's files ending in ``suffix`` in any case (``.XML``), outside
    hidden folders, in sorted path order."""
    if src.is_file():
        return [src]
    return sorted(p for p in src.rglob("*") if _has_suffix(p.name, suffix) and p.is_file() and not any(
        part.startswith(".") for part in p.relative_to(src).parts))


def _shuffled(items) -> list:
    """``items`` in an order drawn from the OS CSPRNG: the order in which output files (and
    so their inode numbers) are written says nothing about IN's names."""
    out = list(items)
    secrets.SystemRandom().shuffle(out)
    return out


#: characters that are not Unicode text (a lone surrogate, e.g. from the JSON escape "\\ud800")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _rel(src: Path, f: Path) -> Path:
    return Path(f.name) if src.is_file() else f.relative_to(src)


class _Namer:
    """How messages name a file of IN: its path with ``show``, else its number."""

    def __init__(self, src: Path, files: Sequence[Path], what: str, show: bool):
        self.src, self.what, self.show = src, what, show
        self.index = {f: i for i, f in enumerate(files, 1)}
        self.n = len(files)

    def __call__(self, f: Path) -> str:
        if self.show:
            return str(f)
        if self.src.is_file():
            return self.what
        return f"{self.what} file #{self.index[f]} of {self.n}"

    def at(self, f: Path, line: int) -> str:
        return f"{self(f)}:{line}" if self.show else f"{self(f)}, line {line}"


def _detect_format(src: Path) -> str:
    """The format of ``src`` from its suffix (a file) or from the files it holds (a folder)."""
    if src.is_file():
        for fmt, suf in _SUFFIX.items():
            if _has_suffix(src.name, suf):
                return fmt
        raise InputError(f"IN {src}: cannot tell the format from the file name (give --format)")
    if (src / "id.text").is_file():
        return "physionet"
    found = [fmt for fmt, suf in _SUFFIX.items() if any(True for _ in _files(src, suf))]
    if not found:
        raise InputError(f"IN {src}: no .txt, .xml, .jsonl or .csv files")
    if len(found) > 1:
        raise InputError(f"IN {src}: holds {' and '.join(found)} files; give --format")
    return found[0]


def _patient_rule(regex: str | None) -> Callable[[str, str], str] | None:
    if regex is None:
        return None
    try:
        rx = re.compile(regex)
    except re.error as e:
        raise InputError(f"--patient-from-filename {regex!r}: not a regular expression ({e})") from None

    def rule(rel: str, label: str) -> str:
        m = rx.search(rel)
        if m is None:
            raise InputError(f"--patient-from-filename {regex!r} does not match the path of {label}")
        return next((g for g in m.groups() if g), m.group(0))

    return rule


def _read_text(f: Path, label: str) -> str:
    try:
        with open(f, encoding="utf-8", newline="") as fh:
            return fh.read()
    except UnicodeDecodeError as e:
        raise InputError(f"{label}: not UTF-8 (invalid byte at byte offset {e.start})") from None
    except OSError as e:
        raise InputError(f"{label}: cannot read ({e.strerror})") from None


def _write_text(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
    return path


def _doc_id(rel: Path) -> str:
    return rel.with_suffix("").as_posix()


def _out_name(rel: str, patient_id: str, suffix: str, p: Pseudonyms, keep: bool, names: dict[str, str]) -> str:
    """The output path (relative to OUT) of the input file ``rel``."""
    if keep:
        name = rel
    else:
        f = p("file", rel)
        name = f"{p('patient', patient_id)}-{f}{suffix}" if patient_id else f"{f}{suffix}"
    names[rel] = name
    return name


def _pseudo_patient(value, p: Pseudonyms) -> str:
    return p("patient", str(value)) if value not in (None, "") else ""


# ---------------------------------------------------------------------------------- txt
def _read_txt(src: Path, patient, name: _Namer, keep_file_names: bool, keep_columns, **_) -> InputCorpus:
    if keep_columns:
        raise InputError("--keep-column is for jsonl/csv/i2b2 input; txt input has no columns")
    docs, labels = [], {}
    for f in name.index:
        rel = _rel(src, f)
        d = Document(_doc_id(rel), _read_text(f, name(f)), [], patient(rel.as_posix(), name(f)) if patient else "",
                     metadata={"_path": rel.as_posix()})
        docs.append(d)
        labels[d.id] = name(f)

    def write(out: Path, new: dict[str, Document], p: Pseudonyms) -> list[Path]:
        return [_write_text(out / _out_name(d.metadata["_path"], d.patient_id, ".txt", p, keep_file_names,
                                            corpus.file_names), new[d.id].text) for d in _shuffled(docs)]

    corpus = InputCorpus("txt", docs, False, write, labels)
    return corpus


# ---------------------------------------------------------------------------------- i2b2
def _read_i2b2(src: Path, patient, name: _Namer, keep_file_names: bool, keep_columns, **_) -> InputCorpus:
    from ..corpus.i2b2 import read_i2b2_xml, to_i2b2_xml

    docs, labels = [], {}
    for f in name.index:
        rel = _rel(src, f)
        d = read_i2b2_xml(f, allow_overlap=True, label=name(f))
        d.id = _doc_id(rel)
        if patient:
            d.patient_id = patient(rel.as_posix(), name(f))
        d.metadata = {**d.metadata, "_path": rel.as_posix()}
        docs.append(d)
        labels[d.id] = name(f)
    fields = {"site"} | {k for d in docs for k in d.metadata if not k.startswith("_")}
    missing = [c for c in keep_columns if c not in fields]
    if missing:  # META keys are not listed: they may hold PHI
        raise InputError(f"--keep-column {missing[0]!r}: no i2b2 file of IN has it in its META")

    def write(out: Path, new: dict[str, Document], p: Pseudonyms) -> list[Path]:
        paths = []
        for d in _shuffled(docs):
            n = new[d.id]
            rel = d.metadata["_path"]
            meta = {k: n.metadata[k] for k in _OWN_META if k in n.metadata}
            meta.update({k: d.metadata[k] for k in keep_columns if k in d.metadata and k != "site"})
            site = d.site if "site" in keep_columns else ""
            name_ = _out_name(rel, d.patient_id, ".xml", p, keep_file_names, corpus.file_names)
            x = Document(Path(name_).stem, n.text, n.spans, _pseudo_patient(d.patient_id, p), site, meta)
            paths.append(_write_text(out / name_, to_i2b2_xml(x)))
        return paths

    corpus = InputCorpus("i2b2", docs, any(d.spans for d in docs), write, labels, tuple(keep_columns))
    return corpus


# ---------------------------------------------------------------------------------- jsonl
def _column_value(obj, col: str, where: str) -> str:
    """The text field (the object's other keys are never listed: they may hold PHI)."""
    if col not in obj:
        raise InputError(f"{where}: no field {col!r} (the text column) in this object of {len(obj)} fields")
    v = obj[col]
    if not isinstance(v, str):
        raise InputError(f"{where}: the text field holds {type(v).__name__}, not text")
    return v


def patient_text(v, where: str, what: str = "the patient id") -> str:
    """A patient id as text: a string, or a number written as its text (``123`` and ``"123"`` are
    one patient); a list, an object or a boolean is refused (one line, naming ``where``)."""
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return str(v)
    raise InputError(f"{where}: {what} is a JSON {_json_kind(v)}, not text or a number")


def _json_kind(v) -> str:
    return {dict: "object", list: "array", bool: "boolean"}.get(type(v), type(v).__name__)


def _load_json_line(line: str, where: str):
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as e:
        raise InputError(f"{where}: not JSON ({e.msg} at character {e.pos})") from None
    except RecursionError:
        raise InputError(f"{where}: JSON nested too deeply to read") from None
    if not isinstance(obj, dict):
        raise InputError(f"{where}: expected a JSON object per line")
    if "\\u" in line.lower():  # only an escape can make a lone surrogate (UTF-8 input cannot hold one)
        for k, (key, v) in enumerate(obj.items(), 1):
            try:
                dumped = json.dumps([key, v], ensure_ascii=False)
            except RecursionError:
                raise InputError(f"{where}: JSON nested too deeply to read") from None
            m = _SURROGATE.search(dumped)
            if m:
                raise InputError(f"{where}: field #{k} holds a lone surrogate escape (\\ud800-\\udfff), "
                                 "which is not Unicode text; fix or drop this line (the run stops rather than "
                                 "alter a note)")
    return obj


def _read_jsonl(src: Path, patient, name: _Namer, keep_file_names: bool, keep_columns, text_column: str,
                patient_column: str | None, **_) -> InputCorpus:
    docs: list[Document] = []
    labels: dict[str, str] = {}
    layout: list[tuple[Path, list]] = []
    seen_keys: set[str] = set()
    for f in name.index:
        rel = _rel(src, f)
        lines: list[str | tuple[str, dict, bool]] = []  # a blank line as read, else (document id, row, ends in \n)
        for i, line in enumerate(_read_text(f, name(f)).splitlines(keepends=True), 1):
            if not line.strip():
                lines.append(line)
                continue
            where = name.at(f, i)
            obj = _load_json_line(line, where)
            seen_keys.update(obj)
            did = f"{_doc_id(rel)}:{i}"
            if patient_column and patient_column not in obj:
                raise InputError(f"{where}: no patient column {patient_column!r}")
            v = obj.get(patient_column) if patient_column else None
            pid = patient_text(v, where) if patient_column else (patient(rel.as_posix(), name(f))
                                                                  if patient else "")
            docs.append(Document(did, _column_value(obj, text_column, where), [], pid))
            labels[did] = where
            lines.append((did, obj, line.endswith("\n")))
        layout.append((rel, lines))
    missing = [c for c in keep_columns if c not in seen_keys]
    if missing:
        raise InputError(f"--keep-column {missing[0]!r}: no JSON object of IN has this field")
    keep = {text_column, *keep_columns} | ({patient_column} if patient_column else set())
    by_id = {d.id: d for d in docs}

    def write(out: Path, new: dict[str, Document], p: Pseudonyms) -> list[Path]:
        paths = []
        for rel, lines in _shuffled(layout):
            buf = io.StringIO()
            for item in lines:
                if isinstance(item, str):
                    buf.write(item)
                    continue
                did, obj, nl = item
                o = {k: v for k, v in obj.items() if k in keep}
                o[text_column] = new[did].text
                if patient_column:
                    o[patient_column] = _pseudo_patient(by_id[did].patient_id, p) or obj[patient_column]
                buf.write(json.dumps(o, ensure_ascii=False) + ("\n" if nl else ""))
            paths.append(_write_text(out / _out_name(rel.as_posix(), "", ".jsonl", p, keep_file_names,
                                                     corpus.file_names), buf.getvalue()))
        return paths

    corpus = InputCorpus("jsonl", docs, False, write, labels, tuple(keep_columns))
    return corpus


# ---------------------------------------------------------------------------------- csv
@contextlib.contextmanager
def _csv_field_limit():
    """Let a CSV cell be as long as a note (the csv module refuses cells over 131,072
    characters by default); the limit is the largest C long, restored afterwards. The whole
    file is already in memory, so the limit protects nothing here."""
    old = csv.field_size_limit()
    limit = sys.maxsize
    while True:
        try:
            csv.field_size_limit(limit)
            break
        except OverflowError:  # a 32-bit C long (Windows)
            limit //= 2
    try:
        yield
    finally:
        csv.field_size_limit(old)


def _read_csv(src: Path, patient, name: _Namer, keep_file_names: bool, keep_columns, text_column: str,
              patient_column: str | None, **_) -> InputCorpus:
    docs: list[Document] = []
    labels: dict[str, str] = {}
    layout: list[tuple[Path, list[str], list]] = []
    for f in name.index:
        rel = _rel(src, f)
        try:
            with _csv_field_limit():
                reader = csv.DictReader(io.StringIO(_read_text(f, name(f)), newline=""))
                header = list(reader.fieldnames or [])
                rows = list(reader)
        except csv.Error as e:  # the csv module's messages quote no cell
            raise InputError(f"{name(f)}: not CSV ({e})") from None
        for k, col in enumerate(header):
            if col in header[:k]:  # the names are not printed: a header can hold PHI
                raise InputError(f"{name(f)}: header columns #{header.index(col) + 1} and #{k + 1} have the same "
                                 "name (one would hide the other)")
        for col, what in ((text_column, "--text-column"), (patient_column, "--patient-column"),
                          *((c, "--keep-column") for c in keep_columns)):
            if col is not None and col not in header:
                raise InputError(f"{name(f)}: {what} {col!r} is not a column of its header ({len(header)} "
                                 "columns)")
        ids = []
        for i, row in enumerate(rows, 1):
            did = f"{_doc_id(rel)}:{i}"
            if None in row:
                raise InputError(f"{name(f)}: data row {i} has more cells than the header")
            pid = row[patient_column] or "" if patient_column else (patient(rel.as_posix(), name(f))
                                                                    if patient else "")
            docs.append(Document(did, row[text_column] or "", [], pid))
            labels[did] = f"{name(f)}, data row {i}"
            ids.append(did)
        layout.append((rel, header, list(zip(ids, rows))))
    keep = {text_column, *keep_columns} | ({patient_column} if patient_column else set())

    def write(out: Path, new: dict[str, Document], p: Pseudonyms) -> list[Path]:
        paths = []
        for rel, header, rows in _shuffled(layout):
            buf = io.StringIO(newline="")
            w = csv.DictWriter(buf, fieldnames=[c for c in header if c in keep], lineterminator="\n",
                               extrasaction="ignore")
            w.writeheader()
            for did, row in rows:
                o = {**row, text_column: new[did].text}
                if patient_column:
                    o[patient_column] = _pseudo_patient(row[patient_column], p)
                w.writerow(o)
            paths.append(_write_text(out / _out_name(rel.as_posix(), "", ".csv", p, keep_file_names,
                                                     corpus.file_names), buf.getvalue()))
        return paths

    corpus = InputCorpus("csv", docs, False, write, labels, tuple(keep_columns))
    return corpus


# ---------------------------------------------------------------------------------- physionet
def _read_physionet(src: Path, keep_columns, **_) -> InputCorpus:
    from ..corpus.physionet import read_physionet

    if not src.is_dir():
        raise InputError(f"IN {src}: --format physionet needs the folder holding id.text and id-phi.phrase")
    if keep_columns:
        raise InputError("--keep-column is for jsonl/csv/i2b2 input; physionet records have no columns")
    docs = read_physionet(src)
    labels = {d.id: f"{src / 'id.text'}, record #{k}" for k, d in enumerate(docs, 1)}

    def write(out: Path, new: dict[str, Document], p: Pseudonyms) -> list[Path]:
        parts = []
        for d in _shuffled(docs):  # the records' order would replay the order of the original ids
            pid, nid = d.id.split("-", 1)
            parts.append(f"START_OF_RECORD={_pseudo_patient(pid, p)}||||{p('note', d.id)}||||\n{new[d.id].text}"
                         "||||END_OF_RECORD\n")
        corpus.file_names["id.text"] = "id.text"
        return [_write_text(out / "id.text", "".join(parts))]

    corpus = InputCorpus("physionet", docs, True, write, labels)
    return corpus


_READERS: dict[str, Callable[..., InputCorpus]] = {"txt": _read_txt, "i2b2": _read_i2b2, "jsonl": _read_jsonl, "csv": _read_csv, "physionet": _read_physionet}


def read_input(src: str | os.PathLike, fmt: str | None = None, *, text_column: str = "text",
               patient_column: str | None = None, patient_from_filename: str | None = None,
               keep_columns: Sequence[str] = (), keep_file_names: bool = False, what: str = "IN") -> InputCorpus:
    """Read IN (a file or a folder) in ``fmt`` (``None``: :func:`_detect_format`).

    ``keep_columns``: columns/fields/META entries written verbatim besides the text (default:
    none). ``keep_file_names``: write IN's relative paths as output names and name files in
    messages (default: pseudonymised names, files numbered in messages). ``what`` names the
    input in messages (``"IN"``, ``"--gold"``).

    Raises :class:`InputError` (a :class:`~deidlib.corpus.document.CorpusError`) with one
    line naming the file (never quoting its text) on any problem, and when IN holds no
    document or two documents would write the same output file."""
    src = Path(src)
    fmt = fmt or _detect_format(src)
    keep_columns = tuple(dict.fromkeys(keep_columns))
    if fmt not in _READERS:
        raise InputError(f"--format {fmt!r}: choose one of {', '.join(FORMATS)}")
    if fmt in ("txt", "i2b2", "physionet") and patient_column:
        raise InputError(f"--patient-column is for jsonl/csv input, not {fmt}")
    if fmt == "physionet" and patient_from_filename:
        raise InputError("--patient-from-filename is not for physionet input (its records carry patient ids)")
    if patient_column and patient_from_filename:
        raise InputError("give --patient-column or --patient-from-filename, not both")
    for c in keep_columns:
        if c == text_column and fmt in ("jsonl", "csv"):
            raise InputError(f"--keep-column {c!r} is the text column (it is always written, de-identified)")
        if c == patient_column:
            raise InputError(f"--keep-column {c!r} is the patient column (it is written pseudonymised)")
    files = _files(src, _SUFFIX[fmt]) if fmt in _SUFFIX else []
    name = _Namer(src, files, what, keep_file_names)
    try:
        corpus = _READERS[fmt](src, patient=_patient_rule(patient_from_filename), name=name,
                               keep_file_names=keep_file_names, keep_columns=keep_columns,
                               text_column=text_column, patient_column=patient_column)
    except CorpusError as e:
        msg = str(e)
        if not keep_file_names and " file #" in msg:
            msg += f" ({_NAMES_HIDDEN})"
        raise InputError(msg) from None
    if not corpus.docs:
        raise InputError(f"{what} {src}: no {fmt} document found")
    seen: set[str] = set()
    for d in corpus.docs:
        if d.id in seen:
            raise InputError(f"{what} {src}: two documents have the id of {corpus.labels.get(d.id, 'one file')}")
        seen.add(d.id)
    return corpus
