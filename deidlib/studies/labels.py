"""Point labels that do not overlap: a greedy placer for the study figures' scatter labels."""

from __future__ import annotations

from collections.abc import Sequence

#: offsets (points) tried in order around a point: right, left, then further up / down
_OFFSETS = [(7, -3), (7, 4), (7, -11), (-7, -3), (-7, 4), (-7, -11), (7, 12), (7, -19), (-7, 12), (-7, -19),
            (7, 21), (7, -28), (-7, 21), (-7, -28), (7, 30), (7, -37)]


def place_labels(ax, xs: Sequence[float], ys: Sequence[float], texts: Sequence[str], *, fontsize: float = 6.5,
                 color: str | Sequence[str] = "0.15") -> list:
    """Annotate each point (x, y) with its text at the first offset in :data:`_OFFSETS` whose box
    overlaps no marker and no label placed before it (and stays inside the axes); where none is free, the
    least-overlapping offset with a thin leader line. Call after the axes' limits and scales
    are final (and after ``tight_layout``). Returns the annotations."""
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    from matplotlib.transforms import Bbox

    r = 5 * fig.dpi / 72  # the markers themselves are obstacles too (5 points around each)
    pts = ax.transData.transform(list(zip(xs, ys))) if len(xs) else []
    placed, out = [Bbox([[px - r, py - r], [px + r, py + r]]) for px, py in pts], []
    colors = [color] * len(xs) if isinstance(color, str) else list(color)
    order = sorted(range(len(xs)), key=lambda i: (xs[i], ys[i]))
    for i in order:
        best = None
        for dx, dy in _OFFSETS:
            a = ax.annotate(texts[i], (xs[i], ys[i]), textcoords="offset points", xytext=(dx, dy),
                            ha="left" if dx > 0 else "right", va="bottom", fontsize=fontsize, color=colors[i])
            box = a.get_window_extent(renderer)
            overlap = sum(_area(box, b) for b in placed)
            outside = box.width * box.height - _area(box, frame)
            cost = overlap + outside
            if best is None or cost < best[0]:
                if best is not None:
                    best[1].remove()
                best = (cost, a, box, (dx, dy))
            else:
                a.remove()
            if cost == 0:
                break
        if best is None:  # _OFFSETS is not empty
            raise RuntimeError("no label position was tried")
        cost, a, box, (dx, dy) = best
        if abs(dy) > 14:  # far from its point: draw the leader
            a.remove()
            a = ax.annotate(texts[i], (xs[i], ys[i]), textcoords="offset points", xytext=(dx, dy),
                            ha="left" if dx > 0 else "right", va="bottom", fontsize=fontsize, color=colors[i],
                            arrowprops=dict(arrowstyle="-", lw=0.4, color="0.5", shrinkA=0, shrinkB=2))
        placed.append(box)
        out.append(a)
    return out


def _area(a, b) -> float:
    w = min(a.x1, b.x1) - max(a.x0, b.x0)
    h = min(a.y1, b.y1) - max(a.y0, b.y0)
    return max(0.0, w) * max(0.0, h)
