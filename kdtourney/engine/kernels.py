"""Numba kernels of a game: arrays and ints in, arrays and ints out. No validation here.

A game is `bits[players, width]`, `bbox[players, 4]` and `st[ST_LEN]`: kingdom p is (bits, bbox,
p, size), whose kernels live in `kingdom_kernels` (with the random numbers) and are named here
too, so that a caller finds every engine kernel in this module; grid, planes and actions are
described in `kernel_base`. st is the int64 vector laid out by the ST_* offsets below.
Randomness comes from `rng`, a uint64[1] splitmix64 state, so that a seed fixes everything.
"""

import numpy as np

from kdtourney.engine import rows, word64
from kdtourney.engine.kernel_base import (
    CENTER,
    CLAIM_BASE,
    CROWN1,
    CROWN2,
    DIR_COL,
    DIR_ROW,
    DISCARD,
    MAX_ACTIONS,
    N_PLACE_ACTIONS,
    OCC,
    G,
    kernel,
    popcount,
    select_bit,
)
from kdtourney.engine.kingdom_kernels import (  # the kingdom's kernels, named here too
    FLAG_HARMONY,
    FLAG_MIDDLE,
    SCRATCH,
    bonus_points,
    clear_kingdom,
    copy_kingdom,
    count_holes,
    draw_below,
    is_centered,
    is_legal_placement,
    kingdom_width,
    land_squares,
    legal_moves,
    list_squares,
    moves_to_actions,
    place,
    put_square,
    rand_below,
    rand_u64,
    random_move,
    random_placement,
    score_territories,
    scratch,
    set_squares,
    square,
    territory_points,
    window,
)
from kdtourney.engine.tiles import TILE_CROWNS, TILE_TERRAIN

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

FLAG_TIEBREAK_TERRITORY = 4
FLAG_ABBA = 8

# Per-player result columns of `score_game`.
RES_TOTAL = 0
RES_TERRITORIES = 1
RES_BONUS = 2
RES_LARGEST = 3
RES_CROWNS = 4
RES_COLS = 5



# ---------------------------------------------------------------------------------------------
# A game


@kernel(inline="always")
def _sorted_deck(st, pos, n):
    """The n (3 or 4) dominoes from deck position pos, ascending, as (a, b, c, d): a sorting
    network of min/max (no branches on the random order); a row of 3 gets a 4th value larger than
    any domino, which sorts last (d = 99)."""
    a = st[ST_DECK + pos]
    b = st[ST_DECK + pos + 1]
    c = st[ST_DECK + pos + 2]
    d = st[ST_DECK + pos + 3] if n == 4 else 99
    a, b = min(a, b), max(a, b)
    c, d = min(c, d), max(c, d)
    a, c = min(a, c), max(a, c)
    b, d = min(b, d), max(b, d)
    b, c = min(b, c), max(b, c)
    return a, b, c, d


@kernel(inline="always")
def _draw_row(st):
    """Draw the next row into NEW_ROW, ascending; an empty row when the deck is used up."""
    n = st[ST_ROW_LEN]
    pos = st[ST_DECK_POS]
    for j in range(4):
        st[ST_NEW_ROW + j] = 0
        st[ST_NEW_OWNER + j] = -1
    if pos + n > st[ST_DECK_LEN]:
        return
    a, b, c, d = _sorted_deck(st, pos, n)
    st[ST_NEW_ROW] = a
    st[ST_NEW_ROW + 1] = b
    st[ST_NEW_ROW + 2] = c
    if n == 4:
        st[ST_NEW_ROW + 3] = d
    st[ST_DECK_POS] = pos + n


@kernel(inline="always")
def _next_round(st):
    """The new row becomes the current row, with its claims; the next row is drawn."""
    for j in range(4):
        st[ST_CUR_ROW + j] = st[ST_NEW_ROW + j]
        st[ST_CUR_OWNER + j] = st[ST_NEW_OWNER + j]
    _draw_row(st)
    st[ST_ROUND] += 1


@kernel(inline="always")
def _end_game(st):
    st[ST_PHASE] = PHASE_OVER
    st[ST_PLAYER] = -1
    st[ST_SLOT] = -1


