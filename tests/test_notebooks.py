"""Every notebook of the manifest runs top to bottom under the smoke profile and writes
the figures the manifest promises; the .ipynb files are the stripped pairs of the .py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jupytext
import papermill
import pytest

from deidlib.notebooks import load_manifest, notebooks_dir, run_notebook

ENTRIES = load_manifest()


@pytest.mark.notebook
@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_notebook_runs_under_smoke(entry, smoke_notebook):
    out = smoke_notebook(entry)  # executed once per session (shared with tests/docs)
    for f in entry.figures:
        png = out / f"{f}.png"
        assert png.stat().st_size > 1000, f"{png} is empty"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for t in entry.tables:
        lines = (out / f"{t}.csv").read_text().splitlines()
        assert len(lines) >= 2, f"{t}.csv has no rows"
    # every study notebook saves a Result record through deidlib.reporting; the DP one with its ledger
    from deidlib.results import _load_result

    records = [_load_result(p) for p in out.glob("*_result.json")]
    assert len(records) == (entry.study != "corpus")
    for r in records:
        assert r.params["profile"] == "smoke" and r.seeds and r.metrics
        if entry.study == "ahmed_dp":
            assert r.data_fingerprint and set(r.privacy_ledger["members"]) and r.privacy_ledger["ensemble"]["epsilon"] > 0
            assert all(m["epsilon"] > 0 for m in r.privacy_ledger["members"].values())
        elif entry.study == "audits":  # the audited DP-SGD targets' ledgers
            assert r.data_fingerprint and r.privacy_ledger["dp_sgd"]
            assert all(m["epsilon"] > 0 and m["rng_note"] for m in r.privacy_ledger["dp_sgd"])
        else:
            assert r.privacy_ledger is None


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_notebook_pair_in_sync_and_stripped(entry):
    d = notebooks_dir()
    ipynb = json.loads((d / f"{entry.name}.ipynb").read_text())
    py = jupytext.read(d / f"{entry.name}.py")
    code = [c for c in ipynb["cells"] if c["cell_type"] == "code"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code), "outputs not stripped"
    src_ipynb = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in ipynb["cells"]]
    src_py = [c["source"] for c in py["cells"]]
    assert src_ipynb == src_py, f"{entry.name}.ipynb is out of sync with {entry.name}.py (run jupytext --sync)"
    params = [c for c in code if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(params) == 1, "exactly one cell tagged 'parameters'"
    # papermill silently drops parameter lines it cannot parse (e.g. an '=' in a comment)
    declared = {line.split("=")[0].split(":")[0].strip() for line in "".join(params[0]["source"]).splitlines()
                if line and not line.startswith("#") and "=" in line}
    inspected = set(papermill.inspect_notebook(str(d / f"{entry.name}.ipynb")))
    assert declared == inspected, f"papermill cannot parse parameter line(s): {declared - inspected}"
    assert {"profile", "out_dir"} <= inspected and ({"seed", "seeds"} & inspected)


def test_reproduce_param_option_parses_literals_and_rejects_undeclared_names(tmp_path):
    from deidlib.commands.reproduce import parse_params
    from deidlib.notebooks import notebook_parameters, reproduce

    assert parse_params(["n_seeds=3", "lr=0.5", "corpus_note=abc", "epochs=None"]) == {
        "n_seeds": 3, "lr": 0.5, "corpus_note": "abc", "epochs": None}
    for bad in ("n_seeds", "=3", "2x=1"):
        with pytest.raises(ValueError, match="NAME=VALUE"):
            parse_params([bad])
    festag = next(e for e in ENTRIES if e.study == "festag")
    assert {"n_seeds", "theta_d"} <= notebook_parameters(festag)
    # checked before anything runs: nothing is written
    with pytest.raises(ValueError, match="has no parameter bogus"):
        reproduce("smoke", only=["festag"], parameters={"bogus": 1}, runs_dir=tmp_path, copy_figures=False)
    with pytest.raises(ValueError, match="its own option"):
        reproduce("smoke", only=["festag"], parameters={"seed": 1}, runs_dir=tmp_path, copy_figures=False)
    assert not any(tmp_path.iterdir())


def test_notebook_parameters_use_the_documented_vocabulary():
    """Every parameter of every notebook is a row of notebooks/README.md's table, and every
    row names a parameter some notebook has (one vocabulary, no stale rows)."""
    import re

    from deidlib.notebooks import notebook_parameters

    table = (notebooks_dir() / "README.md").read_text(encoding="utf-8").split("## Parameter names", 1)[1]
    documented = set()
    for line in table.splitlines():
        if line.startswith("| `"):
            documented |= set(re.findall(r"`([a-z_0-9]+)`", line.split("|")[1]))
    used = set()
    for entry in ENTRIES:
        names = notebook_parameters(entry)
        assert names <= documented, f"{entry.name}: undocumented parameters {sorted(names - documented)}"
        used |= names
    assert documented == used, f"documented but unused: {sorted(documented - used)}"


def test_partial_parameters_are_declared_and_narrow_the_required_outputs():
    from deidlib.notebooks import notebook_parameters

    for e in ENTRIES:
        assert set(e.partial_parameters) <= notebook_parameters(e), e.name
        assert not e.is_partial(None) and not e.is_partial({k: None for k in e.partial_parameters})
    ahmed = next(e for e in ENTRIES if e.study == "ahmed")
    assert ahmed.is_partial({"tables": ["4.4"]}) and not ahmed.is_partial({"n_seeds": 1})


@pytest.mark.notebook
def test_ahmed_notebook_trains_only_the_requested_tables(tmp_path, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    ahmed = next(e for e in ENTRIES if e.study == "ahmed")
    out = run_notebook(ahmed, profile="smoke", out_dir=tmp_path, extra_parameters={"tables": ["4.4"]})
    assert (out / "ahmed_table_4_4.csv").is_file() and (out / "ahmed_table_4_10.csv").is_file()
    assert not (out / "ahmed_table_4_2.csv").exists() and not (out / "ahmed_table_4_2.png").exists()
    runs = json.loads((out / "ahmed_models_runs.json").read_text())
    assert runs["tables"] == ["4.4"] and {r["kind"] for r in runs["runs"]} == {"minilm"}  # Table 4.4 varies delta_p of the self-attention tagger (pre-trained MiniLM)


@pytest.mark.parametrize("fail", [None, 1])
def test_reproduce_jobs_runs_notebooks_side_by_side_in_manifest_order(tmp_path, monkeypatch, fail):
    """``jobs=2`` keeps two notebooks running at once, returns the outputs in manifest order, and
    after a failure starts nothing new, lets the running one finish and raises the first error."""
    import threading
    import time
    from pathlib import Path

    from deidlib import notebooks

    names = [e.name for e in ENTRIES]
    lock, active, peak, started, finished = threading.Lock(), [0], [0], [], []

    def fake_run(entry, *, out_dir, **kw):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
            started.append(entry.name)
        time.sleep(0.05 if entry.name != names[0] else 0.2)  # the first runs long: the others pass it
        with lock:
            active[0] -= 1
            finished.append(entry.name)
        if fail is not None and entry.name == names[fail]:
            raise notebooks.NotebookRunError(f"{entry.name} broke")
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        return Path(out_dir)

    monkeypatch.setattr(notebooks, "run_notebook", fake_run)
    if fail is None:
        outs = notebooks.reproduce("smoke", runs_dir=tmp_path, copy_figures=False, jobs=2)
        assert [o.name for o in outs] == names and peak[0] == 2
        assert finished.index(names[0]) > finished.index(names[1])  # side by side, not one after another
    else:
        with pytest.raises(notebooks.NotebookRunError, match=f"{names[fail]} broke"):
            notebooks.reproduce("smoke", runs_dir=tmp_path, copy_figures=False, jobs=2)
        assert sorted(started) == sorted(finished) and len(started) < len(names)
    with pytest.raises(ValueError, match="jobs"):
        notebooks.reproduce("smoke", runs_dir=tmp_path, copy_figures=False, jobs=0)


def test_default_jobs_two_only_for_one_thread_kernels(monkeypatch):
    import os

    from deidlib.notebooks import _default_jobs, _usable_cores

    assert 1 <= _usable_cores() <= (os.cpu_count() or 1)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert _default_jobs("cpu", cores=2) == 2 and _default_jobs("smoke", cores=16) == 2
    assert _default_jobs("cpu", cores=1) == 1
    assert _default_jobs("cpu", threads=1, cores=4) == 2
    assert _default_jobs("cpu", threads=2, cores=4) == 1  # multi-threaded kernels already use the cores
    assert _default_jobs("paper", cores=4) == 1 and _default_jobs("cpu", device="cuda", cores=4) == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "4")  # the environment wins over threads=1: 4-thread kernels
    assert _default_jobs("cpu", cores=4) == 1 and _default_jobs("cpu", threads=1, cores=4) == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # ... and over threads=4: one-thread kernels
    assert _default_jobs("cpu", threads=4, cores=4) == 2


def test_kernel_threads_one_rule(monkeypatch):
    from deidlib.notebooks import kernel_threads

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert kernel_threads("cpu") == 1 and kernel_threads("smoke") == 1
    assert kernel_threads("paper") is None and kernel_threads("cpu", device="cuda") is None
    assert kernel_threads("cpu", threads=3) == 3 and kernel_threads("paper", threads=2) == 2
    monkeypatch.setenv("OMP_NUM_THREADS", "6")
    assert kernel_threads("cpu") == 6 and kernel_threads("cpu", threads=1) == 6
    monkeypatch.setenv("OMP_NUM_THREADS", "")  # empty: as unset
    assert kernel_threads("cpu") == 1


@pytest.mark.parametrize("cores, expected", [(1, 1), (2, 2), (8, 2)])
def test_reproduce_without_jobs_runs_default_jobs_at_once(tmp_path, monkeypatch, cores, expected):
    """``reproduce`` with no ``jobs`` runs as many notebooks at once as ``default_jobs`` says."""
    import threading
    import time
    from pathlib import Path

    from deidlib import notebooks

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(notebooks, "_usable_cores", lambda: cores)
    lock, active, peak = threading.Lock(), [0], [0]

    def fake_run(entry, *, out_dir, **kw):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.05)
        with lock:
            active[0] -= 1
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        return Path(out_dir)

    monkeypatch.setattr(notebooks, "run_notebook", fake_run)
    outs = notebooks.reproduce("smoke", runs_dir=tmp_path, copy_figures=False)
    assert [o.name for o in outs] == [e.name for e in ENTRIES] and peak[0] == expected


def test_kernels_show_figures_inline_whatever_the_callers_backend(monkeypatch):
    """A caller's MPLBACKEND (Agg in this suite) must not reach the kernels, or the executed
    notebooks (and their documentation pages) would hold no figure; nested and concurrent runs
    share the setting and the caller's value comes back after the last one."""
    import os

    from deidlib.notebooks import _INLINE_BACKEND, _inline_figures

    monkeypatch.setenv("MPLBACKEND", "Agg")
    with _inline_figures():
        assert os.environ["MPLBACKEND"] == _INLINE_BACKEND
        with _inline_figures():
            assert os.environ["MPLBACKEND"] == _INLINE_BACKEND
        assert os.environ["MPLBACKEND"] == _INLINE_BACKEND
    assert os.environ["MPLBACKEND"] == "Agg"
    monkeypatch.delenv("MPLBACKEND")
    with _inline_figures():
        assert os.environ["MPLBACKEND"] == _INLINE_BACKEND
    assert "MPLBACKEND" not in os.environ


