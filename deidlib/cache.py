"""The one folder where deidlib keeps what it can rebuild: trained word vectors, unzipped
encoders, the default de-identification model.

``$DEIDLIB_CACHE_DIR`` when set, else the platform's user cache folder for ``deidlib``
(:func:`platformdirs.user_cache_dir`: ``$XDG_CACHE_HOME/deidlib`` or ``~/.cache/deidlib``
on Linux, ``~/Library/Caches/deidlib`` on macOS, ``%LOCALAPPDATA%\\deidlib\\Cache`` on
Windows). Everything under it may be deleted; it is rebuilt on first use.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_dir"]

#: the environment variable that overrides the folder
_ENV_VAR = "DEIDLIB_CACHE_DIR"


def cache_dir(*parts: str) -> Path:
    """The cache folder (``parts`` appended), not created: callers create what they write."""
    env = os.environ.get(_ENV_VAR)
    if env:
        root = Path(env).expanduser()
    else:
        import platformdirs

        root = Path(platformdirs.user_cache_dir("deidlib", appauthor=False))
    return root.joinpath(*parts)
