"""De-identification transforms over a :class:`~deidlib.corpus.Document` and PHI spans.

Ahmed thesis §4.3.2 (Tables 4.5, 4.6): the de-identified documents are the original with
the tokens labelled PHI "sanitized and removed" (ground-truth spans for the GT row, a
tagger's predicted spans for the Ours/Baseline rows); Fig. 2.1b shows the same note with
category masks (``[**Name**] [**Age**]``). Both are here: :func:`remove` and :func:`mask`,
plus :func:`_replace_spans` / :func:`apply` to plug in any replacement (e.g.
``deidlib.surrogates.SurrogateEngine``).

Choices (the thesis does not say): overlapping or adjacent spans are merged into one
region before replacing (a mask covers the union, labelled by the first span's category);
removal leaves one space where the removed text was glued to characters on both sides.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from deidlib.corpus import Document, Span

__all__ = ["merge_regions", "remove", "mask"]

#: mask styles: "bracket" -> "[NAME]", "i2b2" -> "[**Name**]" (thesis Fig. 2.1b)
_MASK_FORMATS = {"bracket": "[{CAT}]", "i2b2": "[**{Cat}**]"}


def merge_regions(spans: Iterable[Span]) -> list[tuple[int, int, Span]]:
    """Union of overlapping spans as sorted ``(start, end, first_span)`` regions.

    Only overlapping spans merge (``a.end > b.start``); adjacent spans (``a.end == b.start``)
    stay separate regions so each keeps its own mask.
    """
    out: list[list] = []
    for s in sorted(spans, key=lambda s: (s.start, s.end)):
        if out and s.start < out[-1][1]:
            out[-1][1] = max(out[-1][1], s.end)
        else:
            out.append([s.start, s.end, s])
    return [(a, b, s) for a, b, s in out]


def _replace_spans(doc: Document, spans: Sequence[Span] | None, fn: Callable[[Document, Span, str], str]) -> str:
    """Text of ``doc`` with each PHI region replaced by ``fn(doc, first_span, region_text)``.

    ``spans`` defaults to ``doc.spans`` (gold); pass a tagger's predictions for the
    "Ours"/"Baseline" rows of Tables 4.5/4.6. Offsets must lie within the text.
    """
    spans = doc.spans if spans is None else spans
    n = len(doc.text)
    parts, pos = [], 0
    for a, b, s in merge_regions(spans):
        if not (0 <= a < b <= n):
            raise ValueError(f"document {doc.id!r}: span {a}-{b} out of range (text length {n})")
        parts.append(doc.text[pos:a])
        parts.append(fn(doc, s, doc.text[a:b]))
        pos = b
    parts.append(doc.text[pos:])
    return "".join(parts)


def remove(doc: Document, spans: Sequence[Span] | None = None) -> str:
    """Removal (thesis §4.3.2, GT row of Tables 4.5/4.6): PHI text deleted.

    A region glued to non-space characters on both sides becomes one space (so its
    neighbours do not fuse into a new token); any other region becomes nothing.
    """
    text, n = doc.text, len(doc.text)
    spans = doc.spans if spans is None else spans
    parts, pos = [], 0
    for a, b, _ in merge_regions(spans):
        if not (0 <= a < b <= n):
            raise ValueError(f"document {doc.id!r}: span {a}-{b} out of range (text length {n})")
        parts.append(text[pos:a])
        glued = a > 0 and b < n and not text[a - 1].isspace() and not text[b].isspace()
        parts.append(" " if glued else "")
        pos = b
    parts.append(text[pos:])
    return "".join(parts)


def mask(doc: Document, spans: Sequence[Span] | None = None, *, level: str = "category",
         style: str = "bracket") -> str:
    """Type masks (thesis Fig. 2.1b): each PHI region becomes its category, e.g. ``[NAME]``.

    ``level="subtype"`` masks with the i2b2 TYPE (``[PATIENT]``, ``[CITY]``);
    ``style="i2b2"`` writes ``[**Name**]`` as in the thesis' figure.
    """
    if level not in ("category", "subtype"):
        raise ValueError(f"level must be 'category' or 'subtype', got {level!r}")
    if style not in _MASK_FORMATS:
        raise ValueError(f"style must be one of {', '.join(_MASK_FORMATS)}, got {style!r}")
    fmt = _MASK_FORMATS[style]

    def _m(d: Document, s: Span, region: str) -> str:
        label = s.category if level == "category" else s.subtype
        return fmt.format(CAT=label.upper(), Cat=label.capitalize())

    return _replace_spans(doc, spans, _m)


def apply(docs: Iterable[Document], method: str | Callable[[Document], str], *,
          spans: Callable[[Document], Sequence[Span]] | None = None) -> list[str]:
    """De-identified texts of ``docs`` by ``method``: ``"remove"``, ``"mask"``, ``"original"``
    or any ``Document -> str`` function (e.g. ``lambda d: engine.surrogate(d).document.text``).

    ``spans(doc)`` gives the spans to use (default: the gold ``doc.spans``); ignored by a
    callable method, which sees the document with those spans attached.
    """
    out = []
    for d in docs:
        if spans is not None:
            d = d.with_spans(spans(d))
        if callable(method):
            out.append(method(d))
        elif method == "remove":
            out.append(remove(d))
        elif method == "mask":
            out.append(mask(d))
        elif method == "original":
            out.append(d.text)
        else:
            raise ValueError(f"unknown de-identification method {method!r}; use remove, mask, original or a function")
    return out
