"""De-identify documents: tag PHI with a saved tagger, replace it (surrogates or masks),
count the gold PHI that survives, on one process, N local processes or a Dask cluster.

The work is cut into *chunks* by :func:`chunk_documents` before any engine sees it: whole
patients (so one patient's notes share one surrogate memo, budget and generator), about
:data:`_CHUNK_DOCS` documents each, in input order. Chunks depend only on the input, never on
the number of workers, and :func:`_process_chunk` is a pure function of (model, options,
chunk) — up to the surrogate randomness, which is seeded per patient (or per document) from
``(seed, scope id)`` by :meth:`deidlib.surrogates.SurrogateEngine.rng_for` when a seed is
given, and is the OS CSPRNG otherwise. Hence with a seed the output is byte-identical for
1 worker, N worker processes and a Dask cluster (tested), and without one it is
unpredictable.

Engines: :func:`run_local` (in this process), :func:`run_processes` (a
``concurrent.futures`` pool of spawned processes, each loading the model once in its
initializer and running torch on ``threads`` threads), :func:`run_dask` (``dask.distributed``:
the model is sent once to every worker with ``Client.scatter(broadcast=True)`` and loaded
once per worker thread; no shared file system needed).

**What a Dask cluster sees.** The scheduler and every worker receive the original notes
(the chunks, with their gold spans), the model and the options (the seed included, when
given), and return the de-identified notes with the replacement records (original PHI when
``--audit`` is asked for). Whoever can connect to the scheduler can run code on the workers
and read all of it. So :func:`_local_cluster` (the default) listens on 127.0.0.1 with TLS and
mutual authentication by a certificate made for this run only
(``distributed.security.Security.temporary()``): a client without that certificate cannot
connect (``tests/pipeline/test_dask_security.py``). A remote scheduler is the user's: the
command refuses one that is not ``tls://`` unless ``--insecure-scheduler``.

``deidlib --help`` imports this module: torch, the tagger, the surrogate engine, the process
pools and dask are imported inside the functions that use them.
"""

from __future__ import annotations

import datetime as _dt
import functools
import hashlib
import io
import json
import os
import re
import secrets
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..corpus.document import Document, Span
from ..threads import set_threads

if TYPE_CHECKING:  # annotations only: the surrogates load when a run replaces PHI
    from ..surrogates import Replacement

__all__ = [
    "INFERENCE_CACHE_BYTES",
    "DeidOptions",
    "ModelBlob",
    "loaded_model",
    "DocResult",
    "chunk_documents",
    "mask_document",
    "release_checks",
    "verbatim_survival",
    "disjoint",
    "run_local",
    "run_processes",
    "run_dask",
]

#: documents per chunk (whole patients are never split, so a chunk may hold more)
_CHUNK_DOCS = 32
_REPLACE_METHODS = ("surrogate", "mask")
#: bound of a frozen encoder's vector cache while de-identifying, in bytes: notes are read once,
#: so the cache only saves sentences repeated verbatim (templated lines), and a bound keeps the
#: memory flat however many notes a run reads (``benchmarks/deidentify_memory.py``)
INFERENCE_CACHE_BYTES = 64 << 20
#: date methods of ``deidentify``: the secret per-patient shift (release default), Tchouka's d-private
#: Laplace mechanism, or its LDP time categories (:mod:`deidlib.surrogates.engine`)
DEID_DATE_METHODS = ("shift", "dp", "ldp")
#: how ``deidentify`` writes an age over 89 and a birth date implying one (HIPAA Safe Harbor)
AGE_OVER_89 = "90 or older"
BIRTH_OVER_89 = "[90 or older]"
#: a mask: the span's i2b2 category in brackets, e.g. ``[NAME]`` (thesis Fig. 2.1b, bracket style)
MASK_FORMAT = "[{}]"