@kernel
def init_game(bits, bbox, st, rng):
    """Set up a game from the header of st (ST_PLAYERS .. ST_FLAGS): deck, first pick order,
    first row."""
    players = st[ST_PLAYERS]
    for p in range(players):
        clear_kingdom(bits, bbox, p, st[ST_SIZE])
    for j in range(ST_CUR_ROW, ST_LEN):
        st[j] = 0
    for j in range(4):
        st[ST_CUR_OWNER + j] = -1
        st[ST_FIRST_ORDER + j] = -1
    for j in range(48):  # Fisher-Yates over the whole box; the first DECK_LEN are in play
        st[ST_DECK + j] = j + 1
    s = rng[0]
    for j in range(47, 0, -1):
        s, k = draw_below(s, j + 1)
        t = st[ST_DECK + j]
        st[ST_DECK + j] = st[ST_DECK + k]
        st[ST_DECK + k] = t
    rng[0] = s
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


@kernel(inline="always")
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
            _end_game(st)
            return
        _next_round(st)
        slot = 0


@kernel(inline="always")
def domino_to_place(st):
    """The domino the acting king places now, 0 outside a place phase."""
    if st[ST_PHASE] != PHASE_PLACE:
        return 0
    return st[ST_CUR_ROW + st[ST_SLOT]]


@kernel(inline="always")
def _place_turn(bits, bbox, st, action):
    """The player to act places (or discards) the domino of its slot."""
    p = st[ST_PLAYER]
    if action == DISCARD:
        st[ST_DISCARDS + p] += 1
    else:
        place(bits, bbox, p, st[ST_SIZE], st[ST_CUR_ROW + st[ST_SLOT]], action)
    if st[ST_NEW_ROW] != 0:
        st[ST_PHASE] = PHASE_CLAIM
    else:
        _next_turn(st)


@kernel(inline="always")
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


@kernel
def apply_action(bits, bbox, st, action):
    """Play `action` for the player to act (no legality check)."""
    play_action(bits, bbox, st, action)


@kernel(inline="always")
def play_action(bits, bbox, st, action):
    """apply_action's body, for a loop that plays many (a playout): no call a move."""
    if st[ST_PHASE] == PHASE_PLACE:
        _place_turn(bits, bbox, st, action)
        return
    for j in range(4):
        if st[ST_NEW_ROW + j] == action - CLAIM_BASE:
            _claim_slot(st, j)
            return


@kernel
def legal_actions(bits, bbox, st, sc, out):
    """Write the legal actions of the player to act to out[0] (out: int64[1, MAX_ACTIONS]); return
    their number. Uses scratch row sc[0]."""
    phase = st[ST_PHASE]
    if phase == PHASE_OVER:
        return 0
    if phase == PHASE_CLAIM:
        n = 0
        for j in range(4):
            if st[ST_NEW_ROW + j] != 0 and st[ST_NEW_OWNER + j] < 0:
                out[0, n] = CLAIM_BASE + st[ST_NEW_ROW + j]
                n += 1
        return n
    size = st[ST_SIZE]
    if legal_moves(bits, bbox, st[ST_PLAYER], size, domino_to_place(st), sc, 0) == 0:
        out[0, 0] = DISCARD
        return 1
    return moves_to_actions(sc, 0, size, out, 0)


@kernel
def is_legal(bits, bbox, st, action, sc):
    """True when `action` is legal for the player to act. Uses scratch row sc[0]."""
    phase = st[ST_PHASE]
    if phase == PHASE_CLAIM:
        for j in range(4):
            if st[ST_NEW_ROW + j] != 0 and st[ST_NEW_OWNER + j] < 0 \
                    and action == CLAIM_BASE + st[ST_NEW_ROW + j]:
                return True
        return False
    if phase == PHASE_PLACE:
        p = st[ST_PLAYER]
        d = domino_to_place(st)
        if action == DISCARD:
            return legal_moves(bits, bbox, p, st[ST_SIZE], d, sc, 0) == 0
        return is_legal_placement(bits, bbox, p, st[ST_SIZE], d, action, sc, 0)
    return False


