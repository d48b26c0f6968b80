"""i2b2 2014 de-identification XML: reader and writer.

Format (Stubbs & Uzuner 2015)::

    <?xml version="1.0" encoding="UTF-8" ?>
    <deIdi2b2>
    <TEXT><![CDATA[ ...note... ]]></TEXT>
    <TAGS>
    <DATE id="P0" start="16" end="26" text="2067-05-03" TYPE="DATE" comment="" />
    ...
    </TAGS>
    </deIdi2b2>

Files are named ``PPP-RR.xml`` (patient, record); the patient id is ``PPP``.

Exactness: XML parsers normalise ``\\r\\n`` to ``\\n`` and entity-decode text, which
would shift offsets. The TEXT element is therefore taken verbatim from the raw file
(its CDATA sections concatenated, or entity-decoded plain text), while the TAGS are
parsed with :mod:`xml.etree.ElementTree` after the whole file has been checked for
well-formedness. The writer splits ``]]>`` inside the text over two CDATA sections
and escapes newlines/tabs in attributes, so write-then-read is the identity with a
byte-identical TEXT.

Real files: the ``text`` attribute may contain HTML entities (sometimes escaped twice,
``&amp;quot;``); it is compared with ``text[start:end]`` after up to two rounds of
unescaping. Spans may start on whitespace or sit inside a token; both are kept as
annotated (the span text is always ``text[start:end]``).

deidlib extension: ``site`` and JSON-able metadata are written to an optional
``<META><![CDATA[{json}]]></META>`` element after TAGS. The official i2b2 scripts read
only TEXT and TAGS and ignore it; plain i2b2 files without it read fine.
"""

from __future__ import annotations

import html
import json
import os
import re
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Iterable

from ..results import atomic_write_text
from .document import CorpusError, Document, Span
from .phi import CATEGORIES

__all__ = [
    "parse_i2b2",
    "read_i2b2_xml",
    "read_i2b2_dir",
    "to_i2b2_xml",
    "write_i2b2_xml",
    "write_i2b2_dir",
]

_TEXT_RE = re.compile(r"<TEXT>(.*?)</TEXT>", re.S)
_CDATA_RE = re.compile(r"<!\[CDATA\[(.*?)\]\]>", re.S)
_META_RE = re.compile(r"<META>\s*<!\[CDATA\[(.*?)\]\]>\s*</META>", re.S)


def _extract_text(xml: str, source: str) -> str:
    m = _TEXT_RE.search(xml)
    if m is None:
        raise CorpusError(f"{source}: no <TEXT> element")
    inner = m.group(1)
    if "<![CDATA[" in inner:
        parts, pos = [], 0
        for c in _CDATA_RE.finditer(inner):
            parts.append(html.unescape(inner[pos : c.start()]) if inner[pos : c.start()].strip() else "")
            parts.append(c.group(1))
            pos = c.end()
        if inner[pos:].strip():
            parts.append(html.unescape(inner[pos:]))
        return "".join(parts)
    # plain (entity-escaped) text
    return re.sub(r"&(lt|gt|amp|quot|apos|#\d+|#x[0-9a-fA-F]+);", lambda e: html.unescape(e.group()), inner)


def _doc_id_from_source(source: str) -> tuple[str, str]:
    stem = Path(source).stem if source and not source.startswith("<") else "doc"
    patient = stem.split("-", 1)[0] if "-" in stem else stem
    return stem, patient


def parse_i2b2(
    xml: str, source: str = "<string>", *, doc_id: str | None = None, lenient: bool = False
) -> Document:
    """Parse one i2b2 2014 XML document given as a string (``source`` names it in errors)."""
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as e:
        line, col = e.position
        raise CorpusError(f"{source}: malformed XML at line {line}, column {col}: {e}") from None
    if root.tag != "deIdi2b2":
        raise CorpusError(f"{source}: root element is <{root.tag}>, expected <deIdi2b2>")
    text = _extract_text(xml, source)
    stem, patient = _doc_id_from_source(source)
    meta: dict = {}
    site = ""
    m = _META_RE.search(xml)
    if m:
        try:
            meta = json.loads(m.group(1))
        except json.JSONDecodeError as e:
            raise CorpusError(f"{source}: <META> is not valid JSON: {e}") from None
        site = meta.pop("site", "")
        patient = meta.pop("patient_id", patient)
    if source and not source.startswith("<"):
        meta.setdefault("source_file", os.path.basename(source))
    tags = root.find("TAGS")
    spans: list[Span] = []
    for el in list(tags) if tags is not None else []:
        try:
            spans.append(_parse_tag(el, text, source))
        except CorpusError as e:
            if not lenient:
                raise
            warnings.warn(f"skipped: {e}", stacklevel=2)
    doc = Document(id=doc_id or stem, text=text, spans=spans, patient_id=patient, site=site, metadata=meta)
    if not text.strip():
        if not lenient:
            raise CorpusError(f"{source}: empty document (TEXT has no content)")
        warnings.warn(f"{source}: empty document", stacklevel=2)
    try:
        doc.validate(source=source)
    except CorpusError as e:
        if not lenient:
            raise
        warnings.warn(f"{e}; overlapping spans kept", stacklevel=2)
        doc.validate(source=source, allow_overlap=True)
    return doc


