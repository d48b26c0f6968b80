"""The documentation site: built from executed notebooks without broken internal links, every
notebook page shows its manifest figures, and the checks themselves catch what they guard."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import nbformat
import pytest

from deidlib.notebooks import load_manifest

ENTRIES = load_manifest()
ROOT = Path(__file__).resolve().parents[2]
CONTENT_PAGES = ["quickstart", "api", "papers", "verdicts", "cli", "deidentify", "dp-recipes", "flower", "transfer", "benchmarks", "audits", "design",
                 "data", "limitations", "changelog"]


@pytest.mark.docs
@pytest.mark.notebook
def test_built_site_has_no_broken_internal_links(built_site, sitetools):
    html, _, _ = built_site
    assert len(list(html.rglob("*.html"))) >= len(CONTENT_PAGES) + len(ENTRIES) + 2
    bad = sitetools.broken_links(html)
    assert not bad, "broken internal links:\n" + "\n".join(bad[:40])


@pytest.mark.docs
@pytest.mark.notebook
def test_every_notebook_page_shows_its_manifest_figures_and_says_which_run_it_is(built_site, sitetools):
    html, _, staged = built_site
    assert not sitetools.missing_figures(html)
    for e in ENTRIES:
        page = (html / "notebooks" / f"{e.name}.html").read_text(encoding="utf-8")
        if staged[e.name] == "smoke":
            assert "Smoke-scale toy run" in page and 'class="admonition warning"' in page, e.name
        else:
            assert "Smoke-scale toy run" not in page and "deidlib reproduce --profile cpu" in page, e.name
        # its own markdown: the notebook's title is the page's heading
        nb = nbformat.read(ROOT / "notebooks" / f"{e.name}.ipynb", as_version=4)
        title = next(c.source for c in nb.cells if c.cell_type == "markdown").splitlines()[0].lstrip("# ")
        assert re.sub(r"\s+", " ", title.split("·")[-1].strip()) in page, e.name
    index = (html / "notebooks" / "index.html").read_text(encoding="utf-8")
    assert ("Smoke-scale toy run" in index) == ("smoke" in staged.values())
    assert 'href="../verdicts.html"' in index


@pytest.mark.docs
@pytest.mark.notebook
def test_front_matter_pages_have_their_content(built_site):
    html, _, _ = built_site
    quick = unescape(re.sub(r"<[^>]+>", "", (html / "quickstart.html").read_text(encoding="utf-8")))  # the text
    for text in ("--index-url https://download.pytorch.org/whl/cpu", "deidlib deidentify", "fit_tagger",
                 "papermill notebooks/", "make smoke"):
        assert text in quick, text
    api = (html / "api.html").read_text(encoding="utf-8")
    for name in ("load_corpus", "fit_tagger", "predict_documents", "evaluate", "surrogate_document", "train_dp",
                 "run_local"):
        assert re.search(rf'href="api/deidlib\.[\w.]*\.{name}\.html"', api), name  # a page of its own
    fit = (html / "api" / "deidlib.training.fit_tagger.html").read_text(encoding="utf-8")
    assert "fit_tagger" in fit and "splits" in fit  # the docstring's page, not an empty stub
    papers = (html / "papers.html").read_text(encoding="utf-8")
    for link in ("https://doi.org/10.2196/14064", "https://arxiv.org/abs/1906.05000",
                 "https://doi.org/10.5220/0011646600003414", "csmd.ornl.gov/highlight"):
        assert link in papers, link
    assert "cff-version" in papers  # how to cite: the citation file itself


@pytest.mark.docs
@pytest.mark.notebook
def test_front_page_lists_every_content_page_and_every_notebook(built_site):
    html, _, _ = built_site
    front = (html / "index.html").read_text(encoding="utf-8")
    for page in CONTENT_PAGES:
        assert (html / f"{page}.html").is_file() and f'href="{page}.html"' in front, page
    nb_index = (html / "notebooks" / "index.html").read_text(encoding="utf-8")
    for e in ENTRIES:
        assert f'href="{e.name}.html"' in nb_index, e.name


def _executed(tmp: Path, name: str, figures: list[str], show: bool = True) -> Path:
    """A fake executed notebook that saves ``figures`` (and shows them when ``show``)."""
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_markdown_cell(f"# {name}\n\ntext"))
    for f in figures:
        cell = nbformat.v4.new_code_cell(f'fig = plot()\nsavefig(fig, "{f}", out)\nplt.show()')
        if show:
            cell.outputs = [nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"})]
        cell.execution_count = 1
        nb.cells.append(cell)
    d = tmp / name
    d.mkdir(parents=True)
    nbformat.write(nb, d / f"{name}.ipynb")
    for f in figures:
        (d / f"{f}.png").write_bytes(b"\x89PNG")
    return d


def test_staging_labels_a_figure_only_where_the_notebook_shows_it(tmp_path, sitetools):
    entry = next(e for e in ENTRIES if len(e.figures) >= 2)
    shown, hidden = entry.figures[0], entry.figures[1]
    d = _executed(tmp_path, entry.name, [shown])
    nb = nbformat.read(d / f"{entry.name}.ipynb", as_version=4)
    cell = nbformat.v4.new_code_cell(f'savefig(fig, "{hidden}", out)')  # saved, never displayed
    nb.cells.append(cell)
    table = nbformat.v4.new_output("execute_result", data={"text/html": "<table></table>", "text/plain": "t"},
                                   execution_count=1)
    note = nbformat.v4.new_output("stream", name="stdout", text="done\n")
    nb.cells[1].outputs = [table, *nb.cells[1].outputs, note]  # a table, the figure, a print
    injected = nbformat.v4.new_code_cell(f'profile = "smoke"\nout_dir = "{ROOT}/runs/smoke/{entry.name}"',
                                         metadata={"tags": ["injected-parameters"]})
    nb.cells.insert(1, injected)
    out = sitetools.prepare(nb, entry, "smoke", "")
    assert f'out_dir = "runs/smoke/{entry.name}"' in out.cells[2].source and str(ROOT) not in out.cells[2].source
    labels = [c.metadata.get("mystnb", {}).get("figure", {}).get("name") for c in out.cells]
    assert sitetools.figure_label(shown) in labels and sitetools.figure_label(hidden) not in labels
    # MyST-NB wraps every rich output of a labelled cell: the figure's cell holds the image alone,
    # and the outputs keep their order
    fig_cell = out.cells[labels.index(sitetools.figure_label(shown))]
    assert [list(o.get("data", {})) for o in fig_cell.outputs] == [["image/png", "text/plain"]]
    assert "remove-input" in fig_cell.metadata["tags"] and fig_cell.source.startswith("#")
    flat = [o for c in out.cells if c.cell_type == "code" for o in c.outputs]
    assert [o.output_type for o in flat] == ["execute_result", "display_data", "stream"]
    assert "Smoke-scale toy run" in out.cells[1].source and out.cells[0].source.startswith("# ")
    assert not nb.cells[2].metadata.get("mystnb") and str(ROOT) in nb.cells[1].source  # the executed notebook is left alone
    cpu = sitetools.prepare(nb, entry, "cpu", "")
    assert "Smoke-scale" not in cpu.cells[1].source and "--profile cpu" in cpu.cells[1].source


def test_stage_falls_back_page_by_page_to_complete_smoke_runs_and_refuses_incomplete_ones(tmp_path, sitetools):
    runs, stored = tmp_path / "runs", tmp_path / "figures"
    stored.mkdir()
    for e in ENTRIES:
        _executed(runs / "smoke", e.name, list(e.figures))
    _executed(runs / "cpu", ENTRIES[0].name, list(ENTRIES[0].figures))  # cpu: one notebook only
    dest = tmp_path / "stage"
    staged = sitetools.stage("cpu", runs, dest, fallback="smoke", execute=False, stored_dir=stored)
    assert staged == {e.name: "cpu" if e is ENTRIES[0] else "smoke" for e in ENTRIES}
    assert sorted(p.stem for p in dest.glob("*.ipynb")) == sorted(e.name for e in ENTRIES)
    index = (dest / "index.md").read_text()
    assert "neither in `runs/cpu/` nor in `figures/`" in index and f"`{ENTRIES[1].name}`" in index
    assert f"`{ENTRIES[0].name}`" not in index
    assert "Smoke-scale" not in (dest / f"{ENTRIES[0].name}.ipynb").read_text()
    assert "Smoke-scale" in (dest / f"{ENTRIES[1].name}.ipynb").read_text()
    with pytest.raises(SystemExit, match="lacks executed notebooks"):
        sitetools.stage("cpu", runs, dest, fallback=None, execute=False, stored_dir=stored)
    (runs / "smoke" / ENTRIES[-1].name / f"{ENTRIES[-1].figures[0]}.png").unlink()  # a figure missing
    assert sitetools.missing_runs(runs / "smoke", ENTRIES) == [ENTRIES[-1].name]
    with pytest.raises(SystemExit, match=ENTRIES[-1].name):
        sitetools.stage("cpu", runs, dest, fallback="smoke", execute=False, stored_dir=stored)


def test_stage_renders_the_notebooks_reproduce_keeps_in_figures_without_running_anything(tmp_path, sitetools):
    from deidlib.notebooks import _store_executed, load_stored, stored_images

    runs, stored = tmp_path / "runs", tmp_path / "figures"
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 64
    for e in ENTRIES:
        d = _executed(tmp_path / "executed", e.name, list(e.figures))
        path = d / f"{e.name}.ipynb"
        nb = nbformat.read(path, as_version=4)
        nb.metadata["papermill"] = {"parameters": {"profile": "cpu"}, "start_time": "2026-01-02T03:04:05"}
        for c in nb.cells:
            for o in c.get("outputs", []):
                o["data"]["image/png"] = __import__("base64").b64encode(png).decode()
        stream = nbformat.v4.new_output("stream", name="stdout", text=f"wrote {tmp_path}/runs/cpu/{e.name}/x.csv\n")
        nb.cells[-1].outputs.append(stream)
        nbformat.write(nb, path)
        for f in e.figures:
            (stored / e.name).mkdir(parents=True, exist_ok=True)
            (stored / e.name / f"{f}.png").write_bytes(png)
        kept = _store_executed(path, stored / e.name, root=tmp_path)
    text = kept.read_text()
    assert "image/png" not in text and str(tmp_path) not in text and "wrote runs/cpu/" in text
    images = stored_images(kept)
    assert len(images) == len(ENTRIES[-1].figures) and all(p.read_bytes() == png for p in images)
    back = load_stored(kept)
    shown = [o for c in back.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    assert len(shown) == len(images) and all(__import__("base64").b64decode(o.data["image/png"]) == png for o in shown)
    staged = sitetools.stage("cpu", runs, tmp_path / "stage", fallback="smoke", execute=False, stored_dir=stored)
    assert set(staged.values()) == {"cpu"}  # no run, no smoke fallback: nothing executed
    page = (tmp_path / "stage" / f"{ENTRIES[-1].name}.ipynb").read_text()
    assert "Smoke-scale" not in page and "on 2026-01-02" in page and "iVBORw0KGgo" in page
    images[0].unlink()  # a kept notebook whose image is gone is not used
    with pytest.raises(SystemExit, match=ENTRIES[-1].name):
        sitetools.stage("cpu", runs, tmp_path / "stage", fallback="smoke", execute=False, stored_dir=stored)


def test_link_check_catches_missing_files_anchors_and_figures(tmp_path, sitetools):
    site = tmp_path / "html"
    (site / "notebooks").mkdir(parents=True)
    (site / "a.html").write_text('<a href="b.html#top">ok</a><img src="img/x.png"><a href="https://x.org/n">ext</a>'
                                 '<a href="b.html#nowhere">bad anchor</a><a href="#here">self</a><p id="here"></p>')
    (site / "b.html").write_text('<h1 id="top">b</h1><a href="a.html">back</a><a href="gone.html">gone</a>')
    (site / "img").mkdir()
    (site / "img" / "x.png").write_bytes(b"")
    bad = sitetools.broken_links(site)
    assert sorted(bad) == ["a.html: b.html#nowhere (no such anchor)", "b.html: gone.html (no such file)"]
    e = ENTRIES[0]
    page = site / "notebooks" / f"{e.name}.html"
    shown = "".join(f'<figure id="{sitetools.figure_id(f)}"><div><img src="x.png"></div></figure>' for f in e.figures[1:])
    first = sitetools.figure_id(e.figures[0])
    page.write_text(f'<figure id="{first}"><div></div></figure>' + shown)  # the first figure has no <img>
    assert [m for m in sitetools.missing_figures(site) if m.startswith(f"notebooks/{e.name}.html")] == \
        [f"notebooks/{e.name}.html: figure {e.figures[0]}"]
    page.write_text(f'<figure id="{first}"><div><img src="x.png"></div></figure>' + shown)
    assert not any(m.startswith(f"notebooks/{e.name}.html") for m in sitetools.missing_figures(site))


def test_staged_streams_show_a_progress_bar_once_at_its_final_state(sitetools):
    outputs = [nbformat.v4.new_output("stream", name="stderr", text="\rtrain:   0%|  | 0/10"),
               nbformat.v4.new_output("stream", name="stderr", text="\rtrain:  50%|# | 5/10"),
               nbformat.v4.new_output("stream", name="stderr", text="\rtrain: 100%|##| 10/10\n"),
               nbformat.v4.new_output("stream", name="stdout", text="F1 0.5\n")]
    merged = sitetools.merge_streams(outputs)
    assert [(o.name, o.text) for o in merged] == [("stderr", "train: 100%|##| 10/10\n"), ("stdout", "F1 0.5\n")]
    assert outputs[0].text == "\rtrain:   0%|  | 0/10"  # the executed notebook's outputs are left alone


def test_output_check_catches_truncated_cells_warnings_and_local_paths(tmp_path, sitetools):
    def page(name, outputs):
        nb = nbformat.v4.new_notebook()
        cell = nbformat.v4.new_code_cell("x")
        cell.outputs = outputs
        nb.cells.append(cell)
        nbformat.write(nb, tmp_path / f"{name}.ipynb")

    table = "<table><tr><td>The full claim text, however long it is</td><td>0.5</td></tr></table>"
    page("clean", [nbformat.v4.new_output("execute_result", data={"text/html": table, "text/plain": "t"},
                                          execution_count=1),
                   nbformat.v4.new_output("stream", name="stdout", text="wrote runs/cpu/x/table.csv\n")])
    assert sitetools.output_problems(tmp_path) == []
    page("cut", [nbformat.v4.new_output("execute_result", execution_count=1,
                                        data={"text/html": "<table><tr><td>The full claim te...</td></tr></table>"})])
    page("warned", [nbformat.v4.new_output("stream", name="stderr",
                                           text="lib/x.py:21: TqdmWarning: IProgress not found.\n")])
    page("pathy", [nbformat.v4.new_output("stream", name="stdout", text="wrote /work/team/runs/cpu/x.csv\n"),
                   nbformat.v4.new_output("display_data", data={"text/plain": "/opt/.venv/lib/python3.11/y"})])
    found = sitetools.output_problems(tmp_path)
    assert [p.split(":")[0] + ":" + p.split(":")[2] for p in found] == \
        ["cut: truncated table cell", "pathy: local path", "pathy: local path", "warned: warning"]


def test_staging_points_a_notebooks_link_to_a_docs_page_at_the_page_on_the_site(sitetools):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# T"),
                nbformat.v4.new_markdown_cell("see the [verdict legend](../docs/verdicts.md) and [data](../data/README.md)")]
    out = sitetools.prepare(nb, ENTRIES[0], "cpu", "")
    text = "".join(c.source for c in out.cells)
    assert "[verdict legend](../verdicts.md)" in text and "[data](../data/README.md)" in text
    assert (ROOT / "docs" / "verdicts.md").is_file()
    for e in ENTRIES:  # every notebook with a claims table links the legend instead of copying it
        src = (ROOT / "notebooks" / f"{e.name}.py").read_text(encoding="utf-8")
        assert "faithful: the claim holds within the tolerance" not in src, e.name
