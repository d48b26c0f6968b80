"""``deidlib deidentify IN OUT``: tag PHI with a saved model and replace it, in one command.

Reads plain text, i2b2 XML, JSONL/CSV with a text column or a PhysioNet deid folder
(:mod:`deidlib.pipeline.formats`), tags every note with a saved tagger (default: the
synthetic-only default model, :mod:`deidlib.pipeline.default_model`), replaces each tagged
span by a surrogate (:class:`deidlib.surrogates.SurrogateEngine`, OS randomness unless
``--seed``; its guarantee is printed and written into ``OUT/deidentify.json``) or by a
category mask, and writes the same format into OUT. With gold tags (i2b2 input, a PhysioNet
folder, or ``--gold``) it counts the gold PHI strings that survive verbatim in the output and
scores the tagging (binary-token P/R/F1). ``--workers N`` runs N local processes,
``--engine dask`` a dask.distributed cluster (:mod:`deidlib.pipeline.run`).

**Nothing but de-identified text leaves in clear** (:mod:`deidlib.pipeline.formats`): columns,
JSON fields and i2b2 META entries other than the text are dropped unless ``--keep-column``
names them (kept verbatim: the user's responsibility); patient ids (``--patient-column``,
``--patient-from-filename``, i2b2 ``PPP-`` prefixes and META, PhysioNet pids) and output file
names are keyed pseudonyms (:mod:`deidlib.pipeline.pseudonyms`: HMAC-SHA256 with
``--pseudonym-key-file``/``$DEIDLIB_PSEUDONYM_KEY``, else a random key of this run whose map
is written only into ``--audit``); ``--keep-file-names`` keeps IN's names, with a warning.
Messages never quote note text and number IN's files instead of naming them (unless
``--keep-file-names``). ``deidentify.json`` holds settings and counts only. Guarded by
``tests/pipeline/test_side_channels.py``.

**One run per OUT.** A run holds the lock of OUT (and of ``--audit``) from its checks to its
end (:func:`~deidlib.commands._safety.output_lock`; a second run into the same OUT stops
with one line), writes into a hidden staging folder and publishes it with one ``rename``
that fails if OUT appeared meanwhile; ``--force`` replaces OUT whole. What a killed run left
(``--audit``'s hidden ``.FILE.*.partial``, which holds original PHI, first; then OUT's
staging folder) is removed by the next run into the same OUT, and reported on stderr.
Guarded by ``tests/pipeline/test_concurrency.py``.

**Interrupts.** Ctrl-C (SIGINT) and SIGTERM (a batch scheduler's stop) stop the run alike:
exit code 130, OUT left as it was (nothing of the run is moved into OUT) and ``--audit``
unwritten, also when a library swallowed the ``KeyboardInterrupt``: the signal is
remembered and checked again before any output is committed. Once the output is being moved
into place the interrupt is held until the move is complete (the run is then reported as
complete).
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import hmac
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

from ..corpus.document import CorpusError
from ..pipeline.default_model import MODEL_RECIPES, default_model_dir, ensure_default_model, named_recipe
from ..pipeline.formats import read_input
from ..pipeline.pseudonyms import KEY_ENV, PseudonymError, Pseudonyms, load_key
from ..pipeline.run import (
    DeidOptions,
    ModelBlob,
    chunk_documents,
    loaded_model,
    run_dask,
    run_local,
    run_processes,
)
from ._deidentify_summary import SUMMARY, print_summary, summarize
from ._safety import (
    UsageError,
    add_threads_argument,
    check_output,
    loading,
    model_inputs,
    nonneg_int,
    output_lock,
    positive_float,
    positive_int,
    remove_leftovers,
    resolve,
    set_threads,
    staged_dir,
)

HELP = "de-identify notes in one command: tag PHI with a saved model, replace it by surrogates or masks"


def add_arguments(p) -> None:
    p.add_argument("in_path", metavar="IN", help="a file or a folder (searched recursively) of notes")
    p.add_argument("out_dir", metavar="OUT", help="output folder (created; must be empty unless --force; "
                   "never inside IN)")
    p.add_argument("--model", metavar="DIR|NAME", help="a model saved by 'deidlib train' (its OUT_DIR or "
                   "OUT_DIR/model), or a named recipe built once into the cache: 'default' (the default: MiniLM "
                   "encoder + guideline patterns, trained on synthetic notes only), 'guideline_forms' (the same, trained also "
                   "on synthetic dictated discharge summaries and emergency visits) or 'gru' (the GRU-CRF recipe)")
    p.add_argument("--replace", choices=("surrogate", "mask"), default="surrogate",
                   help="surrogates (default; shifted dates, d-private ages, exponential-mechanism cities, random "
                        "names; none equals its original) or category masks such as [NAME]")
    p.add_argument("--date-method", choices=("shift", "dp", "ldp"), default="shift",
                   help="surrogate dates: 'shift' (default: one secret shift per patient of 30-365 days either "
                        "way, derived from --pseudonym-key-file when given, intervals kept), 'dp' (Tchouka et al.'s "
                        "epsilon*d-private dates; the run reports how many stay within a day) or 'ldp'")
    p.add_argument("--format", choices=("txt", "i2b2", "jsonl", "csv", "physionet"),
                   help="input format (default: from IN's files)")
    p.add_argument("--text-column", default="text", metavar="C", help="jsonl/csv: the column holding the note "
                   "(default: text)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--patient-column", metavar="C", help="jsonl/csv: the column holding the patient id (written "
                   "as its pseudonym)")
    g.add_argument("--patient-from-filename", metavar="REGEX",
                   help="patient id = first group (else the whole match) of REGEX searched in each file's path "
                        r"relative to IN, e.g. '^(\d+)-' (written as its pseudonym)")
    p.add_argument("--keep-column", action="append", default=[], metavar="C",
                   help="jsonl/csv: also write column C verbatim; i2b2: META entry C (site or a metadata key); "
                        "repeatable. By default every column but the text (and the pseudonymised patient column) "
                        "is dropped. A kept column is NOT de-identified: keeping one is your responsibility")
    p.add_argument("--pseudonym-key-file", metavar="FILE",
                   help="key of the patient-id, note-id and file-name pseudonyms (HMAC-SHA256; at least 128 bits "
                        f"of entropy, e.g. 'openssl rand -hex 32'; mode 600; also ${KEY_ENV}): the same id gets "
                        "the same pseudonym in every run with this key. Default: a random key per run, its map "
                        "only in --audit")
    p.add_argument("--allow-weak-key", action="store_true",
                   help="accept a key that is short, repetitive or readable by group/others (warned)")
    p.add_argument("--keep-file-names", action="store_true",
                   help="name output files as IN's (default: pseudonyms, flat in OUT; names often hold patient "
                        "names or MRNs) and name IN's files in messages (default: by number)")
    p.add_argument("--spans", choices=("model", "input"), default="model",
                   help="replace what the model tags (default) or the input's own tags (i2b2/physionet)")
    p.add_argument("--gold", metavar="PATH", help="gold tags for txt/jsonl/csv input: a folder of i2b2 XML files "
                   "(same relative names) or a PhysioNet folder; i2b2 and physionet input carry their own")
    p.add_argument("--epsilon", type=positive_float, default=1.0,
                   help="surrogates: privacy budget per note, or per patient when patient ids are given (default 1)")
    p.add_argument("--locale", default="en_US", help="Faker locale of the surrogates (default en_US)")
    p.add_argument("--seed", type=nonneg_int, default=None,
                   help="seeded surrogates (reproducible, the same for any --workers; NOT for releases: the "
                        "guarantee does not hold against anyone holding the seed; file names and patient "
                        "pseudonyms repeat only with --pseudonym-key-file); default: OS CSPRNG")
    p.add_argument("--workers", type=positive_int, default=1, metavar="N",
                   help="worker processes (each loads the model once; default 1: this process)")
    p.add_argument("--engine", choices=("local", "dask"), default="local",
                   help="local processes (default) or dask.distributed (pip install 'deidlib[dask]')")
    p.add_argument("--scheduler", metavar="ADDRESS", help="--engine dask: scheduler address, tls://host:8786 (TLS "
                   "credentials from dask's config) (default: a local cluster of --workers processes, TLS with "
                   "credentials made for the run); the workers see the original notes")
    p.add_argument("--insecure-scheduler", action="store_true",
                   help="allow a --scheduler without TLS (tcp://): anyone on the network path can read the notes")
    p.add_argument("--audit", metavar="FILE", help="also write the replacement records and the pseudonym map "
                   "(patient ids, file names) as JSON lines: they hold the ORIGINAL PHI; FILE must lie outside IN "
                   "and OUT")
    p.add_argument("--force", action="store_true", help="replace a non-empty OUT whole (everything in it is deleted "
                   "once the run succeeds)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_threads_argument(p)


def _model_dir(args):
    if args.spans == "input":
        if args.model:
            raise UsageError("--model is not used with --spans input (the input's own tags are replaced)")
        return None
    if args.model is None:
        return None
    m = Path(args.model)

    if args.model in MODEL_RECIPES and not m.exists():  # a named model recipe: built into the cache
        return args.model
    if (m / "model" / "config.json").is_file():
        m = m / "model"
    if not (m / "config.json").is_file():
        raise UsageError(f"--model {args.model}: not a model saved by 'deidlib train' (no config.json)", code=1)
    return m


def _attach_gold(args, corpus) -> int:
    """Copy the spans of ``--gold`` onto the documents of the same id; return how many got gold."""
    g = Path(args.gold)
    gold = read_input(g, "physionet" if (g / "id.text").is_file() else "i2b2", keep_file_names=args.keep_file_names,
                      what="--gold")
    if gold.format not in ("i2b2", "physionet"):
        raise UsageError(f"--gold {args.gold}: expected i2b2 XML files or a PhysioNet folder", code=1)
    by_id = {d.id: d for d in gold.docs}
    n = 0
    for i, d in enumerate(corpus.docs):
        gd = by_id.get(d.id)
        if gd is None:
            continue
        if gd.text != d.text:
            at = next((k for k, (x, y) in enumerate(zip(gd.text, d.text)) if x != y), min(len(gd.text), len(d.text)))
            raise UsageError(f"--gold {args.gold}: the text of {gold.labels[d.id]} differs from that of "
                             f"{corpus.labels[d.id]} from character {at} on", code=1)
        corpus.docs[i] = d.with_spans(gd.spans)
        n += 1
    if n == 0:
        raise UsageError(f"--gold {args.gold}: no file has the relative path of a file of IN (without suffix)",
                         code=1)
    corpus.has_gold = True
    return n


def _scrub(message: str, corpus) -> str:
    """``message`` with every document id (a path or record id, which may hold PHI) replaced by
    how messages name the document's file."""
    for did in sorted(corpus.labels, key=len, reverse=True):
        if did in message:
            message = message.replace(repr(did), corpus.labels[did]).replace(did, corpus.labels[did])
    return message


