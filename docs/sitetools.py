"""Build-time tools of the documentation site (``make docs``; not part of the package).

``stage``: copy the executed notebooks of one profile into the git-ignored staging folder
``docs/notebooks/``, ready for Sphinx + MyST-NB, which renders their stored outputs and never
executes them. A notebook with no run of that profile is staged from the smoke profile's run
instead (executed first when ``runs/smoke`` lacks it) and its page says so in a banner.
Each code cell that saves a manifest figure (``savefig(fig, "NAME", ...)``) has its image
output wrapped in a figure labelled ``fig-NAME`` (HTML id ``fig-NAME``, ``_`` as ``-``), so that
a page without its figures is caught (``check``, tests/docs). A page comes from this profile's
run in ``runs/<profile>/`` when complete, else from the executed notebook ``deidlib reproduce``
keeps in ``figures/<name>/`` (images as files there, put back inline here), else from the
smoke fallback.

``api``: write the API reference page ``docs/api.md`` from the ``__all__`` lists of deidlib's
modules (:func:`api_page`): each exported name once, under the shortest module that exports that
object (a package's facade before its submodules). tests/test_public_api.py checks that the page in
the repository is the one this writes.

``check``: every relative ``href``/``src`` of the built HTML points to an existing file (and
anchor), every notebook page shows each figure the manifest promises as an ``<img>``, and no
staged notebook output has a table cell pandas cut short, a printed warning or a local path
(``/root``, ``/work``, ``/home/USER``, ``.venv``, ``site-packages``).

    python docs/sitetools.py stage --profile cpu [--runs-dir runs] [--dest docs/notebooks]
    python docs/sitetools.py check docs/_build/html
    python docs/sitetools.py api
"""

from __future__ import annotations

import argparse
import copy
import importlib
import pkgutil
import re
import shutil
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parent.parent
#: a markdown link from a notebook (in notebooks/) to a docs page: ``](../docs/page.md)``; on the
#: site the notebook pages sit in docs/notebooks/, so the link becomes ``](../page.md)``
DOCS_LINK = re.compile(r"\]\(\.\./docs/")
SAVEFIG = re.compile(r"""savefig\(\s*\w+\s*,\s*["']([\w.-]+)["']""")

SMOKE_BANNER = """\
```{{warning}}
**Smoke-scale toy run.** This page shows the notebook executed under the `smoke` profile
(tiny corpus, one or two epochs: a check that the code runs, not a result). {why}
Run `make reproduce` (cpu profile), then `make docs`, for the pages with the study's numbers.
```
"""

RUN_NOTE = """\
```{{note}}
Executed with `deidlib reproduce --profile {profile}`{when}; the figures and tables below are
that run's stored outputs.
```
"""


def _manifest():
    sys.path.insert(0, str(ROOT))
    from deidlib.notebooks import load_manifest

    return load_manifest(ROOT / "notebooks" / "manifest.toml")


def missing_runs(runs: Path, entries) -> list[str]:
    """Names of the manifest notebooks without a complete executed copy (notebook + figures) in ``runs``."""
    return [
        e.name
        for e in entries
        if not (runs / e.name / f"{e.name}.ipynb").is_file()
        or any(not (runs / e.name / f"{f}.png").is_file() for f in e.figures)
    ]


def figure_label(name: str) -> str:
    """The label of manifest figure ``name`` on its page (prefixed: a section may have the bare name's id)."""
    return f"fig-{name}"


def figure_id(name: str) -> str:
    """The HTML id docutils gives the figure of manifest figure ``name``."""
    return re.sub(r"[^a-z0-9]+", "-", figure_label(name).lower()).strip("-")


def terminal_text(text: str) -> str:
    """``text`` as a terminal shows it: of each line, what follows its last carriage return
    (a progress bar's final state instead of every update)."""
    return "\n".join(line.rstrip("\r").rsplit("\r", 1)[-1] for line in text.split("\n"))


