"""The greedy evaluation of a placement, without copying or changing the kingdom.

A placement's key is `ok << S2_SHIFT | score` (the kingdom's points after it; ok when it stays
centred with no new one-square hole). `prepare_frame` frames a kingdom once (`FRAME_LEN` int64s
in a row of a work array); `entry_key` then values each placement from its two squares alone.
Placements are entries (`frame_placements`; `entry_action` turns one into a place action);
`best_key` and `best_spot`: the first best placement of a domino; `key_bound`: a bound of its
keys. `frame_place`, `rows_frame_place`: a frame following a placement. The frame's layout and
how the keys are computed: docs/internals.md.
"""

import numpy as np

from kdtourney.engine import rows, word64
from kdtourney.engine.kernel_base import (
    CROWN1,
    CROWN2,
    DIR_COL,
    DIR_ROW,
    OCC,
    G,
    flood,
    kernel,
    lshr,
    neighbours,
    popcount,
)
from kdtourney.engine.kernels import (
    CENTER,
    DISCARD,
    FLAG_HARMONY,
    FLAG_MIDDLE,
    bonus_points,
    is_centered,
    legal_moves,
    moves_to_actions,
)
from kdtourney.engine.tiles import TILE_CROWNS, TILE_TERRAIN

S2_SHIFT = 20
S_MASK = (1 << 20) - 1
KEY_SHIFT = 16  # a kept placement: key << KEY_SHIFT | entry
ENTRY_MASK = (1 << KEY_SHIFT) - 1
U = np.uint64  # an unsigned index (of a value >= 0): no negative-index check on the hot paths

# A frame (a row of a work array): planes OCC .. CROWN2 as words of rows FR_STRIDE bits apart,
# grid square (FR_R0, FR_C0) at bit 0, FR_ROWS x FR_COLS squares used; FR_CENTER the squares of
# the size x size square centred on the castle (0 for a 7x7 kingdom off it); FR_LAND the land
# squares of the kingdom framed (for a caller's check that it still is); FR_POINTS its territory
# points; FR_CENTRED + d and FR_OK + d: the squares of half a of the placements in direction d (0
# right, 1 down, 2 left, 3 up) that keep the kingdom centred, and that also leave no new hole;
# FR_COUNT + t territories of terrain t, the i-th at `territory(t, i)`: its squares, then its
# squares | crowns << 16 | points << 32 (`prepare_frame` leaves out a 5x5 kingdom's territories
# without a free square next to them: no placement touches them).
FR_R0 = CROWN2 + 1
FR_C0 = FR_R0 + 1
FR_STRIDE = FR_R0 + 2
FR_ROWS = FR_R0 + 3
FR_COLS = FR_R0 + 4
FR_CENTER = FR_R0 + 5
FR_LAND = FR_R0 + 6
FR_CENTRED = 16
FR_OK = 20
FR_COUNT = 24
FR_POINTS = 31
FR_TER = 32
TERRITORIES = 25  # per terrain at most (a 7x7 kingdom has at most 25 squares apart)
FRAME_LEN = FR_TER + 2 * 6 * TERRITORIES
_WINDOW_7 = sum(((1 << 7) - 1) << (8 * i) for i in range(7))  # 7x7 squares packed 8 bits a row


@kernel(inline="always")
def _frame(bits, bbox, p, size, pre, lvl):
    """The kingdom's planes and their geometry into the frame of row lvl of pre."""
    if size == word64.SIZE:
        lay = U(bits[U(p), word64.LAYOUT])
        for i in range(CROWN2 + 1):
            pre[lvl, i] = bits[U(p), i]
        pre[lvl, FR_R0] = word64.LAY_R0[lay]
        pre[lvl, FR_C0] = word64.LAY_C0[lay]
        pre[lvl, FR_STRIDE] = word64.LAY_W[lay]
        pre[lvl, FR_ROWS] = word64.LAY_H[lay]
        pre[lvl, FR_COLS] = word64.LAY_WV[lay]
        pre[lvl, FR_CENTER] = word64.LAY_CENTER[lay]
        return
    # a 7x7 kingdom is at most 7 squares wide: packed 8 bits a row, bit 7 stays empty
    if is_centered(bbox, p, size):
        r0 = CENTER - size // 2
        c0 = r0
        pre[lvl, FR_CENTER] = _WINDOW_7
    else:
        r0 = bbox[p, 0]
        c0 = bbox[p, 2]
        pre[lvl, FR_CENTER] = 0
    for i in range(CROWN2 + 1):
        pre[lvl, i] = rows.window7(bits, p, i, r0, c0)
    pre[lvl, FR_R0] = r0
    pre[lvl, FR_C0] = c0
    pre[lvl, FR_STRIDE] = 8
    pre[lvl, FR_ROWS] = 7
    pre[lvl, FR_COLS] = 7


