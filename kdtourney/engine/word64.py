"""5x5 kingdoms: one int64 word per plane, over a layout of at most 64 squares.

A kingdom lives on a layout (LAY_R0, LAY_C0, LAY_H, LAY_W, LAY_WV), a rectangle of the grid that
holds the squares it may still use; `choose_layout` picks it at the first placement (moving it
from START) and the kingdom keeps it. bits[p, plane] holds the planes of `kernel_base`,
bits[p, ALLOWED] the allowed squares, bits[p, LAYOUT] the layout. Why 64 bits suffice and why
wrapped neighbours are harmless: docs/internals.md.
"""

import numpy as np

from kdtourney.engine.kernel_base import (
    CENTER,
    CROWN1,
    CROWN2,
    NEAR,
    OCC,
    PLANES,
    TILE_SYMMETRIC,
    G,
    kernel,
    largest_territory,
    lshr,
    neighbours,
    popcount,
    select_bit,
    terrain_points,
    trailing_zeros,
)
from kdtourney.engine.tiles import CASTLE, TILE_CROWNS, TILE_TERRAIN

U = np.uint64  # an unsigned index (of a value >= 0): no negative-index check on the hot paths

ALLOWED = PLANES
LAYOUT = PLANES + 1
WIDTH = PLANES + 2  # int64 slots of a kingdom
START = 0
SIZE = 5
REACH = SIZE - 1    # squares of a kingdom are at most REACH rows and columns apart


def _int64(mask):
    """A Python set of 64 bits as the int64 with the same bits."""
    return int(np.array([mask], dtype=np.uint64).view(np.int64)[0])


def _layouts():
    """(r0, c0, rows, stride, used columns) of every layout, START first."""
    around = CENTER - REACH  # first grid row and column of the 9x9 squares around the castle
    layouts = [(CENTER - 3, CENTER - 3, 7, 8, 7)]
    layouts += [(around, around + k, 9, 7, 7) for k in range(3)]
    layouts += [(around + k, around, 7, 9, 9) for k in range(3)]
    layouts += [(around + i, around + j, 8, 8, 8) for i in range(2) for j in range(2)]
    return layouts