def merge_streams(outputs: list) -> list:
    """Consecutive outputs of the same stream joined into one, as a terminal shows them."""
    merged = []
    for o in outputs:
        if o.get("output_type") == "stream" and merged and merged[-1].get("output_type") == "stream" \
                and merged[-1].get("name") == o.get("name"):
            merged[-1]["text"] += o["text"]
        else:
            merged.append(copy.deepcopy(o))
    for o in merged:
        if o.get("output_type") == "stream":
            o["text"] = terminal_text(o["text"])
    return merged


def hidden_cell(outputs: list, execution_count: int | None):
    """A code cell that shows only ``outputs`` (its source, a comment, removed from the page;
    MyST-NB skips cells with no source at all)."""
    import nbformat

    cell = nbformat.v4.new_code_cell("# outputs of the cell above", metadata={"tags": ["remove-input"]})
    cell.outputs, cell.execution_count = outputs, execution_count
    return cell


def prepare(nb, entry, profile: str, why: str = ""):
    """A copy of the executed notebook ``nb`` for its page: manifest figures labelled, streams as
    a terminal shows them, a banner (smoke) or a note on the run after the title cell."""
    import nbformat

    nb = copy.deepcopy(nb)
    cells = []
    for cell in nb.cells:
        cells.append(cell)
        if cell.cell_type == "markdown":  # a link to a docs page, from notebooks/ in the repository
            cell.source = DOCS_LINK.sub("](../", cell.source)
        if cell.cell_type != "code":
            continue
        cell.outputs = merge_streams(cell.get("outputs", []))
        if "injected-parameters" in cell.metadata.get("tags", []):
            cell.source = cell.source.replace(str(ROOT) + "/", "")  # runs/<profile>/..., not this machine's path
        names = [n for n in SAVEFIG.findall(cell.source) if n in entry.figures]
        images = [i for i, o in enumerate(cell.outputs) if "image/png" in o.get("data", {})]
        if len(names) == 1 and len(images) == 1:
            # MyST-NB wraps every rich output of a cell in its figure: the image gets a cell of its own
            # (source hidden), and so do the outputs after it, in their order
            i = images[0]
            after = cell.outputs[i + 1:]
            figure = hidden_cell([cell.outputs[i]], cell.get("execution_count"))
            figure.metadata["mystnb"] = {"figure": {"name": figure_label(names[0])}}
            cell.outputs = cell.outputs[:i]
            cells.append(figure)
            if after:
                cells.append(hidden_cell(after, cell.get("execution_count")))
    nb.cells = cells
    if profile == "smoke":
        text = SMOKE_BANNER.format(why=why)
    else:
        started = nb.metadata.get("papermill", {}).get("start_time") or ""
        text = RUN_NOTE.format(profile=profile, when=f" on {started[:10]}" if started else "")
    first_md = next((i for i, c in enumerate(nb.cells) if c.cell_type == "markdown"), -1)
    nb.cells.insert(first_md + 1, nbformat.v4.new_markdown_cell(text))
    return nb


def index_page(entries, profile: str, why: str, staged: dict[str, str] | None = None) -> str:
    staged = staged or {e.name: profile for e in entries}
    lines = [
        "# Notebooks",
        "",
        "One page per study notebook of `notebooks/manifest.toml`, each the notebook as executed by "
        f"`deidlib reproduce --profile {profile}`, with its own text, figures and tables. The notebooks "
        "run on the embedded synthetic corpus; re-run one with `deidlib reproduce --only STUDY`. "
        "Each claims table's verdicts are explained once, in the [verdict legend](../verdicts.md).",
        "",
    ]
    toy = [e.name for e in entries if staged[e.name] == "smoke"]
    if toy:
        lines += [SMOKE_BANNER.format(why=why + (" Pages at that scale: " + ", ".join(f"`{n}`" for n in toy) + "."
                                                 if len(toy) < len(entries) else "")), ""]
    lines += ["```{toctree}", ":maxdepth: 1", ""] + [e.name for e in entries] + ["```", ""]
    return "\n".join(lines)


def stored_complete(stored: Path, entry) -> bool:
    """Whether ``stored`` (``figures/<name>/<name>.ipynb``, kept by ``deidlib reproduce``) is there
    with every image it refers to and every manifest figure beside it."""
    from deidlib.notebooks import stored_images

    return stored.is_file() and all(p.is_file() for p in stored_images(stored)) \
        and all((stored.parent / f"{f}.png").is_file() for f in entry.figures)