@kernel(inline="always")
def _placement_masks(pre, lvl):
    """FR_CENTRED + d and FR_OK + d of the framed kingdom. A placement leaves a new one-square hole
    when a square of the centred square next to one of its halves had that half as its only empty
    neighbour (and is not the other half)."""
    w = pre[lvl, FR_STRIDE]
    c = pre[lvl, FR_CENTER]
    occ = pre[lvl, OCC]
    if occ & ~c:
        for d in range(4):
            pre[lvl, FR_CENTRED + d] = 0
            pre[lvl, FR_OK + d] = 0
        return
    e = c & ~occ  # empty squares of the centred square (no two linked by wrapping)
    xr = e & lshr(e, 1)  # with an empty neighbour to the right, left, below, above
    xl = e & (e << 1)
    xd = e & lshr(e, w)
    xu = e & (e << w)
    one = (xr | xl | xd | xu) & ~((xr & xl) | (xd & xu) | ((xr | xl) & (xd | xu)))
    # the only empty neighbour of a square of `one`, by where it lies from that square
    sr = (one & xr) << 1
    sl = lshr(one & xl, 1)
    sd = (one & xd) << w
    su = lshr(one & xu, w)
    centred_r = c & lshr(c, 1)
    centred_d = c & lshr(c, w)
    centred_l = c & (c << 1)
    centred_u = c & (c << w)
    pre[lvl, FR_CENTRED] = centred_r
    pre[lvl, FR_CENTRED + 1] = centred_d
    pre[lvl, FR_CENTRED + 2] = centred_l
    pre[lvl, FR_CENTRED + 3] = centred_u
    pre[lvl, FR_OK] = centred_r & ~(sr | sd | su | lshr(sl | sd | su, 1))
    pre[lvl, FR_OK + 1] = centred_d & ~(sr | sl | sd | lshr(sr | sl | su, w))
    pre[lvl, FR_OK + 2] = centred_l & ~(sl | sd | su | ((sr | sd | su) << 1))
    pre[lvl, FR_OK + 3] = centred_u & ~(sr | sl | su | ((sr | sl | sd) << w))


@kernel(inline="always")
def territory(t, i):
    """The frame slot of the i-th territory of terrain t (its squares; its sums in the next)."""
    return FR_TER + 2 * (TERRITORIES * (t - 1) + i)


@kernel(inline="always")
def prepare_frame(bits, bbox, p, size, pre, lvl):
    """Frame kingdom p into row lvl of pre for `entry_key` (see above); returns its territory
    points."""
    _frame(bits, bbox, p, size, pre, lvl)
    stride = pre[lvl, FR_STRIDE]
    crown1 = pre[lvl, CROWN1]
    crown2 = pre[lvl, CROWN2]
    if size == word64.SIZE:
        free = bits[U(p), word64.ALLOWED] & ~bits[U(p), OCC]
    else:
        free = -1  # placements may lie off the frame: every territory is kept
    points = 0
    for t in range(1, 7):
        i = 0
        rest = pre[lvl, t]
        while rest:
            comp = flood(rest & -rest, rest, stride)
            rest &= ~comp
            squares = popcount(comp)
            crowns = popcount(comp & crown1) + 2 * popcount(comp & crown2)
            points += squares * crowns
            if neighbours(comp, stride) & free:
                at = U(territory(t, i))
                pre[lvl, at] = comp
                pre[lvl, at + 1] = squares | (crowns << 16) | (squares * crowns << 32)
                i += 1
        pre[lvl, FR_COUNT + t] = i
    pre[lvl, FR_POINTS] = points
    pre[lvl, FR_LAND] = popcount(pre[lvl, OCC])
    _placement_masks(pre, lvl)
    return points


