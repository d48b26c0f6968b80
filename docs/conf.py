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

extensions = ["myst_nb"]
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "**/.ipynb_checkpoints", "notebooks/PROFILE"]

# notebooks: render the stored outputs of the staged executed notebooks, never execute
nb_execution_mode = "off"
nb_merge_streams = True
nb_output_stderr = "show"

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

html_theme = "furo"
html_title = f"deidlib {release}"
html_static_path = ["_static"]
html_css_files = ["deidlib.css"]
html_favicon = "_static/favicon.svg"
html_theme_options = {"sidebar_hide_name": False}
html_last_updated_fmt = None
