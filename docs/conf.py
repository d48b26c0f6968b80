"""Sphinx configuration of the deidlib documentation site (``make docs``).

Sphinx + MyST-NB + furo. Notebook pages are the executed notebooks that ``make docs``
stages into ``docs/notebooks/`` (git-ignored; see docs/sitetools.py): MyST-NB renders their
stored outputs and never executes a notebook here.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_version = re.search(r'__version__ = "([^"]+)"', (ROOT / "deidlib" / "__init__.py").read_text(encoding="utf-8"))

project = "deidlib"
author = "deidlib contributors"
copyright = "deidlib contributors"
release = version = _version.group(1) if _version else ""

extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinx.ext.autosummary", "sphinx.ext.napoleon"]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}  # .rst first: autosummary writes its pages in the first
exclude_patterns = ["_build", "**/.ipynb_checkpoints", "notebooks/PROFILE"]

# notebooks: render the stored outputs of the staged executed notebooks, never execute
nb_execution_mode = "off"
nb_merge_streams = True
nb_output_stderr = "show"

myst_enable_extensions = ["colon_fence", "deflist", "substitution"]
myst_heading_anchors = 3

# API reference (api.md): one page per listed name, generated at build time into docs/api/
autosummary_generate = True
autodoc_typehints = "none"
autodoc_member_order = "bysource"
autodoc_default_options = {"members": False}
napoleon_numpy_docstring = False


def _repository() -> str | None:
    """CITATION.cff's ``repository-code`` (a top-level key), the one place the repository's address is kept."""
    m = re.search(r"(?m)^repository-code:\s*['\"]?([^'\"\s]+)", (ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    return m.group(1) if m else None


REPOSITORY = _repository()
myst_substitutions = {
    "repository": f"The source: <{REPOSITORY}>." if REPOSITORY else
    "The source repository's address is kept in `CITATION.cff` (`repository-code`), which does not give one yet.",
}

html_theme = "furo"
html_title = f"deidlib {release}"
html_static_path = ["_static"]
html_css_files = ["deidlib.css"]
html_favicon = "_static/favicon.svg"
html_theme_options = {"sidebar_hide_name": False}
if REPOSITORY:
    html_theme_options["source_repository"] = REPOSITORY
html_last_updated_fmt = None


def _drop_builtin_docstrings(app, what, name, obj, options, lines):
    """A module constant without a ``#:`` comment (a dict, a tuple, ...) would show its type's
    docstring (``dict(**kwargs) -> new dictionary ...``): show nothing instead."""
    own = getattr(type(obj), "__doc__", None)
    if what not in ("data", "attribute") or not lines or not isinstance(own, str) or not own.strip():
        return
    if lines[0].strip() == own.strip().splitlines()[0].strip():
        lines[:] = []


def setup(app):
    app.connect("autodoc-process-docstring", _drop_builtin_docstrings)
