"""deidlib's figure style is a shipped style file applied through a context: making and
saving a figure neither chooses a matplotlib backend (JupyterLab's ``%matplotlib widget``
keeps working) nor changes the user's global rcParams, and every study figure is styled."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_SCRIPT = r"""
import sys
import matplotlib
import matplotlib.pyplot as plt
import pandas as pd

before = matplotlib.get_backend()
rc = dict(matplotlib.rcParams)
from deidlib import plotting
from deidlib.studies.corpus_overview import plot_overview

phi = pd.DataFrame({"site1": [3, 1], "site2": [2, 4]}, index=["NAME", "DATE"])
fig = plot_overview(phi, pd.Series({"B-NAME": 5, "B-DATE": 7}))
with plotting.style():
    fig2, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
plotting.savefig(fig, "overview", sys.argv[1])
plotting.savefig(fig2, "line", sys.argv[1], pdf=False)
assert matplotlib.get_backend() == before, (before, matplotlib.get_backend())
changed = sorted(k for k, v in matplotlib.rcParams.items() if rc[k] != v)
assert changed == [], changed
a = fig.axes[0]
assert not a.spines["top"].get_visible() and a.xaxis.get_major_ticks()[0].gridline.get_alpha() == 0.3
assert not ax.spines["right"].get_visible()
plain = plt.figure().add_subplot()  # outside the context: the user's style
assert plain.spines["top"].get_visible()
print("ok", before)
"""


def test_figures_keep_the_backend_and_the_global_rcparams(tmp_path):
    """Run in a fresh process with a non-Agg headless backend (svg): the old ``apply_style``
    switched it to Agg and rewrote rcParams for every later figure."""
    env = {**os.environ, "MPLBACKEND": "svg", "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    r = subprocess.run([sys.executable, "-c", _SCRIPT, str(tmp_path)], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["ok", "svg"]
    assert (tmp_path / "overview.png").is_file() and (tmp_path / "overview.pdf").is_file()


def test_the_style_file_ships_with_the_package():
    from deidlib.plotting import _STYLE

    assert _STYLE.is_file() and _STYLE.parent == ROOT / "deidlib"
    data = (ROOT / "pyproject.toml").read_text(encoding="utf-8").split("[tool.setuptools.package-data]", 1)[1]
    assert f'"{_STYLE.name}"' in data.split("\n[", 1)[0]


def _calls(node: ast.AST) -> set[str]:
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            f = n.func
            out.add(f"{getattr(f.value, 'id', '?')}.{f.attr}" if isinstance(f, ast.Attribute) else getattr(f, "id", "?"))
    return out


def test_every_study_figure_function_is_styled():
    """A top-level function of deidlib/studies that makes a figure carries ``@style()``."""
    unstyled = []
    for f in sorted((ROOT / "deidlib" / "studies").rglob("*.py")):
        for node in ast.parse(f.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef) and _calls(node) & {"plt.subplots", "plt.figure"}:
                if "style()" not in [ast.unparse(d) for d in node.decorator_list]:
                    unstyled.append(f"{f.relative_to(ROOT)}:{node.name}")
    assert unstyled == []


def test_nothing_sets_a_matplotlib_backend():
    """No ``matplotlib.use`` / ``plt.switch_backend`` in the package, the notebooks or the tests
    (scripts and the notebook runner choose a backend through MPLBACKEND)."""
    offenders = []
    for folder in ("deidlib", "notebooks", "tests", "benchmarks", "scripts"):
        for f in sorted((ROOT / folder).rglob("*.py")):
            calls = _calls(ast.parse(f.read_text(encoding="utf-8")))
            offenders += [f"{f.relative_to(ROOT)}: {c}" for c in calls
                          if c in ("matplotlib.use", "mpl.use", "plt.switch_backend", "pyplot.switch_backend")]
    assert offenders == []


def test_a_kernel_shows_every_figure_after_a_styled_one(tmp_path):
    """In a Jupyter kernel (inline backend) a figure made after a styled one is still shown in
    its cell: the executed notebooks, and the documentation pages made from them, carry every
    figure. Restoring all rcParams on leaving the style (``plt.style.context``) hid them."""
    import json

    import nbformat
    import papermill as pm

    from deidlib.notebooks import _inline_figures

    cells = [
        "import matplotlib.pyplot as plt\nfrom deidlib import plotting",
        "with plotting.style():\n    fig, ax = plt.subplots()\n    ax.plot([0, 1])",
        "fig, ax = plt.subplots()\nax.plot([1, 0])",
        "@plotting.style()\ndef f():\n    fig, ax = plt.subplots()\n    return fig\nfig = f()",
        "fig = f()",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    src, out = tmp_path / "figures.ipynb", tmp_path / "figures.out.ipynb"
    nbformat.write(nb, src)
    with _inline_figures():
        pm.execute_notebook(str(src), str(out), kernel_name="python3", progress_bar=False, cwd=str(tmp_path))
    shown = [sum("image/png" in o.get("data", {}) for o in c.get("outputs", []))
             for c in json.loads(out.read_text())["cells"]]
    assert shown == [0, 1, 1, 1, 1], shown