@dataclass(frozen=True)
class DeidOptions:
    """What :func:`_process_chunk` does (picklable: it travels to every worker).

    ``spans``: ``"model"`` (tag with the model) or ``"input"`` (replace the input's own tags,
    e.g. i2b2 files from ``deidlib predict`` or a human annotation). ``seed``: ``None`` for
    OS randomness (releases). ``memo_scope``: ``"patient"`` gives one surrogate identity
    per patient (and one ε budget per patient), ``"document"`` one per note.

    ``date_method``: ``"shift"`` (the release default: one secret shift per patient of
    :data:`~deidlib.surrogates.release.SHIFT_MIN_DAYS`-:data:`~deidlib.surrogates.release.SHIFT_MAX_DAYS`
    days either way, derived from ``shift_key`` when given, see :mod:`deidlib.surrogates.release`),
    ``"dp"`` (Tchouka et al. 2023's ε·d-private dates) or ``"ldp"``. ``release_date``: the
    day birth dates are capped against (HIPAA: none implies an age over 89; default today)."""

    replace: str = "surrogate"
    spans: str = "model"
    seed: int | None = None
    epsilon: float = 1.0
    locale: str = "en_US"
    memo_scope: str = "document"
    audit: bool = False
    threads: int = 1
    batch_size: int = 64
    date_method: str = "shift"
    shift_key: bytes | None = field(default=None, repr=False)
    release_date: _dt.date | None = None
    #: tells runs apart: each run gets its own engines (so its own secret shifts) even in one process
    run_nonce: str = field(default_factory=lambda: secrets.token_hex(8), repr=False)

    def __post_init__(self):
        if self.replace not in _REPLACE_METHODS:
            raise ValueError(f"replace must be one of {_REPLACE_METHODS}, got {self.replace!r}")
        if self.date_method not in DEID_DATE_METHODS:
            raise ValueError(f"date_method must be one of {DEID_DATE_METHODS}, got {self.date_method!r}")
        if self.spans not in ("model", "input"):
            raise ValueError(f"spans must be 'model' or 'input', got {self.spans!r}")

    def surrogate_config(self):
        from ..surrogates import SurrogateConfig
        from ..surrogates.release import SHIFT_MAX_DAYS, SHIFT_MIN_DAYS

        return SurrogateConfig(epsilon=self.epsilon, locale=self.locale, memo_scope=self.memo_scope,
                               secure=self.seed is None, date_method=self.date_method,
                               shift_min_days=SHIFT_MIN_DAYS, shift_max_days=SHIFT_MAX_DAYS, shift_key=self.shift_key,
                               age_over_89=AGE_OVER_89, birth_over_89=BIRTH_OVER_89,
                               release_date=self.release_date or _dt.date.today())


@dataclass(frozen=True)
class ModelBlob:
    """A saved tagger as bytes (``config.json`` and ``weights.pt``), to ship to workers."""

    config: str
    weights: bytes
    digest: str

    @classmethod
    def from_dir(cls, path: str | os.PathLike) -> ModelBlob:
        d = Path(path)
        if not (d / "config.json").is_file() or not (d / "weights.pt").is_file():
            raise FileNotFoundError(f"{d}: no config.json and weights.pt (not a model saved by 'deidlib train')")
        cfg, w = (d / "config.json").read_text(encoding="utf-8"), (d / "weights.pt").read_bytes()
        return cls(cfg, w, hashlib.sha256(cfg.encode() + w).hexdigest()[:16])

    def load(self):
        import torch

        from ..models.features import Featurizer
        from ..models.taggers import tagger_from_config

        cfg = json.loads(self.config)
        tagger = tagger_from_config(cfg["tagger"], Featurizer.from_config(cfg["featurizer"]))
        tagger.load_state_dict(torch.load(io.BytesIO(self.weights), map_location="cpu", weights_only=True))
        tagger.task = cfg.get("task", {})
        if hasattr(tagger, "cache_bytes"):
            tagger.cache_bytes = INFERENCE_CACHE_BYTES
        return tagger.eval()


@dataclass
class DocResult:
    """One document's outcome. ``records`` and ``surviving`` hold original PHI (audit only)."""

    id: str
    document: Document  #: the de-identified document (spans point at the replacements)
    predicted: list[Span]  #: the replaced spans, on the original text
    gold_mentions: int = 0
    surviving: list[str] = field(default_factory=list)  #: gold mentions found verbatim in the output
    records: list[dict] = field(default_factory=list)
    surviving_types: list[str] = field(default_factory=list)  #: the category of each surviving gold mention
    checks: dict = field(default_factory=dict)  #: counts of :func:`release_checks` (no PHI)


def chunk_documents(docs: Sequence[Document], chunk_docs: int = _CHUNK_DOCS) -> list[list[Document]]:
    """Cut ``docs`` into chunks of whole patients (a document without a patient id is its own
    patient), about ``chunk_docs`` documents each, patients in order of first appearance.
    Depends only on ``docs``: the same chunks for any number of workers."""
    groups: dict[str, list[Document]] = {}
    for d in docs:
        groups.setdefault(d.patient_id or f"\0doc:{d.id}", []).append(d)
    chunks: list[list[Document]] = [[]]
    for g in groups.values():
        if chunks[-1] and len(chunks[-1]) + len(g) > chunk_docs:
            chunks.append([])
        chunks[-1].extend(g)
    return [c for c in chunks if c]