@kernel(inline="always")
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


@kernel
def random_claim(st, rng):
    """A uniformly random claim among the free dominoes of the new row."""
    return CLAIM_BASE + st[ST_NEW_ROW + _random_free_slot(st, rng)]


@kernel
def random_action(bits, bbox, st, sc, rng):
    """A uniformly random legal action of the player to act. Uses scratch row sc[0]."""
    if st[ST_PHASE] == PHASE_CLAIM:
        return random_claim(st, rng)
    action, rng[0] = random_placement(bits, bbox, st[ST_PLAYER], st[ST_SIZE], domino_to_place(st),
                                      sc, 0, rng[0])
    return action


@kernel(inline="always")
def _round_start(st):
    """True in a place phase before any king of the current row has acted."""
    if st[ST_PHASE] != PHASE_PLACE:
        return False
    for j in range(4):
        if st[ST_NEW_OWNER + j] >= 0:
            return False
    first = 0
    while st[ST_CUR_OWNER + first] < 0:
        first += 1
    return st[ST_SLOT] == first


@kernel(inline="always")
def _random_place(bits, bbox, p, size, domino, sc, s):
    """Play random_placement's choice (the same draw) for kingdom p: (placed, new state); False
    when the domino is discarded. Skips the action's encoding where it can."""
    if size == word64.SIZE:
        d, q, s = random_move(bits, p, domino, s)
        if d < 0:
            return False, s
        lay = bits[p, word64.LAYOUT]
        if lay == word64.START:
            place(bits, bbox, p, size, domino, word64.low_move_action(lay, d, q))
        else:
            word64.put_move(bits, bbox, p, domino, d, q)
        return True, s
    action, s = random_placement(bits, bbox, p, size, domino, sc, 0, s)
    if action == DISCARD:
        return False, s
    place(bits, bbox, p, size, domino, action)
    return True, s


@kernel(inline="always")
def _row_of(st, at, n):
    """4 values of st from `at` (the first n of them, the rest 0), 8 bits each (+ 1: -1 is 0)."""
    out = 0
    for j in range(n):
        out |= (st[at + j] + 1) << (8 * j)
    return out


@kernel(inline="always")
def _sorted_row(st, pos, n):
    """The next row drawn from deck position pos as _draw_row sorts it, packed as _row_of."""
    a, b, c, d = _sorted_deck(st, pos, n)
    out = (a + 1) | ((b + 1) << 8) | ((c + 1) << 16)
    return out | ((d + 1) << 24) if n == 4 else out | (1 << 24)


@kernel(inline="always")
def _unpack_row(st, at, row):
    for j in range(4):
        st[at + j] = ((row >> (8 * j)) & 255) - 1


