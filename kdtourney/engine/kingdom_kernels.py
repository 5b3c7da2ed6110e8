"""Numba kernels of one kingdom and of the random numbers: arrays and ints in, arrays and ints
out, no validation. A kingdom is (bits, bbox, p, size): row p of `bits` (a 5x5 kingdom in `word64`'s
64-bit words, a 7x7 one in `rows`' row masks; `kingdom_width(size)` slots) and bbox[p] (rmin, rmax,
cmin, cmax of its occupied squares, castle included); they dispatch on the size. Scratch space is
a 2D array and a row (`sc, lvl`; `scratch(levels)`), never a slice (Numba could not always remove
a slice's reference counting from a hot loop). Randomness comes from `rng`, a uint64[1]
splitmix64 state. A game of these kingdoms: `kdtourney.engine.kernels`, which names them too.
"""

import numpy as np

from kdtourney.engine import rows, word64
from kdtourney.engine.kernel_base import (
    CENTER,
    CROWN1,
    CROWN2,
    DIR_COL,
    DIR_ROW,
    DISCARD,
    MAX_ACTIONS,  # noqa: F401 - re-exported: the bots read K.MAX_ACTIONS
    N_PLACE_ACTIONS,
    OCC,
    G,
    kernel,
    popcount,
)
from kdtourney.engine.tiles import TILE_CROWNS, TILE_TERRAIN

SCRATCH = max(rows.SCRATCH, 5)  # columns of a scratch row: the rows path's masks, or 4 words
                                # and a layout
_LAYOUT_SLOT = 4

FLAG_HARMONY = 1
FLAG_MIDDLE = 2

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


# ---------------------------------------------------------------------------------------------
# Random numbers


