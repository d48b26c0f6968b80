"""``deidlib synth OUT_DIR``: write the synthetic corpus as i2b2 2014 XML files.

Layout (one subfolder per site, so that each site can be handed to a collaborative
study as its own i2b2 directory)::

    OUT_DIR/
      site0/001-01.xml  site0/001-02.xml ...     i2b2 2014 XML (TEXT + TAGS)
      site1/...
      metadata.tsv      id, patient_id, site, style, note_type, note_date, diagnosis,
                        primary_site, subsite (pathology reports), chars, phi

XML files carry text and PHI tags only; ``metadata.tsv`` carries the labels the
downstream-utility and registry studies need.
"""

from __future__ import annotations

HELP = "write the embedded synthetic corpus as i2b2 2014 XML (one folder per site + metadata.tsv)"

_META_COLS = ("id", "patient_id", "site", "style", "note_type", "note_date", "diagnosis", "primary_site",
              "subsite", "chars", "phi")


def add_arguments(p) -> None:
    p.add_argument("out_dir", metavar="OUT_DIR", help="output folder (created; must be empty unless --force)")
    p.add_argument("--patients", type=int, default=100, help="number of patients (default: 100)")
    p.add_argument("--sites", type=int, default=5, help="number of sites (default: 5)")
    p.add_argument("--seed", type=int, default=0, help="seed (default: 0)")
    p.add_argument("--locale", default="en_US", help="Faker locale of identities and places (default: en_US)")
    p.add_argument("--notes-min", type=int, default=2, help="fewest records per patient (default: 2)")
    p.add_argument("--notes-max", type=int, default=6, help="most records per patient (default: 6)")
    p.add_argument("--force", action="store_true", help="write into a non-empty OUT_DIR")


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


def run(args) -> int:
    import sys
    import time
    from collections import Counter
    from pathlib import Path

    out = Path(args.out_dir)
    if out.exists() and (not out.is_dir() or any(out.iterdir())) and not args.force:
        print(f"deidlib synth: {out} exists and is not an empty folder (use --force to write into it)",
              file=sys.stderr)
        return 2

    from ..corpus.i2b2 import write_i2b2_dir
    from ..results import atomic_write_text
    from ..synthetic import generate_iter

    t0 = time.perf_counter()
    try:
        docs = list(generate_iter(args.patients, args.sites, args.seed, (args.notes_min, args.notes_max),
                                  args.locale, progress=True))
    except ValueError as e:
        print(f"deidlib synth: {e}", file=sys.stderr)
        return 2
    gen_s = time.perf_counter() - t0
    by_site: dict[str, list] = {}
    for d in docs:
        by_site.setdefault(d.site, []).append(d)
    for site, sdocs in sorted(by_site.items()):
        write_i2b2_dir(sdocs, out / site)
    atomic_write_text(out / "metadata.tsv", metadata_tsv(docs))

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
