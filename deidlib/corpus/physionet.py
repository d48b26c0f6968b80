"""Reader for the PhysioNet deid 1.1 gold standard (Neamatullah et al. 2008; the
"Nursing Notes" corpus of the ahmed thesis, section 5 / Table A.2: 2,434 notes).

Files (see the package's README.txt): ``id.text`` holds records::

    START_OF_RECORD=pid||||nid||||
    <body>
    ||||END_OF_RECORD

and ``id-phi.phrase`` one PHI mention per line,
``pid nid start end TYPE phrase`` (``<PID> <Record_Number> <PHI_Start_Location>
<PHI_End_Location> <PHI_Type> <PHI_Text>``). The phrase may contain spaces (and ends
with a space in one line: it is everything after the fifth space). ``end`` is
exclusive and offsets count characters of the *body*: the text after the newline that
ends the ``START_OF_RECORD=pid||||nid||||`` line, up to (not including)
``||||END_OF_RECORD``. This reading was verified on the whole corpus:
``body[start:end] == phrase`` for every line, and the reader checks it for every line (the
counts, and why they differ from the thesis': docs/design/corpus.md).

:data:`_PHYSIONET_TYPE_MAP` maps its ten types to i2b2 2014 TYPEs (the category follows
from the TYPE): HCPName → NAME/DOCTOR; PTName, PTNameInitial and RelativeProxyName →
NAME/PATIENT (i2b2 has no relative type; relatives' names are HIPAA identifiers like the
patient's); Date and DateYear → DATE/DATE; Location → LOCATION/HOSPITAL (the phrases are
overwhelmingly hospital names); Phone → CONTACT/PHONE; Age → AGE/AGE; Other → OTHER/OTHER.
The counts per type and the reasons in full: docs/design/corpus.md.

The original PhysioNet type of every span is kept in ``metadata["physionet_types"]``.
"""

from __future__ import annotations

import re
from pathlib import Path

from .document import CorpusError, Document, Span
from .phi import category_of

__all__ = ["read_physionet"]

_PHYSIONET_TYPE_MAP: dict[str, str] = {
    "HCPName": "DOCTOR",
    "PTName": "PATIENT",
    "PTNameInitial": "PATIENT",
    "RelativeProxyName": "PATIENT",
    "Date": "DATE",
    "DateYear": "DATE",
    "Location": "HOSPITAL",
    "Phone": "PHONE",
    "Age": "AGE",
    "Other": "OTHER",
}

#: the two files the reader needs
_PHYSIONET_FILES = ("id.text", "id-phi.phrase")

_RECORD = re.compile(r"START_OF_RECORD=([^|\n]+)\|\|\|\|([^|\n]+)\|\|\|\|\n(.*)\|\|\|\|END_OF_RECORD\s*", re.S)


