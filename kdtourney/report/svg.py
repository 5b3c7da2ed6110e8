"""Kingdoms as inline SVG pictures: terrain colours, crowns as small marks, the castle, the frame.

`kingdom_svg(squares, size)` draws one kingdom, `squares` as `Kingdom.squares()` gives it
({(row, col): (terrain, crowns)}, castle at (0, 0)). The picture shows the size x size frame the
kingdom must fit in (5x5, or 7x7 in Mighty Duel), placed by `frame_origin` so that every square is
inside it; empty squares of the frame are drawn pale.

The page's replay draws kingdoms in JavaScript with the same palette and geometry
(`PALETTE`, `CELL`), so a kingdom looks the same in the pictures and in the replay.
"""

from __future__ import annotations

from html import escape

from kdtourney.engine.tiles import (
    CASTLE,
    EMPTY,
    FOREST,
    GRASSLAND,
    LAKE,
    MINE,
    SWAMP,
    TERRAIN_NAMES,
    WHEAT,
)

__all__ = ["PALETTE", "CELL", "frame_origin", "kingdom_svg", "crown_points", "describe_kingdom"]

#: Fill colour per terrain code (0 = empty square of the frame, 7 = castle).
PALETTE = {
    EMPTY: "#eef0f3",
    WHEAT: "#e8c23a",
    FOREST: "#2e6b34",
    LAKE: "#2f7fc4",
    GRASSLAND: "#98c95a",
    SWAMP: "#8a7a5c",
    MINE: "#3f3f46",
    CASTLE: "#f7f3ea",
}

#: Side of one square in SVG user units.
CELL = 20
_PAD = 2


def frame_origin(squares, size: int) -> tuple[int, int]:
    """(top row, left column) of a size x size frame holding every square of `squares`.

    A kingdom smaller than the frame is centred in it (the castle side winning the odd square), so
    pictures of the same game's steps can share the final kingdom's frame.
    """
    rows = [r for r, _ in squares] or [0]
    cols = [c for _, c in squares] or [0]
    top, bottom, left, right = min(rows), max(rows), min(cols), max(cols)
    top -= max(0, size - (bottom - top + 1)) // 2
    left -= max(0, size - (right - left + 1)) // 2
    # squares outside a legal frame cannot happen in a legal game; stay robust anyway
    return top, left


def crown_points(x: float, y: float, w: float) -> str:
    """Polygon points of a small crown whose top-left corner is (x, y) and width w."""
    h = w * 0.7
    pts = [(0, 1), (0, 0.25), (0.27, 0.6), (0.5, 0), (0.73, 0.6), (1, 0.25), (1, 1)]
    return " ".join(f"{x + px * w:.1f},{y + py * h:.1f}" for px, py in pts)


def describe_kingdom(squares) -> str:
    """A short text summary of a kingdom for screen readers: squares, crowns, terrains."""
    land = [(t, c) for t, c in squares.values() if t not in (EMPTY, CASTLE)]
    crowns = sum(c for _, c in land)
    counts: dict[int, int] = {}
    for t, _ in land:
        counts[t] = counts.get(t, 0) + 1
    parts = ", ".join(f"{n} {TERRAIN_NAMES[t]}"
                      for t, n in sorted(counts.items(), key=lambda kv: -kv[1]))
    return f"{len(land)} squares of land and {crowns} crowns" + (f" ({parts})" if parts else "")


def kingdom_svg(squares, size: int = 5, *, label: str = "", origin: tuple[int, int] | None = None,
                width: int | None = None, css_class: str = "kingdom") -> str:
    """One kingdom as an `<svg>` element (a string), with a text alternative.

    squares: {(row, col): (terrain, crowns)} relative to the castle; size: 5 or 7; label: the
    accessible name (escaped here); origin: the frame's (top, left), by default `frame_origin`.
    """
    top, left = origin if origin is not None else frame_origin(squares, size)
    side = size * CELL + 2 * _PAD
    title = f"{label}: " if label else ""
    title += describe_kingdom(squares)
    parts = [
        f'<svg class="{css_class}" viewBox="0 0 {side} {side}" role="img"'
        + (f' width="{width}" height="{width}"' if width else "")
        + f' xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>',
        f'<rect x="{_PAD}" y="{_PAD}" width="{size * CELL}" height="{size * CELL}" '
        f'fill="{PALETTE[EMPTY]}" stroke="#9aa3ad" stroke-width="1" stroke-dasharray="3 2"/>',
    ]
    for (r, c), (terrain, crowns) in sorted(squares.items()):
        i, j = r - top, c - left
        if not (0 <= i < size and 0 <= j < size) or terrain == EMPTY:
            continue
        x, y = _PAD + j * CELL, _PAD + i * CELL
        parts.append(f'<rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" '
                     f'fill="{PALETTE.get(terrain, "#ccc")}" stroke="#fff" stroke-width="0.8"/>')
        if terrain == CASTLE:
            parts.append(_castle(x, y))
        for k in range(crowns):
            w = CELL * 0.28
            parts.append(f'<polygon points="{crown_points(x + 1.5 + k * (w + 0.8), y + 1.5, w)}" '
                         'fill="#fff7c2" stroke="#1b1b1b" stroke-width="0.6"/>')
    parts.append("</svg>")
    return "".join(parts)


def _castle(x: float, y: float) -> str:
    """A small tower drawn inside the castle square at (x, y)."""
    c = CELL
    pts = [(0.2, 0.85), (0.2, 0.3), (0.32, 0.3), (0.32, 0.4), (0.44, 0.4), (0.44, 0.3), (0.56, 0.3),
           (0.56, 0.4), (0.68, 0.4), (0.68, 0.3), (0.8, 0.3), (0.8, 0.85)]
    p = " ".join(f"{x + px * c:.1f},{y + py * c:.1f}" for px, py in pts)
    return (f'<polygon points="{p}" fill="#6b5b4b" stroke="#2b2118" stroke-width="0.6"/>'
            f'<rect x="{x + 0.43 * c:.1f}" y="{y + 0.6 * c:.1f}" width="{0.14 * c:.1f}" '
            f'height="{0.25 * c:.1f}" fill="#f7f3ea"/>')