@kernel(inline="always")
def touching(pre, lvl, t, around):
    """The territories of terrain t with a square in `around`, summed: squares | crowns << 16 |
    points << 32."""
    v = 0
    for i in range(pre[lvl, U(FR_COUNT + t)]):
        at = U(territory(t, i))
        v += pre[lvl, at + 1] if pre[lvl, at] & around else 0
    return v


@kernel(inline="always")
def _join(pre, lvl, t, around, squares, crowns):
    """Merge the territories of terrain t touching `around` with the new land `squares` (with
    `crowns` crowns) into one territory of the frame."""
    v = 0
    comp = squares
    n = pre[lvl, U(FR_COUNT + t)]
    i = 0
    while i < n:
        at = U(territory(t, i))
        if pre[lvl, at] & around:
            comp |= pre[lvl, at]
            v += pre[lvl, at + 1]
            n -= 1
            last = U(territory(t, n))
            pre[lvl, at] = pre[lvl, last]
            pre[lvl, at + 1] = pre[lvl, last + 1]
        else:
            i += 1
    size = (v & 0xFFFF) + popcount(squares)
    k = ((v >> 16) & 0xFFFF) + crowns
    at = U(territory(t, n))
    pre[lvl, at] = comp
    pre[lvl, at + 1] = size | (k << 16) | (size * k << 32)
    pre[lvl, U(FR_COUNT + t)] = n + 1
    pre[lvl, FR_POINTS] += size * k - (v >> 32)


@kernel(inline="always")
def frame_place(pre, lvl, domino, entry):
    """Update the frame of a 5x5 kingdom (row lvl of pre) for the placement of `domino` at entry
    `entry` (its layout unchanged: not the kingdom's first placement): as `prepare_frame` would
    frame the kingdom after it, but for territories without a free square next to them."""
    stride = pre[lvl, FR_STRIDE]
    q = entry & 63
    _put_halves(pre, lvl, domino, 1 << q, 1 << (q + word64.step(entry >> 6, stride)))


@kernel(inline="always")
def rows_frame_place(bbox, p, size, pre, lvl, domino, action):
    """`frame_place` for a 7x7 kingdom (bbox[p]: before the placement) at place action `action`;
    False, the frame unchanged, when the placement moves the frame's square (the kingdom no longer
    centred, or its top left corner moved): it is then to be framed anew."""
    drc = ACTION_DRC[U(action)]
    d = drc >> 8
    r = (drc >> 4) & 15
    c = drc & 15
    rb = r + DIR_ROW[d]
    cb = c + DIR_COL[d]
    rmin = min(bbox[p, 0], r, rb)
    cmin = min(bbox[p, 2], c, cb)
    h = size // 2
    centred = (rmin >= CENTER - h and max(bbox[p, 1], r, rb) <= CENTER + h
               and cmin >= CENTER - h and max(bbox[p, 3], c, cb) <= CENTER + h)
    if centred != (pre[lvl, FR_CENTER] != 0):
        return False
    if not centred and (rmin != bbox[p, 0] or cmin != bbox[p, 2]):
        return False
    r0 = pre[lvl, FR_R0]
    c0 = pre[lvl, FR_C0]
    _put_halves(pre, lvl, domino, 1 << ((r - r0) * 8 + c - c0), 1 << ((rb - r0) * 8 + cb - c0))
    return True