def test_kernels_talk_over_local_sockets_show_full_tables_and_print_no_warnings(tmp_path, capfd):
    import os

    import nbformat
    import papermill as pm

    from deidlib.notebooks import _kernel_arguments, _kernel_manager_class

    code = ("import pandas as pd\nfrom tqdm.auto import tqdm\nfor _ in tqdm(range(2)):\n    pass\n"
            "pd.DataFrame({'claim': ['x' * 120], **{f'c{i}': [i] for i in range(30)}})")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, tmp_path / "in.ipynb")
    cls = _kernel_manager_class()
    out = pm.execute_notebook(str(tmp_path / "in.ipynb"), str(tmp_path / "out.ipynb"), kernel_name="python3",
                              progress_bar=False, kernel_manager_class=cls, extra_arguments=_kernel_arguments(),
                              cwd=str(tmp_path))
    outputs = out.cells[0].outputs
    table = next(o for o in outputs if o.output_type == "execute_result").data["text/html"]
    assert "x" * 120 in table and "..." not in table  # the cell in full, not cut at 50 characters
    assert "<th>c14</th>" in table  # and every column: the middle ones of a wide table too
    streams = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "100%" in streams and "Warning" not in streams  # tqdm's text bar, without the ipywidgets warning
    if os.name == "posix":
        assert cls().transport == "ipc"
        assert "without encryption" not in capfd.readouterr().err