def stored_profile(nb) -> str:
    """The profile a stored executed notebook ran with (its papermill parameters)."""
    return str(nb.metadata.get("papermill", {}).get("parameters", {}).get("profile", "cpu"))


def stage(profile: str, runs_dir: Path, dest: Path, fallback: str | None = "smoke", execute: bool = True,
          stored_dir: Path | None = None) -> dict[str, str]:
    """Stage one page per manifest notebook into ``dest``; return ``{name: profile staged}``.

    Each page comes from the first of: this profile's fresh run (``runs_dir/<profile>/<name>/``),
    the executed notebook kept in the repository (``stored_dir/<name>/<name>.ipynb``, default
    ``figures/``; written by ``deidlib reproduce``, rendered here without executing anything),
    the ``fallback`` profile's run (executed first when missing and ``execute``; the page then
    carries the smoke banner)."""
    import nbformat

    from deidlib.notebooks import load_stored

    entries = _manifest()
    stored_dir = ROOT / "figures" if stored_dir is None else stored_dir
    runs = runs_dir / profile
    fresh = set(e.name for e in entries) - set(missing_runs(runs, entries))
    chosen: dict[str, tuple[str, object]] = {}
    for e in entries:
        stored = stored_dir / e.name / f"{e.name}.ipynb"
        if e.name in fresh:
            chosen[e.name] = (profile, nbformat.read(runs / e.name / f"{e.name}.ipynb", as_version=4))
        elif stored_complete(stored, e):
            nb = load_stored(stored)
            if stored_profile(nb) == profile:
                chosen[e.name] = (profile, nb)
    missing = [e for e in entries if e.name not in chosen]
    why = ""
    if missing:
        names = [e.name for e in missing]
        if not fallback or fallback == profile:
            raise SystemExit(f"docs: {runs} lacks executed notebooks: {', '.join(names)} "
                             f"(run `make reproduce PROFILE={profile}`)")
        print(f"docs: no {profile} run of {len(names)} notebook(s) ({', '.join(names[:3])}"
              f"{', ...' if len(names) > 3 else ''}) in runs/{profile}/ or figures/; using the {fallback} profile's",
              file=sys.stderr)
        why = (f"The {profile} profile's executed notebook was found neither in `runs/{profile}/` nor in "
               "`figures/`.")
        back = runs_dir / fallback
        lacking = missing_runs(back, missing)
        if lacking:
            if not execute or fallback != "smoke":
                raise SystemExit(f"docs: {back} lacks executed notebooks: {', '.join(lacking)} "
                                 f"(run `make reproduce PROFILE={fallback}`)")
            from deidlib.notebooks import reproduce

            print(f"docs: executing the {fallback} notebooks into {back} (a few minutes)", file=sys.stderr)
            reproduce(fallback, only=lacking, runs_dir=back, copy_figures=False)
        for e in missing:
            chosen[e.name] = (fallback, nbformat.read(back / e.name / f"{e.name}.ipynb", as_version=4))
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for e in entries:
        prof, nb = chosen[e.name]
        nbformat.write(prepare(nb, e, prof, why if prof != profile else ""), dest / f"{e.name}.ipynb")
    staged = {name: prof for name, (prof, _) in chosen.items()}
    (dest / "index.md").write_text(index_page(entries, profile, why, staged), encoding="utf-8")
    (dest / "PROFILE").write_text(profile + "\n", encoding="utf-8")
    counts = {p: sum(v == p for v in staged.values()) for p in dict.fromkeys(staged.values())}
    print("docs: staged " + ", ".join(f"{n} {p}" for p, n in counts.items()) + f" notebook page(s) into {dest}",
          file=sys.stderr)
    return staged


