"""i2b2 2014 de-identification XML: reader and writer.

Format (Stubbs & Uzuner 2015, the 2014 i2b2/UTHealth de-identification track)::

    <?xml version="1.0" encoding="UTF-8" ?>
    <deIdi2b2>
    <TEXT><![CDATA[ ...note... ]]></TEXT>
    <TAGS>
    <DATE id="P0" start="16" end="26" text="2067-05-03" TYPE="DATE" comment="" />
    ...
    </TAGS>
    </deIdi2b2>

Files are named ``PPP-RR.xml`` (patient, record): the document id is the file stem and
the patient id is ``PPP``.

**Exact text (choice).** XML parsers normalise ``\\r\\n`` and lone ``\\r`` to ``\\n``
(XML 1.0 section 2.11), which would shift every later offset of a note with carriage
returns. The whole file is parsed with (defused) ElementTree for well-formedness and
for the TAGS, but the TEXT content is taken from the raw file: its CDATA sections are
concatenated verbatim and character data outside CDATA is entity-decoded, nothing else.
The result is cross-checked against the parser's (newline-normalised) TEXT. Offsets are
therefore character offsets into the file's TEXT exactly as stored; the official i2b2
files use ``\\n`` line ends only, where both readings coincide.

**Writer.** TEXT is one CDATA section; a ``]]>`` inside the text is split over two
sections (``]]]]><![CDATA[>``). In attributes ``& < > "`` and newline, carriage return
and tab are written as character references so attribute-value normalisation cannot
change them. Tag ids are ``P0, P1, ...`` in span order; ``comment=""``. Write-then-read
is the identity (same id, text byte for byte, spans, patient id, site, metadata).

**Real files** (HTML entities in ``text``, spans inside a token) are read as annotated; **bad
input** raises :class:`CorpusError` (or :class:`UnknownTagError`) naming the file, tag id and
offsets; ``lenient=True`` skips a bad tag with a warning; exact duplicate tags are collapsed;
overlapping tags are kept only with ``allow_overlap=True``. Every case: docs/design/corpus.md.

**deidlib extension (choice).** A document's site, a patient id other than ``PPP`` and its
metadata are written in a ``<META>`` CDATA section after TAGS, which the official scorer
ignores (``include_meta=False``: plain i2b2 files); docs/design/corpus.md.
"""

from __future__ import annotations

import html
import json
import os
import re
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path

import defusedxml
import defusedxml.ElementTree as DET

from ..results import atomic_write_text
from .document import CorpusError, Document, Span
from .phi import CATEGORIES, UnknownPHITypeError

__all__ = ["read_i2b2_xml", "read_i2b2_dir", "xml_files", "to_i2b2_xml", "write_i2b2_dir"]


class UnknownTagError(CorpusError, UnknownPHITypeError):
    """A tag whose category (element name) or TYPE is not in the i2b2 2014 taxonomy."""


_TEXT_OPEN = re.compile(r"<TEXT\s*>")
_CDATA_OPEN, _CDATA_CLOSE, _TEXT_CLOSE = "<![CDATA[", "]]>", "</TEXT>"
_ENTITY = re.compile(r"&(lt|gt|amp|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);")


def _decode_chardata(s: str) -> str:
    return _ENTITY.sub(lambda m: html.unescape(m.group()), s)


def _extract_text(xml: str, parsed_text: str, source: str) -> str:
    """The TEXT content exactly as stored in the file (see module docstring)."""
    m = _TEXT_OPEN.search(xml)
    if m is None:
        raise CorpusError(f"{source}: no <TEXT> element")
    parts, pos = [], m.end()
    while True:
        if xml.startswith(_CDATA_OPEN, pos):
            end = xml.find(_CDATA_CLOSE, pos + len(_CDATA_OPEN))
            if end < 0:
                raise CorpusError(f"{source}: unterminated CDATA section in <TEXT> at character {pos}")
            parts.append(xml[pos + len(_CDATA_OPEN) : end])
            pos = end + len(_CDATA_CLOSE)
        elif xml.startswith(_TEXT_CLOSE, pos):
            break
        elif pos < len(xml) and xml[pos] == "<":
            raise CorpusError(f"{source}: unexpected markup inside <TEXT> at character {pos} of the file")
        else:
            nxt = xml.find("<", pos)
            if nxt < 0:
                raise CorpusError(f"{source}: <TEXT> is not closed")
            parts.append(_decode_chardata(xml[pos:nxt]))
            pos = nxt
    text = "".join(parts)
    if text.replace("\r\n", "\n").replace("\r", "\n") != parsed_text:
        raise CorpusError(f"{source}: could not extract <TEXT> exactly (raw and parsed text differ)")
    return text


