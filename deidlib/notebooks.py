"""Execute the study notebooks with papermill (the main job, ``deidlib reproduce``).

The manifest ``notebooks/manifest.toml`` lists the notebooks in order with the figures
each must write and the tables (CSV: the papers' table analogs). A run goes to the
git-ignored ``runs/<profile>/<name>/`` (executed notebook, figures, tables, result JSON);
figures and tables of cpu/paper runs on the synthetic corpus are then copied into
``figures/<name>/`` for the README and the docs, together with the executed notebook itself
(:func:`_store_executed`: ``figures/<name>/<name>.ipynb`` with its outputs, each image output
kept as a PNG file under ``figures/<name>/outputs/`` instead of an inline blob, and this
checkout's path removed), which ``make docs`` renders without executing anything
(:func:`load_stored` puts the images back inline). Runs on real corpora never copy anything
into the repository.
"""

from __future__ import annotations

import atexit
import base64
import functools
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser as the tomli package
    import tomli as tomllib

from jupyter_client.provisioning import LocalProvisioner

from .threads import env_threads, thread_env

__all__ = ["load_manifest", "run_notebook", "reproduce", "NotebookRunError", "load_stored", "stored_images",
           "install_kernel_spec"]

#: the backend the kernels run with: every figure a notebook shows is stored in the executed
#: notebook (and so on its documentation page), whatever ``MPLBACKEND`` the caller has set
_INLINE_BACKEND = "module://matplotlib_inline.backend_inline"
_env_lock = threading.Lock()
_env_users = 0
_env_saved: str | None = None


@contextmanager
def _inline_figures() -> Iterator[None]:
    """Set ``MPLBACKEND`` to :data:`_INLINE_BACKEND` for the kernels started inside (papermill
    starts them with this process's environment), and put the caller's value back when the
    last of the concurrent runs ends. A caller's ``MPLBACKEND=Agg`` (a test suite, a headless
    batch job) would otherwise reach the kernels, which would then save their figure files but
    show no figure in the executed notebook."""
    global _env_users, _env_saved
    with _env_lock:
        if _env_users == 0:
            _env_saved = os.environ.get("MPLBACKEND")
            os.environ["MPLBACKEND"] = _INLINE_BACKEND
        _env_users += 1
    try:
        yield
    finally:
        with _env_lock:
            _env_users -= 1
            if _env_users == 0:
                if _env_saved is None:
                    os.environ.pop("MPLBACKEND", None)
                else:
                    os.environ["MPLBACKEND"] = _env_saved


def _kernel_manager_class():
    """The kernel manager papermill starts the notebook kernels with: on POSIX one that talks to
    its kernel over local IPC sockets (files in a private temporary folder of this process, each
    kernel its own) instead of unencrypted TCP on localhost, so the kernel has nothing to warn
    about; on other systems jupyter_client's default."""
    from jupyter_client.manager import AsyncKernelManager

    if os.name != "posix":
        return AsyncKernelManager

    class LocalSocketKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs):
            kwargs.setdefault("transport", "ipc")
            if kwargs["transport"] == "ipc":  # sockets of their own: kernels started at once must not share them
                kwargs.setdefault("ip", _socket_address())
            super().__init__(**kwargs)

    return LocalSocketKernelManager


def _socket_address() -> str:
    """A fresh IPC address (the sockets are files ``<address>-<port>``) in :func:`_socket_dir`."""
    return str(_socket_dir() / f"kernel-{uuid.uuid4().hex}")


#: the kernel spec name the notebooks ask for (their ``kernelspec`` metadata) and
#: :func:`install_kernel_spec` writes
KERNEL_NAME = "python3"
#: the entry-point name (group ``jupyter_client.kernel_provisioners`` in ``pyproject.toml``) of
#: :class:`LocalSocketProvisioner`, named by the kernel spec :func:`install_kernel_spec` writes
PROVISIONER_NAME = "deidlib-local-sockets"


class LocalSocketProvisioner(LocalProvisioner):
    """jupyter_client's local provisioner with the kernel's sockets moved from TCP on localhost to
    local IPC files (POSIX), each kernel its own: what :func:`_kernel_manager_class` does for
    ``deidlib reproduce``, done by the kernel spec itself, so that papermill or JupyterLab run
    on this environment's ``python3`` kernel without plaintext TCP (and without ipykernel's
    warning about it). A manager already set to IPC is left as it is; elsewhere than POSIX
    nothing changes."""

    async def pre_launch(self, **kwargs: Any) -> dict[str, Any]:
        km = self.parent
        if km is not None and os.name == "posix" and km.transport == "tcp":
            km.cache_ports = False  # the port cache probes TCP ports; IPC ports are file names
            km.transport = "ipc"
            km.ip = _socket_address()
        return await super().pre_launch(**kwargs)