def _tables():
    layouts = _layouts()
    n = len(layouts)
    t = {name: np.zeros(n, dtype=np.int64) for name in
         ("r0", "c0", "h", "w", "wv", "valid", "center", "not_first", "not_last", "castle")}
    box = np.zeros((n, 64), dtype=np.int64)
    square = np.full((n, 64), -1, dtype=np.int64)
    row = np.full((n, 64), -1, dtype=np.int64)
    col = np.full((n, 64), -1, dtype=np.int64)
    for i, (r0, c0, h, w, wv) in enumerate(layouts):
        cells = [(q, r0 + q // w, c0 + q % w) for q in range(h * w) if q % w < wv]
        valid = center = not_first = not_last = 0
        for q, r, c in cells:
            valid |= 1 << q
            center |= (abs(r - CENTER) <= 2 and abs(c - CENTER) <= 2) << q
            not_first |= (q % w != 0) << q
            not_last |= (q % w != w - 1) << q
            square[i, q] = r * G + c
            row[i, q] = r
            col[i, q] = c
            box[i, q] = _int64(sum(1 << q2 for q2, r2, c2 in cells
                                   if abs(r2 - r) <= REACH and abs(c2 - c) <= REACH))
        for name, value in (("r0", r0), ("c0", c0), ("h", h), ("w", w), ("wv", wv),
                            ("valid", _int64(valid)), ("center", _int64(center)),
                            ("not_first", _int64(not_first)), ("not_last", _int64(not_last)),
                            ("castle", (CENTER - r0) * w + CENTER - c0)):
            t[name][i] = value
    for a in list(t.values()) + [box, square, row, col]:
        a.flags.writeable = False
    return t, box, square, row, col


_T, LAY_BOX, LAY_SQUARE, LAY_ROW, LAY_COL = _tables()
LAY_R0, LAY_C0, LAY_H, LAY_W, LAY_WV = _T["r0"], _T["c0"], _T["h"], _T["w"], _T["wv"]
LAY_CENTER, LAY_NOT_FIRST, LAY_NOT_LAST, LAY_CASTLE = (_T["center"], _T["not_first"],
                                                       _T["not_last"], _T["castle"])
N_LAYOUTS = len(LAY_R0)


@kernel(inline="always")
def choose_layout(rmin, rmax, cmin, cmax):
    """A layout that holds the allowed rectangle of a kingdom with this bounding box."""
    r0 = rmax - REACH
    r1 = rmin + REACH
    c0 = cmax - REACH
    c1 = cmin + REACH
    if (r1 - r0 + 1) * (c1 - c0 + 1) > 64:
        return START
    for lay in range(1, N_LAYOUTS):
        if (LAY_R0[lay] <= r0 and r1 < LAY_R0[lay] + LAY_H[lay]
                and LAY_C0[lay] <= c0 and c1 < LAY_C0[lay] + LAY_WV[lay]):
            return lay
    return START  # not reached: every rectangle of at most 64 squares fits a layout


@kernel(inline="always")
def square_index(lay, r, c):
    """Layout square of grid square (r, c), -1 outside the layout."""
    lr = r - LAY_R0[lay]
    lc = c - LAY_C0[lay]
    if 0 <= lr < LAY_H[lay] and 0 <= lc < LAY_WV[lay]:
        return lr * LAY_W[lay] + lc
    return -1


@kernel(inline="always")
def _start(bits, p, lay):
    """Kingdom p: the castle alone, on layout lay."""
    for i in range(WIDTH):
        bits[p, i] = 0
    q = LAY_CASTLE[lay]
    b = 1 << q
    bits[p, OCC] = b
    around = neighbours(b, LAY_W[lay])
    for t in range(1, 7):  # the castle is wild: every terrain may connect to it
        bits[p, NEAR + t] = around
    bits[p, ALLOWED] = LAY_BOX[lay, q]
    bits[p, LAYOUT] = lay


@kernel
def clear(bits, p):
    _start(bits, p, START)


@kernel(inline="always")
def _put(bits, p, lay, q, terrain, crowns):
    """Land of `terrain` with `crowns` on layout square q (no legality check)."""
    p, lay, q = U(p), U(lay), U(q)
    b = 1 << q
    bits[p, OCC] |= b
    bits[p, U(terrain)] |= b
    bits[p, CROWN1] |= b * (crowns & 1)  # multiplications, not branches: crowns are random
    bits[p, CROWN2] |= b * (crowns >> 1)
    bits[p, U(NEAR + terrain)] |= neighbours(b, LAY_W[lay])
    bits[p, ALLOWED] &= LAY_BOX[lay, q]


@kernel
def _relayout(bits, bbox, p):
    """Move kingdom p to the layout its bounding box (already grown) asks for; returns it."""
    old = bits[p, LAYOUT]
    lay = choose_layout(bbox[p, 0], bbox[p, 1], bbox[p, 2], bbox[p, 3])
    if lay == old:
        return lay
    land = bits[p, OCC] & ~(1 << LAY_CASTLE[old])  # on START: at most one square
    g = -1
    terrain = crowns = 0
    if land:
        q = trailing_zeros(land)
        g = LAY_SQUARE[old, q]
        crowns = square(bits, p, g // G, g % G)
        terrain = crowns >> 2
        crowns &= 3
    _start(bits, p, lay)
    if g >= 0:
        _put(bits, p, lay, square_index(lay, g // G, g % G), terrain, crowns)
    return lay


@kernel(inline="always")
def place(bits, bbox, p, domino, r, c, rb, cb):
    """Put `domino` with half a on grid square (r, c), half b on (rb, cb); bbox[p] already
    includes both (no legality check)."""
    lay = bits[p, LAYOUT]
    if lay == START:
        lay = _relayout(bits, bbox, p)
    w = LAY_W[lay]
    _put(bits, p, lay, (r - LAY_R0[lay]) * w + c - LAY_C0[lay], TILE_TERRAIN[domino, 0],
         TILE_CROWNS[domino, 0])
    _put(bits, p, lay, (rb - LAY_R0[lay]) * w + cb - LAY_C0[lay], TILE_TERRAIN[domino, 1],
         TILE_CROWNS[domino, 1])


@kernel
def put_square(bits, bbox, p, r, c, terrain, crowns):
    """One square of land on grid square (r, c); bbox[p] already includes it (no legality check)."""
    lay = bits[p, LAYOUT]
    if lay == START:
        lay = _relayout(bits, bbox, p)
    _put(bits, p, lay, square_index(lay, r, c), terrain, crowns)


# ---------------------------------------------------------------------------------------------
# Legal placements: four words of half a's squares, one per direction of half b


@kernel(inline="always")
def low_moves(bits, p, domino):
    """(right, down, left, up): the legal placements of `domino`, half b to the right of half a,
    below, to the left, above, each as the layout square of its first half in layout order (the
    left or upper one: half a in directions 0 and 1, half b in 2 and 3; `moves` gives half a's).
    Directions 2 and 3 are empty for a domino with two identical halves."""
    p, domino = U(p), U(domino)
    w = LAY_W[U(bits[p, LAYOUT])]
    free = bits[p, ALLOWED] & ~bits[p, OCC]
    near_a = bits[p, U(NEAR + TILE_TERRAIN[domino, 0])]
    near_b = bits[p, U(NEAR + TILE_TERRAIN[domino, 1])]
    pair_h = free & lshr(free, 1)  # q and q + 1 free
    pair_v = free & lshr(free, w)  # q and q + w free
    right = pair_h & (near_a | lshr(near_b, 1))
    down = pair_v & (near_a | lshr(near_b, w))
    other_way = TILE_SYMMETRIC[domino] - 1  # 0 for a symmetric domino, else all bits
    left = pair_h & (near_b | lshr(near_a, 1)) & other_way
    up = pair_v & (near_b | lshr(near_a, w)) & other_way
    return right, down, left, up


@kernel(inline="always")
def moves(bits, p, domino):
    """(right, down, left, up): the layout squares of half a of the legal placements of `domino`,
    half b to the right, below, to the left, above (`low_moves` with half a's squares)."""
    right, down, left, up = low_moves(bits, p, domino)
    w = LAY_W[U(bits[U(p), LAYOUT])]
    return right, down, left << 1, up << w


@kernel(inline="always")
def low_to_a(d, w):
    """From the first square of a placement in direction d (`low_moves`) to half a's: 0, 0, 1, w
    (no branch: d is random)."""
    return (d >> 1) * (1 + (w - 1) * (d & 1))


@kernel(inline="always")
def kth_move(right, down, left, up, k):
    """(direction, its mask's layout square) of the k-th (0-based) legal placement in the masks
    of `moves` or `low_moves`, in action order."""
    n0 = popcount(right)
    n1 = n0 + popcount(down)
    n2 = n1 + popcount(left)
    past0 = k >= n0
    past1 = k >= n1
    past2 = k >= n2
    # selects, not branches: the direction is random
    m = up if past2 else left if past1 else down if past0 else right
    before = n2 if past2 else n1 if past1 else n0 if past0 else 0
    d = np.int64(past0) + np.int64(past1) + np.int64(past2)
    return d, select_bit(m, k - before)


@kernel(inline="always")
def step(d, w):
    """From half a's layout square to half b's in direction d: 1, w, -1, -w (no branch: d is
    random)."""
    return (1 + (w - 1) * (d & 1)) * (1 - (d & 2))


@kernel(inline="always")
def move_action(lay, d, q):
    """The place action of placement (direction d, half a on layout square q)."""
    return d * G * G + LAY_SQUARE[U(lay), U(q)]


@kernel(inline="always")
def low_move_action(lay, d, q):
    """The place action of the placement in direction d whose first square is layout square q
    (`low_moves`)."""
    return move_action(lay, d, q + low_to_a(d, LAY_W[U(lay)]))


@kernel(inline="always")
def put_move(bits, bbox, p, domino, d, q):
    """Play the placement of `domino` in direction d whose first square is layout square q
    (`low_moves`), bbox[p] included; not on START (no legality check)."""
    lay = U(bits[U(p), LAYOUT])
    w = LAY_W[lay]
    q = q + low_to_a(d, w)
    qb = U(q + step(d, w))
    q = U(q)
    domino = U(domino)
    _put(bits, p, lay, q, TILE_TERRAIN[domino, 0], TILE_CROWNS[domino, 0])
    _put(bits, p, lay, qb, TILE_TERRAIN[domino, 1], TILE_CROWNS[domino, 1])
    ra = LAY_ROW[lay, q]
    rb = LAY_ROW[lay, qb]
    ca = LAY_COL[lay, q]
    cb = LAY_COL[lay, qb]
    bbox[p, 0] = min(bbox[p, 0], ra, rb)
    bbox[p, 1] = max(bbox[p, 1], ra, rb)
    bbox[p, 2] = min(bbox[p, 2], ca, cb)
    bbox[p, 3] = max(bbox[p, 3], ca, cb)


@kernel(inline="always")
def write_actions(lay, right, down, left, up, out, row):
    """The place actions of the legal placements into out[row], in action order; their number."""
    n = 0
    for d in range(4):
        m = right if d == 0 else down if d == 1 else left if d == 2 else up
        base = d * G * G
        while m:
            out[row, n] = base + LAY_SQUARE[lay, trailing_zeros(m)]
            n += 1
            m &= m - 1
    return n


@kernel(inline="always")
def write_moves(right, down, left, up, out, row):
    """The legal placements as direction << 6 | layout square of half a into out[row], in action
    order; their number. Each is found on its own (`kth_move`), so that the loop has one exit
    instead of one a direction, each as unpredictable as the number of placements."""
    n = popcount(right) + popcount(down) + popcount(left) + popcount(up)
    for k in range(n):
        d, q = kth_move(right, down, left, up, k)
        out[row, k] = (d << 6) | q
    return n


@kernel(inline="always")
def has_move(lay, right, down, left, up, action):
    """True when place action `action` is among the legal placements."""
    d = action // (G * G)
    q = square_index(lay, (action // G) % G, action % G)
    if q < 0:
        return False
    m = right if d == 0 else down if d == 1 else left if d == 2 else up
    return (m >> q) & 1 == 1


# ---------------------------------------------------------------------------------------------
# Scores and shape


@kernel(inline="always")
def points(bits, p):
    """Territory points."""
    w = LAY_W[bits[p, LAYOUT]]
    total = 0
    for t in range(1, 7):
        total += terrain_points(bits[p, t], bits[p, CROWN1], bits[p, CROWN2], w)
    return total


@kernel(inline="always")
def largest(bits, p):
    """Squares of the largest territory."""
    w = LAY_W[bits[p, LAYOUT]]
    big = 0
    for t in range(1, 7):
        big = max(big, largest_territory(bits[p, t], w))
    return big


@kernel(inline="always")
def holes(bits, p, centered):
    """One-square holes: empty squares no domino can cover, in the centred 5x5 window when the
    kingdom is centred, else in the allowed rectangle."""
    lay = bits[p, LAYOUT]
    w = LAY_W[lay]
    if centered:
        empty = LAY_CENTER[lay] & ~bits[p, OCC]
        return popcount(empty & ~neighbours(empty, w))
    empty = bits[p, ALLOWED] & ~bits[p, OCC]
    around = (((empty << 1) & LAY_NOT_FIRST[lay]) | (lshr(empty, 1) & LAY_NOT_LAST[lay])
              | (empty << w) | lshr(empty, w))
    return popcount(empty & ~around)


@kernel(inline="always")
def window(bits, p, plane, r0, c0, n):
    """Plane `plane` over the n x n grid squares from (r0, c0), n <= 7, packed 8 bits a row."""
    lay = bits[p, LAYOUT]
    w = LAY_W[lay]
    lc = c0 - LAY_C0[lay]
    row_mask = (1 << n) - 1
    word = bits[p, plane]
    out = 0
    for i in range(n):
        lr = r0 + i - LAY_R0[lay]
        if 0 <= lr < LAY_H[lay]:
            row = lshr(word, lr * w) & ((1 << LAY_WV[lay]) - 1)
            row = lshr(row, lc) if lc >= 0 else row << -lc
            out |= (row & row_mask) << (8 * i)
    return out


@kernel(inline="always")
def square(bits, p, r, c):
    """terrain * 4 + crowns of grid square (r, c): 0 when empty, 4 * CASTLE for the castle."""
    lay = bits[p, LAYOUT]
    q = square_index(lay, r, c)
    if q < 0 or not (bits[p, OCC] >> q) & 1:
        return 0
    for t in range(1, 7):
        if (bits[p, t] >> q) & 1:
            return 4 * t + ((bits[p, CROWN1] >> q) & 1) + 2 * ((bits[p, CROWN2] >> q) & 1)
    return 4 * CASTLE