def disjoint(spans: Iterable[Span]) -> list[Span]:
    """Spans sorted by offset, dropping any that overlaps an earlier kept one (the replacement
    needs disjoint spans; overlapping gold readings of one name keep the first)."""
    out: list[Span] = []
    for s in sorted(spans):
        if not out or s.start >= out[-1].end:
            out.append(s)
    return out


def mask_document(doc: Document) -> tuple[Document, list[dict]]:
    """Each span of ``doc`` (disjoint) replaced by its category mask ``[NAME]``; the new spans
    point at the masks. Returns the document and the replacement records."""
    pieces, spans, records, pos, n = [], [], [], 0, 0
    for i, s in enumerate(disjoint(doc.spans)):
        gap = doc.text[pos:s.start]
        pieces.append(gap)
        n += len(gap)
        m = MASK_FORMAT.format(s.category)
        spans.append(Span(n, n + len(m), s.category, s.subtype, m))
        records.append({"document_id": doc.id, "patient_id": doc.patient_id, "span_index": i,
                        "category": s.category, "subtype": s.subtype, "original": s.text, "surrogate": m,
                        "original_start": s.start, "original_end": s.end, "start": n, "end": n + len(m),
                        "method": "mask"})
        pieces.append(m)
        n += len(m)
        pos = s.end
    pieces.append(doc.text[pos:])
    from ..surrogates.config import PHI_METADATA_KEYS

    meta = {k: v for k, v in doc.metadata.items() if k.lower() not in PHI_METADATA_KEYS}
    meta["masks"] = {"format": MASK_FORMAT.format("CATEGORY")}
    return Document(doc.id, "".join(pieces), spans, doc.patient_id, doc.site, meta), records


_WORD = "0-9A-Za-z\u00c0-\u024f"


def _surviving_gold(gold: Iterable[Span], text: str, original: str | None = None) -> list[str]:
    """The text (stripped) of each gold mention of :func:`_surviving_gold_spans`."""
    return [s.text.strip() for s in _surviving_gold_spans(gold, text, original)]


def _surviving_gold_spans(gold: Iterable[Span], text: str, original: str | None = None) -> list[Span]:
    """The gold PHI mentions whose text (stripped) occurs verbatim in ``text`` (the released
    note) as a whole token sequence: not inside a longer word or number ("12" does not survive
    in "2012"). One entry per surviving gold mention.

    A gold span that sits inside a token of ``original`` (the annotated text; i2b2 has
    ``MWilliams`` with NAME = ``Williams``) needs no boundary on that side: such a mention
    survives when its text occurs anywhere, as it did in the original."""
    out, cache = [], {}
    for s in gold:
        t = s.text.strip()
        if not t:
            continue
        lead = len(s.text) - len(s.text.lstrip())
        a, b = s.start + lead, s.start + lead + len(t)
        glued_left = original is not None and a > 0 and re.match(f"[{_WORD}]", original[a - 1]) is not None
        glued_right = original is not None and b < len(original) and re.match(f"[{_WORD}]", original[b]) is not None
        key = (t, glued_left, glued_right)
        if key not in cache:
            rx = re.compile(("" if glued_left else rf"(?<![{_WORD}])") + re.escape(t)
                            + ("" if glued_right else rf"(?![{_WORD}])"))
            cache[key] = rx.search(text) is not None
        if cache[key]:
            out.append(s)
    return out


def verbatim_survival(gold_docs: Sequence[Document], released_docs: Sequence[Document]) -> dict:
    """Gold PHI mentions left verbatim in the *released* text (:func:`_surviving_gold_spans`:
    the mention's text still occurs there as a whole token sequence), whatever replaced the
    tagged spans (surrogates, masks, a peer's redaction). Documents are paired by position;
    ``gold_docs`` hold the original text and the gold spans. Returns ``{"mentions", "verbatim",
    "fraction", "by_type": {category: {"mentions", "verbatim"}}}``."""
    by: dict[str, dict[str, int]] = {}
    for g, r in zip(gold_docs, released_docs, strict=True):
        if g.id != r.id:
            raise ValueError(f"documents out of step: gold {g.id!r}, released {r.id!r}")
        for s in g.spans:
            if s.text.strip():
                by.setdefault(s.category, {"mentions": 0, "verbatim": 0})["mentions"] += 1
        for s in _surviving_gold_spans(g.spans, r.text, g.text):
            by[s.category]["verbatim"] += 1
    n, v = sum(x["mentions"] for x in by.values()), sum(x["verbatim"] for x in by.values())
    return {"mentions": n, "verbatim": v, "fraction": v / n if n else 0.0, "by_type": dict(sorted(by.items()))}