def install_kernel_spec(prefix: str | Path | None = None) -> Path:
    """Install the Jupyter kernel spec ``python3`` of this environment into ``prefix`` (default
    ``sys.prefix``, as ``ipykernel install --sys-prefix``): ipykernel's spec with
    ``LocalSocketProvisioner`` as its provisioner. ``make`` runs it; return the spec's folder."""
    from ipykernel.kernelspec import install

    folder = Path(install(kernel_name=KERNEL_NAME, prefix=str(prefix if prefix is not None else sys.prefix)))
    spec_file = folder / "kernel.json"
    spec = json.loads(spec_file.read_text(encoding="utf-8"))
    spec.setdefault("metadata", {})["kernel_provisioner"] = {"provisioner_name": PROVISIONER_NAME, "config": {}}
    spec_file.write_text(json.dumps(spec, indent=1) + "\n", encoding="utf-8")
    return folder


@functools.lru_cache(maxsize=1)
def _socket_dir() -> Path:
    """A private folder (mode 700) of this process for its kernels' IPC sockets, removed at exit."""
    d = Path(tempfile.mkdtemp(prefix="deidlib-kernels-"))
    atexit.register(shutil.rmtree, d, True)
    return d


#: run by each notebook kernel ``deidlib reproduce`` starts, before the notebook's first cell: pandas
#: shows every table cell and column in full (its defaults cut text at 50 characters, the claims
#: tables' claims, and leave out the middle columns of a table wider than 20), and tqdm draws its
#: text bar without warning that ipywidgets (not a dependency) is missing
_KERNEL_EXEC_LINES = (
    "import warnings; warnings.filterwarnings('ignore', message='IProgress not found')",
    "import pandas; pandas.set_option('display.max_colwidth', None); pandas.set_option('display.max_columns', None)",
)


def _kernel_arguments() -> list[str]:
    """Command-line arguments of the notebook kernels: :data:`_KERNEL_EXEC_LINES` as ``exec_lines``."""
    lines = ", ".join(repr(line) for line in _KERNEL_EXEC_LINES)
    return [f"--IPKernelApp.exec_lines=[{lines}]"]


class NotebookRunError(RuntimeError):
    """A notebook failed, or did not write a figure the manifest promises."""


@dataclass(frozen=True)
class NotebookEntry:
    name: str
    study: str
    figures: tuple[str, ...] = ()
    parameters: dict[str, Any] = field(default_factory=dict)
    tables: tuple[str, ...] = ()
    #: parameters that narrow what the notebook writes (02: ``tables``); given, the figures and
    #: tables the manifest promises are not required, and nothing is copied into ``figures/``
    partial_parameters: tuple[str, ...] = ()

    def is_partial(self, parameters: dict[str, Any] | None) -> bool:
        """Whether ``parameters`` narrow this notebook's outputs (a non-None partial parameter)."""
        return any((parameters or {}).get(k) is not None for k in self.partial_parameters)


def repo_root() -> Path:
    """The checkout this package runs from (where ``notebooks/`` lives)."""
    here = Path(__file__).resolve().parent.parent
    if (here / "notebooks").is_dir():
        return here
    cwd = Path.cwd().resolve()
    for p in (cwd, *cwd.parents):
        if (p / "notebooks" / "manifest.toml").is_file():
            return p
    raise FileNotFoundError("cannot find the deidlib checkout (a folder with notebooks/manifest.toml)")


def notebooks_dir() -> Path:
    return repo_root() / "notebooks"


def load_manifest(path: str | Path | None = None) -> list[NotebookEntry]:
    path = Path(path) if path else notebooks_dir() / "manifest.toml"
    with open(path, "rb") as f:
        data = tomllib.load(f)
    entries = []
    for i, nb in enumerate(data.get("notebook", [])):
        try:
            entries.append(
                NotebookEntry(
                    name=nb["name"],
                    study=nb["study"],
                    figures=tuple(nb.get("figures", ())),
                    parameters=dict(nb.get("parameters", {})),
                    tables=tuple(nb.get("tables", ())),
                    partial_parameters=tuple(nb.get("partial_parameters", ())),
                )
            )
        except KeyError as e:
            raise ValueError(f"{path}: notebook entry {i} lacks {e}") from None
    return entries


def notebook_parameters(entry: NotebookEntry) -> set[str]:
    """Names declared in the notebook's ``parameters`` cell (read by papermill)."""
    import papermill as pm

    return set(pm.inspect_notebook(str(notebooks_dir() / f"{entry.name}.ipynb")))


