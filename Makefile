# deidlib: the two set-up commands are `make reproduce` (main job) and `make test`.
# Both create ./.venv (python3 -m venv) and install the package if needed: torch first, at the one pin
# of constraints.txt, then the package, then the venv's "python3" Jupyter kernel spec (its kernels
# talk over local IPC sockets, also when papermill or JupyterLab start them).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PROFILE ?= cpu
ONLY   ?=
JOBS   ?=
PYTEST_ARGS ?= -n 2

.PHONY: install reproduce smoke test test-slow test-all test-browser figures lint docs docs-check clean

$(VENV)/.installed: pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt torch
	$(PY) -m pip install --quiet -c constraints.txt -e ".[dev]"
	$(PY) -c "from deidlib.notebooks import install_kernel_spec; install_kernel_spec()"
	touch $@

install: $(VENV)/.installed

## main job: execute every notebook with papermill on the synthetic corpus, write figures/
reproduce: install
	$(PY) -m deidlib reproduce --profile $(PROFILE) $(if $(JOBS),--jobs $(JOBS),) $(if $(ONLY),--only $(ONLY),)

smoke: install
	$(PY) -m deidlib reproduce --profile smoke --no-copy-figures

## the test suite (fast unit tests + notebooks under the smoke profile + real-data tests when present)
test: install
	$(PY) -m pytest $(PYTEST_ARGS)

test-slow: install
	$(PY) -m pytest $(PYTEST_ARGS) -m slow

test-all: install
	$(PY) -m pytest $(PYTEST_ARGS) -m "slow or not slow"

## real-browser checks (headless Chromium: the built docs site, JupyterLab running notebook 00 under smoke);
## needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver); the site's smoke
## pages come from runs/smoke/ when `make smoke` has filled it, else the notebooks are executed first
test-browser: install
	$(PY) -m pytest -p no:xdist -m browser tests/docs

## documentation site (Sphinx + MyST-NB + furo) into docs/_build/html, offline, executing nothing when the
## pages exist; each notebook page is the executed notebook of runs/$(DOCS_PROFILE)/ (a local run), else the one
## `make reproduce` keeps in figures/<name>/, else the smoke profile's (executed first when runs/smoke/ lacks it;
## such a page carries a smoke banner)
DOCS_PROFILE ?= $(PROFILE)
DOCS_OUT ?= docs/_build/html

docs: install
	$(PY) docs/sitetools.py api
	$(PY) docs/sitetools.py stage --profile $(DOCS_PROFILE)
	$(PY) -m sphinx -b html -q docs $(DOCS_OUT)
	@echo "docs: open $(DOCS_OUT)/index.html"

## the site with warnings as errors, then its internal links and notebook figures checked
docs-check: install
	$(PY) docs/sitetools.py api
	$(PY) docs/sitetools.py stage --profile $(DOCS_PROFILE)
	$(PY) -m sphinx -b html -q -W --keep-going docs $(DOCS_OUT)
	$(PY) docs/sitetools.py check $(DOCS_OUT)

lint: install
	$(PY) -m ruff check deidlib tests benchmarks scripts
	$(PY) -m mypy deidlib

clean:
	rm -rf runs .pytest_cache .ruff_cache docs/_build docs/notebooks docs/api