@kernel(inline="always")
def rand_u64(rng):
    """Next splitmix64 output; rng: uint64[1] state."""
    s = rng[0] + _GOLDEN
    rng[0] = s
    z = (s ^ (s >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@kernel(inline="always")
def rand_below(rng, n):
    """Uniform int in [0, n) for 0 < n < 2**31."""
    return np.int64(((rand_u64(rng) >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))


@kernel(inline="always")
def draw_below(s, n):
    """rand_below on a state held in a local (s: the uint64 of an rng): (new state, the draw).
    A loop that draws keeps its state in a register instead of memory."""
    s += _GOLDEN
    z = (s ^ (s >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    z ^= z >> np.uint64(31)
    return s, np.int64(((z >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))


# ---------------------------------------------------------------------------------------------
# One kingdom: (bits, bbox, p, size)


@kernel
def kingdom_width(size):
    """int64 slots of one kingdom in bits."""
    return word64.WIDTH if size == word64.SIZE else rows.WIDTH


@kernel(nrt=True)
def scratch(levels):
    """Scratch rows for legal placements (sc, with lvl < levels)."""
    return np.zeros((levels, SCRATCH), dtype=np.int64)


@kernel
def clear_kingdom(bits, bbox, p, size):
    """Kingdom p: the castle alone."""
    if size == word64.SIZE:
        word64.clear(bits, p)
    else:
        rows.clear(bits, p)
    for i in range(4):
        bbox[p, i] = CENTER


@kernel(inline="always")
def copy_kingdom(bits, bbox, p, to_bits, to_bbox, q):
    """Kingdom p of (bits, bbox) into kingdom q of (to_bits, to_bbox)."""
    for i in range(bits.shape[1]):
        to_bits[q, i] = bits[p, i]
    for i in range(4):
        to_bbox[q, i] = bbox[p, i]


@kernel(inline="always")
def legal_moves(bits, bbox, p, size, domino, sc, lvl):
    """The legal placements of `domino` into scratch row sc[lvl]; returns their number."""
    if size == word64.SIZE:
        right, down, left, up = word64.moves(bits, p, domino)
        sc[lvl, 0] = right
        sc[lvl, 1] = down
        sc[lvl, 2] = left
        sc[lvl, 3] = up
        sc[lvl, _LAYOUT_SLOT] = bits[p, word64.LAYOUT]
        return popcount(right) + popcount(down) + popcount(left) + popcount(up)
    return rows.moves(bits, bbox, p, size, domino, sc, lvl)


@kernel(inline="always")
def moves_to_actions(sc, lvl, size, out, row):
    """The place actions of the placements in sc[lvl] into out[row], in action order;
    their number."""
    if size == word64.SIZE:
        return word64.write_actions(sc[lvl, _LAYOUT_SLOT], sc[lvl, 0], sc[lvl, 1], sc[lvl, 2],
                                    sc[lvl, 3], out, row)
    return rows.write_actions(sc, lvl, out, row)


@kernel
def is_legal_placement(bits, bbox, p, size, domino, action, sc, lvl):
    """True when place action `action` is a legal placement of `domino`."""
    if action < 0 or action >= N_PLACE_ACTIONS:
        return False
    if size == word64.SIZE:
        right, down, left, up = word64.moves(bits, p, domino)
        return word64.has_move(bits[p, word64.LAYOUT], right, down, left, up, action)
    rows.moves(bits, bbox, p, size, domino, sc, lvl)
    return rows.has_move(sc, lvl, action)


@kernel(inline="always")
def random_move(bits, p, domino, s):
    """random_placement's choice in a 5x5 kingdom (the same draw), not encoded as an action:
    (direction, layout square of its first half (`word64.low_moves`), the new state); direction
    -1 when there is none."""
    right, down, left, up = word64.low_moves(bits, p, domino)
    n = popcount(right) + popcount(down) + popcount(left) + popcount(up)
    if n == 0:
        return -1, 0, s
    s, k = draw_below(s, n)
    d, q = word64.kth_move(right, down, left, up, k)
    return d, q, s


@kernel(inline="always")
def random_placement(bits, bbox, p, size, domino, sc, lvl, s):
    """A uniformly random legal placement of `domino`, the placements counted and the chosen one
    selected, never listed; s: the random state (an rng's uint64, held in a local by the caller).
    Returns (place action, or DISCARD when there is none, and no draw; the new state)."""
    if size == word64.SIZE:
        d, q, s = random_move(bits, p, domino, s)
        if d < 0:
            return DISCARD, s
        return word64.low_move_action(bits[p, word64.LAYOUT], d, q), s
    n = rows.moves(bits, bbox, p, size, domino, sc, lvl)
    if n == 0:
        return DISCARD, s
    s, k = draw_below(s, n)
    return rows.kth_action(sc, lvl, k), s


@kernel(inline="always")
def place(bits, bbox, p, size, domino, action):
    """Put `domino` on the squares of place action `action` (no legality check)."""
    d = action // (G * G)
    r = (action // G) % G
    c = action % G
    rb = r + DIR_ROW[d]
    cb = c + DIR_COL[d]
    bbox[p, 0] = min(bbox[p, 0], r, rb)
    bbox[p, 1] = max(bbox[p, 1], r, rb)
    bbox[p, 2] = min(bbox[p, 2], c, cb)
    bbox[p, 3] = max(bbox[p, 3], c, cb)
    if size == word64.SIZE:
        word64.place(bits, bbox, p, domino, r, c, rb, cb)
    else:
        rows.put_square(bits, p, r, c, TILE_TERRAIN[domino, 0], TILE_CROWNS[domino, 0])
        rows.put_square(bits, p, rb, cb, TILE_TERRAIN[domino, 1], TILE_CROWNS[domino, 1])


@kernel
def put_square(bits, bbox, p, size, r, c, terrain, crowns):
    """One square of land of `terrain` with `crowns` on grid square (r, c) (no legality check)."""
    bbox[p, 0] = min(bbox[p, 0], r)
    bbox[p, 1] = max(bbox[p, 1], r)
    bbox[p, 2] = min(bbox[p, 2], c)
    bbox[p, 3] = max(bbox[p, 3], c)
    if size == word64.SIZE:
        word64.put_square(bits, bbox, p, r, c, terrain, crowns)
    else:
        rows.put_square(bits, p, r, c, terrain, crowns)


@kernel
def square(bits, p, size, r, c):
    """terrain * 4 + crowns of grid square (r, c): 0 when empty, 4 * CASTLE for the castle."""
    if size == word64.SIZE:
        return word64.square(bits, p, r, c)
    return rows.square(bits, p, r, c)


@kernel
def list_squares(bits, bbox, p, size, out):
    """Write every occupied square of kingdom p, castle included (terrain CASTLE), to out
    int64[>= 49, 4] as (row, col, terrain, crowns), row and col relative to the castle, row by
    row and left to right; return their number."""
    n = 0
    for r in range(bbox[p, 0], bbox[p, 1] + 1):
        for c in range(bbox[p, 2], bbox[p, 3] + 1):
            code = square(bits, p, size, r, c)
            if code:
                out[n, 0] = r - CENTER
                out[n, 1] = c - CENTER
                out[n, 2] = code >> 2
                out[n, 3] = code & 3
                n += 1
    return n


@kernel
def set_squares(bits, bbox, p, size, squares, n):
    """Make kingdom p the castle and the n squares (row, col, terrain, crowns) of squares
    int64[>= n, 4], row and col relative to the castle, terrain WHEAT..MINE, spanning at most
    size x size squares (no legality check)."""
    clear_kingdom(bits, bbox, p, size)
    for i in range(n):
        put_square(bits, bbox, p, size, squares[i, 0] + CENTER, squares[i, 1] + CENTER,
                   squares[i, 2], squares[i, 3])


@kernel(inline="always")
def window(bits, p, size, plane, r0, c0, n):
    """Plane `plane` over the n x n grid squares from (r0, c0) (n <= 7), packed 8 bits a row: bit
    8 * i + j is grid square (r0 + i, c0 + j)."""
    if size == word64.SIZE:
        return word64.window(bits, p, plane, r0, c0, n)
    return rows.window(bits, p, plane, r0, c0, n)


@kernel(inline="always")
def territory_points(bits, bbox, p, size):
    """Points of the territories (squares x crowns), without bonuses."""
    if size == word64.SIZE:
        return word64.points(bits, p)
    return rows.points(bits, bbox, p)


@kernel
def score_territories(bits, bbox, p, size):
    """(territory points, largest territory, crowns), without bonuses."""
    if size == word64.SIZE:
        return (word64.points(bits, p), word64.largest(bits, p),
                popcount(bits[p, CROWN1]) + 2 * popcount(bits[p, CROWN2]))
    crowns = 0
    for r in range(G):
        crowns += popcount(bits[p, CROWN1 * G + r]) + 2 * popcount(bits[p, CROWN2 * G + r])
    return rows.points(bits, bbox, p), rows.largest(bits, bbox, p), crowns


@kernel
def land_squares(bits, p, size):
    """Occupied squares, castle included."""
    if size == word64.SIZE:
        return popcount(bits[p, OCC])
    return rows.land_squares(bits, p)


@kernel(inline="always")
def is_centered(bbox, p, size):
    """Middle Kingdom: every square within the size x size square centred on the castle."""
    h = size // 2
    return (bbox[p, 0] >= CENTER - h and bbox[p, 1] <= CENTER + h
            and bbox[p, 2] >= CENTER - h and bbox[p, 3] <= CENTER + h)


@kernel(inline="always")
def bonus_points(bbox, p, size, flags, complete):
    """Harmony (+5, when `complete`) and Middle Kingdom (+10) as switched on in `flags`."""
    bonus = 0
    if flags & FLAG_HARMONY and complete:
        bonus += 5
    if flags & FLAG_MIDDLE and is_centered(bbox, p, size):
        bonus += 10
    return bonus


@kernel
def count_holes(bits, bbox, p, size):
    """One-square holes: empty squares that no domino can ever cover. The squares that can still be
    filled are those of the size x size square centred on the castle while the kingdom is centred,
    else those of any size x size square around the kingdom."""
    centered = is_centered(bbox, p, size)
    if size == word64.SIZE:
        return word64.holes(bits, p, centered)
    return rows.holes(bits, bbox, p, size, centered)