def run_notebook(
    entry: NotebookEntry,
    *,
    profile: str = "cpu",
    out_dir: str | Path,
    corpus: str = "synthetic",
    data_dir: str | None = None,
    seed: int = 0,
    device: str = "cpu",
    progress: bool = False,
    extra_parameters: dict[str, Any] | None = None,
) -> Path:
    """Execute one notebook; return the folder with its outputs. Raises NotebookRunError."""
    import papermill as pm

    nb_dir = notebooks_dir()
    src = nb_dir / f"{entry.name}.ipynb"
    if not src.is_file():
        raise NotebookRunError(f"notebook {src} does not exist (listed in the manifest)")
    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    final = out / f"{entry.name}.ipynb"
    running = out / f"{entry.name}.running.ipynb"
    failed = out / f"{entry.name}.failed.ipynb"
    for stale in (final, running, failed):  # a complete notebook here means: this run succeeded
        stale.unlink(missing_ok=True)
    params = {
        "profile": profile,
        "corpus": corpus,
        "data_dir": data_dir,
        "seed": seed,
        "device": device,
        "out_dir": str(out),
        **entry.parameters,
        **(extra_parameters or {}),
    }
    try:
        with _inline_figures():
            pm.execute_notebook(
                str(src),
                str(running),
                parameters=params,
                cwd=str(nb_dir),
                kernel_name=KERNEL_NAME,
                progress_bar=progress,
                request_save_on_cell_execute=False,
                kernel_manager_class=_kernel_manager_class(),
                extra_arguments=_kernel_arguments(),
            )
    except Exception as e:
        if running.exists():
            os.replace(running, failed)
        raise NotebookRunError(_failure_message(entry.name, profile, e, failed if failed.exists() else None)) from None
    os.replace(running, final)
    if entry.is_partial(extra_parameters):
        return out
    missing = [f for f in entry.figures if not (out / f"{f}.png").is_file()]
    if missing:
        raise NotebookRunError(f"{entry.name} did not write figure(s) {', '.join(missing)} into {out}")
    missing = [t for t in entry.tables if not (out / f"{t}.csv").is_file()]
    if missing:
        raise NotebookRunError(f"{entry.name} did not write table(s) {', '.join(missing)} into {out}")
    return out


#: folder (inside ``figures/<name>/``) of the image outputs of a stored executed notebook
_STORED_IMAGES = "outputs"
_IMAGE_KEY = "deidlib_image"


def _stored_notebook(name: str, figures_dir: str | Path | None = None) -> Path:
    """Where :func:`_store_executed` keeps notebook ``name``: ``figures/<name>/<name>.ipynb``."""
    base = Path(figures_dir) if figures_dir is not None else repo_root() / "figures"
    return base / name / f"{name}.ipynb"


def _store_executed(executed: str | Path, dest: str | Path, root: str | Path | None = None) -> Path:
    """Keep the executed notebook ``executed`` in folder ``dest`` for the documentation site:
    every ``image/png`` output is written to ``dest/outputs/<name>_<cell>_<k>.png`` (names fixed
    by position, so a re-run rewrites the same files) and replaced by a reference in the output's
    metadata; every occurrence of the checkout's path ``root`` (default :func:`repo_root`) becomes
    relative. Text, tables and the papermill record stay as executed. Returns the stored path."""
    import nbformat

    executed, dest = Path(executed), Path(dest)
    name = executed.stem
    root_text = str(Path(root) if root is not None else repo_root())
    text = executed.read_text(encoding="utf-8")
    text = text.replace(json.dumps(root_text + "/")[1:-1], "").replace(json.dumps(root_text)[1:-1], ".")
    nb = nbformat.reads(text, as_version=4)
    images = dest / _STORED_IMAGES
    if images.is_dir():
        shutil.rmtree(images)
    for i, cell in enumerate(nb.cells):
        for k, out in enumerate(cell.get("outputs", [])):
            data = out.get("data", {})
            if "image/png" not in data:
                continue
            rel = f"{_STORED_IMAGES}/{name}_{i:03d}_{k}.png"
            images.mkdir(parents=True, exist_ok=True)
            (dest / rel).write_bytes(base64.b64decode(data.pop("image/png")))
            out.setdefault("metadata", {})[_IMAGE_KEY] = rel
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


def load_stored(path: str | Path):
    """The notebook :func:`_store_executed` kept at ``path``, its images inline again (an
    ``nbformat`` node, as the executed notebook had them). A missing image file raises
    ``FileNotFoundError``."""
    import nbformat

    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            rel = out.get("metadata", {}).pop(_IMAGE_KEY, None)
            if rel is not None:
                out["data"]["image/png"] = base64.b64encode((path.parent / rel).read_bytes()).decode("ascii")
    return nb


