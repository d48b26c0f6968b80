"""Shared figure style and a deterministic ``savefig`` (PNG + PDF) for every notebook.

The style is a matplotlib style file shipped with the package (:data:`_STYLE`,
``deidlib/deidlib.mplstyle``) applied through a context, :func:`style`: the figure functions
of :mod:`deidlib.studies` are decorated with it and :func:`savefig` saves inside it. Global
``rcParams`` stay as the user set them, and nothing here chooses a backend (JupyterLab's
``%matplotlib widget`` keeps working; scripts and tests choose theirs, e.g. ``MPLBACKEND=Agg``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["style", "savefig", "COLORS"]

#: the matplotlib style file of every deidlib figure (``plt.style.use(STYLE)`` adopts it globally)
_STYLE = Path(__file__).with_name("deidlib.mplstyle")

#: fixed colours per method so that figures agree across studies
COLORS = {
    "A": "black",
    "B": "magenta",
    "C": "green",
    "D": "red",
    "centralized": "black",
    "round_robin": "magenta",
    "dssgd": "green",
    "local": "red",
}


@contextmanager
def style() -> Iterator[None]:
    """The deidlib style for a block or a function, the previous values of the style's own
    ``rcParams`` restored after: ``with style(): fig, ax = plt.subplots()`` or ``@style()``
    above a figure function.

    Only the keys of the style file are set and restored. ``plt.style.context`` restores
    *every* rcParam on exit, which undoes what an interactive backend set while the block ran
    (the inline backend of a Jupyter kernel then showed no figure in any later cell:
    ``tests/test_plotting.py``)."""
    import matplotlib as mpl

    rc = mpl.rc_params_from_file(_STYLE, use_default_template=False)
    saved = {k: mpl.rcParams[k] for k in rc}
    mpl.rcParams.update(rc)
    try:
        yield
    finally:
        mpl.rcParams.update(saved)


def savefig(fig, name: str, out_dir: str | Path, *, pdf: bool = True) -> list[Path]:
    """Save ``fig`` as ``out_dir/name.png`` (and ``.pdf``) without timestamps, in the deidlib
    style (its ``savefig.dpi``); return the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{name}.png"]
    with style():
        fig.savefig(paths[0], bbox_inches="tight", metadata={"Software": None})
        if pdf:
            paths.append(out / f"{name}.pdf")
            fig.savefig(paths[1], bbox_inches="tight",
                        metadata={"CreationDate": None, "Producer": None, "Creator": None})
    return paths
