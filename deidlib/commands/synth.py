"""``deidlib synth OUT_DIR``: write the synthetic corpus as i2b2 2014 XML (or plain text) files.

Layout (one subfolder per site, so that each site can be handed to a collaborative
study as its own i2b2 directory)::

    OUT_DIR/
      site0/001-01.xml  site0/001-02.xml ...     i2b2 2014 XML (TEXT + TAGS)
      site1/...
      metadata.tsv      id, patient_id, site, style, note_type, note_date, diagnosis,
                        primary_site, subsite (pathology reports), chars, phi

``--flat`` writes every file directly into OUT_DIR (file names are unique across sites:
``PPP-RR``, patients numbered over the whole corpus). Every command reads the per-site
layout as it is (``evaluate``, ``predict``, ``surrogate``, ``deidentify`` and ``train
--corpus i2b2 --data-dir OUT_DIR`` read subfolders). ``--format txt`` writes the notes as
plain ``.txt`` files (no tags: the input a hospital has), e.g. for ``deidlib deidentify``
or ``deidlib predict``; with ``--format both`` the ``.xml`` gold files are written as well
(``.txt`` and ``.xml`` side by side, so give ``deidentify --format txt --gold OUT_DIR``).

XML files carry text and PHI tags only; ``metadata.tsv`` carries the labels the
downstream-utility and registry studies need.
"""

from __future__ import annotations

import re
import shutil
import sys
import time
from collections import Counter

from ._safety import UsageError, check_output, nonneg_int, positive_int, staged_dir

HELP = "write the embedded synthetic corpus as i2b2 2014 XML or plain text (one folder per site + metadata.tsv)"

_META_COLS = ("id", "patient_id", "site", "style", "note_type", "note_date", "diagnosis", "primary_site",
              "subsite", "chars", "phi")


def add_arguments(p) -> None:
    p.add_argument("out_dir", metavar="OUT_DIR", help="output folder (created; must be empty unless --force)")
    p.add_argument("--patients", type=positive_int, default=100, help="number of patients (default: 100)")
    p.add_argument("--sites", type=positive_int, default=None,
                   help="number of sites (default: 5, or --patients if fewer); each site holds whole patients, "
                        "drawn at random, so a site may end up empty (then it has no folder: a warning says so); "
                        "more sites than patients is refused")
    p.add_argument("--seed", type=nonneg_int, default=0, help="seed (default: 0)")
    p.add_argument("--locale", default="en_US", help="Faker locale of identities and places (default: en_US)")
    p.add_argument("--notes-min", type=positive_int, default=2, help="fewest records per patient (default: 2)")
    p.add_argument("--notes-max", type=positive_int, default=6, help="most records per patient (default: 6)")
    p.add_argument("--format", choices=("xml", "txt", "both"), default="xml",
                   help="i2b2 XML with gold tags (default), plain-text notes, or both side by side")
    p.add_argument("--flat", action="store_true", help="all files directly in OUT_DIR instead of one folder per site")
    p.add_argument("--force", action="store_true",
                   help="replace the corpus in a non-empty OUT_DIR written by an earlier 'deidlib synth' "
                        "(its site*/ folders of XML files and metadata.tsv are deleted first; anything else "
                        "in OUT_DIR makes synth refuse)")


def metadata_tsv(docs) -> str:
    """The ``metadata.tsv`` text for ``docs`` (tab-separated, header row first)."""
    lines = ["\t".join(_META_COLS)]
    for d in docs:
        m = d.metadata
        row = [d.id, d.patient_id, d.site, m.get("style", ""), m.get("note_type", ""), m.get("note_date", ""),
               m.get("diagnosis", ""), m.get("primary_site", "") or "", m.get("subsite", "") or "",
               str(len(d.text)), str(len(d.spans))]
        lines.append("\t".join(row))
    return "\n".join(lines) + "\n"