def release_checks(records: Iterable, *, dayfirst: bool = False, lang: str = "en") -> dict:
    """Counts (no PHI) of what a run released, from its replacement records: ``replacements``;
    ``equal_to_original``: surrogates that give their original away
    (:func:`deidlib.surrogates.release.same_surrogate`; must be 0); ``dates_to_the_day``: dates
    written to the day whose surrogate is one too, of which ``dates_unchanged`` kept the
    day and ``dates_within_a_day`` moved by at most one day (what the d-private mechanism
    leaves near the truth)."""
    from ..surrogates.release import date_gap_days, same_surrogate

    out = {"replacements": 0, "equal_to_original": 0, "dates_to_the_day": 0, "dates_unchanged": 0,
           "dates_within_a_day": 0}
    for r in records:
        get: Callable[[str], Any] = r.get if isinstance(r, dict) else functools.partial(getattr, r)
        if get("method") == "none":
            continue
        cat, a, b = get("category"), get("original"), get("surrogate")
        out["replacements"] += 1
        out["equal_to_original"] += same_surrogate(cat, a, b, dayfirst=dayfirst, lang=lang)
        if cat == "DATE":
            gap = date_gap_days(a, b, dayfirst=dayfirst, lang=lang)
            if gap is not None:
                out["dates_to_the_day"] += 1
                out["dates_unchanged"] += gap == 0
                out["dates_within_a_day"] += gap <= 1
    return out


# ---------------------------------------------------------------------------------- workers
_local = threading.local()


def loaded_model(blob: ModelBlob):
    """The tagger of ``blob``, loaded once per thread (a check of the model before a local run
    and that run share one load)."""
    return _tagger(blob)


def _tagger(blob: ModelBlob):
    cache = getattr(_local, "taggers", None)
    if cache is None:
        cache = _local.taggers = {}
    if blob.digest not in cache:
        cache[blob.digest] = blob.load()
    return cache[blob.digest]


def _engine(options: DeidOptions):
    from ..surrogates import SurrogateEngine

    cache = getattr(_local, "engines", None)
    if cache is None:
        cache = _local.engines = {}
    if options not in cache:
        cache.clear()  # one run's engine at a time (each run has its own secrets)
        cache[options] = SurrogateEngine(options.surrogate_config(), seed=options.seed)
    return cache[options]


def _process_chunk(blob: ModelBlob | None, options: DeidOptions, docs: Sequence[Document]) -> list[DocResult]:
    """Tag (or take the input's spans), replace and count surviving gold PHI for one chunk.

    The input documents' spans are the gold standard (possibly none); they are never shown to
    the tagger (:func:`deidlib.training.predict_documents` tokenizes without them)."""
    if options.spans == "model":
        from ..training import predict_documents

        if blob is None:
            raise ValueError("spans='model' needs a model")
        tagged = predict_documents(_tagger(blob), [d.with_spans([]) for d in docs], batch_size=options.batch_size)
    else:
        tagged = [d.with_spans(disjoint(d.spans)) for d in docs]
    checks: list[dict] = [{} for _ in docs]
    if options.replace == "mask":
        outs = [mask_document(t) for t in tagged]
        new_docs, recs = [o[0] for o in outs], [o[1] for o in outs]
        checks = [release_checks(r) for r in recs]
    else:
        engine = _engine(options)
        new_docs, records = engine.surrogate_documents(tagged)
        by_doc: list[list[Replacement]] = [[] for _ in docs]
        pos = {d.id: i for i, d in enumerate(docs)}
        for r in records:
            by_doc[pos[r.document_id]].append(r)
        checks = [release_checks(r, dayfirst=engine.config.is_dayfirst, lang=engine.config.lang) for r in by_doc]
        recs = [[asdict(x) for x in r] for r in by_doc] if options.audit else [[] for _ in docs]
    results = []
    for d, t, n, r, c in zip(docs, tagged, new_docs, recs, checks):
        surv = _surviving_gold_spans(d.spans, n.text, d.text)
        results.append(DocResult(d.id, n, list(t.spans), len(d.spans),
                                 [s.text.strip() if options.audit else "" for s in surv], r if options.audit else [],
                                 [s.category for s in surv], c))
    return results