class _Page(HTMLParser):
    """Ids, links and images of one HTML page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.images: list[str] = []
        self.figures: dict[str, int] = {}  # figure id -> <img> inside it
        self._open: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("id", "name"):
            if a.get(key) and (key == "id" or tag == "a"):
                self.ids.add(a[key])
        for key in ("href", "src"):
            if a.get(key) is not None:
                self.links.append(a[key])
        if tag == "img":
            self.images.append(a.get("src") or "")
            for _, fid in self._open:
                if fid is not None:
                    self.figures[fid] = self.figures.get(fid, 0) + 1
        if tag == "figure":
            self.figures.setdefault(a.get("id") or "", 0)
        if tag not in ("img", "link", "meta", "br", "hr", "input", "source", "wbr"):
            self._open.append((tag, a.get("id") if tag == "figure" else None))

    def handle_endtag(self, tag):
        for i in range(len(self._open) - 1, -1, -1):
            if self._open[i][0] == tag:
                del self._open[i:]
                break


def parse(path: Path) -> _Page:
    p = _Page()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def broken_links(site: Path) -> list[str]:
    """``page: href`` for every relative link or source of the built site that points to no file or anchor."""
    pages = {p: parse(p) for p in site.rglob("*.html")}
    bad = []
    for page, parsed in sorted(pages.items()):
        for link in parsed.links:
            u = urlsplit(link)
            if u.scheme or u.netloc or link.startswith("//"):
                continue
            target = (page.parent / unquote(u.path)).resolve() if u.path else page
            if u.path.endswith("/") or target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                bad.append(f"{page.relative_to(site)}: {link} (no such file)")
                continue
            if u.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else parse(target).ids
                if unquote(u.fragment) not in ids:
                    bad.append(f"{page.relative_to(site)}: {link} (no such anchor)")
    return bad


def missing_figures(site: Path, folder: str = "notebooks") -> list[str]:
    """``page: figure`` for each manifest figure that is not an ``<img>`` on its notebook page."""
    bad = []
    for e in _manifest():
        page = site / folder / f"{e.name}.html"
        if not page.is_file():
            bad.append(f"{folder}/{e.name}.html: page missing")
            continue
        figs = parse(page).figures
        for f in e.figures:
            if figs.get(figure_id(f), 0) < 1:
                bad.append(f"{folder}/{e.name}.html: figure {f}")
    return bad


#: a table cell pandas cut short (``display.max_colwidth``) or a row/column range it left out
TRUNCATED = re.compile(r"<td>[^<]*\.\.\.</td>")
#: a Python warning printed by a cell (``TqdmWarning: ...``, ``UserWarning: ...``)
WARNING = re.compile(r"\b[A-Z][A-Za-z]*Warning:")
#: a path of the machine that ran the notebook
LOCAL_PATH = re.compile(r"(?<![\w.])(?:/root|/work|/home/[^/\s]+|/Users/[^/\s]+)/|\.venv/|site-packages/")


def output_text(output) -> str:
    """The text of a notebook output that a page shows (stream text, text and HTML data)."""
    if output.get("output_type") == "stream":
        return output.get("text", "")
    if output.get("output_type") == "error":
        return "\n".join(output.get("traceback", []))
    data = output.get("data", {})
    return "\n".join(str(v) for k, v in data.items() if k.startswith("text/"))


def output_problems(staged: Path) -> list[str]:
    """``page: cell N: problem`` for every staged notebook output with a truncated table cell, a
    printed warning or a local path (``make docs-check``)."""
    import nbformat

    bad = []
    for path in sorted(staged.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for i, cell in enumerate(nb.cells):
            for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
                text = output_text(out)
                html = "\n".join(str(v) for k, v in out.get("data", {}).items() if k == "text/html")
                for what, rx, where in (("truncated table cell", TRUNCATED, html), ("warning", WARNING, text),
                                        ("local path", LOCAL_PATH, text)):
                    m = rx.search(where)
                    if m:
                        bad.append(f"{path.stem}: cell {i}: {what}: {where[max(0, m.start() - 30):m.end() + 30]!r}")
    return bad


API_PAGE = ROOT / "docs" / "api.md"

API_INTRO = """\
# API reference