def stored_images(path: str | Path) -> list[Path]:
    """The image files a stored notebook refers to (to check that they are all there)."""
    import nbformat

    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    return [path.parent / o["metadata"][_IMAGE_KEY] for c in nb.cells for o in c.get("outputs", [])
            if _IMAGE_KEY in o.get("metadata", {})]


def _failure_message(name: str, profile: str, exc: BaseException, executed: Path | None) -> str:
    """A few lines on a failed notebook: which one, which cell, which exception, and where
    the executed notebook (with the full traceback) lies. ``exc`` is papermill's
    ``PapermillExecutionError`` (cell and exception known) or any other error (kernel
    start, missing parameter, ...)."""
    ename, evalue = getattr(exc, "ename", None), getattr(exc, "evalue", None)
    if ename is not None:
        count = getattr(exc, "exec_count", None)
        source = (getattr(exc, "source", "") or "").strip().splitlines()
        first = next((ln.strip() for ln in source if ln.strip() and not ln.lstrip().startswith("#")), "")
        lines = [f"notebook {name} (profile {profile}) failed in cell [{count}]: {ename}: {evalue}"]
        if first:
            lines.append(f"  cell starts: {first[:100]}")
    else:
        text = str(exc).strip().splitlines()
        lines = [f"notebook {name} (profile {profile}) failed: {type(exc).__name__}: {text[-1] if text else ''}"]
    if executed is not None:
        lines.append(f"  full traceback in the executed (incomplete) notebook {executed}")
    return "\n".join(lines)


def _usable_cores() -> int:
    """CPU cores this process may run on (its affinity set where the OS reports one, which
    respects container cpusets; else ``os.cpu_count()``)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def kernel_threads(profile: str, device: str = "cpu", threads: int | None = None) -> int | None:
    """The intra-op threads :func:`reproduce`'s notebook kernels run with: ``OMP_NUM_THREADS``
    when it is set in the environment (it wins, as documented there), else ``threads``, else
    1 for the smoke and cpu profiles on the CPU, else ``None`` (torch's default, one per
    core). The one rule behind both the kernels' environment and :func:`_default_jobs`."""
    env = env_threads()
    if env is not None:
        return env
    if threads is not None:
        return threads
    if device == "cpu" and profile in ("smoke", "cpu"):
        return 1
    return None


def _default_jobs(profile: str, device: str = "cpu", threads: int | None = None, cores: int | None = None) -> int:
    """How many notebooks :func:`reproduce` runs at once by default: ``min(2, cores)`` for the
    smoke and cpu profiles on the CPU when each kernel runs one thread
    (:func:`kernel_threads` is 1), else 1 (a multi-threaded or GPU kernel already uses the
    machine). Why 2 and not every core: measured on the 2-core machines this project targets
    (CHANGELOG.md, development log: the cpu profile's notebooks end to end in about half the time of one at
    a time, with the same tables); more jobs on larger machines are ``jobs=N``, not measured
    here. ``cores`` defaults to the cores this process may run on (its CPU affinity, else
    ``os.cpu_count()``)."""
    if device != "cpu" or profile not in ("smoke", "cpu") or kernel_threads(profile, device, threads) != 1:
        return 1
    return max(1, min(2, cores if cores is not None else _usable_cores()))