def _parse_tag(el: ET.Element, text: str, source: str) -> Span:
    cat = el.tag
    tid = el.get("id", "?")
    where = f"{source}: tag <{cat} id={tid!r}>"
    if cat not in CATEGORIES:
        raise CorpusError(f"{where}: unknown PHI category {cat!r}")
    sub = el.get("TYPE")
    if sub is None:
        raise CorpusError(f"{where}: no TYPE attribute")
    if sub not in CATEGORIES[cat]:
        raise CorpusError(f"{where}: unknown TYPE {sub!r} for {cat} (allowed: {', '.join(CATEGORIES[cat])})")
    try:
        start, end = int(el.get("start", "")), int(el.get("end", ""))
    except ValueError:
        raise CorpusError(f"{where}: start/end are not integers ({el.get('start')!r}, {el.get('end')!r})") from None
    if not (0 <= start < end <= len(text)):
        raise CorpusError(f"{where}: offsets {start}-{end} out of range (text length {len(text)})")
    actual = text[start:end]
    attr = el.get("text")
    if attr is not None and attr != actual:
        once = html.unescape(attr)
        if once != actual and html.unescape(once) != actual and " ".join(once.split()) != " ".join(actual.split()):
            raise CorpusError(f"{where}: text attribute {attr!r} does not match {actual!r} at {start}-{end}")
    return Span(start, end, cat, sub, actual)


def read_i2b2_xml(path: str | os.PathLike, *, lenient: bool = False) -> Document:
    """Read one ``PPP-RR.xml`` file."""
    p = Path(path)
    try:
        data = p.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise CorpusError(f"{p}: not UTF-8 (invalid byte at offset {e.start})") from None
    except OSError as e:
        raise CorpusError(f"{p}: cannot read: {e}") from None
    return parse_i2b2(data, str(p), lenient=lenient)


def read_i2b2_dir(directory: str | os.PathLike, *, lenient: bool = False) -> list[Document]:
    """All ``*.xml`` documents of a folder (not recursive), sorted by id.

    With ``lenient=True`` a file that cannot be read is skipped with a warning.
    """
    d = Path(directory)
    if not d.is_dir():
        raise CorpusError(f"{d}: not a directory")
    docs = []
    for f in sorted(d.glob("*.xml")):
        try:
            docs.append(read_i2b2_xml(f, lenient=lenient))
        except CorpusError as e:
            if not lenient:
                raise
            warnings.warn(f"skipped file: {e}", stacklevel=2)
    return sorted(docs, key=lambda x: x.id)


_ATTR_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"}
_ATTR_RE = re.compile("[&<>\"\n\r\t]")


def _attr(value: str) -> str:
    return _ATTR_RE.sub(lambda m: _ATTR_ESCAPES[m.group()], value)


_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def to_i2b2_xml(doc: Document) -> str:
    """Serialise a document as i2b2 2014 XML (with a deidlib ``<META>`` element when
    the document has a site, a non-default patient id or metadata)."""
    doc.validate(allow_overlap=True)
    bad = _XML_ILLEGAL.search(doc.text)
    if bad:
        raise CorpusError(f"document {doc.id!r}: character {bad.group()!r} at {bad.start()} cannot be stored in XML 1.0")
    body = doc.text.replace("]]>", "]]]]><![CDATA[>")
    out = ['<?xml version="1.0" encoding="UTF-8" ?>\n<deIdi2b2>\n<TEXT><![CDATA[', body, "]]></TEXT>\n<TAGS>\n"]
    for i, s in enumerate(doc.spans):
        out.append(
            f'<{s.category} id="P{i}" start="{s.start}" end="{s.end}" text="{_attr(s.text)}" '
            f'TYPE="{s.subtype}" comment="" />\n'
        )
    out.append("</TAGS>\n")
    meta = {k: v for k, v in doc.metadata.items() if k != "source_file"}
    _, default_patient = _doc_id_from_source(doc.id + ".xml")
    if doc.site or meta or doc.patient_id != default_patient:
        meta = {"site": doc.site, "patient_id": doc.patient_id, **meta}
        out.append("<META><![CDATA[" + json.dumps(meta, sort_keys=True, default=str).replace("]]>", "]]\\u003e") + "]]></META>\n")
    out.append("</deIdi2b2>\n")
    return "".join(out)


def write_i2b2_xml(doc: Document, path: str | os.PathLike) -> Path:
    """Write one document atomically (never a half-written file)."""
    return atomic_write_text(path, to_i2b2_xml(doc))


def write_i2b2_dir(docs: Iterable[Document], directory: str | os.PathLike) -> list[Path]:
    """Write documents as ``<id>.xml`` into ``directory`` (created if needed).

    Every document is serialised before anything is written, so a bad document
    leaves no partial output behind.
    """
    d = Path(directory)
    payload = []
    for doc in docs:
        if not doc.id or "/" in doc.id or doc.id.startswith("."):
            raise CorpusError(f"document id {doc.id!r} cannot be used as a file name")
        payload.append((d / f"{doc.id}.xml", to_i2b2_xml(doc)))
    d.mkdir(parents=True, exist_ok=True)
    return [atomic_write_text(p, x) for p, x in payload]
