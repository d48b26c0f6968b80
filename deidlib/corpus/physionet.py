"""Reader for the PhysioNet deid 1.1 gold standard (Neamatullah et al. 2008; the
"Nursing Notes" corpus of the ahmed thesis, chapter 3).

Files: ``id.text`` holds records ``START_OF_RECORD=pid||||nid||||\\n`` *body*
``||||END_OF_RECORD``; ``id-phi.phrase`` holds one PHI mention per line,
``pid nid start end TYPE phrase`` (the phrase may contain spaces; ``end`` exclusive;
offsets into the body, i.e. the text after the header line's newline). The PHI was
already replaced by realistic surrogates by PhysioNet.

:data:`PHYSIONET_TYPE_MAP` maps its ten types to i2b2 2014 (category, TYPE):

=================  ==========================  ===============================================
PhysioNet          i2b2                        why
=================  ==========================  ===============================================
HCPName            NAME / DOCTOR               health-care provider
PTName             NAME / PATIENT
PTNameInitial      NAME / PATIENT              initials of the patient
RelativeProxyName  NAME / PATIENT              i2b2 annotates relatives' names as PATIENT
Date               DATE / DATE
DateYear           DATE / DATE                 i2b2 DATE includes bare years
Location           LOCATION / HOSPITAL         the phrases are overwhelmingly hospitals/wards
Phone              CONTACT / PHONE
Age                AGE / AGE
Other              OTHER / OTHER
=================  ==========================  ===============================================
"""

from __future__ import annotations

import re
from pathlib import Path

from .document import CorpusError, Document, Span
from .phi import category_of

__all__ = ["read_physionet", "count_overlaps", "PHYSIONET_TYPE_MAP"]

PHYSIONET_TYPE_MAP: dict[str, str] = {
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

_RECORD = re.compile(r"START_OF_RECORD=(\d+)\|\|\|\|(\d+)\|\|\|\|\n(.*?)\|\|\|\|END_OF_RECORD", re.S)


def _read_utf8(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise CorpusError(f"{path}: not UTF-8 at byte {e.start}") from None


def read_physionet(directory: str | Path) -> list[Document]:
    """All notes of ``directory`` (with ``id.text`` and ``id-phi.phrase``) as Documents.

    Document ids are ``"pid-nid"``, ``patient_id=pid``, ``site="physionet"``; the
    original PhysioNet type is kept in ``metadata["physionet_types"]`` (one per span).
    Raises :class:`CorpusError` naming the file and line on any inconsistency.
    The gold standard contains a few overlapping mentions; they are kept (one span per
    phrase line, 1,779 in all), and :func:`count_overlaps` reports them. Label encoding
    gives a token to the first span that covers it.
    """
    d = Path(directory)
    text_file, phrase_file = d / "id.text", d / "id-phi.phrase"
    for f in (text_file, phrase_file):
        if not f.is_file():
            raise CorpusError(f"{f}: missing (expected a PhysioNet deid 1.1 folder)")
    raw = _read_utf8(text_file)
    notes: dict[tuple[str, str], str] = {}
    for m in _RECORD.finditer(raw):
        notes[(m.group(1), m.group(2))] = m.group(3)
    if not notes:
        raise CorpusError(f"{text_file}: no START_OF_RECORD ... END_OF_RECORD records found")
    spans: dict[tuple[str, str], list[tuple[Span, str]]] = {k: [] for k in notes}
    for lineno, line in enumerate(_read_utf8(phrase_file).splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split(" ", 5)
        if len(parts) != 6:
            raise CorpusError(f"{phrase_file}:{lineno}: expected 'pid nid start end TYPE phrase'")
        pid, nid, s, e, typ, phrase = parts
        key = (pid, nid)
        if key not in notes:
            raise CorpusError(f"{phrase_file}:{lineno}: no record {pid}||||{nid} in {text_file.name}")
        if typ not in PHYSIONET_TYPE_MAP:
            raise CorpusError(f"{phrase_file}:{lineno}: unknown PhysioNet PHI type {typ!r}")
        start, end = int(s), int(e)
        body = notes[key]
        if not (0 <= start < end <= len(body)) or body[start:end] != phrase:
            raise CorpusError(f"{phrase_file}:{lineno}: span {start}-{end} does not match the phrase in record {pid}-{nid}")
        sub = PHYSIONET_TYPE_MAP[typ]
        spans[key].append((Span(start, end, category_of(sub), sub, phrase), typ))
    docs = []
    for (pid, nid), body in notes.items():
        sp = sorted(spans[(pid, nid)])
        doc = Document(
            id=f"{pid}-{nid}",
            text=body,
            spans=[s for s, _ in sp],
            patient_id=pid,
            site="physionet",
            metadata={"source": "physionet_deid_1.1", "note_type": "nursing note", "physionet_types": [t for _, t in sp]},
        )
        # the gold standard has a few overlapping mentions (e.g. two readings of one
        # hospital name); they are kept as they are, so every phrase line gives one span
        docs.append(doc.validate(source=f"{text_file} record {pid}-{nid}", allow_overlap=True))
    return docs


def count_overlaps(docs: list[Document]) -> int:
    """Number of spans that overlap the previous span of their document."""
    n = 0
    for d in docs:
        for a, b in zip(d.spans, d.spans[1:]):
            n += b.start < a.end
    return n