class Interrupts:
    """SIGINT or SIGTERM while the run works: remembered, and raised as ``KeyboardInterrupt``
    where Python can (so SIGTERM cleans up and exits 130, as Ctrl-C does). :meth:`check` raises it again if some library swallowed it ("Exception ignored ...");
    after :meth:`hold` the signal is only remembered (the output is being moved into place)."""

    def __enter__(self):
        self.hit = self.held = False
        self._old = {}
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                self._old[sig] = signal.signal(sig, self._handler)
            except ValueError:  # not the main thread: leave the handlers alone
                break
        return self

    def _handler(self, signum, frame):
        self.hit = True
        if not self.held:
            raise KeyboardInterrupt

    def check(self) -> None:
        if self.hit:
            raise KeyboardInterrupt

    def hold(self) -> None:
        self.check()
        self.held = True

    def __exit__(self, *exc):
        for sig, old in self._old.items():
            signal.signal(sig, old)
        return False


def run(args) -> int:
    with Interrupts() as interrupts, contextlib.ExitStack() as locks:
        rc = _run(args, interrupts, locks)
    if interrupts.hit:
        print("deidlib deidentify: interrupted while the output was being moved into place; the run is complete",
              file=sys.stderr)
    return rc


def _lock_outputs(args, inputs, out, locks) -> None:
    """Take the locks of OUT and ``--audit`` (one run per output), remove what a killed run left
    beside them (the audit's partial file, original PHI, first) and check OUT again under the lock."""
    audit = resolve(args.audit) if args.audit else None
    locks.enter_context(output_lock(out, "OUT"))
    if audit is not None:
        locks.enter_context(output_lock(audit, "--audit"))
    for what, path in (("--audit", audit), ("OUT", out)):
        if path is None:
            continue
        gone = remove_leftovers(path)
        if gone:
            print(f"deidlib deidentify: removed {len(gone)} leftover(s) of an interrupted run beside {what} "
                  f"({', '.join(q.name for q in gone)[:300]})", file=sys.stderr)
    check_output(args.out_dir, inputs, what="OUT", force=args.force)  # OUT may have been filled before the lock