def run_local(chunks: Sequence[Sequence[Document]], blob: ModelBlob | None, options: DeidOptions
              ) -> Iterator[tuple[int, list[DocResult]]]:
    """Chunks one after another in this process: ``(chunk index, results)``."""
    for i, c in enumerate(chunks):
        yield i, _process_chunk(blob, options, c)


_worker_state: dict = {}


def _init_worker(blob: ModelBlob | None, options: DeidOptions) -> None:
    set_threads(options.threads)
    _worker_state["blob"], _worker_state["options"] = blob, options
    if blob is not None and options.spans == "model":
        _tagger(blob)  # load once, now


def _worker_task(i: int, chunk: Sequence[Document]) -> tuple[int, list[DocResult]]:
    return i, _process_chunk(_worker_state["blob"], _worker_state["options"], chunk)


def run_processes(chunks: Sequence[Sequence[Document]], blob: ModelBlob | None, options: DeidOptions,
                  workers: int) -> Iterator[tuple[int, list[DocResult]]]:
    """Chunks on ``workers`` spawned processes (results in completion order)."""
    import multiprocessing as mp
    from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait

    ctx = mp.get_context("spawn")  # no fork of a process that holds torch's thread pools
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_init_worker,
                             initargs=(blob, options)) as pool:
        pending: set[Future[tuple[int, list[DocResult]]]] = set()
        nxt = 0
        try:
            while nxt < len(chunks) or pending:
                while nxt < len(chunks) and len(pending) < 2 * workers:  # bounded: millions of notes
                    pending.add(pool.submit(_worker_task, nxt, chunks[nxt]))
                    nxt += 1
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    yield f.result()
        except BaseException:  # an interrupt (SIGINT, SIGTERM) or a failure: drop the queued chunks
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def _dask_task(i: int, chunk: Sequence[Document], blob: ModelBlob | None, options: DeidOptions):
    set_threads(options.threads)
    return i, _process_chunk(blob, options, chunk)


def _local_cluster(workers: int = 1):
    """A ``LocalCluster`` of ``workers`` processes (one thread each) closed to everyone but this
    process: TLS on 127.0.0.1 with a CA, key and certificate drawn for this cluster only
    (``Security.temporary()``, held in memory), required of every client and worker; no
    dashboard. Connect with ``Client(cluster)``, which takes the cluster's credentials."""
    import logging

    try:
        from dask.distributed import LocalCluster, Security
    except ImportError:
        raise ImportError("the dask engine needs dask.distributed: pip install 'deidlib[dask]'") from None

    return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                        silence_logs=logging.ERROR, security=Security.temporary(), protocol="tls://",
                        host="127.0.0.1")


def run_dask(chunks: Sequence[Sequence[Document]], blob: ModelBlob | None, options: DeidOptions, *,
             client=None, scheduler: str | None = None, workers: int = 1
             ) -> Iterator[tuple[int, list[DocResult]]]:
    """Chunks on a ``dask.distributed`` cluster: ``client``, else a client of ``scheduler``
    (``tls://host:8786``; TLS credentials from dask's configuration), else
    :func:`_local_cluster` of ``workers`` processes (TLS, credentials of this run only), closed
    at the end. The model travels once per worker (scatter with broadcast)."""
    try:
        from dask.distributed import Client, as_completed
    except ImportError:
        raise ImportError("the dask engine needs dask.distributed: pip install 'deidlib[dask]'") from None

    own_cluster = own_client = None
    if client is None:
        if scheduler:
            client = own_client = Client(scheduler)
        else:
            own_cluster = _local_cluster(workers)
            client = own_client = Client(own_cluster)
    try:
        blob_f = client.scatter(blob, broadcast=True) if blob is not None else None
        futures = [client.submit(_dask_task, i, list(c), blob_f, options, pure=False) for i, c in enumerate(chunks)]
        for _, res in as_completed(futures, with_results=True):
            yield res
    finally:
        if own_client is not None:
            own_client.close()
        if own_cluster is not None:
            own_cluster.close()