def test_kernels_started_at_once_each_get_their_own_sockets(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    import nbformat
    import papermill as pm

    from deidlib.notebooks import _kernel_arguments, _kernel_manager_class

    cls = _kernel_manager_class()
    assert cls().ip != cls().ip

    def run(i: int) -> str:
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"import time\nfor k in range(5):\n    "
                                                                         f"time.sleep(0.2)\nprint({i} * 11)")])
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nbformat.write(nb, tmp_path / f"in{i}.ipynb")
        out = pm.execute_notebook(str(tmp_path / f"in{i}.ipynb"), str(tmp_path / f"out{i}.ipynb"),
                                  kernel_name="python3", progress_bar=False, kernel_manager_class=cls,
                                  extra_arguments=_kernel_arguments(), cwd=str(tmp_path))
        return out.cells[0].outputs[0]["text"]

    with ThreadPoolExecutor(max_workers=2) as pool:
        assert list(pool.map(run, (1, 2))) == ["11\n", "22\n"]


def test_reproduce_keeps_the_executed_cpu_notebook_in_figures_with_its_images_as_files(tmp_path, monkeypatch):
    import base64
    import shutil
    from pathlib import Path

    import nbformat

    from deidlib import notebooks

    root = tmp_path / "checkout"
    (root / "notebooks").mkdir(parents=True)
    shutil.copy(notebooks_dir() / "manifest.toml", root / "notebooks" / "manifest.toml")
    monkeypatch.setattr(notebooks, "repo_root", lambda: root)
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
    entry = ENTRIES[-1]

    def fake_run(e, *, out_dir, **kw):
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        nb = nbformat.v4.new_notebook()
        cell = nbformat.v4.new_code_cell(f"out_dir = '{out}'")
        cell.outputs = [nbformat.v4.new_output("display_data", data={"image/png": base64.b64encode(png).decode(),
                                                                     "text/plain": "<Figure>"}),
                        nbformat.v4.new_output("stream", name="stdout", text=f"wrote {out}/t.csv\n")]
        nb.cells.append(cell)
        nbformat.write(nb, out / f"{e.name}.ipynb")
        for f in e.figures:
            (out / f"{f}.png").write_bytes(png)
        return out

    monkeypatch.setattr(notebooks, "run_notebook", fake_run)
    notebooks.reproduce("cpu", only=[entry.study], jobs=1)
    kept = notebooks._stored_notebook(entry.name, root / "figures")
    text = kept.read_text(encoding="utf-8")
    assert "image/png" not in text and str(root) not in text and f"wrote runs/cpu/{entry.name}/t.csv" in text
    assert [p.read_bytes() for p in notebooks.stored_images(kept)] == [png]
    assert all((kept.parent / f"{f}.png").is_file() for f in entry.figures)
    notebooks.reproduce("smoke", only=[entry.study], jobs=1)  # smoke runs leave figures/ alone
    assert kept.read_text(encoding="utf-8") == text


