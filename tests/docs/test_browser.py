"""The built site and a notebook in JupyterLab, driven by headless Chromium (marker ``browser``):
every page of the site (the quick start, the API reference and papers pages among them) loads
with its images, without SEVERE console errors and without a table cell cut short; a study
notebook runs to the end under the smoke profile in JupyterLab with no error output and a figure."""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from deidlib.notebooks import load_manifest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
CHROMEDRIVER = shutil.which("chromedriver")
try:
    import selenium  # noqa: F401

    HAVE_SELENIUM = True
except ImportError:
    HAVE_SELENIUM = False

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER), reason="no chromium and chromedriver on PATH "
                       "(Debian: apt-get install chromium chromium-driver)"),
    pytest.mark.skipif(not HAVE_SELENIUM, reason="selenium is not installed (the docs extra)"),
]


@pytest.fixture(scope="module")
def driver():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1280,1000", "--disable-extensions", "--no-first-run"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)
    d.set_page_load_timeout(120)
    yield d
    d.quit()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def served_site(built_site):
    """The built site over http on localhost (as a web server would serve it)."""
    html, _, _ = built_site
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield html, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _severe(driver) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


@pytest.mark.docs
@pytest.mark.notebook
def test_every_site_page_loads_with_its_images_and_no_console_errors(driver, served_site):
    from selenium.webdriver.support.ui import WebDriverWait

    html, base = served_site
    pages = sorted(p.relative_to(html).as_posix() for p in html.rglob("*.html"))
    images, problems = 0, []
    driver.get_log("browser")  # start from an empty log
    for rel in pages:
        driver.get(f"{base}/{rel}")
        WebDriverWait(driver, 60).until(lambda d: d.execute_script("return document.readyState") == "complete")
        # eager-load every image, then wait until each has finished (loaded or failed)
        driver.execute_script("for (const i of document.images) { i.loading = 'eager'; i.scrollIntoView(); }")
        WebDriverWait(driver, 60).until(lambda d: d.execute_script(
            "return Array.from(document.images).every(i => i.complete)"))
        imgs = driver.execute_script(
            "return Array.from(document.images).map(i => [i.getAttribute('src'), i.naturalWidth])")
        images += len(imgs)
        problems += [f"{rel}: image {src} did not load" for src, width in imgs if not width]
        if not driver.execute_script("return !!document.querySelector('article')"):
            problems.append(f"{rel}: no article (page did not render)")
        cut = driver.execute_script(  # a table cell pandas cut short: a claim's text, a row range
            "return Array.from(document.querySelectorAll('article td')).map(c => c.textContent.trim())"
            ".filter(t => t.endsWith('...'))")
        problems += [f"{rel}: truncated table cell {t!r}" for t in cut[:3]]
        problems += [f"{rel}: console: {m}" for m in _severe(driver)]
    print(f"\nsite: {len(pages)} pages, {images} images, {len(problems)} problem(s)")
    for page in ("quickstart.html", "api.html", "papers.html", "verdicts.html", "api/deidlib.training.fit_tagger.html"):
        assert page in pages, page
    assert images >= sum(len(e.figures) for e in load_manifest())  # the notebook pages' figures alone
    assert not problems, "\n".join(problems[:40])


def _kernel_states(url: str, token: str) -> list[str]:
    with urllib.request.urlopen(f"{url}/api/kernels?token={token}", timeout=10) as r:
        return [k["execution_state"] for k in json.loads(r.read())]


def _smoke_copy(src: Path, dest_dir: Path) -> Path:
    """A copy of notebook ``src`` whose parameters cell selects the smoke profile and a scratch out_dir."""
    import nbformat

    nb = nbformat.read(src, as_version=4)
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    out_dir = dest_dir / "out"
    cell.source = re.sub(r'(?m)^profile = "\w+"', 'profile = "smoke"', cell.source)
    cell.source = re.sub(r'(?m)^out_dir = .*$', f"out_dir = {str(out_dir)!r}", cell.source)
    assert 'profile = "smoke"' in cell.source and str(out_dir) in cell.source
    dest_dir.mkdir(parents=True, exist_ok=True)
    dest = dest_dir / src.name
    nbformat.write(nb, dest)
    return dest


