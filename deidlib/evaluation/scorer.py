"""The i2b2 2014 de-identification scorer, reimplemented in Python 3.

Per document, TP = |gold ∩ system|, FP = |system − gold|, FN = |gold − system| over
the tag-key sets of :mod:`.keys`. Micro scores pool the counts over documents; macro
precision and recall are the means of the per-document values (a document with
TP + FP = 0 has precision 0, with TP + FN = 0 recall 0, as the original's
``ZeroDivisionError`` branches return 0), and macro F1 is the harmonic mean of macro P
and macro R. Only documents present in both gold and system are scored; the others
are reported and warned about.

Measures (names used in :class:`ScoreReport`):

============================  =====================================================
``token``/``strict``/``relaxed``     typed (tag and TYPE must agree), all PHI
``hipaa_<mode>``                     typed, HIPAA filter on gold and system separately
``binary_<mode>``                    offsets only, all PHI
``binary_hipaa_<mode>``              offsets only, HIPAA filter on each side by its own type
``binary_hipaa_token_agnostic``      a truly type-agnostic binary HIPAA token score: gold
                                     filtered to HIPAA PHI; a system token is a TP if it
                                     is a gold HIPAA token whatever type the system gave
                                     it, and an FP only if it is no gold PHI at all
============================  =====================================================
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..corpus.document import CorpusError, Document, Span
from ..corpus.i2b2 import read_i2b2_dir, xml_files
from ..corpus.phi import CATEGORIES, TYPE_TO_CATEGORY
from ..rng import as_generator
from .keys import hipaa_filter, relaxed_counts, strict_keys, token_keys

__all__ = ["MEASURES", "ScoreReport", "evaluate", "evaluate_dirs", "binary_token_prf", "prf"]

_MODES = ("token", "strict", "relaxed")
MEASURES: tuple[str, ...] = tuple(
    f"{'binary_' if b else ''}{'hipaa_' if h else ''}{m}" for b in (False, True) for h in (False, True) for m in _MODES
) + ("binary_hipaa_token_agnostic",)


@dataclass(frozen=True)
class PRF:
    precision: float
    recall: float
    f1: float


def prf(tp: int, fp: int, fn: int) -> PRF:
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return PRF(p, r, f)


def _f1_from(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


@dataclass
class MeasureScore:
    tp: int
    fp: int
    fn: int
    micro: PRF
    macro: PRF
    ci: dict[str, tuple[float, float]] = field(default_factory=dict)  # micro P/R/F1 percentile CIs


def _counts(mode: str, gold: Sequence[Span], system: Sequence[Span], binary: bool) -> tuple[int, int, int]:
    if mode == "relaxed":
        return relaxed_counts(gold, system, binary)
    f = token_keys if mode == "token" else strict_keys
    g, s = f(gold, binary), f(system, binary)
    tp = len(g & s)
    return tp, len(s) - tp, len(g) - tp


def _doc_counts(gold: Sequence[Span], system: Sequence[Span], idnum_bug: bool) -> list[tuple[int, int, int]]:
    out = []
    hg, hs = hipaa_filter(gold, idnum_bug), hipaa_filter(system, idnum_bug)
    for name in MEASURES[:-1]:
        binary, hipaa = name.startswith("binary_"), "hipaa_" in name
        mode = name.rsplit("_", 1)[-1]
        out.append(_counts(mode, hg if hipaa else gold, hs if hipaa else system, binary))
    g = token_keys(hg, True)
    s_all = token_keys(system, True)
    g_all = token_keys(gold, True)
    tp = len(g & s_all)
    out.append((tp, len(s_all - g_all), len(g) - tp))
    return out


@dataclass
class ScoreReport:
    """All measures of one evaluation. ``scores[measure]`` is a :class:`MeasureScore`;
    ``per_category[mode]`` / ``per_type[mode]`` map a category / TYPE to micro P/R/F1
    and counts for the typed modes."""

    scores: dict[str, MeasureScore]
    per_category: dict[str, dict[str, tuple[PRF, tuple[int, int, int]]]]
    per_type: dict[str, dict[str, tuple[PRF, tuple[int, int, int]]]]
    n_documents: int
    missing_in_system: list[str] = field(default_factory=list)
    missing_in_gold: list[str] = field(default_factory=list)
    idnum_bug: bool = True

    @staticmethod
    def measure_name(measure: str | None = None, *, mode: str | None = None, binary: bool = False, hipaa: bool = False) -> str:
        """``measure`` as given, or built from ``mode`` (token|strict|relaxed), ``binary`` and ``hipaa``."""
        if measure is None:
            measure = f"{'binary_' if binary else ''}{'hipaa_' if hipaa else ''}{mode or 'token'}" if mode or binary or hipaa else "binary_token"
        if measure not in MEASURES:
            raise ValueError(f"unknown measure {measure!r}; choose one of {MEASURES}")
        return measure

    def f1(self, measure: str | None = None, average: str = "micro", *, mode: str | None = None, binary: bool = False, hipaa: bool = False) -> float:
        """F1 of ``measure`` (default ``binary_token``), e.g. ``f1(mode="token", binary=True)``."""
        return self.prf(measure, average, mode=mode, binary=binary, hipaa=hipaa).f1

    def prf(self, measure: str | None = None, average: str = "micro", *, mode: str | None = None, binary: bool = False, hipaa: bool = False) -> PRF:
        return getattr(self.scores[self.measure_name(measure, mode=mode, binary=binary, hipaa=hipaa)], average)

    def to_dict(self) -> dict:
        def d(p: PRF) -> dict:
            return {"precision": p.precision, "recall": p.recall, "f1": p.f1}

        return {
            "n_documents": self.n_documents,
            "missing_in_system": self.missing_in_system,
            "missing_in_gold": self.missing_in_gold,
            "idnum_bug": self.idnum_bug,
            "scores": {
                k: {"tp": v.tp, "fp": v.fp, "fn": v.fn, "micro": d(v.micro), "macro": d(v.macro), "ci": v.ci}
                for k, v in self.scores.items()
            },
            "per_category": {m: {c: {**d(p), "tp": n[0], "fp": n[1], "fn": n[2]} for c, (p, n) in t.items()} for m, t in self.per_category.items()},
            "per_type": {m: {c: {**d(p), "tp": n[0], "fp": n[1], "fn": n[2]} for c, (p, n) in t.items()} for m, t in self.per_type.items()},
        }

    def table(self, measures: Iterable[str] | None = None, details: bool = True) -> str:
        """A text report in the layout of the original script (micro and macro P/R/F1)."""
        lines = [f"Report ({self.n_documents} documents; IDNUM {'excluded from' if self.idnum_bug else 'included in'} HIPAA as in the "
                 f"{'original script' if self.idnum_bug else 'corrected filter'})"]
        if self.missing_in_system or self.missing_in_gold:
            lines.append(f"WARNING: {len(self.missing_in_system)} gold document(s) without system output and "
                         f"{len(self.missing_in_gold)} system document(s) without gold were not scored")
        hdr = f"{'measure':30s} {'TP':>7s} {'FP':>7s} {'FN':>7s}   {'Micro P':>7s} {'R':>7s} {'F1':>7s}   {'Macro P':>7s} {'R':>7s} {'F1':>7s}"
        lines += [hdr, "-" * len(hdr)]
        for m in measures or self.scores:
            s = self.scores[m]
            ci = f"  F1 95% CI [{s.ci['f1'][0]:.4f}, {s.ci['f1'][1]:.4f}]" if "f1" in s.ci else ""
            lines.append(
                f"{m:30s} {s.tp:7d} {s.fp:7d} {s.fn:7d}   {s.micro.precision:7.4f} {s.micro.recall:7.4f} {s.micro.f1:7.4f}"
                f"   {s.macro.precision:7.4f} {s.macro.recall:7.4f} {s.macro.f1:7.4f}{ci}"
            )
        if details:
            for title, table in (("category", self.per_category.get("strict", {})), ("TYPE", self.per_type.get("strict", {}))):
                lines += ["", f"Strict, per {title}:", f"{title:30s} {'TP':>7s} {'FP':>7s} {'FN':>7s}   {'P':>7s} {'R':>7s} {'F1':>7s}"]
                for k, (p, (tp, fp, fn)) in table.items():
                    lines.append(f"{k:30s} {tp:7d} {fp:7d} {fn:7d}   {p.precision:7.4f} {p.recall:7.4f} {p.f1:7.4f}")
        return "\n".join(lines)


def _pair(gold_docs: Iterable[Document], system_docs: Iterable[Document]):
    gold = {d.id: d for d in gold_docs}
    system = {d.id: d for d in system_docs}
    ids = sorted(gold.keys() & system.keys())
    miss_sys = sorted(gold.keys() - system.keys())
    miss_gold = sorted(system.keys() - gold.keys())
    if miss_sys or miss_gold:
        warnings.warn(
            f"i2b2 scorer: {len(miss_sys)} gold document(s) have no system output and {len(miss_gold)} system "
            f"document(s) have no gold standard; they are NOT scored (first: {(miss_sys + miss_gold)[:3]})",
            stacklevel=3,
        )
    return gold, system, ids, miss_sys, miss_gold


def evaluate(
    gold_docs: Iterable[Document],
    system_docs: Iterable[Document],
    *,
    idnum_bug: bool = True,
    n_boot: int = 0,
    seed: int | np.random.Generator = 0,
    alpha: float = 0.05,
) -> ScoreReport:
    """Score system documents against gold documents (matched by ``Document.id``).

    ``n_boot > 0`` adds percentile bootstrap CIs (resampling documents with
    replacement, seeded) of the micro P/R/F1 of every measure.
    """
    gold, system, ids, miss_sys, miss_gold = _pair(gold_docs, system_docs)
    counts = np.zeros((len(ids), len(MEASURES), 3), dtype=np.int64)
    cat_counts: dict[str, dict[str, np.ndarray]] = {m: {} for m in _MODES}
    type_counts: dict[str, dict[str, np.ndarray]] = {m: {} for m in _MODES}
    for i, doc_id in enumerate(ids):
        g, s = gold[doc_id].spans, system[doc_id].spans
        counts[i] = _doc_counts(g, s, idnum_bug)
        for mode in _MODES:
            for _key, table, attr in (("category", cat_counts[mode], "category"), ("type", type_counts[mode], "subtype")):
                present = {getattr(x, attr) for x in g} | {getattr(x, attr) for x in s}
                for v in present:
                    c = _counts(mode, [x for x in g if getattr(x, attr) == v], [x for x in s if getattr(x, attr) == v], False)
                    table.setdefault(v, np.zeros(3, dtype=np.int64))
                    table[v] += c
    scores: dict[str, MeasureScore] = {}
    tot = counts.sum(axis=0)
    for j, name in enumerate(MEASURES):
        tp, fp, fn = (int(x) for x in tot[j])
        per_doc = [prf(*counts[i, j]) for i in range(len(ids))]
        mp = float(np.mean([p.precision for p in per_doc])) if per_doc else 0.0
        mr = float(np.mean([p.recall for p in per_doc])) if per_doc else 0.0
        scores[name] = MeasureScore(tp, fp, fn, prf(tp, fp, fn), PRF(mp, mr, _f1_from(mp, mr)))
    if n_boot and ids:
        rng = as_generator(seed)
        n = len(ids)
        w = rng.multinomial(n, np.full(n, 1.0 / n), size=n_boot)  # [n_boot, n_docs]
        sums = np.einsum("bd,dmk->bmk", w, counts).astype(float)
        tp, fp, fn = sums[..., 0], sums[..., 1], sums[..., 2]
        with np.errstate(invalid="ignore", divide="ignore"):
            p = np.where(tp + fp > 0, tp / (tp + fp), 0.0)
            r = np.where(tp + fn > 0, tp / (tp + fn), 0.0)
            f = np.where(p + r > 0, 2 * p * r / (p + r), 0.0)
        lo, hi = 100 * alpha / 2, 100 * (1 - alpha / 2)
        for j, name in enumerate(MEASURES):
            scores[name].ci = {
                k: (float(np.percentile(v[:, j], lo)), float(np.percentile(v[:, j], hi))) for k, v in (("precision", p), ("recall", r), ("f1", f))
            }

    def finish(t: dict[str, np.ndarray], order: Sequence[str]) -> dict:
        return {k: (prf(*t[k]), tuple(int(x) for x in t[k])) for k in order if k in t}

    return ScoreReport(
        scores=scores,
        per_category={m: finish(cat_counts[m], list(CATEGORIES)) for m in _MODES},
        per_type={m: finish(type_counts[m], list(TYPE_TO_CATEGORY)) for m in _MODES},
        n_documents=len(ids),
        missing_in_system=miss_sys,
        missing_in_gold=miss_gold,
        idnum_bug=idnum_bug,
    )


def evaluate_dirs(gold_dir, system_dir, *, lenient: bool = False, strict_spans: bool = False, **kw) -> ScoreReport:
    """:func:`evaluate` over two folders of i2b2 XML files (read recursively, so the
    ``site<k>/`` layout of ``deidlib synth`` works; documents pair by file stem).

    Overlapping tags (in gold or system files) are scored as the official i2b2 2014 script
    scores them: it compares per document the *set* of tag keys (see :mod:`.keys`), so two
    overlapping tags simply contribute their keys, and keys they share (the same token, or
    the same offsets) count once. ``strict_spans=True`` instead refuses a file with
    overlapping tags (:class:`~deidlib.corpus.document.CorpusError`, or the file's
    overlapping tags skipped with a warning when ``lenient``).

    A system file must carry its gold file's exact TEXT: offsets are only comparable on the same
    note. A pair whose texts differ (even at equal length) raises
    :class:`~deidlib.corpus.document.CorpusError` naming both files and the first differing
    character, never quoting the text (``lenient``: the pair is skipped with a warning).
    """
    kwr = {"lenient": lenient, "allow_overlap": not strict_spans, "recursive": True}
    gold, system = read_i2b2_dir(gold_dir, **kwr), read_i2b2_dir(system_dir, **kwr)
    by_id = {d.id: d for d in gold}
    keep = []
    for d in system:
        g = by_id.get(d.id)
        if g is not None and g.text != d.text:
            at = next((k for k, (x, y) in enumerate(zip(g.text, d.text)) if x != y), min(len(g.text), len(d.text)))
            gf = next(f for f in xml_files(gold_dir, recursive=True) if f.stem == d.id)
            sf = next(f for f in xml_files(system_dir, recursive=True) if f.stem == d.id)
            msg = (f"{sf}: its TEXT differs from that of the gold file {gf} from character {at} on "
                   f"({len(d.text)} and {len(g.text)} characters); a system file must carry the gold note's exact text")
            if not lenient:
                raise CorpusError(msg)
            warnings.warn(f"skipped file: {msg}", stacklevel=2)
            continue
        keep.append(d)
    return evaluate(gold, keep, **kw)


def binary_token_prf(gold_docs: Iterable[Document], system_docs: Iterable[Document]) -> tuple[float, float, float]:
    """Micro binary-token precision, recall, F1 (the measure every study tracks per epoch)."""
    gold, system, ids, _, _ = _pair(gold_docs, system_docs)
    tp = fp = fn = 0
    for i in ids:
        g, s = token_keys(gold[i].spans, True), token_keys(system[i].spans, True)
        t = len(g & s)
        tp, fp, fn = tp + t, fp + len(s) - t, fn + len(g) - t
    r = prf(tp, fp, fn)
    return r.precision, r.recall, r.f1