def reproduce(
    profile: str = "cpu",
    *,
    only: list[str] | None = None,
    corpus: str = "synthetic",
    data_dir: str | None = None,
    seed: int = 0,
    device: str = "cpu",
    copy_figures: bool = True,
    runs_dir: str | Path | None = None,
    threads: int | None = None,
    parameters: dict[str, Any] | None = None,
    jobs: int | None = None,
) -> list[Path]:
    """Run the manifest's notebooks in order and refresh ``figures/`` (synthetic corpus and
    cpu/paper profiles only: smoke figures and anything computed on real data stay in ``runs/``):
    each notebook's figures and tables, and the executed notebook itself (:func:`_store_executed`),
    the page ``make docs`` shows.

    ``jobs``: notebooks executed at once (each in its own kernel process, started in manifest
    order as slots free up; no notebook reads another's outputs). With one thread per kernel,
    ``jobs=2`` uses both cores of a 2-core machine; the numbers are the same as with ``jobs=1``
    (every kernel is seeded and single-threaded). ``None`` (the default): :func:`_default_jobs`,
    i.e. 2 on a machine with at least 2 cores when every kernel gets one thread (smoke/cpu
    profile on the CPU without ``threads``), else 1. Outputs are returned in manifest order; after a
    failure no further notebook is started, the running ones finish, and the first error is raised.

    ``threads``: intra-op threads of the notebook kernels (``OMP_NUM_THREADS``/``MKL_NUM_THREADS``).
    ``None`` means 1 for the smoke and cpu profiles on the CPU and the library default
    otherwise; a value already set in the environment wins. These models are small: thread
    synchronisation costs more than it saves (CHANGELOG.md, "Measurements behind design choices").

    ``parameters``: extra papermill parameters given to every selected notebook (e.g.
    ``{"n_seeds": 3}``); a name that a notebook does not declare raises ``ValueError``
    before anything runs.
    """
    from tqdm.auto import tqdm

    if jobs is not None and (not isinstance(jobs, int) or jobs < 1):
        raise ValueError(f"jobs must be an integer >= 1, got {jobs!r}")
    if threads is not None and (not isinstance(threads, int) or threads < 1):
        raise ValueError(f"threads must be an integer >= 1, got {threads!r}")
    if jobs is None:
        jobs = _default_jobs(profile, device, threads)
    if data_dir is not None:  # the kernels run in notebooks/: make the user's relative path absolute
        data_dir = str(Path(data_dir).expanduser().resolve())
    threads = kernel_threads(profile, device, threads)
    if threads is not None:
        for var, value in thread_env(threads).items():
            os.environ.setdefault(var, value)

    entries = load_manifest()
    if only:
        known = {e.study for e in entries} | {e.name for e in entries}
        unknown = sorted(set(only) - known)
        if unknown:
            raise ValueError(f"unknown study {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        entries = [e for e in entries if e.study in only or e.name in only]
    if parameters:
        reserved = {"profile", "corpus", "data_dir", "seed", "device", "out_dir"} & set(parameters)
        if reserved:
            raise ValueError(f"set {', '.join(sorted(reserved))} with its own option, not as a parameter")
        for e in entries:
            declared = notebook_parameters(e)
            unknown = sorted(set(parameters) - declared)
            if unknown:
                raise ValueError(f"{e.name} has no parameter {', '.join(unknown)}; it declares {', '.join(sorted(declared))}")
    root = repo_root()
    tag = profile if corpus == "synthetic" else f"{profile}-{corpus}"
    runs = Path(runs_dir) if runs_dir else root / "runs" / tag
    bar = tqdm(total=len(entries), desc=f"reproduce [{tag}]", unit="notebook", file=sys.stderr)

    def one(e: NotebookEntry) -> tuple[Path, float]:
        t0 = time.perf_counter()
        out = run_notebook(
            e, profile=profile, out_dir=runs / e.name, corpus=corpus, data_dir=data_dir, seed=seed, device=device,
            extra_parameters=parameters,
        )
        return out, time.perf_counter() - t0

    def finish(e: NotebookEntry, out: Path, seconds: float) -> None:
        bar.write(f"  {e.name}: {seconds:.0f}s -> {out}")
        bar.update(1)
        if copy_figures and corpus == "synthetic" and profile != "smoke" and not e.is_partial(parameters):
            dest = root / "figures" / e.name
            dest.mkdir(parents=True, exist_ok=True)
            files = [f"{f}{ext}" for f in e.figures for ext in (".png", ".pdf")] + [f"{t}.csv" for t in e.tables]
            for name in files:
                if (out / name).is_file():
                    shutil.copy2(out / name, dest / name)
            _store_executed(out / f"{e.name}.ipynb", dest, root)

    done: dict[str, Path] = {}
    try:
        if jobs == 1:
            for e in entries:
                bar.set_postfix_str(e.name)
                out, seconds = one(e)
                finish(e, out, seconds)
                done[e.name] = out
        else:
            from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

            pending, error = list(entries), None
            running: dict[Future[tuple[Path, float]], NotebookEntry] = {}
            with ThreadPoolExecutor(max_workers=jobs) as pool:
                while pending or running:
                    while pending and len(running) < jobs and error is None:
                        e = pending.pop(0)
                        running[pool.submit(one, e)] = e
                    bar.set_postfix_str(", ".join(e.name for e in running.values()))
                    if not running:
                        break
                    finished, _ = wait(running, return_when=FIRST_COMPLETED)
                    for f in finished:
                        e = running.pop(f)
                        try:
                            out, seconds = f.result()
                        except Exception as exc:  # keep the first; let the running notebooks finish
                            error = error or exc
                            continue
                        finish(e, out, seconds)
                        done[e.name] = out
            if error is not None:
                raise error
    finally:
        bar.close()
    return [done[e.name] for e in entries]