def _provisioner_entry_points(tmp_path):
    """A folder for PYTHONPATH that registers pyproject's kernel provisioner entry points when the
    installed metadata of this (editable) checkout predates them; None when they are registered."""
    import sys
    from importlib.metadata import entry_points

    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    root = notebooks_dir().parent
    group = "jupyter_client.kernel_provisioners"
    declared = tomllib.loads((root / "pyproject.toml").read_text())["project"]["entry-points"][group]
    if all(entry_points(group=group, name=n) for n in declared):
        return None
    info = tmp_path / "entry_points" / "deidlib_checkout-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: deidlib-checkout\nVersion: 0\n")
    (info / "entry_points.txt").write_text(f"[{group}]\n" + "".join(f"{n} = {v}\n" for n, v in declared.items()))
    return info.parent


def _papermill_directly(tmp_path, jupyter_path, name: str):
    """``papermill in.ipynb out.ipynb`` in a fresh process on a one-cell notebook of kernel
    ``python3``, the kernel specs looked up in ``jupyter_path`` first: (everything it printed,
    the executed notebook)."""
    import subprocess
    import sys

    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(6 * 7)")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, tmp_path / f"{name}.ipynb")
    extra = _provisioner_entry_points(tmp_path / name)
    root = str(notebooks_dir().parent)
    env = {**os.environ, "JUPYTER_PATH": str(jupyter_path),
           "PYTHONPATH": os.pathsep.join([root] + ([str(extra)] if extra else []))}
    run = subprocess.run([sys.executable, "-m", "papermill", f"{name}.ipynb", f"{name}.out.ipynb"], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout + run.stderr, nbformat.read(tmp_path / f"{name}.out.ipynb", as_version=4)


@pytest.mark.skipif(os.name != "posix", reason="IPC sockets are files on POSIX systems only")
def test_papermill_run_directly_on_the_installed_kernel_spec_prints_no_tcp_warning(tmp_path):
    """The kernel spec ``install_kernel_spec`` writes (what ``make`` installs into the venv) names
    the local-socket provisioner, so a plain ``papermill`` call, with no deidlib code in the caller,
    starts its kernel over IPC: ipykernel's "running over TCP without encryption" warning, which
    the same call on ipykernel's own spec prints (so the check would see it), is absent."""
    import json

    from ipykernel.kernelspec import install

    from deidlib.notebooks import PROVISIONER_NAME, install_kernel_spec

    ours = install_kernel_spec(tmp_path / "ours")
    spec = json.loads((ours / "kernel.json").read_text())
    assert spec["metadata"]["kernel_provisioner"]["provisioner_name"] == PROVISIONER_NAME
    assert ours == tmp_path / "ours" / "share" / "jupyter" / "kernels" / "python3"
    printed, nb = _papermill_directly(tmp_path, ours.parents[1], "ours")
    assert nb.cells[0].outputs[0]["text"] == "42\n"
    assert "without encryption" not in printed and "[IPKernelApp] WARNING" not in printed, printed

    plain = Path(install(kernel_name="python3", prefix=str(tmp_path / "plain")))
    printed, nb = _papermill_directly(tmp_path, plain.parents[1], "plain")
    assert nb.cells[0].outputs[0]["text"] == "42\n"
    assert "running over TCP without encryption" in printed


def test_make_installs_the_kernel_spec_of_install_kernel_spec():
    recipe = (notebooks_dir().parent / "Makefile").read_text().split("$(VENV)/.installed:", 1)[1].split("\n\n", 1)[0]
    assert "install_kernel_spec()" in recipe and "ipykernel install" not in recipe