The public API of deidlib is the set of names in the `__all__` lists of its modules; anything else
(a name with a leading underscore, or one its module does not list) is internal and may change.
A package's `__init__` is its facade: a name it exports is listed here under the package, not
under the submodule that defines it. An algorithm's docstring cites the paper and section it
implements; [Design](design.md) says which module holds which paper.

This page is written by `python docs/sitetools.py api` from those lists (`make docs` runs it);
`tests/test_public_api.py` fails when it is out of date.
"""


def exporting_modules() -> dict[str, list[str]]:
    """Every module of deidlib with an ``__all__`` (``__main__`` modules aside) -> its ``__all__``."""
    sys.path.insert(0, str(ROOT))
    import deidlib

    found = {"deidlib": list(deidlib.__all__)}
    for info in pkgutil.walk_packages(deidlib.__path__, "deidlib."):
        if info.name.rsplit(".", 1)[-1] == "__main__":
            continue
        module = importlib.import_module(info.name)
        if hasattr(module, "__all__"):
            found[info.name] = list(module.__all__)
    return found


def documented_names(exports: dict[str, list[str]]) -> list[str]:
    """The dotted paths the API page documents: each ``__all__`` entry, except one whose object a
    package above its module exports under the same name (it is documented there)."""
    paths = []
    for mod, names in exports.items():
        module = sys.modules[mod]
        for name in names:
            obj = getattr(module, name)
            parents = [mod.rsplit(".", k)[0] for k in range(1, mod.count("."))]
            if not any(name in exports.get(p, ()) and getattr(sys.modules[p], name) is obj for p in parents):
                paths.append(f"{mod}.{name}")
    return sorted(set(paths))


def _section(path: str) -> str:
    """The page section of a documented path: its package (``deidlib.training``), a study's
    package (``deidlib.studies.festag``), or ``deidlib`` itself."""
    parts = path.split(".")
    return ".".join(parts[:3] if parts[1] == "studies" and len(parts) > 3 else parts[:min(2, len(parts) - 1)])


def api_page(exports: dict[str, list[str]] | None = None) -> str:
    """The markdown of the API page: one autosummary table per package of the documented paths."""
    paths = documented_names(exporting_modules() if exports is None else exports)
    sections: dict[str, list[str]] = {}
    for path in paths:
        sections.setdefault(_section(path), []).append(path)
    out = [API_INTRO]
    for section in sorted(sections):
        rows = "".join(f"   {p}\n" for p in sections[section])
        out.append(f"## `{section}`\n\n```{{eval-rst}}\n.. autosummary::\n   :toctree: api\n   :nosignatures:\n\n"
                   f"{rows}```\n")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="docs/sitetools.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("stage", help="copy executed notebooks into the staging folder")
    s.add_argument("--profile", default="cpu")
    s.add_argument("--runs-dir", type=Path, default=ROOT / "runs")
    s.add_argument("--dest", type=Path, default=ROOT / "docs" / "notebooks")
    s.add_argument("--fallback", default="smoke", help="profile to use when PROFILE's runs are incomplete ('' for none)")
    s.add_argument("--no-execute", dest="execute", action="store_false", help="never execute notebooks")
    c = sub.add_parser("check", help="broken internal links and missing notebook figures of a built site")
    c.add_argument("site", type=Path, nargs="?", default=ROOT / "docs" / "_build" / "html")
    c.add_argument("--staged", type=Path, default=ROOT / "docs" / "notebooks",
                   help="the staged notebooks whose outputs are checked for truncated cells, warnings, local paths")
    a = sub.add_parser("api", help="write the API reference page from the __all__ lists")
    a.add_argument("--dest", type=Path, default=API_PAGE)
    args = ap.parse_args(argv)
    if args.cmd == "api":
        args.dest.write_text(api_page(), encoding="utf-8")
        return 0
    if args.cmd == "stage":
        stage(args.profile, args.runs_dir, args.dest, args.fallback or None, args.execute)
        return 0
    problems = broken_links(args.site) + missing_figures(args.site) + output_problems(args.staged)
    for p in problems:
        print(p, file=sys.stderr)
    n = len(list(args.site.rglob("*.html")))
    print(f"docs: {n} page(s), {len(problems)} problem(s)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