@kernel(inline="always")
def _put_halves(pre, lvl, domino, a, b):
    """The framed kingdom updated for `domino` put with half a on frame square bit a, half b on
    b (`frame_place`)."""
    stride = pre[lvl, FR_STRIDE]
    d = U(domino)
    ta = TILE_TERRAIN[d, 0]
    tb = TILE_TERRAIN[d, 1]
    ka = TILE_CROWNS[d, 0]
    kb = TILE_CROWNS[d, 1]
    pre[lvl, OCC] |= a | b
    pre[lvl, U(ta)] |= a
    pre[lvl, U(tb)] |= b
    pre[lvl, CROWN1] |= a * (ka & 1) | b * (kb & 1)
    pre[lvl, CROWN2] |= a * (ka >> 1) | b * (kb >> 1)
    pre[lvl, FR_LAND] += 2
    if ta == tb:
        _join(pre, lvl, ta, neighbours(a | b, stride), a | b, ka + kb)
    else:
        _join(pre, lvl, ta, neighbours(a, stride), a, ka)
        _join(pre, lvl, tb, neighbours(b, stride), b, kb)
    _placement_masks(pre, lvl)


@kernel(inline="always")
def key_bound(pre, lvl, flags, complete, centred, domino, points):
    """A bound no key of a placement of `domino` on the kingdom framed in row lvl of pre (its
    territory points `points`; `centred`: it is now) exceeds, nor its discard's: as if each half
    joined every territory of its terrain (a gain only grows with the territories joined):
    `gain` with every square next to both halves."""
    gained = gain(pre, lvl, domino, -1, -1)
    if flags & FLAG_HARMONY and complete:
        gained += 5
    if flags & FLAG_MIDDLE and centred:
        gained += 10
    return ((1 if centred else 0) << S2_SHIFT) | (points + gained)


@kernel(inline="always")
def joined_points(v, squares, crowns):
    """Points gained by `squares` new squares with `crowns` crowns joining the territories summed
    in v (`touching`), all of one terrain."""
    n = v & 0xFFFF
    k = (v >> 16) & 0xFFFF
    return (n + squares) * (k + crowns) - (v >> 32)


@kernel(inline="always")
def gain(pre, lvl, domino, around_a, around_b):
    """Territory points `domino` adds with half a next to the frame squares around_a, half b next
    to around_b: each half joins the territories of its terrain it touches."""
    d = U(domino)
    ta = TILE_TERRAIN[d, 0]
    tb = TILE_TERRAIN[d, 1]
    ka = TILE_CROWNS[d, 0]
    kb = TILE_CROWNS[d, 1]
    if ta == tb:
        return joined_points(touching(pre, lvl, ta, around_a | around_b), 2, ka + kb)
    return (joined_points(touching(pre, lvl, ta, around_a), 1, ka)
            + joined_points(touching(pre, lvl, tb, around_b), 1, kb))


@kernel(inline="always")
def _key(pre, lvl, flags, complete, gained, centred, ok):
    points = gained
    if flags & FLAG_HARMONY and complete:
        points += 5
    if centred and flags & FLAG_MIDDLE:
        points += 10
    return (ok << S2_SHIFT) | points


@kernel(inline="always")
def _around(pre, lvl, r, c):
    """The frame squares next to frame coordinates (r, c), which may lie off the frame."""
    stride = pre[lvl, FR_STRIDE]
    out = 0
    for dd in range(4):
        rr = r + DIR_ROW[dd]
        cc = c + DIR_COL[dd]
        if 0 <= rr < pre[lvl, FR_ROWS] and 0 <= cc < pre[lvl, FR_COLS]:
            out |= 1 << (rr * stride + cc)
    return out