def _check_scheduler(args) -> None:
    """A remote scheduler must be reached over TLS unless ``--insecure-scheduler``: over plain
    TCP the notes, the model and the replacements cross the network in clear."""
    if args.insecure_scheduler and not args.scheduler:
        raise UsageError("--insecure-scheduler is for --scheduler (the local cluster always uses TLS)")
    if args.scheduler and not args.scheduler.startswith(("tls://", "inproc://")) and not args.insecure_scheduler:
        raise UsageError(f"--scheduler {args.scheduler}: not a tls:// address; the notes would cross the network "
                         "in clear (give a tls:// scheduler with TLS credentials in dask's config, or "
                         "--insecure-scheduler)")


def _same_mtime(folder) -> None:
    """Give every file and folder under ``folder`` one modification time, so that times do not
    replay the order in which IN's files were written."""
    t = int(time.time())
    for root, dirs, files in os.walk(folder):
        for n in dirs + files:
            os.utime(os.path.join(root, n), (t, t), follow_symlinks=False)
    os.utime(folder, (t, t))


def _shift_key(key: bytes | None) -> bytes | None:
    """The key of the date shifts, derived from the pseudonym key (never the key itself)."""
    if key is None:
        return None

    return hmac.new(key, b"deidlib date shift key", hashlib.sha256).digest()