def _doc_id_from_source(source: str) -> tuple[str, str]:
    """(document id, patient id) from a file name ``PPP-RR.xml``."""
    stem = Path(source).stem if source and not source.startswith("<") else "doc"
    patient = stem.split("-", 1)[0] if "-" in stem else stem
    return stem, patient


def _read_meta(root: ET.Element, source: str) -> tuple[dict, str | None, str | None]:
    el = root.find("META")
    if el is None:
        return {}, None, None
    try:
        meta = json.loads(el.text or "{}")
    except json.JSONDecodeError as e:
        raise CorpusError(f"{source}: <META> is not valid JSON: {e}") from None
    if not isinstance(meta, dict):
        raise CorpusError(f"{source}: <META> must hold a JSON object")
    if "deidlib_meta" in meta:
        extra = meta.get("metadata") or {}
        if not isinstance(extra, dict):
            raise CorpusError(f"{source}: <META> 'metadata' must be a JSON object")
        site, patient = meta.get("site"), meta.get("patient_id")
        meta = dict(extra)
    else:  # tolerate a flat object
        site, patient = meta.pop("site", None), meta.pop("patient_id", None)
    return meta, _meta_text(site, "site", source), _meta_text(patient, "patient_id", source)


def _meta_text(value, field: str, source: str) -> str | None:
    """A META ``site`` or ``patient_id`` as text: a number is read as its text (so ``123`` and
    ``"123"`` are one patient), a list, an object or a boolean is refused (its value is not
    quoted: it may be PHI)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    kind = {dict: "an object", list: "an array", bool: "a boolean"}.get(type(value), type(value).__name__)
    raise CorpusError(f"{source}: <META> field {field!r} is {kind}, not text or a number")


def _parse_tag(el: ET.Element, text: str, source: str) -> Span:
    cat = el.tag
    tid = el.get("id", "?")
    where = f"{source}: tag <{cat} id={tid!r} start={el.get('start')!r} end={el.get('end')!r}>"
    if cat not in CATEGORIES:
        raise UnknownTagError(f"{where}: unknown PHI category {cat!r} (allowed: {', '.join(CATEGORIES)})")
    sub = el.get("TYPE")
    if sub is None:
        raise CorpusError(f"{where}: no TYPE attribute")
    if sub not in CATEGORIES[cat]:
        # the value is not quoted: a misaligned annotation may hold a word of the note there
        raise UnknownTagError(f"{where}: unknown TYPE for {cat} (allowed: {', '.join(CATEGORIES[cat])})")
    try:
        start, end = int(el.get("start", "")), int(el.get("end", ""))
    except ValueError:
        raise CorpusError(f"{where}: start/end are not integers") from None
    if not (0 <= start < end <= len(text)):
        raise CorpusError(f"{where}: offsets {start}-{end} out of range (text length {len(text)})")
    actual = text[start:end]
    attr = el.get("text")
    if attr is not None and attr != actual:
        once = html.unescape(attr)
        if once != actual and html.unescape(once) != actual and " ".join(once.split()) != " ".join(actual.split()):
            raise CorpusError(f"{where}: text attribute does not match the note's text at {start}-{end} "
                              f"({len(attr)} and {len(actual)} characters)")
    return Span(start, end, cat, sub, actual)


def _tag_label(el: ET.Element) -> str:
    return f"<{el.tag} id={el.get('id', '?')!r} {el.get('start')}-{el.get('end')}>"


def _parse_i2b2(
    xml: str,
    source: str = "<string>",
    *,
    doc_id: str | None = None,
    lenient: bool = False,
    allow_overlap: bool = False,
    label: str | None = None,
) -> Document:
    """Parse one i2b2 2014 XML document given as a string.

    No error message quotes the note: they name the file, the tag id and the offsets.

    Args:
        xml: the file content (already decoded).
        source: file name used in error messages and, when it is a path, for the
            document id (its stem) and patient id (the part before ``-``).
        doc_id: overrides the id derived from ``source``.
        lenient: skip bad tags with a warning instead of raising.
        allow_overlap: keep overlapping tags (otherwise an error, or skipped when lenient).
        label: how messages name the file (default ``source``), e.g. when its name may hold PHI.
    """
    stem, patient = _doc_id_from_source(source)
    source = label or source
    if xml.startswith("\ufeff"):
        xml = xml[1:]
    try:
        root = DET.fromstring(xml)
    except ET.ParseError as e:
        line, col = e.position
        raise CorpusError(f"{source}: malformed XML at line {line}, column {col}: {e}") from None
    except defusedxml.DefusedXmlException as e:
        raise CorpusError(f"{source}: forbidden XML construct ({type(e).__name__}: {e})") from None
    if root.tag != "deIdi2b2":
        raise CorpusError(f"{source}: root element is <{root.tag}>, expected <deIdi2b2>")
    text_el = root.find("TEXT")
    if text_el is None:
        raise CorpusError(f"{source}: no <TEXT> element")
    text = _extract_text(xml, text_el.text or "", source)
    meta, site, meta_patient = _read_meta(root, source)

    def bad(msg: str) -> None:
        if not lenient:
            raise CorpusError(msg)
        warnings.warn(f"skipped: {msg}", stacklevel=3)

    tags = root.find("TAGS")
    parsed: list[tuple[Span, ET.Element]] = []
    for el in list(tags) if tags is not None else []:
        try:
            parsed.append((_parse_tag(el, text, source), el))
        except CorpusError as e:
            if not lenient:
                raise
            warnings.warn(f"skipped: {e}", stacklevel=2)
    parsed.sort(key=lambda p: p[0])
    spans: list[Span] = []
    prev: tuple[Span, ET.Element] | None = None
    for span, el in parsed:
        if prev is not None and span == prev[0]:
            warnings.warn(f"{source}: duplicate tag {_tag_label(el)} of {_tag_label(prev[1])} collapsed", stacklevel=2)
            continue
        if prev is not None and span.start < prev[0].end and not allow_overlap:
            bad(f"{source}: tag {_tag_label(el)} overlaps tag {_tag_label(prev[1])}")
            continue
        spans.append(span)
        prev = (span, el)
    if not text.strip():
        if not lenient:
            raise CorpusError(f"{source}: empty document (TEXT has no content)")
        warnings.warn(f"{source}: empty document", stacklevel=2)
    doc = Document(
        id=doc_id or stem,
        text=text,
        spans=spans,
        patient_id=patient if meta_patient is None else meta_patient,
        site=site or "",
        metadata=meta,
    )
    return doc.validate(source=source, allow_overlap=allow_overlap)


def read_i2b2_xml(path: str | os.PathLike, *, lenient: bool = False, allow_overlap: bool = False,
                  label: str | None = None) -> Document:
    """Read one ``PPP-RR.xml`` file (UTF-8; see :func:`_parse_i2b2`; ``label`` names it in messages)."""
    p = Path(path)
    name = label or str(p)
    try:
        data = p.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise CorpusError(f"{name}: not UTF-8 (invalid byte 0x{e.object[e.start]:02x} at byte offset {e.start})") from None
    except OSError as e:
        raise CorpusError(f"{name}: cannot read ({e.strerror})") from None
    return _parse_i2b2(data, str(p), lenient=lenient, allow_overlap=allow_overlap, label=label)


def xml_files(directory: str | os.PathLike, *, recursive: bool = False, suffix: str = ".xml") -> list[Path]:
    """The ``*.xml`` (``suffix``) files of a folder, sorted; with ``recursive=True`` also those
    of its subfolders (e.g. the ``site<k>/`` folders ``deidlib synth`` writes), skipping
    hidden files and folders (names starting with ``.``, such as unfinished output)."""
    d = Path(directory)
    if not recursive:
        return sorted(f for f in d.glob(f"*{suffix}") if f.is_file())
    return sorted(f for f in d.rglob(f"*{suffix}") if f.is_file()
                  and not any(part.startswith(".") for part in f.relative_to(d).parts))


def read_i2b2_dir(
    directory: str | os.PathLike, *, lenient: bool = False, allow_overlap: bool = False, recursive: bool = False
) -> list[Document]:
    """All ``*.xml`` documents of a folder, sorted by id; with ``recursive=True`` also those
    of its subfolders (:func:`xml_files`), ids still being file stems.

    With ``lenient=True`` bad tags are skipped and a file that cannot be read at all is
    skipped, each with a warning. Two files with the same id (only possible when
    recursive: ``a/001-01.xml`` and ``b/001-01.xml``) raise :class:`CorpusError`.
    """
    d = Path(directory)
    if not d.is_dir():
        raise CorpusError(f"{d}: not a directory")
    docs: list[Document] = []
    where: dict[str, Path] = {}
    for f in xml_files(d, recursive=recursive):
        try:
            doc = read_i2b2_xml(f, lenient=lenient, allow_overlap=allow_overlap)
        except CorpusError as e:
            if not lenient:
                raise
            warnings.warn(f"skipped file: {e}", stacklevel=2)
            continue
        if doc.id in where:
            raise CorpusError(f"{f}: document id {doc.id!r} also read from {where[doc.id]}")
        where[doc.id] = f
        docs.append(doc)
    return sorted(docs, key=lambda x: x.id)


_ATTR_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"}
_ATTR_RE = re.compile("[&<>\"\n\r\t]")
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _attr(value: str) -> str:
    return _ATTR_RE.sub(lambda m: _ATTR_ESCAPES[m.group()], value)


def to_i2b2_xml(doc: Document, *, include_meta: bool = True) -> str:
    """Serialise a document as i2b2 2014 XML.

    A deidlib ``<META>`` element is added (unless ``include_meta=False``) when the
    document has a site, metadata, or a patient id that differs from its id's ``PPP``.
    Overlapping spans are written as they are (read them back with ``allow_overlap=True``).
    """
    doc.validate(allow_overlap=True)
    bad = _XML_ILLEGAL.search(doc.text)
    if bad:
        raise CorpusError(
            f"document {doc.id!r}: character {bad.group()!r} at {bad.start()} cannot be stored in XML 1.0"
        )
    body = doc.text.replace("]]>", "]]]]><![CDATA[>")
    out = ['<?xml version="1.0" encoding="UTF-8" ?>\n<deIdi2b2>\n<TEXT><![CDATA[', body, "]]></TEXT>\n<TAGS>\n"]
    for i, s in enumerate(doc.spans):
        out.append(
            f'<{s.category} id="P{i}" start="{s.start}" end="{s.end}" text="{_attr(s.text)}" '
            f'TYPE="{s.subtype}" comment="" />\n'
        )
    out.append("</TAGS>\n")
    _, default_patient = _doc_id_from_source(doc.id + ".xml")
    if include_meta and (doc.site or doc.metadata or doc.patient_id != default_patient):
        meta = {"deidlib_meta": 1, "site": doc.site, "patient_id": doc.patient_id, "metadata": doc.metadata}
        try:
            js = json.dumps(meta, sort_keys=True, ensure_ascii=True)
        except (TypeError, ValueError) as e:
            raise CorpusError(f"document {doc.id!r}: metadata is not JSON-serialisable: {e}") from None
        out.append("<META><![CDATA[" + js.replace("]]>", "]]\\u003e") + "]]></META>\n")
    out.append("</deIdi2b2>\n")
    return "".join(out)


def _write_i2b2_xml(doc: Document, path: str | os.PathLike, *, include_meta: bool = True) -> Path:
    """Write one document atomically (temporary file + rename: never half-written)."""
    return atomic_write_text(path, to_i2b2_xml(doc, include_meta=include_meta))


def _check_file_id(doc_id: str) -> None:
    if not doc_id or doc_id.startswith(".") or any(c in doc_id for c in "/\\\0") or doc_id != doc_id.strip():
        raise CorpusError(f"document id {doc_id!r} cannot be used as a file name")


def write_i2b2_dir(docs: Iterable[Document], directory: str | os.PathLike, *, include_meta: bool = True) -> list[Path]:
    """Write documents as ``<id>.xml`` into ``directory`` (created if needed).

    Every document is serialised before anything is written, so a bad document (or two
    documents with the same id) leaves no output behind; each file is written atomically.
    """
    d = Path(directory)
    payload: dict[str, str] = {}
    for doc in docs:
        _check_file_id(doc.id)
        if doc.id in payload:
            raise CorpusError(f"two documents have the id {doc.id!r}")
        payload[doc.id] = to_i2b2_xml(doc, include_meta=include_meta)
    d.mkdir(parents=True, exist_ok=True)
    return [atomic_write_text(d / f"{i}.xml", x) for i, x in payload.items()]