def previous_corpus(out):
    """The entries of ``out`` that an earlier ``deidlib synth`` wrote (``metadata.tsv``,
    ``site*/`` folders holding only ``*.xml``/``*.txt`` files, and ``PPP-RR.xml``/``.txt``
    files of a ``--flat`` corpus). Raises UsageError when ``out`` holds anything else, so
    that ``--force`` never deletes a file synth did not write."""
    mine, foreign = [], []
    for p in sorted(out.iterdir()):
        if p.name == "metadata.tsv" and p.is_file() and not p.is_symlink():
            mine.append(p)
        elif (re.fullmatch(r"site\d+", p.name) and p.is_dir() and not p.is_symlink()
              and all(f.suffix in (".xml", ".txt") and f.is_file() and not f.is_symlink() for f in p.iterdir())):
            mine.append(p)
        elif re.fullmatch(r"\d+-\d+\.(xml|txt)", p.name) and p.is_file() and not p.is_symlink():
            mine.append(p)
        else:
            foreign.append(p.name)
    if foreign:
        raise UsageError(f"OUT_DIR {out} holds {', '.join(foreign[:3])}{' ...' if len(foreign) > 3 else ''}, "
                         "which 'deidlib synth' did not write; --force only replaces a synth corpus")
    return mine


def write_text_dir(docs, folder) -> None:
    """Each document's text as ``<id>.txt`` (UTF-8, exact: written with ``newline=""``)."""
    folder.mkdir(parents=True, exist_ok=True)
    for d in docs:
        with open(folder / f"{d.id}.txt", "w", encoding="utf-8", newline="") as fh:
            fh.write(d.text)


def run(args) -> int:
    if args.sites is not None and args.sites > args.patients:
        raise UsageError(f"--sites {args.sites} is more than --patients {args.patients}: each site holds whole "
                         "patients, so at most --patients sites can hold notes")
    sites = args.sites if args.sites is not None else min(5, args.patients)
    out = check_output(args.out_dir, [], what="OUT_DIR", force=args.force)
    old = previous_corpus(out) if out.is_dir() else []

    from ..corpus.i2b2 import write_i2b2_dir
    from ..results import atomic_write_text
    from ..synthetic import generate_iter

    t0 = time.perf_counter()
    try:
        docs = list(generate_iter(args.patients, sites, args.seed, (args.notes_min, args.notes_max),
                                  args.locale, progress=True))
    except ValueError as e:
        raise UsageError(str(e)) from None
    if not docs:
        raise UsageError(f"--patients {args.patients} generated no document", code=1)
    gen_s = time.perf_counter() - t0
    n_sites = len({d.site for d in docs})
    if n_sites < sites:
        print(f"deidlib synth: warning: {sites} sites asked, but the {args.patients} patients (drawn at random to "
              f"sites) fell into {n_sites} of them; only {n_sites} site folders are written", file=sys.stderr)
    by_site: dict[str, list] = {}
    for d in docs:
        by_site.setdefault(d.site, []).append(d)
    with staged_dir(out) as tmp:
        for site, sdocs in sorted(by_site.items()):
            folder = tmp if args.flat else tmp / site
            if args.format in ("xml", "both"):
                write_i2b2_dir(sdocs, folder)
            if args.format in ("txt", "both"):
                write_text_dir(sdocs, folder)
        atomic_write_text(tmp / "metadata.tsv", metadata_tsv(docs))
        for p in old:  # the new corpus is complete: now remove the previous one
            shutil.rmtree(p) if p.is_dir() else p.unlink()

    chars = sum(len(d.text) for d in docs)
    phi = Counter(s.subtype for d in docs for s in d.spans)
    print(f"wrote {len(docs)} documents of {args.patients} patients at {len(by_site)} sites to {out}")
    print(f"{chars / 1e6:.2f} MB of text generated in {gen_s:.2f} s ({chars / 1e6 / max(gen_s, 1e-9):.2f} MB/s)")
    print("documents per site: " + ", ".join(f"{s}={len(v)}" for s, v in sorted(by_site.items())))
    print("note types: " + ", ".join(f"{k}={v}" for k, v in Counter(d.metadata['note_type'] for d in docs).most_common()))
    print(f"PHI mentions: {sum(phi.values())}")
    for t, n in phi.most_common():
        print(f"  {t:15s} {n}")
    return 0
