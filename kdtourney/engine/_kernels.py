"""Numba kernels of the engine: arrays and ints in, arrays and ints out. No validation here.

One kingdom is `bits[PLANES, G]`, int64 row masks on a G x G grid (G = 13) with the castle fixed at
(CENTER, CENTER); bit c of row r is the square (r, c). `bbox[4]` is rmin, rmax, cmin, cmax of the
occupied squares, castle included. A 5x5 kingdom uses at most rows and columns 2..10 of the grid,
a 7x7 one 0..12.

    plane 0       OCC     occupied squares, castle included
    planes 1..6           squares of terrain WHEAT..MINE (the castle is in none of them)
    plane 7       CROWN1  squares whose crown count has bit 0 set (1 or 3 crowns)
    plane 8       CROWN2  squares whose crown count has bit 1 set (2 or 3 crowns)
    planes 9..14  NEAR+t  squares orthogonally next to terrain t or to the castle (kept up to date
                          by set_square, so that legality is a few mask operations per row)

            col 0 1 2 3 4 5 6 7 8 9 10 11 12
      row 0     . . . . . . . . . . .  .  .
      row 6     . . . . . . C . . . .  .  .     castle at (6, 6)
      row 12    . . . . . . . . . . .  .  .

A whole game is `bits[players, PLANES, G]`, `bbox[players, 4]` and `st[ST_LEN]`, the int64 vector
laid out by the ST_* offsets below. Actions are ints:

    0 .. 675        place: (direction * G + row) * G + col; (row, col) is the grid square of half a,
                    direction is where half b lies from half a: 0 right, 1 down, 2 left, 3 up
    DISCARD = 676   discard the domino (legal only when it has no legal placement)
    CLAIM_BASE + n  claim domino number n of the new row (1001 .. 1048)

Randomness comes from `rng`, a uint64[1] splitmix64 state, so that a seed fixes everything.
"""

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core.extending import intrinsic

from kdtourney import _jit_cache  # noqa: F401  (before any njit(cache=True): caches outside the package)
from kdtourney.engine.tiles import CASTLE, TILE_CROWNS, TILE_TERRAIN

G = 13
CENTER = 6
CASTLE_BIT = 1 << CENTER
OCC = 0
CROWN1 = 7
CROWN2 = 8
NEAR = 8           # planes NEAR + t (9..14): squares next to terrain t or to the castle
PLANES = 15
DIR_ROW = np.array([0, 1, 0, -1], dtype=np.int64)
DIR_COL = np.array([1, 0, -1, 0], dtype=np.int64)
N_PLACE_ACTIONS = 4 * G * G
DISCARD = N_PLACE_ACTIONS
CLAIM_BASE = 1000
MAX_ACTIONS = N_PLACE_ACTIONS  # an upper bound on the number of legal actions

# Scratch (int64[SCRATCH_ROWS, G]): rows 0..3 legal masks per direction; row WINDOW holds the
# first and last grid row that legal_masks wrote.
SCRATCH_ROWS = 5
WINDOW = 4

# Game state offsets.
ST_PLAYERS = 0
ST_SIZE = 1
ST_ROW_LEN = 2
ST_KINGS = 3       # kings in the game, all players together
ST_DECK_LEN = 4    # dominoes in play
ST_DECK_POS = 5    # next undrawn position in the deck
ST_ROUND = 6       # 0: the first row is being claimed; k: the k-th row is being placed
ST_PHASE = 7
ST_SLOT = 8        # the acting king: index into the current row (or FIRST_ORDER in round 0)
ST_PLAYER = 9      # the player to act, -1 when the game is over
ST_FLAGS = 10
ST_CUR_ROW = 12    # 4 dominoes being placed this round, ascending; 0 = no domino
ST_CUR_OWNER = 16  # their owners; -1 = unclaimed (discarded in the 3-player "bga" setup)
ST_NEW_ROW = 20    # 4 dominoes of the new row, ascending; all 0 in the last round
ST_NEW_OWNER = 24  # who claimed them so far; -1 = free
ST_FIRST_ORDER = 28  # 4 players: the order in which kings claim the first row
ST_DISCARDS = 32   # 4 counts of discarded dominoes
ST_DECK = 36       # 48 domino numbers; the first DECK_LEN are in play, in drawing order
ST_LEN = ST_DECK + 48

