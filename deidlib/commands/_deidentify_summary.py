"""The summary of a ``deidlib deidentify`` run (``OUT/deidentify.json`` and the lines printed):
settings and counts only — no id, no file name, no note text — with the release checks, the
surrogates' guarantee and, with gold tags, the gold PHI that survives verbatim and the
binary-token scores (by category).
"""

from __future__ import annotations

import resource
from collections import Counter

__all__ = []

#: name of the run summary written into OUT (no PHI: counts, settings, the guarantee)
SUMMARY = "deidentify.json"


def cpu_seconds() -> float:
    """CPU seconds (user + system) of the whole command so far, start-up included: this process
    and its finished worker processes (a remote Dask cluster's workers are not counted)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def summarize(args, corpus, results, options, model_name, secs, out, pseudonyms) -> dict:
    """Settings and counts of the run (no PHI: no id, no file name, no text)."""
    from ..evaluation import binary_token_prf  # evaluation imports torch: not at `deidlib --help`

    docs = corpus.docs
    n_spans = sum(len(r.predicted) for r in results.values())
    cpu = cpu_seconds()
    s = {
        "input": {"format": corpus.format, "documents": len(docs),
                  "patients": len({d.patient_id for d in docs if d.patient_id}),
                  "characters": sum(len(d.text) for d in docs)},
        "model": model_name,
        "spans": options.spans,
        "replace": options.replace,
        "replaced_spans": n_spans,
        "engine": args.engine if args.engine == "dask" else ("processes" if args.workers > 1 else "single process"),
        "workers": args.workers,
        "threads_per_worker": options.threads,
        "seconds": round(secs, 3),
        "documents_per_second": round(len(docs) / max(secs, 1e-9), 2),
        "cpu_seconds": round(cpu, 3),
        "documents_per_cpu_second": round(len(docs) / max(cpu, 1e-9), 2),
        "written_besides_the_text": {
            "patient_ids": "pseudonyms: " + pseudonyms.describe(),
            "file_names": "IN's names (--keep-file-names)" if args.keep_file_names else "pseudonyms (as patient ids)",
            "kept_columns": list(corpus.kept_columns),
            "other_columns_and_fields": "dropped",
        },
    }
    if options.replace == "surrogate":
        from ..surrogates.config import guarantee_statement

        s["surrogates"] = {"epsilon": options.epsilon, "scope": options.memo_scope, "locale": options.locale,
                           "date_method": options.date_method,
                           "randomness": "OS CSPRNG" if options.seed is None else f"seeded ({options.seed})",
                           "guarantee": guarantee_statement(options.surrogate_config(), seeded=options.seed is not None)}
    else:
        s["masks"] = "each tagged span replaced by its category in brackets, e.g. [NAME]"
    s["release_checks"] = _release_totals(results.values())
    gold_docs = [d for d in docs if d.spans] if corpus.has_gold else []
    if corpus.has_gold:
        mentions = sum(results[d.id].gold_mentions for d in docs)
        surv = sum(len(results[d.id].surviving) for d in docs)
        p, r, f = binary_token_prf(docs, [docs[i].with_spans(results[d.id].predicted) for i, d in enumerate(docs)])
        s["gold"] = {"documents": len(docs), "documents_with_phi": len(gold_docs), "gold_phi_mentions": mentions,
                     "surviving_gold_phi_mentions": surv,
                     "surviving_fraction": round(surv / mentions, 4) if mentions else 0.0,
                     "binary_token": {"precision": round(p, 4), "recall": round(r, 4), "f1": round(f, 4)},
                     "by_type": _gold_by_type(docs, results),
                     "survival_rule": "a gold mention survives when its text (stripped) occurs in the output note "
                                      "as a whole token sequence"}
    return s


def _release_totals(results) -> dict:
    """The run's :func:`deidlib.pipeline.run.release_checks` counts, summed over documents."""
    tot: dict[str, int] = {}
    for r in results:
        for k, v in r.checks.items():
            tot[k] = tot.get(k, 0) + int(v)
    return tot


def _gold_by_type(docs, results) -> dict:
    """Per gold category: mentions, mentions left verbatim in the released text, and binary-token
    recall (a gold token is found when a replaced span holds the same token)."""
    from ..evaluation.keys import token_keys  # evaluation imports torch: not at `deidlib --help`

    mentions: Counter[str] = Counter()
    verbatim: Counter[str] = Counter()
    tokens: Counter[str] = Counter()
    found: Counter[str] = Counter()
    for d in docs:
        res = results[d.id]
        mentions.update(s.category for s in d.spans if s.text.strip())
        verbatim.update(res.surviving_types)
        pred = token_keys(res.predicted, True)
        for cat, _, a, b in token_keys(d.spans):
            tokens[cat] += 1
            found[cat] += (a, b) in pred
    return {c: {"mentions": mentions[c], "verbatim": verbatim[c],
                "token_recall": round(found[c] / tokens[c], 4) if tokens[c] else None}
            for c in sorted(mentions)}


def print_summary(s: dict, out, args) -> None:
    """The summary in a few lines on stdout."""
    i = s["input"]
    print(f"de-identified {i['documents']} {i['format']} documents ({i['patients']} patients) into {out}: "
          f"{s['replaced_spans']} spans replaced by {s['replace']}s in {s['seconds']:.1f} s "
          f"({s['documents_per_second']:.1f} documents/s, {s['engine']}, {s['workers']} worker(s); "
          f"{s['documents_per_cpu_second']:.1f} documents per CPU-second of the whole command)")
    print(f"model: {s['model']}")
    if "surrogates" in s:
        print("guarantee: " + s["surrogates"]["guarantee"])
    c = s["release_checks"]
    print(f"released: {c.get('equal_to_original', 0)} of {c.get('replacements', 0)} replacements equal their "
          "original (must be 0)")
    if s.get("surrogates", {}).get("date_method") in ("dp", "ldp"):
        n, near = c.get("dates_to_the_day", 0), c.get("dates_within_a_day", 0)
        print(f"dates ({s['surrogates']['date_method']}, measured): {near} of {n} dates written to the day were "
              f"released unchanged or within a day ({100 * near / n if n else 0:.1f} %)")
    if "gold" in s:
        g = s["gold"]
        b = g["binary_token"]
        print(f"gold: {g['surviving_gold_phi_mentions']} of {g['gold_phi_mentions']} gold PHI mentions survive "
              f"verbatim in the output; binary-token P/R/F1 {b['precision']:.3f} / {b['recall']:.3f} / {b['f1']:.3f}")
        left = {t: v["verbatim"] for t, v in g["by_type"].items() if v["verbatim"]}
        print("gold mentions left verbatim by type: " + (", ".join(f"{t} {n}" for t, n in left.items()) or "none"))
    print(f"summary: {out / SUMMARY}")
    if args.audit:
        print(f"audit records (they contain the ORIGINAL PHI; keep them apart): {args.audit}")