@kernel
def playout_random(bits, bbox, st, sc, rng):
    """Play uniformly random legal actions until the game is over. Uses scratch row sc[0].

    Decision by decision up to the start of a round, then round by round: the turn order and the
    claims without the state machine of apply_action (the same actions and random draws), the rows,
    owners, deck position and random state in locals."""
    size = st[ST_SIZE]
    while st[ST_PHASE] != PHASE_OVER and not _round_start(st):
        if st[ST_PHASE] == PHASE_CLAIM:
            _claim_slot(st, _random_free_slot(st, rng))
        else:
            _place_turn(bits, bbox, st, random_action(bits, bbox, st, sc, rng))
    if st[ST_PHASE] == PHASE_OVER:
        return
    s = rng[0]
    n = st[ST_ROW_LEN]
    deck_len = st[ST_DECK_LEN]
    pos = st[ST_DECK_POS]
    rnd = st[ST_ROUND]
    cur = _row_of(st, ST_CUR_ROW, 4)  # dominoes and owners of the rows, 8 bits each, + 1
    cur_owner = _row_of(st, ST_CUR_OWNER, 4)
    new = _row_of(st, ST_NEW_ROW, 4)
    discards = 0  # discarded in the playout, 8 bits per player
    while True:
        last = (new & 255) == 1
        free = 0  # new-row slots still free, one bit each
        for j in range(4):
            free |= np.int64(((new >> (8 * j)) & 255) > 1) << j
        new_owner = 0  # every slot free (-1, packed as 0)
        for j in range(4):
            p = ((cur_owner >> (8 * j)) & 255) - 1
            if p < 0:
                continue
            placed, s = _random_place(bits, bbox, p, size, ((cur >> (8 * j)) & 255) - 1, sc, s)
            if not placed:
                discards += 1 << (8 * p)
            if not last:
                s, k = draw_below(s, popcount(free))
                k = select_bit(free, k)
                new_owner |= (p + 1) << (8 * k)
                free &= ~(1 << k)
        if last:
            break
        cur = new
        cur_owner = new_owner
        if pos + n > deck_len:
            new = 0x01010101  # an empty row: every domino 0
        else:
            new = _sorted_row(st, pos, n)
            pos += n
        rnd += 1
    rng[0] = s
    _unpack_row(st, ST_CUR_ROW, cur)
    _unpack_row(st, ST_CUR_OWNER, cur_owner)
    for j in range(4):
        st[ST_NEW_ROW + j] = 0
        st[ST_NEW_OWNER + j] = -1
        st[ST_DISCARDS + j] += (discards >> (8 * j)) & 255
    st[ST_DECK_POS] = pos
    st[ST_ROUND] = rnd
    _end_game(st)


@kernel
def score_game(bits, bbox, st, res):
    """Every player's score by the game's rules into res int64[players, RES_COLS]."""
    for p in range(st[ST_PLAYERS]):
        points, largest, crowns = score_territories(bits, bbox, p, st[ST_SIZE])
        bonus = bonus_points(bbox, p, st[ST_SIZE], st[ST_FLAGS], st[ST_DISCARDS + p] == 0)
        res[p, RES_TOTAL] = points + bonus
        res[p, RES_TERRITORIES] = points
        res[p, RES_BONUS] = bonus
        res[p, RES_LARGEST] = largest
        res[p, RES_CROWNS] = crowns


@kernel
def score_totals(bits, bbox, st, res):
    """score_game's RES_TOTAL, RES_TERRITORIES and RES_BONUS columns only (the tie-break columns
    need every territory flooded, crownless ones too)."""
    for p in range(st[ST_PLAYERS]):
        points = territory_points(bits, bbox, p, st[ST_SIZE])
        bonus = bonus_points(bbox, p, st[ST_SIZE], st[ST_FLAGS], st[ST_DISCARDS + p] == 0)
        res[p, RES_TOTAL] = points + bonus
        res[p, RES_TERRITORIES] = points
        res[p, RES_BONUS] = bonus


@kernel
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


@kernel
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
    s = rng[0]
    for j in range(47, pos, -1):  # Fisher-Yates over the undrawn positions
        s, i = draw_below(s, j - pos + 1)
        t = st[ST_DECK + j]
        st[ST_DECK + j] = st[ST_DECK + pos + i]
        st[ST_DECK + pos + i] = t
    rng[0] = s


@kernel(inline="always")
def copy_game(bits, bbox, st, to_bits, to_bbox, to_st):
    """(bits, bbox, st) into (to_bits, to_bbox, to_st), of the same shapes (loops, not slices: a
    slice's copy compiles its error checks too)."""
    for p in range(bits.shape[0]):
        for i in range(bits.shape[1]):
            to_bits[p, i] = bits[p, i]
        for i in range(4):
            to_bbox[p, i] = bbox[p, i]
    for j in range(ST_LEN):
        to_st[j] = st[j]


@kernel(nrt=True)
def new_game_arrays(header):
    """Zeroed (bits, bbox, st) for a game with this state header (st: header filled in)."""
    players = header[ST_PLAYERS]
    st = np.zeros(ST_LEN, dtype=np.int64)
    for j in range(ST_CUR_ROW):  # loops, not slices: a slice's copy compiles its error checks too
        st[j] = header[j]
    return (np.zeros((players, kingdom_width(header[ST_SIZE])), dtype=np.int64),
            np.zeros((players, 4), dtype=np.int64), st)