def _read_utf8(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise CorpusError(f"{path}: not UTF-8 (invalid byte at byte offset {e.start})") from None


def _line_of(raw: str, pos: int) -> int:
    return raw.count("\n", 0, pos) + 1


def read_physionet(directory: str | Path, *, overlaps: str = "keep") -> list[Document]:
    """All notes of ``directory`` (with ``id.text`` and ``id-phi.phrase``) as Documents,
    in file order.

    Document ids are ``"pid-nid"``, ``patient_id=pid``, ``site="physionet"``,
    ``metadata={"source": "physionet_deid_1.1", "note_type": "nursing note",
    "physionet_types": [...]}``.

    Args:
        overlaps: the gold standard has one pair of overlapping mentions (two readings of
            one hospital name). ``"keep"`` (default) keeps every phrase line as a span
            (1,779 spans; :func:`_count_overlaps` reports them; label encoders give a
            token to the first span that covers it); ``"drop"`` drops a span that overlaps
            an earlier-starting kept span, so every document passes strict validation
            (and strict i2b2 XML round trips).

    Raises :class:`CorpusError` naming the file and line (never a patient id or note text) on any inconsistency: missing
    files, non-UTF-8 bytes, malformed records, duplicate records, malformed phrase
    lines, unknown types, offsets outside the note or a phrase that differs from the note.
    """
    if overlaps not in ("keep", "drop"):
        raise ValueError(f"overlaps must be 'keep' or 'drop', got {overlaps!r}")
    d = Path(directory)
    text_file, phrase_file = d / _PHYSIONET_FILES[0], d / _PHYSIONET_FILES[1]
    for f in (text_file, phrase_file):
        if not f.is_file():
            raise CorpusError(f"{f}: missing (expected a PhysioNet deid 1.1 folder with {' and '.join(_PHYSIONET_FILES)})")
    raw = _read_utf8(text_file)
    notes: dict[tuple[str, str], str] = {}
    lines: dict[tuple[str, str], int] = {}  # record -> line of its START_OF_RECORD (messages name lines, not ids)
    starts = [m.start() for m in re.finditer("START_OF_RECORD=", raw)]
    if not starts:
        raise CorpusError(f"{text_file}: no START_OF_RECORD=pid||||nid|||| ... ||||END_OF_RECORD records found")
    if raw[: starts[0]].strip():
        raise CorpusError(f"{text_file}:1: text before the first START_OF_RECORD")
    for a, b in zip(starts, starts[1:] + [len(raw)]):
        m = _RECORD.fullmatch(raw, a, b)
        if m is None:
            raise CorpusError(
                f"{text_file}:{_line_of(raw, a)}: malformed record (expected 'START_OF_RECORD=pid||||nid||||', "
                "a newline, the note, '||||END_OF_RECORD')"
            )
        key = (m.group(1), m.group(2))
        if key in notes:
            raise CorpusError(f"{text_file}:{_line_of(raw, a)}: duplicate record (the same pid and nid as "
                              f"line {lines[key]})")
        notes[key] = m.group(3)
        lines[key] = _line_of(raw, a)
    spans: dict[tuple[str, str], list[tuple[Span, str]]] = {k: [] for k in notes}
    for lineno, line in enumerate(_read_utf8(phrase_file).split("\n"), 1):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        where = f"{phrase_file}:{lineno}"
        parts = line.split(" ", 5)
        if len(parts) != 6:
            raise CorpusError(f"{where}: expected 'pid nid start end TYPE phrase', got {len(parts)} fields")
        pid, nid, s, e, typ, phrase = parts
        key = (pid, nid)
        if key not in notes:
            raise CorpusError(f"{where}: its pid and nid name no record of {text_file.name}")
        if typ not in _PHYSIONET_TYPE_MAP:
            # the field is not quoted: in a line without its TYPE it is the phrase's first word (PHI)
            raise CorpusError(f"{where}: field 5 is not a PhysioNet PHI type (known: {', '.join(_PHYSIONET_TYPE_MAP)}; "
                              "a line without its TYPE field reads the phrase's first word there)")
        try:
            start, end = int(s), int(e)
        except ValueError:
            raise CorpusError(f"{where}: start/end are not integers") from None
        body = notes[key]
        if not (0 <= start < end <= len(body)):
            raise CorpusError(f"{where}: offsets {start}-{end} out of range of the record at {text_file.name}:"
                              f"{lines[key]} (length {len(body)})")
        if body[start:end] != phrase:
            raise CorpusError(f"{where}: span {start}-{end} of the record at {text_file.name}:{lines[key]} does not "
                              "match the phrase")
        sub = _PHYSIONET_TYPE_MAP[typ]
        spans[key].append((Span(start, end, category_of(sub), sub, phrase), typ))
    docs = []
    for (pid, nid), body in notes.items():
        sp = sorted(spans[(pid, nid)])
        if overlaps == "drop":
            kept: list[tuple[Span, str]] = []
            for item in sp:
                if not kept or item[0].start >= kept[-1][0].end:
                    kept.append(item)
            sp = kept
        doc = Document(
            id=f"{pid}-{nid}",
            text=body,
            spans=[s for s, _ in sp],
            patient_id=pid,
            site="physionet",
            metadata={"source": "physionet_deid_1.1", "note_type": "nursing note", "physionet_types": [t for _, t in sp]},
        )
        docs.append(doc.validate(source=f"{text_file}:{lines[(pid, nid)]}", allow_overlap=overlaps == "keep"))
    return docs


def _count_overlaps(docs: list[Document]) -> int:
    """Number of spans that overlap an earlier-starting span of their document."""
    n = 0
    for d in docs:
        reach = -1
        for s in d.spans:
            n += s.start < reach
            reach = max(reach, s.end)
    return n
