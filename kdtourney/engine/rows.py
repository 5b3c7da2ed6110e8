"""Kingdoms of any size as row masks on the G x G grid: the general path, used for 7x7 (Mighty
Duel), whose allowed squares (up to 13x11) do not fit one 64-bit word.

Storage of kingdom p: bits[p, plane * G + r], bit c of it the grid square (r, c). bbox[p] is
rmin, rmax, cmin, cmax of the occupied squares, castle included.

Legal placements are row masks of half a's square per direction, in scratch row sc[lvl]:
sc[lvl, d * G + r] for the window rows sc[lvl, FIRST_ROW] ..= sc[lvl, LAST_ROW] (other rows stale).
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
    popcount,
    terrain_points,
    trailing_zeros,
)
from kdtourney.engine.tiles import CASTLE, TILE_TERRAIN

U = np.uint64  # an unsigned index (of a value >= 0): no negative-index check on the hot paths

WIDTH = PLANES * G  # int64 slots of a kingdom
FIRST_ROW = 4 * G
LAST_ROW = 4 * G + 1
SCRATCH = 4 * G + 2
CASTLE_BIT = 1 << CENTER


@kernel
def clear(bits, p):
    for i in range(WIDTH):
        bits[p, i] = 0
    bits[p, OCC * G + CENTER] = CASTLE_BIT
    for t in range(1, 7):  # the castle is wild: every terrain may connect to it
        near = (NEAR + t) * G
        bits[p, near + CENTER - 1] = CASTLE_BIT
        bits[p, near + CENTER + 1] = CASTLE_BIT
        bits[p, near + CENTER] = (CASTLE_BIT << 1) | (CASTLE_BIT >> 1)


@kernel(inline="always")
def put_square(bits, p, r, c, terrain, crowns):
    """One square of land (no legality check; the caller keeps bbox)."""
    bit = 1 << c
    bits[p, OCC * G + r] |= bit
    bits[p, terrain * G + r] |= bit
    bits[p, CROWN1 * G + r] |= bit * (crowns & 1)
    bits[p, CROWN2 * G + r] |= bit * ((crowns >> 1) & 1)
    near = (NEAR + terrain) * G
    bits[p, near + r] |= (bit << 1) | (bit >> 1)
    if r > 0:
        bits[p, near + r - 1] |= bit
    if r < G - 1:
        bits[p, near + r + 1] |= bit


@kernel
def moves(bits, bbox, p, size, domino, sc, lvl):
    """Legal placements of `domino` into sc[lvl] (see the module docstring); their number. A domino
    with two identical halves only uses directions 0 and 1."""
    p, lvl, domino = U(p), U(lvl), U(domino)
    other_way = TILE_SYMMETRIC[domino] - 1
    na_plane = (NEAR + TILE_TERRAIN[domino, 0]) * G
    nb_plane = (NEAR + TILE_TERRAIN[domino, 1]) * G
    # Rows of half a: inside the size x size limit, and at most two rows from the kingdom (one
    # half must touch it).
    r0 = max(bbox[p, 1] - size + 1, bbox[p, 0] - 2, 0)
    r1 = min(bbox[p, 0] + size - 1, bbox[p, 1] + 2, G - 1)
    c0 = max(bbox[p, 3] - size + 1, 0)
    c1 = min(bbox[p, 2] + size - 1, G - 1)
    window = ((1 << (c1 + 1)) - 1) ^ ((1 << c0) - 1)
    sc[lvl, FIRST_ROW] = r0
    sc[lvl, LAST_ROW] = r1
    n = 0
    e_above = 0  # empty squares of the rows above, here and below, rolled down the window
    e = ~bits[p, U(OCC * G + r0)] & window
    nb_above = bits[p, U(nb_plane + r0 - 1)] if r0 > 0 else 0
    nb = bits[p, U(nb_plane + r0)]
    for r in range(r0, r1 + 1):
        if r < r1:
            e_below = ~bits[p, U(OCC * G + r + 1)] & window
            nb_below = bits[p, U(nb_plane + r + 1)]
        else:
            e_below = 0
            nb_below = 0
        na = bits[p, U(na_plane + r)]
        m = e & (e >> 1) & (na | (nb >> 1))
        sc[lvl, U(r)] = m
        n += popcount(m)
        m = e & e_below & (na | nb_below)
        sc[lvl, U(G + r)] = m
        n += popcount(m)
        m = e & (e << 1) & (na | (nb << 1)) & other_way
        sc[lvl, U(2 * G + r)] = m
        n += popcount(m)
        m = e & e_above & (na | nb_above) & other_way
        sc[lvl, U(3 * G + r)] = m
        n += popcount(m)
        e_above = e
        e = e_below
        nb_above = nb
        nb = nb_below
    return n


@kernel
def write_actions(sc, lvl, out, row):
    """The place actions of the placements in sc[lvl] into out[row], in action order;
    their number."""
    lvl, row = U(lvl), U(row)
    n = 0
    r0 = sc[lvl, FIRST_ROW]
    r1 = sc[lvl, LAST_ROW]
    for d in range(4):
        for r in range(r0, r1 + 1, 4):  # 4 rows at a time, 16 bits each: fewer loops to leave
            m = 0
            for i in range(4):
                if r + i <= r1:
                    m |= sc[lvl, U(d * G + r + i)] << (16 * i)
            base = (d * G + r) * G
            while m:
                t = trailing_zeros(m)
                out[row, U(n)] = base + (t >> 4) * G + (t & 15)
                n += 1
                m &= m - 1
    return n


@kernel(inline="always")
def _select_bit(m, k):
    """Index of the k-th (0-based) set bit of a row mask (< 2**16), by halving without branches."""
    pos = 0
    for width in (8, 4, 2, 1):
        low = popcount(m & ((1 << width) - 1))
        up = k >= low
        pos += width * up
        k -= low * up
        m >>= width * up
    return pos


@kernel
def kth_action(sc, lvl, k):
    """The place action of the k-th (0-based) placement in sc[lvl], in action order."""
    for d in range(4):
        for r in range(sc[lvl, FIRST_ROW], sc[lvl, LAST_ROW] + 1):
            m = sc[lvl, d * G + r]
            c = popcount(m)
            if k < c:
                return (d * G + r) * G + _select_bit(m, k)
            k -= c
    return -1


@kernel(inline="always")
def has_move(sc, lvl, action):
    """True when place action `action` is among the placements in sc[lvl]."""
    d = action // (G * G)
    r = (action // G) % G
    c = action % G
    return sc[lvl, FIRST_ROW] <= r <= sc[lvl, LAST_ROW] and (sc[lvl, d * G + r] >> c) & 1 == 1


@kernel(inline="always")
def window(bits, p, plane, r0, c0, n):
    """Plane `plane` over the n x n grid squares from (r0, c0), n <= 7, packed 8 bits a row."""
    row_mask = (1 << n) - 1
    out = 0
    for i in range(n):
        r = r0 + i
        if 0 <= r < G:
            out |= ((bits[p, plane * G + r] >> c0) & row_mask) << (8 * i)
    return out


@kernel(inline="always")
def window7(bits, p, plane, r0, c0):
    """`window` of the 7 x 7 squares from (r0, c0), all on the grid (as they are from a kingdom's
    top left corner, or from the centred square's): no row is checked."""
    out = 0
    for i in range(7):
        out |= ((bits[U(p), U(plane * G + r0 + i)] >> c0) & 127) << (8 * i)
    return out


@kernel(inline="always")
def _bbox_words(bits, bbox, p, plane):
    """Plane `plane` over the bounding box packed 8 bits a row (a kingdom is at most 7 wide, so bit
    7 of every row stays 0 and stops shifts from wrapping)."""
    return window7(bits, p, plane, bbox[p, 0], bbox[p, 2])


@kernel
def points(bits, bbox, p):
    crown1 = _bbox_words(bits, bbox, p, CROWN1)
    crown2 = _bbox_words(bits, bbox, p, CROWN2)
    total = 0
    for t in range(1, 7):
        total += terrain_points(_bbox_words(bits, bbox, p, t), crown1, crown2, 8)
    return total


@kernel
def largest(bits, bbox, p):
    big = 0
    for t in range(1, 7):
        big = max(big, largest_territory(_bbox_words(bits, bbox, p, t), 8))
    return big


@kernel
def holes(bits, bbox, p, size, centered):
    """One-square holes: empty squares that no domino can ever cover, in the size x size window
    centred on the castle when the kingdom is centred, else in any size x size square around it."""
    h = size // 2
    if centered:
        r0 = CENTER - h
        r1 = CENTER + h
        c0 = CENTER - h
        c1 = CENTER + h
    else:
        r0 = max(bbox[p, 1] - size + 1, 0)
        r1 = min(bbox[p, 0] + size - 1, G - 1)
        c0 = max(bbox[p, 3] - size + 1, 0)
        c1 = min(bbox[p, 2] + size - 1, G - 1)
    window_mask = ((1 << (c1 + 1)) - 1) ^ ((1 << c0) - 1)
    n = 0
    above = 0
    cur = ~bits[p, OCC * G + r0] & window_mask
    for r in range(r0, r1 + 1):
        below = ~bits[p, OCC * G + r + 1] & window_mask if r < r1 else 0
        n += popcount(cur & ~(cur << 1) & ~(cur >> 1) & ~above & ~below)
        above = cur
        cur = below
    return n


@kernel(inline="always")
def square(bits, p, r, c):
    """terrain * 4 + crowns of grid square (r, c): 0 when empty, 4 * CASTLE for the castle."""
    if not (0 <= r < G and 0 <= c < G) or not (bits[p, OCC * G + r] >> c) & 1:
        return 0
    for t in range(1, 7):
        if (bits[p, t * G + r] >> c) & 1:
            return 4 * t + ((bits[p, CROWN1 * G + r] >> c) & 1) \
                + 2 * ((bits[p, CROWN2 * G + r] >> c) & 1)
    return 4 * CASTLE


@kernel(inline="always")
def land_squares(bits, p):
    n = 0
    for r in range(G):
        n += popcount(bits[p, OCC * G + r])
    return n