def _run(args, interrupts: Interrupts, locks) -> int:
    src = Path(args.in_path)
    if not src.exists():
        raise UsageError(f"IN {args.in_path}: no such file or folder", code=1)
    model = _model_dir(args)
    if args.scheduler and args.engine != "dask":
        raise UsageError("--scheduler needs --engine dask")
    _check_scheduler(args)
    if args.spans == "input" and args.format in ("txt", "jsonl", "csv"):
        raise UsageError(f"--spans input needs tagged input (i2b2 or physionet), not {args.format}")
    if args.gold and args.spans == "input":
        raise UsageError("--gold with --spans input would score the gold tags against themselves")
    if args.gold and not Path(args.gold).exists():
        raise UsageError(f"--gold {args.gold}: no such file or folder", code=1)
    named = model if isinstance(model, str) else ("default" if model is None else None)
    inputs = [("IN", src), *model_inputs(None if named else model, "--model"), ("--gold", args.gold)]
    if args.spans == "model" and named:
        inputs.append((f"the {named} model", default_model_dir(None if named == "default" else named_recipe(named))))
    if args.pseudonym_key_file:  # the key is never written into OUT (check_output) nor read as a note
        inputs.append(("--pseudonym-key-file", args.pseudonym_key_file))
    out = check_output(args.out_dir, inputs, what="OUT", force=args.force)
    if args.pseudonym_key_file:
        key_path, in_path = resolve(args.pseudonym_key_file), resolve(src)
        if key_path == in_path or in_path in key_path.parents:
            raise UsageError("--pseudonym-key-file may not lie inside IN")
    try:
        key, weak = load_key(args.pseudonym_key_file, allow_weak=args.allow_weak_key)
        pseudonyms = Pseudonyms(key)
    except PseudonymError as e:
        raise UsageError(str(e), code=1) from None
    for w in weak:
        print(f"deidlib deidentify: WARNING (--allow-weak-key): {w}", file=sys.stderr)
    if args.audit:  # the audit holds the original PHI: never onto an input, never inside OUT
        check_output(args.audit, [*inputs, ("OUT", args.out_dir)], what="--audit", kind="file")
    _lock_outputs(args, inputs, out, locks)
    if args.engine == "dask":
        try:
            import dask.distributed  # noqa: F401
        except ImportError:
            raise UsageError("--engine dask needs dask.distributed: pip install 'deidlib[dask]'", code=1) from None
    threads = set_threads(args.threads)
    if args.keep_file_names:
        print("deidlib deidentify: warning: --keep-file-names: OUT's files keep IN's names and folders, and "
              "messages name IN's files; file names often hold patient names or MRNs", file=sys.stderr)

    try:
        corpus = read_input(src, args.format, text_column=args.text_column, patient_column=args.patient_column,
                            patient_from_filename=args.patient_from_filename, keep_columns=args.keep_column,
                            keep_file_names=args.keep_file_names)
    except CorpusError as e:
        raise UsageError(str(e), code=1) from None
    if args.spans == "input" and not corpus.has_gold:
        raise UsageError(f"--spans input: IN {args.in_path} holds no tags to replace", code=1)
    try:
        if args.gold:
            _attach_gold(args, corpus)
    except CorpusError as e:
        raise UsageError(f"--gold: {e}", code=1) from None
    docs = corpus.docs
    has_patients = any(d.patient_id for d in docs)
    options = DeidOptions(replace=args.replace, spans=args.spans, seed=args.seed, epsilon=args.epsilon,
                          locale=args.locale, memo_scope="patient" if has_patients else "document",
                          audit=bool(args.audit), threads=threads, date_method=args.date_method,
                          shift_key=_shift_key(key), release_date=datetime.date.today())
    if args.replace == "surrogate":
        from ..surrogates.config import epsilon_warning

        try:
            options.surrogate_config()  # a bad --locale fails here, in one line
        except ValueError as e:
            raise UsageError(str(e)) from None
        warning = epsilon_warning(args.epsilon, options.memo_scope, dates=args.date_method != "shift")
        if warning:
            print(f"deidlib deidentify: WARNING: {warning}", file=sys.stderr)
    blob = None
    model_name = "none (--spans input)"
    if args.spans == "model":
        if named:
            model = ensure_default_model(named, log=lambda m: print(f"deidlib deidentify: {m}", file=sys.stderr),
                                         progress=not args.no_progress)
            model_name = f"{named} ({model.name}, synthetic notes only)"
        else:
            model_name = str(model)
        with loading(model):  # a broken model fails here, in one line, not in a worker
            blob = ModelBlob.from_dir(model)
            loaded_model(blob)  # kept for this process's own run (--workers 1)

    chunks = chunk_documents(docs)
    if args.engine == "dask":
        it = run_dask(chunks, blob, options, scheduler=args.scheduler, workers=args.workers)
    elif args.workers > 1:
        it = run_processes(chunks, blob, options, args.workers)
    else:
        it = run_local(chunks, blob, options)
    from tqdm.auto import tqdm

    results = {}
    t0 = time.perf_counter()
    with tqdm(total=len(docs), unit="doc", desc="deidentify", disable=args.no_progress, file=sys.stderr) as bar:
        try:
            for _, res in it:
                for r in res:
                    results[r.id] = r
                bar.update(len(res))
                interrupts.check()
        except CorpusError as e:
            raise UsageError(_scrub(str(e), corpus), code=1) from None
    interrupts.check()
    secs = time.perf_counter() - t0
    new_docs = {i: r.document for i, r in results.items()}
    audit_tmp = None
    try:
        with staged_dir(out, mode="replace" if args.force else "exclusive") as tmp:
            try:
                corpus.write(tmp, new_docs, pseudonyms)
                summary = summarize(args, corpus, results, options, model_name, secs, out, pseudonyms)
                (tmp / SUMMARY).write_text(json.dumps(summary, indent=2), encoding="utf-8")
                _same_mtime(tmp)
            except CorpusError as e:
                raise UsageError(_scrub(str(e), corpus), code=1) from None
            except PseudonymError as e:
                raise UsageError(str(e), code=1) from None
            except OSError as e:  # a full disk, a quota: one line, nothing of the run left in OUT
                raise UsageError(f"OUT {args.out_dir}: cannot write ({e.strerror or type(e).__name__}); nothing "
                                 "was written", code=1) from None
            if args.audit:  # written next to FILE now, moved into place once OUT is
                try:
                    audit_tmp = _write_audit_aside(resolve(args.audit), docs, results, pseudonyms, corpus)
                except OSError as e:
                    raise UsageError(f"--audit {args.audit}: cannot write ({e.strerror or type(e).__name__}); "
                                     "nothing was written", code=1) from None
            interrupts.hold()  # from here on an interrupt waits until OUT (and the audit) are complete
        if audit_tmp is not None:
            os.replace(audit_tmp, resolve(args.audit))
    finally:
        if audit_tmp is not None and audit_tmp.exists():
            audit_tmp.unlink()
    print_summary(summary, out, args)
    return 0


def _write_audit_aside(path, docs, results, pseudonyms, corpus):
    """The audit lines (replacement records, surviving gold PHI, the pseudonym map: ORIGINAL
    PHI) written into a hidden file next to ``path``; returns that file."""
    lines = [json.dumps(rec, ensure_ascii=False) for d in docs for rec in results[d.id].records]
    lines += [json.dumps({"document_id": d.id, "surviving_gold_phi": results[d.id].surviving},
                         ensure_ascii=False) for d in docs if results[d.id].surviving]
    lines.append(json.dumps({"pseudonyms": {"patient": pseudonyms.mapping().get("patient", {}),
                                            "note": pseudonyms.mapping().get("note", {}),
                                            "file": corpus.file_names}}, ensure_ascii=False))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write("".join(x + "\n" for x in lines))
    except BaseException:
        os.unlink(tmp)
        raise

    return Path(tmp)
