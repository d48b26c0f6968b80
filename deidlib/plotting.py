"""Shared figure style and a deterministic ``savefig`` (PNG + PDF) for every notebook."""

from __future__ import annotations

from pathlib import Path

__all__ = ["apply_style", "savefig", "COLORS"]

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


def apply_style() -> None:
    """Use the non-interactive Agg backend when no display is set, and a clean style."""
    import matplotlib

    if matplotlib.get_backend().lower() not in ("agg", "module://matplotlib_inline.backend_inline"):
        try:
            matplotlib.use("Agg")
        except Exception:  # pragma: no cover - backend already fixed by the host
            pass
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "figure.dpi": 100,
            "savefig.dpi": 150,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "font.size": 10,
        }
    )


def savefig(fig, name: str, out_dir: str | Path, *, pdf: bool = True) -> list[Path]:
    """Save ``fig`` as ``out_dir/name.png`` (and ``.pdf``) without timestamps; return the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{name}.png"]
    fig.savefig(paths[0], bbox_inches="tight", metadata={"Software": None})
    if pdf:
        paths.append(out / f"{name}.pdf")
        fig.savefig(paths[1], bbox_inches="tight", metadata={"CreationDate": None, "Producer": None, "Creator": None})
    return paths