@pytest.fixture
def jupyterlab(tmp_path):
    """JupyterLab on localhost (random token) serving a scratch folder: (url, token, folder)."""
    nb_dir = tmp_path / "notebooks"
    nb_dir.mkdir()
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               JUPYTER_CONFIG_DIR=str(tmp_path / "config"), JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
               JUPYTERLAB_SETTINGS_DIR=str(tmp_path / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "workspaces"))
    env.pop("MPLBACKEND", None)  # as a user's JupyterLab: the kernels pick the inline backend (the suite sets Agg)
    log = open(tmp_path / "jupyterlab.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}", "--ServerApp.ip=127.0.0.1",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={nb_dir}", "--ServerApp.port_retries=0",
         *(["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else [])],
        env=env, stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert proc.poll() is None, (tmp_path / "jupyterlab.log").read_text()[-2000:]
            assert time.monotonic() < deadline, "JupyterLab did not start in 120 s"
            time.sleep(1)
        yield url, token, nb_dir
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.mark.notebook
def test_corpus_notebook_runs_all_cells_in_jupyterlab_under_smoke(driver, jupyterlab):
    import nbformat
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    url, token, nb_dir = jupyterlab
    name = "00_corpus_overview.ipynb"
    path = _smoke_copy(ROOT / "notebooks" / name, nb_dir)
    n_code = sum(c.cell_type == "code" for c in nbformat.read(path, as_version=4).cells)
    driver.get(f"{url}/lab/tree/{name}?token={token}")
    wait = WebDriverWait(driver, 180)
    wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, ".jp-NotebookPanel .jp-Notebook .jp-CodeCell")))
    wait.until(lambda d: _kernel_states(url, token) == ["idle"])  # the notebook's kernel has started
    driver.find_element(By.CSS_SELECTOR, ".jp-NotebookPanel .jp-Notebook").click()
    t0 = time.monotonic()
    menu = next(m for m in driver.find_elements(By.CSS_SELECTOR, ".lm-MenuBar-item") if m.text.strip() == "Run")
    menu.click()
    wait.until(EC.element_to_be_clickable((By.CSS_SELECTOR, '.lm-Menu-item[data-command="runmenu:run-all"]'))).click()

    def done(d):
        prompts = d.execute_script(
            "return Array.from(document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt'))"
            ".map(p => p.textContent.trim())")
        return len(prompts) == n_code and all(re.fullmatch(r"\[\d+\]:", p) for p in prompts)

    WebDriverWait(driver, 900, poll_frequency=2).until(done)
    seconds = time.monotonic() - t0
    images = driver.execute_script(
        "return Array.from(document.querySelectorAll('.jp-Notebook .jp-OutputArea-output img'))"
        ".map(i => (i.scrollIntoView(), [i.complete, i.naturalWidth]))")
    # save, then read what JupyterLab wrote: error outputs are told apart from warnings there
    driver.find_element(By.CSS_SELECTOR, ".jp-NotebookPanel .jp-Notebook").click()
    next(m for m in driver.find_elements(By.CSS_SELECTOR, ".lm-MenuBar-item") if m.text.strip() == "File").click()
    wait.until(EC.element_to_be_clickable((By.CSS_SELECTOR, '.lm-Menu-item[data-command="docmanager:save"]'))).click()
    # (an autosave during the run may have written a partial notebook: wait for the complete one)
    WebDriverWait(driver, 60).until(lambda d: all(
        c.get("execution_count") for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"))
    saved = nbformat.read(path, as_version=4)
    code = [c for c in saved.cells if c.cell_type == "code"]
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    pngs = [o for c in code for o in c.outputs if "image/png" in o.get("data", {})]
    print(f"\njupyterlab: {name} ran {n_code} cells in {seconds:.0f} s under smoke; {len(images)} image(s) shown, "
          f"{len(errors)} error output(s); console SEVERE: {_severe(driver)}")
    assert not errors, f"error output: {errors[0].get('ename')}: {errors[0].get('evalue')}"
    assert all(c.execution_count for c in code)
    assert images and all(ok and width > 0 for ok, width in images), images
    assert pngs, "no figure in the saved notebook"
    assert (nb_dir / "out" / "corpus_overview.png").is_file()