PHASE_PLACE = 0
PHASE_CLAIM = 1
PHASE_OVER = 2

FLAG_HARMONY = 1
FLAG_MIDDLE = 2
FLAG_TIEBREAK_TERRITORY = 4
FLAG_ABBA = 8

# Per-player result columns of `score_game`.
RES_TOTAL = 0
RES_TERRITORIES = 1
RES_BONUS = 2
RES_LARGEST = 3
RES_CROWNS = 4
RES_COLS = 5

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


# ---------------------------------------------------------------------------------------------
# Bit counting (LLVM's ctpop and cttz: one instruction each on current CPUs)


@intrinsic
def popcount(typingctx, x):
    """Number of set bits of an int64."""
    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])
    return types.int64(types.int64), codegen


@intrinsic
def trailing_zeros(typingctx, x):
    """Index of the lowest set bit of a non-zero int64."""
    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 1))
    return types.int64(types.int64), codegen


# ---------------------------------------------------------------------------------------------
# Random numbers


@njit(cache=True, inline="always")
def rand_u64(rng):
    """Next splitmix64 output; rng: uint64[1] state."""
    s = rng[0] + _GOLDEN
    rng[0] = s
    z = (s ^ (s >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def rand_below(rng, n):
    """Uniform int in [0, n) for 0 < n < 2**31."""
    return np.int64(((rand_u64(rng) >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))


# ---------------------------------------------------------------------------------------------
# One kingdom


@njit(cache=True)
def clear_kingdom(bits, bbox):
    """Empty kingdom with only the castle: bits int64[PLANES, G], bbox int64[4]."""
    bits[:, :] = 0
    bits[OCC, CENTER] = CASTLE_BIT
    for t in range(1, 7):  # the castle is wild: every terrain may connect to it
        bits[NEAR + t, CENTER - 1] = CASTLE_BIT
        bits[NEAR + t, CENTER + 1] = CASTLE_BIT
        bits[NEAR + t, CENTER] = (CASTLE_BIT << 1) | (CASTLE_BIT >> 1)
    bbox[0] = CENTER
    bbox[1] = CENTER
    bbox[2] = CENTER
    bbox[3] = CENTER


@njit(cache=True)
def legal_masks(bits, bbox, size, domino, scr):
    """Legal placements of `domino` as row masks of half a's square, one set per direction.

    bits int64[PLANES, G], bbox int64[4], scr int64[SCRATCH_ROWS, G]: rows 0..3 receive the masks
    of the window rows scr[WINDOW, 0] ..= scr[WINDOW, 1] (other rows are stale). Returns the number
    of distinct placements; a domino with two identical halves only uses directions 0 and 1.
    """
    ta = TILE_TERRAIN[domino, 0]
    tb = TILE_TERRAIN[domino, 1]
    symmetric = ta == tb and TILE_CROWNS[domino, 0] == TILE_CROWNS[domino, 1]
    other_way = 0 if symmetric else -1  # directions 2 and 3 repeat 0 and 1 for a symmetric domino
    na_plane = NEAR + ta
    nb_plane = NEAR + tb
    # Rows of half a: inside the size x size limit, and at most two rows from the kingdom (one
    # half must touch it).
    r0 = max(bbox[1] - size + 1, bbox[0] - 2, 0)
    r1 = min(bbox[0] + size - 1, bbox[1] + 2, G - 1)
    c0 = max(bbox[3] - size + 1, 0)
    c1 = min(bbox[2] + size - 1, G - 1)
    window = ((1 << (c1 + 1)) - 1) ^ ((1 << c0) - 1)
    scr[WINDOW, 0] = r0
    scr[WINDOW, 1] = r1
    n = 0
    e_above = 0  # empty squares of the rows above, here and below, rolled down the window
    e = ~bits[OCC, r0] & window
    nb_above = bits[nb_plane, r0 - 1] if r0 > 0 else 0
    nb = bits[nb_plane, r0]
    for r in range(r0, r1 + 1):
        if r < r1:
            e_below = ~bits[OCC, r + 1] & window
            nb_below = bits[nb_plane, r + 1]
        else:
            e_below = 0
            nb_below = 0
        na = bits[na_plane, r]
        m = e & (e >> 1) & (na | (nb >> 1))
        scr[0, r] = m
        n += popcount(m)
        m = e & e_below & (na | nb_below)
        scr[1, r] = m
        n += popcount(m)
        m = e & (e << 1) & (na | (nb << 1)) & other_way
        scr[2, r] = m
        n += popcount(m)
        m = e & e_above & (na | nb_above) & other_way
        scr[3, r] = m
        n += popcount(m)
        e_above = e
        e = e_below
        nb_above = nb
        nb = nb_below
    return n


@njit(cache=True)
def masks_to_actions(scr, out):
    """Write the placement actions of the masks in scr rows 0..3 to out; return their number."""
    n = 0
    for d in range(4):
        for r in range(scr[WINDOW, 0], scr[WINDOW, 1] + 1):
            m = scr[d, r]
            while m:
                out[n] = (d * G + r) * G + trailing_zeros(m)
                n += 1
                m &= m - 1
    return n


@njit(cache=True, inline="always")
def _select_bit(m, k):
    """Index of the k-th (0-based) set bit of a row mask (< 2**16), by halving without branches."""
    pos = 0
    for width in (8, 4, 2, 1):
        low = popcount(m & ((1 << width) - 1))
        up = np.int64(k >= low)
        pos += width * up
        k -= low * up
        m >>= width * up
    return pos


@njit(cache=True, inline="always")
def kth_action(scr, k):
    """The k-th (0-based) placement action of the masks in scr rows 0..3, in masks_to_actions order."""
    for d in range(4):
        for r in range(scr[WINDOW, 0], scr[WINDOW, 1] + 1):
            m = scr[d, r]
            c = popcount(m)
            if k < c:
                return (d * G + r) * G + _select_bit(m, k)
            k -= c
    return DISCARD


@njit(cache=True)
def is_legal_placement(bits, bbox, size, domino, action, scr):
    """True when place-action `action` is a legal placement of `domino`."""
    if action < 0 or action >= N_PLACE_ACTIONS:
        return False
    legal_masks(bits, bbox, size, domino, scr)
    d = action // (G * G)
    r = (action // G) % G
    c = action % G
    return scr[WINDOW, 0] <= r <= scr[WINDOW, 1] and (scr[d, r] >> c) & 1 == 1


@njit(cache=True, inline="always")
def set_square(bits, r, c, terrain, crowns):
    """Put one square of land on the grid (no legality check)."""
    bit = 1 << c
    bits[OCC, r] |= bit
    bits[terrain, r] |= bit
    bits[CROWN1, r] |= bit * (crowns & 1)  # multiplications, not branches: crowns are random
    bits[CROWN2, r] |= bit * ((crowns >> 1) & 1)
    near = bits[NEAR + terrain]
    near[r] |= (bit << 1) | (bit >> 1)
    if r > 0:
        near[r - 1] |= bit
    if r < G - 1:
        near[r + 1] |= bit


@njit(cache=True)
def list_squares(bits, bbox, out):
    """Write every occupied square, castle included (terrain CASTLE), to out int64[>= 49, 4] as
    (row, col, terrain, crowns), row and col relative to the castle, row by row and left to right;
    return their number."""
    n = 0
    for r in range(bbox[0], bbox[1] + 1):
        m = bits[OCC, r]
        while m:
            c = trailing_zeros(m)
            m &= m - 1
            terrain = 1
            if r == CENTER and c == CENTER:
                terrain = CASTLE
            else:
                while not (bits[terrain, r] >> c) & 1:
                    terrain += 1
            out[n, 0] = r - CENTER
            out[n, 1] = c - CENTER
            out[n, 2] = terrain
            out[n, 3] = ((bits[CROWN1, r] >> c) & 1) + 2 * ((bits[CROWN2, r] >> c) & 1)
            n += 1
    return n


@njit(cache=True)
def set_squares(bits, bbox, squares, n):
    """Make bits/bbox the kingdom of the castle and the n squares (row, col, terrain, crowns) of
    squares int64[>= n, 4], row and col relative to the castle, terrain WHEAT..MINE (no legality
    check)."""
    clear_kingdom(bits, bbox)
    for i in range(n):
        r = squares[i, 0] + CENTER
        c = squares[i, 1] + CENTER
        set_square(bits, r, c, squares[i, 2], squares[i, 3])
        bbox[0] = min(bbox[0], r)
        bbox[1] = max(bbox[1], r)
        bbox[2] = min(bbox[2], c)
        bbox[3] = max(bbox[3], c)


@njit(cache=True, inline="always")
def place(bits, bbox, domino, action):
    """Put `domino` on the squares of place-action `action` (no legality check)."""
    d = action // (G * G)
    r = (action // G) % G
    c = action % G
    rb = r + DIR_ROW[d]
    cb = c + DIR_COL[d]
    set_square(bits, r, c, TILE_TERRAIN[domino, 0], TILE_CROWNS[domino, 0])
    set_square(bits, rb, cb, TILE_TERRAIN[domino, 1], TILE_CROWNS[domino, 1])
    bbox[0] = min(bbox[0], r, rb)
    bbox[1] = max(bbox[1], r, rb)
    bbox[2] = min(bbox[2], c, cb)
    bbox[3] = max(bbox[3], c, cb)


@njit(cache=True, inline="always")
def _packed(bits, plane, r0, r1, c0):
    """Rows r0..r1 of a plane, shifted to start at column c0, packed 8 bits a row into one int64.

    A kingdom is at most 7 wide, so bit 7 of every packed row stays 0 and stops the shifts in
    `score_territories` from wrapping from one row into the next.
    """
    w = 0
    for r in range(r0, r1 + 1):
        w |= ((bits[plane, r] >> c0) & 0x7F) << (8 * (r - r0))
    return w


@njit(cache=True, inline="always")
def _territories(rest, crown1, crown2):
    """(points, largest squares) of the territories in packed word `rest` (one terrain)."""
    points = 0
    largest = 0
    while rest:
        comp = rest & -rest
        while True:  # flood fill: grow by one square in every direction until it stops
            grown = (comp | (comp << 1) | (comp >> 1) | (comp << 8) | (comp >> 8)) & rest
            if grown == comp:
                break
            comp = grown
        squares = popcount(comp)
        points += squares * (popcount(comp & crown1) + 2 * popcount(comp & crown2))
        largest = max(largest, squares)
        rest &= ~comp
    return points, largest


@njit(cache=True)
def score_territories(bits, bbox):
    """Whole kingdom without bonuses: returns (territory points, largest territory, crowns)."""
    r0 = bbox[0]
    r1 = bbox[1]
    c0 = bbox[2]
    crown1 = _packed(bits, CROWN1, r0, r1, c0)
    crown2 = _packed(bits, CROWN2, r0, r1, c0)
    points = 0
    largest = 0
    for t in range(1, 7):
        p, big = _territories(_packed(bits, t, r0, r1, c0), crown1, crown2)
        points += p
        largest = max(largest, big)
    return points, largest, popcount(crown1) + 2 * popcount(crown2)


@njit(cache=True)
def is_centered(bbox, size):
    """Middle Kingdom: every square within the size x size square centred on the castle."""
    h = size // 2
    return bbox[0] >= CENTER - h and bbox[1] <= CENTER + h and bbox[2] >= CENTER - h and bbox[3] <= CENTER + h


@njit(cache=True)
def bonus_points(bbox, size, flags, complete):
    """Harmony (+5, when `complete`) and Middle Kingdom (+10) as switched on in `flags`."""
    bonus = 0
    if flags & FLAG_HARMONY and complete:
        bonus += 5
    if flags & FLAG_MIDDLE and is_centered(bbox, size):
        bonus += 10
    return bonus


# ---------------------------------------------------------------------------------------------
# A game


@njit(cache=True, inline="always")
def _draw_row(st):
    """Draw the next row into NEW_ROW, ascending; an empty row when the deck is used up."""
    n = st[ST_ROW_LEN]
    pos = st[ST_DECK_POS]
    for j in range(4):
        st[ST_NEW_ROW + j] = 0
        st[ST_NEW_OWNER + j] = -1
    if pos + n > st[ST_DECK_LEN]:
        return
    # A sorting network of min/max (no branches on the random order); a row of 3 gets a 4th value
    # larger than any domino, which sorts last and is not written.
    a = st[ST_DECK + pos]
    b = st[ST_DECK + pos + 1]
    c = st[ST_DECK + pos + 2]
    d = st[ST_DECK + pos + 3] if n == 4 else 99
    a, b = min(a, b), max(a, b)
    c, d = min(c, d), max(c, d)
    a, c = min(a, c), max(a, c)
    b, d = min(b, d), max(b, d)
    b, c = min(b, c), max(b, c)
    st[ST_NEW_ROW] = a
    st[ST_NEW_ROW + 1] = b
    st[ST_NEW_ROW + 2] = c
    if n == 4:
        st[ST_NEW_ROW + 3] = d
    st[ST_DECK_POS] = pos + n


@njit(cache=True)
def init_game(bits, bbox, st, rng):
    """Set up a game from the header of st (ST_PLAYERS .. ST_FLAGS): deck, first pick order, first row."""
    players = st[ST_PLAYERS]
    for p in range(players):
        clear_kingdom(bits[p], bbox[p])
    for j in range(ST_CUR_ROW, ST_LEN):
        st[j] = 0
    for j in range(4):
        st[ST_CUR_OWNER + j] = -1
        st[ST_FIRST_ORDER + j] = -1
    for j in range(48):  # Fisher-Yates over the whole box; the first DECK_LEN are in play
        st[ST_DECK + j] = j + 1
    for j in range(47, 0, -1):
        k = rand_below(rng, j + 1)
        t = st[ST_DECK + j]
        st[ST_DECK + j] = st[ST_DECK + k]
        st[ST_DECK + k] = t
    kings = st[ST_KINGS]
    per_player = kings // players
    if st[ST_FLAGS] & FLAG_ABBA:
        st[ST_FIRST_ORDER + 0] = 0
        st[ST_FIRST_ORDER + 1] = 1
        st[ST_FIRST_ORDER + 2] = 1
        st[ST_FIRST_ORDER + 3] = 0
    else:
        for j in range(kings):
            st[ST_FIRST_ORDER + j] = j // per_player
        for j in range(kings - 1, 0, -1):
            k = rand_below(rng, j + 1)
            t = st[ST_FIRST_ORDER + j]
            st[ST_FIRST_ORDER + j] = st[ST_FIRST_ORDER + k]
            st[ST_FIRST_ORDER + k] = t
    st[ST_DECK_POS] = 0
    _draw_row(st)
    st[ST_ROUND] = 0
    st[ST_PHASE] = PHASE_CLAIM
    st[ST_SLOT] = 0
    st[ST_PLAYER] = st[ST_FIRST_ORDER]


@njit(cache=True, inline="always")
def _next_turn(st):
    """Move to the next king of the current row, or to the next round, or end the game."""
    slot = st[ST_SLOT] + 1
    while True:
        while slot < 4 and st[ST_CUR_OWNER + slot] < 0:
            slot += 1
        if slot < 4:
            st[ST_SLOT] = slot
            st[ST_PLAYER] = st[ST_CUR_OWNER + slot]
            st[ST_PHASE] = PHASE_PLACE
            return
        if st[ST_NEW_ROW] == 0:
            st[ST_PHASE] = PHASE_OVER
            st[ST_PLAYER] = -1
            st[ST_SLOT] = -1
            return
        for j in range(4):
            st[ST_CUR_ROW + j] = st[ST_NEW_ROW + j]
            st[ST_CUR_OWNER + j] = st[ST_NEW_OWNER + j]
        _draw_row(st)
        st[ST_ROUND] += 1
        slot = 0


@njit(cache=True, inline="always")
def domino_to_place(st):
    """The domino the acting king places now, 0 outside a place phase."""
    if st[ST_PHASE] != PHASE_PLACE:
        return 0
    return st[ST_CUR_ROW + st[ST_SLOT]]


@njit(cache=True, inline="always")
def _place_turn(bits, bbox, st, action):
    """The player to act places (or discards) the domino of its slot."""
    p = st[ST_PLAYER]
    if action == DISCARD:
        st[ST_DISCARDS + p] += 1
    else:
        place(bits[p], bbox[p], st[ST_CUR_ROW + st[ST_SLOT]], action)
    if st[ST_NEW_ROW] != 0:
        st[ST_PHASE] = PHASE_CLAIM
    else:
        _next_turn(st)


@njit(cache=True, inline="always")
def _claim_slot(st, j):
    """The player to act claims the domino at index j of the new row."""
    st[ST_NEW_OWNER + j] = st[ST_PLAYER]
    if st[ST_ROUND] == 0:
        st[ST_SLOT] += 1
        if st[ST_SLOT] < st[ST_KINGS]:
            st[ST_PLAYER] = st[ST_FIRST_ORDER + st[ST_SLOT]]
        else:
            st[ST_SLOT] = 4
            _next_turn(st)
    else:
        _next_turn(st)


@njit(cache=True)
def apply_action(bits, bbox, st, action):
    """Play `action` for the player to act (no legality check)."""
    if st[ST_PHASE] == PHASE_PLACE:
        _place_turn(bits, bbox, st, action)
        return
    for j in range(4):
        if st[ST_NEW_ROW + j] == action - CLAIM_BASE:
            _claim_slot(st, j)
            return


@njit(cache=True)
def legal_actions(bits, bbox, st, scr, out):
    """Write the legal actions of the player to act to out (int64[MAX_ACTIONS]); return their number."""
    phase = st[ST_PHASE]
    if phase == PHASE_OVER:
        return 0
    if phase == PHASE_CLAIM:
        n = 0
        for j in range(4):
            if st[ST_NEW_ROW + j] != 0 and st[ST_NEW_OWNER + j] < 0:
                out[n] = CLAIM_BASE + st[ST_NEW_ROW + j]
                n += 1
        return n
    p = st[ST_PLAYER]
    if legal_masks(bits[p], bbox[p], st[ST_SIZE], domino_to_place(st), scr) == 0:
        out[0] = DISCARD
        return 1
    return masks_to_actions(scr, out)


@njit(cache=True)
def is_legal(bits, bbox, st, action, scr):
    """True when `action` is legal for the player to act."""
    phase = st[ST_PHASE]
    if phase == PHASE_CLAIM:
        for j in range(4):
            if st[ST_NEW_ROW + j] != 0 and st[ST_NEW_OWNER + j] < 0 and action == CLAIM_BASE + st[ST_NEW_ROW + j]:
                return True
        return False
    if phase == PHASE_PLACE:
        p = st[ST_PLAYER]
        d = domino_to_place(st)
        if action == DISCARD:
            return legal_masks(bits[p], bbox[p], st[ST_SIZE], d, scr) == 0
        return is_legal_placement(bits[p], bbox[p], st[ST_SIZE], d, action, scr)
    return False


@njit(cache=True, inline="always")
def _random_free_slot(st, rng):
    """Index in the new row of a uniformly random free domino."""
    free = 0
    for j in range(4):
        free += (st[ST_NEW_ROW + j] != 0) & (st[ST_NEW_OWNER + j] < 0)
    k = rand_below(rng, free)
    chosen = 0
    seen = 0
    for j in range(4):  # the k-th free domino, written without branches on the random k
        is_free = (st[ST_NEW_ROW + j] != 0) & (st[ST_NEW_OWNER + j] < 0)
        chosen = j if is_free & (seen == k) else chosen
        seen += is_free
    return chosen


@njit(cache=True)
def random_claim(st, rng):
    """A uniformly random claim among the free dominoes of the new row."""
    return CLAIM_BASE + st[ST_NEW_ROW + _random_free_slot(st, rng)]


@njit(cache=True)
def random_action(bits, bbox, st, scr, rng):
    """A uniformly random legal action of the player to act."""
    if st[ST_PHASE] == PHASE_CLAIM:
        return random_claim(st, rng)
    p = st[ST_PLAYER]
    n = legal_masks(bits[p], bbox[p], st[ST_SIZE], domino_to_place(st), scr)
    if n == 0:
        return DISCARD
    return kth_action(scr, rand_below(rng, n))


@njit(cache=True)
def playout_random(bits, bbox, st, scr, rng):
    """Play uniformly random legal actions until the game is over."""
    # Written out rather than through random_action: LLVM then keeps the loop tight (+25% games/s).
    while st[ST_PHASE] != PHASE_OVER:
        if st[ST_PHASE] == PHASE_CLAIM:
            _claim_slot(st, _random_free_slot(st, rng))
            continue
        p = st[ST_PLAYER]
        n = legal_masks(bits[p], bbox[p], st[ST_SIZE], domino_to_place(st), scr)
        _place_turn(bits, bbox, st, DISCARD if n == 0 else kth_action(scr, rand_below(rng, n)))


@njit(cache=True)
def score_game(bits, bbox, st, scr, res):
    """Every player's score by the game's rules into res int64[players, RES_COLS]."""
    for p in range(st[ST_PLAYERS]):
        points, largest, crowns = score_territories(bits[p], bbox[p])
        bonus = bonus_points(bbox[p], st[ST_SIZE], st[ST_FLAGS], st[ST_DISCARDS + p] == 0)
        res[p, RES_TOTAL] = points + bonus
        res[p, RES_TERRITORIES] = points
        res[p, RES_BONUS] = bonus
        res[p, RES_LARGEST] = largest
        res[p, RES_CROWNS] = crowns


@njit(cache=True)
def rank_players(res, players, tiebreak_territory, ranks):
    """Ranks (1 = best, equals share a rank) by total, largest territory, then crowns."""
    for p in range(players):
        better = 0
        for q in range(players):
            if q == p:
                continue
            d = res[q, RES_TOTAL] - res[p, RES_TOTAL]
            if d == 0:
                d = res[q, RES_LARGEST] - res[p, RES_LARGEST]
            if d == 0 and not tiebreak_territory:
                d = res[q, RES_CROWNS] - res[p, RES_CROWNS]
            if d > 0:
                better += 1
        ranks[p] = better + 1


@njit(cache=True)
def resample_deck(st, rng):
    """Replace the undrawn part of the deck by a random order of the dominoes not yet seen."""
    pos = st[ST_DECK_POS]
    seen = 0  # bit n: domino n was drawn (no array: this runs once per playout)
    for j in range(pos):
        seen |= 1 << st[ST_DECK + j]
    k = ST_DECK + pos
    for v in range(1, 49):
        if not (seen >> v) & 1:
            st[k] = v
            k += 1
    for j in range(47, pos, -1):  # Fisher-Yates over the undrawn positions
        i = pos + rand_below(rng, j - pos + 1)
        t = st[ST_DECK + j]
        st[ST_DECK + j] = st[ST_DECK + i]
        st[ST_DECK + i] = t


@njit(cache=True)
def random_games(header, n_games, rng, res):
    """Play n_games uniformly random games from scratch (deck, picks, moves) and score them.

    header: int64[ST_CUR_ROW] state header (players, size, row length, kings, deck length, flags);
    res: int64[players, RES_COLS], summed over the games (so the work cannot be optimised away).
    """
    players = header[ST_PLAYERS]
    bits = np.zeros((players, PLANES, G), dtype=np.int64)
    bbox = np.zeros((players, 4), dtype=np.int64)
    st = np.zeros(ST_LEN, dtype=np.int64)
    scr = np.zeros((SCRATCH_ROWS, G), dtype=np.int64)
    one = np.zeros((players, RES_COLS), dtype=np.int64)
    for _ in range(n_games):
        st[:ST_CUR_ROW] = header
        init_game(bits, bbox, st, rng)
        playout_random(bits, bbox, st, scr, rng)
        score_game(bits, bbox, st, scr, one)
        res += one