@kernel(inline="always")
def action_squares(pre, lvl, action):
    """(around a, around b, square a, square b, direction) of place action `action` on the frame
    in row lvl of pre; a square off the frame is -1."""
    d = action // (G * G)
    r = (action // G) % G - pre[lvl, FR_R0]
    c = action % G - pre[lvl, FR_C0]
    rb = r + DIR_ROW[d]
    cb = c + DIR_COL[d]
    n_rows = pre[lvl, FR_ROWS]
    cols = pre[lvl, FR_COLS]
    stride = pre[lvl, FR_STRIDE]
    qa = r * stride + c if 0 <= r < n_rows and 0 <= c < cols else -1
    qb = rb * stride + cb if 0 <= rb < n_rows and 0 <= cb < cols else -1
    return _around(pre, lvl, r, c), _around(pre, lvl, rb, cb), qa, qb, d


@kernel(inline="always")
def action_key(pre, lvl, flags, complete, domino, action, points):
    """The key of place action `action` of `domino` on the kingdom framed in row lvl of pre,
    whose territory points are `points`."""
    around_a, around_b, qa, qb, d = action_squares(pre, lvl, action)
    centred = ok = 0
    if qa >= 0 and qb >= 0:
        centred = (pre[lvl, U(FR_CENTRED + d)] >> qa) & 1
        ok = (pre[lvl, U(FR_OK + d)] >> qa) & 1
    return _key(pre, lvl, flags, complete, points + gain(pre, lvl, domino, around_a, around_b),
                centred, ok)


@kernel(inline="always")
def entry_key(pre, lvl, size, flags, complete, domino, entry, points):
    """`action_key` of a placement entry (see `frame_placements`)."""
    if size == word64.SIZE:
        q = entry & 63
        d = entry >> 6
        stride = pre[lvl, FR_STRIDE]
        around_a = neighbours(1 << q, stride)
        around_b = neighbours(1 << (q + word64.step(d, stride)), stride)
        return _key(pre, lvl, flags, complete, points + gain(pre, lvl, domino, around_a, around_b),
                    (pre[lvl, U(FR_CENTRED + d)] >> q) & 1, (pre[lvl, U(FR_OK + d)] >> q) & 1)
    return action_key(pre, lvl, flags, complete, domino, entry, points)


@kernel(inline="always")
def frame_placements(bits, bbox, p, size, domino, sc, ac, lvl):
    """The legal placements of `domino` as entries into ac[lvl], in action order; their number. A
    5x5 kingdom's frame is its layout: its entries are direction << 6 | layout square of half a,
    with no action to decode; other kingdoms' are place actions."""
    if size == word64.SIZE:
        right, down, left, up = word64.moves(bits, p, domino)
        return word64.write_moves(right, down, left, up, ac, lvl)
    if legal_moves(bits, bbox, p, size, domino, sc, lvl) == 0:
        return 0
    return moves_to_actions(sc, lvl, size, ac, lvl)


@kernel(inline="always")
def entry_action(bits, p, size, entry):
    """The place action of a placement entry of kingdom p."""
    if size == word64.SIZE:
        return word64.move_action(bits[U(p), word64.LAYOUT], entry >> 6, entry & 63)
    return entry


# rows of the placement lists' work array (`ac`, of kernels.work_buffers) beyond the lists: a
# domino's keys are computed for all its placements at once, one step at a time (LLVM makes
# vector instructions of such loops)
AROUND_A = 3
AROUND_B = 4
TOUCH_A = 5
TOUCH_B = 6
SPOT = 7
AC_ROWS = 8


@kernel(inline="always")
def _add_touching(pre, lvl, t, around_row, ac, out_row, n):
    """ac[out_row, j] += the territories of terrain t with a square in ac[around_row, j]
    (`touching` for every placement j < n)."""
    for i in range(pre[lvl, U(FR_COUNT + t)]):
        at = U(territory(t, i))
        comp = pre[lvl, at]
        pack = pre[lvl, at + 1]
        for j in range(n):
            ac[out_row, j] += pack if comp & ac[around_row, j] else 0


@kernel(inline="always")
def _touch_rows(pre, plvl, domino, ac, n):
    """TOUCH_A and TOUCH_B of the n placements from their AROUND_A and AROUND_B rows: the
    territories each half joins (both halves' in TOUCH_A when they are of one terrain)."""
    for j in range(n):
        ac[TOUCH_A, j] = 0
        ac[TOUCH_B, j] = 0
    d = U(domino)
    ta = TILE_TERRAIN[d, 0]
    tb = TILE_TERRAIN[d, 1]
    if ta == tb:  # both halves join the same territories
        for j in range(n):
            ac[AROUND_A, j] |= ac[AROUND_B, j]
    _add_touching(pre, plvl, ta, AROUND_A, ac, TOUCH_A, n)
    if ta != tb:
        _add_touching(pre, plvl, tb, AROUND_B, ac, TOUCH_B, n)


@kernel(inline="always")
def _gained(ac, j, domino):
    """Territory points placement j adds (`gain`), from its TOUCH_A and TOUCH_B."""
    d = U(domino)
    ka = TILE_CROWNS[d, 0]
    kb = TILE_CROWNS[d, 1]
    if TILE_TERRAIN[d, 0] == TILE_TERRAIN[d, 1]:
        return joined_points(ac[TOUCH_A, j], 2, ka + kb)
    return joined_points(ac[TOUCH_A, j], 1, ka) + joined_points(ac[TOUCH_B, j], 1, kb)


@kernel(inline="always")
def _word_keys(pre, plvl, flags, complete, domino, points, ac, lvl, n):
    """entry_key of the n entries of a 5x5 kingdom in ac[lvl], each left there as scan_keys does."""
    stride = pre[plvl, FR_STRIDE]
    n = (n + 7) & -8  # whole vectors of 8: the lanes past the list compute nothing read
    for j in range(n):
        q = ac[lvl, j] & 63
        a = 1 << q
        b = 1 << (q + word64.step(ac[lvl, j] >> 6, stride))
        ac[AROUND_A, j] = neighbours(a, stride)
        ac[AROUND_B, j] = neighbours(b, stride)
    _touch_rows(pre, plvl, domino, ac, n)
    base = points + (5 if flags & FLAG_HARMONY and complete else 0)
    middle = 10 if flags & FLAG_MIDDLE else 0
    c0 = pre[plvl, FR_CENTRED]
    c1 = pre[plvl, FR_CENTRED + 1]
    c2 = pre[plvl, FR_CENTRED + 2]
    c3 = pre[plvl, FR_CENTRED + 3]
    o0 = pre[plvl, FR_OK]
    o1 = pre[plvl, FR_OK + 1]
    o2 = pre[plvl, FR_OK + 2]
    o3 = pre[plvl, FR_OK + 3]
    for j in range(n):
        entry = ac[lvl, j]
        q = entry & 63
        d = entry >> 6
        centred = ((c0 if d == 0 else c1 if d == 1 else c2 if d == 2 else c3) >> q) & 1
        ok = ((o0 if d == 0 else o1 if d == 1 else o2 if d == 2 else o3) >> q) & 1
        key = (ok << S2_SHIFT) | (base + _gained(ac, j, domino) + middle * centred)
        ac[lvl, j] = (key << KEY_SHIFT) | entry


def _rows_near():
    """ROWS_NEAR[(r + 2) * 11 + c + 2]: the squares of a 7x7 frame (8 bits a row) next to frame
    square (r, c), -2 <= r, c <= 8 (a placement's halves lie at most two squares off the frame),
    bits of row 7 and column 7 included (no territory holds them)."""
    out = np.zeros(11 * 11, dtype=np.int64)
    for r in range(-2, 9):
        for c in range(-2, 9):
            for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
                if 0 <= rr < 8 and 0 <= cc < 8:
                    out[(r + 2) * 11 + c + 2] |= np.int64(1 << (rr * 8 + cc) if rr * 8 + cc < 63
                                                          else -(1 << 63))
    out.flags.writeable = False
    return out


ROWS_NEAR = _rows_near()


# a place action's direction, row and column: d << 8 | r << 4 | c (7x7 keys: no division)
ACTION_DRC = np.array([(a // (G * G)) << 8 | ((a // G) % G) << 4 | a % G
                       for a in range(4 * G * G)], dtype=np.int64)
ACTION_DRC.flags.writeable = False


@kernel(inline="always")
def _rows_keys(pre, plvl, flags, complete, domino, points, ac, lvl, n):
    """entry_key of the n entries of a 7x7 kingdom in ac[lvl], each left there as scan_keys does:
    as _word_keys, the touching territories summed for all the placements at once. The frame
    square of half a and the direction wait in row SPOT (-1 when a half lies off the frame)."""
    r0 = pre[plvl, FR_R0]
    c0 = pre[plvl, FR_C0]
    for j in range(n):
        drc = ACTION_DRC[U(ac[lvl, j])]
        d = drc >> 8
        r = ((drc >> 4) & 15) - r0
        c = (drc & 15) - c0
        rb = r + (d == 1) - (d == 3)
        cb = c + (d == 0) - (d == 2)
        ac[AROUND_A, j] = ROWS_NEAR[U((r + 2) * 11 + c + 2)]
        ac[AROUND_B, j] = ROWS_NEAR[U((rb + 2) * 11 + cb + 2)]
        inside = 0 <= min(r, rb) and max(r, rb) < 7 and 0 <= min(c, cb) and max(c, cb) < 7
        ac[SPOT, j] = (d << 6) | (r * 8 + c) if inside else -1
    _touch_rows(pre, plvl, domino, ac, n)
    base = points + (5 if flags & FLAG_HARMONY and complete else 0)
    middle = 10 if flags & FLAG_MIDDLE else 0
    for j in range(n):
        spot = ac[SPOT, j]
        on = np.int64(spot >= 0)  # no branch: whether a half lies off the frame is not predictable
        q = spot & 63
        centred = (pre[plvl, U(FR_CENTRED + ((spot >> 6) & 3))] >> q) & on
        ok = (pre[plvl, U(FR_OK + ((spot >> 6) & 3))] >> q) & on
        key = (ok << S2_SHIFT) | (base + _gained(ac, j, domino) + middle * centred)
        ac[lvl, j] = (key << KEY_SHIFT) | ac[lvl, j]


@kernel(inline="always")
def scan_keys(pre, plvl, size, flags, complete, domino, points, ac, lvl, n):
    """The keys of the n placement entries in ac[lvl] of the kingdom framed in row plvl of pre
    (territory points `points`), each left in ac[lvl, i] as key << KEY_SHIFT | entry (a caller may
    keep the list); returns (the best key, the index of its first placement)."""
    if size == word64.SIZE:
        _word_keys(pre, plvl, flags, complete, domino, points, ac, lvl, n)
    else:
        _rows_keys(pre, plvl, flags, complete, domino, points, ac, lvl, n)
    best = -1
    best_i = 0
    for i in range(n):  # selects, not branches: which keys are larger is not predictable
        k = ac[lvl, i] >> KEY_SHIFT
        best_i = i if k > best else best_i
        best = max(best, k)
    return best, best_i


@kernel(inline="always")
def best_key(bits, bbox, p, size, flags, complete, domino, pre, plvl, points, sc, ac, lvl):
    """best_spot with the kingdom already framed in row plvl of pre (its territory points
    `points`), the placements listed in ac[lvl] (left there as `scan_keys` leaves them)."""
    n = frame_placements(bits, bbox, p, size, domino, sc, ac, lvl)
    if n == 0:
        ok = 1 if is_centered(bbox, p, size) else 0
        return (ok << S2_SHIFT) | (points + bonus_points(bbox, p, size, flags, False)), DISCARD
    best, best_i = scan_keys(pre, plvl, size, flags, complete, domino, points, ac, lvl, n)
    return best, entry_action(bits, p, size, ac[lvl, best_i] & ENTRY_MASK)


@kernel
def best_spot(bits, bbox, p, size, flags, complete, domino, kb, bb, sc, ac, lvl):
    """Best placement of `domino` in kingdom p: returns (key, action).

    ok is 1 when the best spot leaves no new hole and stays centred; score counts bonuses with
    Harmony while `complete`. A domino without a placement is discarded (Harmony lost). Uses level
    `lvl` of the work buffers (`kernels.work_buffers`). Ties go to the first placement found.
    """
    points = prepare_frame(bits, bbox, p, size, kb, lvl)
    return best_key(bits, bbox, p, size, flags, complete, domino, kb, lvl, points, sc, ac, lvl)
