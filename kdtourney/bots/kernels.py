"""Numba kernels of the built-in search bots: arrays and ints in, arrays and ints out.

Built on the engine kernels (`kdtourney.engine.kernels`, state layout documented there).
Exposes the greedy evaluation keys (`greedy_combos`, `fast_greedy_action`, `full_greedy_action`),
the playout policies (POLICY_*), the result measures (MEASURE_*), the frame helpers the other
bot kernels share (`prepare_frame`, `frame_placements`, `touching`, `action_squares`,
`best_spot_pre`, `entry_action`) and `work_buffers()` for their buffers. Keys, policies and buffers: docs/internals.md.
"""

import numpy as np

from kdtourney.engine import word64
from kdtourney.engine.kernel_base import kernel, neighbours, popcount, trailing_zeros
from kdtourney.engine.kernels import (CENTER, CLAIM_BASE, CROWN1, CROWN2, DIR_COL, DIR_ROW, DISCARD,
                                      FLAG_HARMONY, FLAG_MIDDLE, FLAG_TIEBREAK_TERRITORY, G,
                                      MAX_ACTIONS, OCC, PHASE_OVER, PHASE_PLACE, RES_COLS,
                                      RES_TOTAL, SCRATCH, ST_CUR_ROW, ST_DISCARDS, ST_FLAGS,
                                      ST_NEW_OWNER, ST_NEW_ROW, ST_PHASE, ST_PLAYER, ST_PLAYERS,
                                      ST_ROUND, ST_SIZE, ST_SLOT, apply_action, bonus_points,
                                      copy_kingdom, count_holes, is_centered, legal_moves,
                                      moves_to_actions, place, playout_random, rand_below,
                                      random_action, rank_players, resample_deck, score_game,
                                      score_totals, territory_points, window)
from kdtourney.engine.rows import WIDTH as _ROWS_WIDTH
from kdtourney.engine.tiles import TILE_CROWNS, TILE_TERRAIN

POLICY_RANDOM = 0
POLICY_GREEDY = 1
POLICY_PLAYER_GREEDY = 2
POLICY_FULL_GREEDY = 3
POLICY_OTHERS_FULL_GREEDY = 4
POLICIES = {"random": POLICY_RANDOM, "greedy": POLICY_GREEDY, "player-greedy": POLICY_PLAYER_GREEDY,
            "full-greedy": POLICY_FULL_GREEDY, "others-full-greedy": POLICY_OTHERS_FULL_GREEDY}

MEASURE_WDL = 0
MEASURE_SCORE = 1
MEASURE_RATIO = 2
MEASURE_MARGIN = 3
MEASURES = {"wdl": MEASURE_WDL, "score": MEASURE_SCORE, "ratio": MEASURE_RATIO,
            "margin": MEASURE_MARGIN}

OK_SHIFT = 40
S2_SHIFT = 20
S_MASK = (1 << 20) - 1

KINGDOM_WIDTH = max(_ROWS_WIDTH, word64.WIDTH)  # a work row holds a kingdom of any size


@kernel(nrt=True)
def work_buffers():
    """(kb, bb, sc, ac): the scratch arrays of the greedy kernels (see the module docstring)."""
    return (np.zeros((3, KINGDOM_WIDTH), dtype=np.int64), np.zeros((3, 4), dtype=np.int64),
            np.zeros((3, SCRATCH), dtype=np.int64), np.zeros((3, MAX_ACTIONS), dtype=np.int64))


# ---------------------------------------------------------------------------------------------
# One kingdom


@kernel
def kingdom_points(bits, bbox, p, size, flags, complete):
    """Territory points plus the bonuses switched on in flags (Harmony only when `complete`)."""
    return territory_points(bits, bbox, p, size) + bonus_points(bbox, p, size, flags, complete)


@kernel
def _spot_ok(bits, bbox, p, size, holes_before):
    """1 when the kingdom is centred and has no more one-square holes than before, else 0."""
    if not is_centered(bbox, p, size):
        return 0
    return 1 if count_holes(bits, bbox, p, size) <= holes_before else 0


# Evaluation without a copy: a frame in row lvl of pre (int64[n, >= FRAME_LEN]): one word per plane
# (OCC, terrains, crowns) with rows FR_STRIDE bits apart, grid square (FR_R0, FR_C0) at bit 0,
# FR_ROWS x FR_COLS squares used, FR_CENTER the squares of the size x size square centred on the
# castle (0 when the kingdom is not inside it); FR_LABEL + q: the territory of land square q as
# id | squares << TER_SIZE | crowns << TER_CROWNS (stale where there is no land).
FR_R0 = CROWN2 + 1
FR_C0 = FR_R0 + 1
FR_STRIDE = FR_R0 + 2
FR_ROWS = FR_R0 + 3
FR_COLS = FR_R0 + 4
FR_CENTER = FR_R0 + 5
FR_LABEL = 16
FRAME_LEN = FR_LABEL + 64
TER_ID = 63
TER_SIZE = 8
TER_CROWNS = 24
_WINDOW_7 = sum(((1 << 7) - 1) << (8 * i) for i in range(7))  # 7x7 squares packed 8 bits a row


@kernel(inline="always")
def _frame(bits, bbox, p, size, pre, lvl):
    """The kingdom's planes into the frame of row lvl of pre (see above)."""
    if size == word64.SIZE:
        lay = bits[p, word64.LAYOUT]
        for i in range(CROWN2 + 1):
            pre[lvl, i] = bits[p, i]
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
        pre[lvl, i] = window(bits, p, size, i, r0, c0, 7)
    pre[lvl, FR_R0] = r0
    pre[lvl, FR_C0] = c0
    pre[lvl, FR_STRIDE] = 8
    pre[lvl, FR_ROWS] = 7
    pre[lvl, FR_COLS] = 7


@kernel(inline="always")
def prepare_frame(bits, bbox, p, size, pre, lvl):
    """The kingdom's frame with its territories labelled into row lvl of pre, for `_key`;
    returns its territory points (as territory_points)."""
    _frame(bits, bbox, p, size, pre, lvl)
    stride = pre[lvl, FR_STRIDE]
    crown1 = pre[lvl, CROWN1]
    crown2 = pre[lvl, CROWN2]
    points = 0
    tid = 0
    for t in range(1, 7):
        rest = pre[lvl, t]
        while rest:
            comp = rest & -rest
            while True:  # flood fill, as the engine's
                grown = (comp | neighbours(comp, stride)) & rest
                if grown == comp:
                    break
                comp = grown
            squares = popcount(comp)
            crowns = popcount(comp & crown1) + 2 * popcount(comp & crown2)
            points += squares * crowns
            v = tid | (squares << TER_SIZE) | (crowns << TER_CROWNS)
            tid += 1
            rest &= ~comp
            while comp:
                pre[lvl, FR_LABEL + trailing_zeros(comp)] = v
                comp &= comp - 1
    return points


@kernel(inline="always")
def touching(pre, lvl, adj, seen, squares, crowns, old):
    """Add the territories with a square in `adj` (land of the frame) not in `seen` (a bit set of
    ids) to the sums of their squares, crowns and points."""
    while adj:
        v = pre[lvl, FR_LABEL + trailing_zeros(adj)]
        adj &= adj - 1
        i = v & TER_ID
        if not (seen >> i) & 1:
            seen |= 1 << i
            n = (v >> TER_SIZE) & 0xFFFF
            k = v >> TER_CROWNS
            squares += n
            crowns += k
            old += n * k
    return seen, squares, crowns, old


@kernel(inline="always")
def _key(pre, lvl, flags, complete, domino, around_a, around_b, halves, points, holes):
    """(ok << 20 | score) of the kingdom framed in row lvl of pre (`prepare_frame`) after placing
    `domino`, the kingdom itself unchanged: ok as `_spot_ok` against `holes` one-square holes
    before, score as `kingdom_points` (Harmony while `complete`); `points`: the territory points
    before. around_a, around_b: the frame squares next to half a and half b; halves: their two
    squares, -1 when one lies off the frame. A half joins the territories of its terrain next to it."""
    ta = TILE_TERRAIN[domino, 0]
    tb = TILE_TERRAIN[domino, 1]
    ka = TILE_CROWNS[domino, 0]
    kb_ = TILE_CROWNS[domino, 1]
    if ta == tb:
        seen, n, k, old = touching(pre, lvl, (around_a | around_b) & pre[lvl, ta], 0, 0, 0, 0)
        points += (n + 2) * (k + ka + kb_) - old
    else:
        seen, n, k, old = touching(pre, lvl, around_a & pre[lvl, ta], 0, 0, 0, 0)
        points += (n + 1) * (k + ka) - old
        seen, n, k, old = touching(pre, lvl, around_b & pre[lvl, tb], 0, 0, 0, 0)
        points += (n + 1) * (k + kb_) - old
    if flags & FLAG_HARMONY and complete:
        points += 5
    if halves < 0:
        return points  # off the frame: off the centred square
    occ = pre[lvl, OCC] | halves
    center = pre[lvl, FR_CENTER]
    if occ & ~center:
        return points
    if flags & FLAG_MIDDLE:
        points += 10
    empty = center & ~occ
    if popcount(empty & ~neighbours(empty, pre[lvl, FR_STRIDE])) <= holes:
        return (1 << S2_SHIFT) | points
    return points


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
    """(around a, around b, halves) of place action `action` on the frame in row lvl of pre."""
    d = action // (G * G)
    r = (action // G) % G - pre[lvl, FR_R0]
    c = action % G - pre[lvl, FR_C0]
    rb = r + DIR_ROW[d]
    cb = c + DIR_COL[d]
    rows = pre[lvl, FR_ROWS]
    cols = pre[lvl, FR_COLS]
    halves = -1
    if 0 <= r < rows and 0 <= c < cols and 0 <= rb < rows and 0 <= cb < cols:
        stride = pre[lvl, FR_STRIDE]
        halves = (1 << (r * stride + c)) | (1 << (rb * stride + cb))
    return _around(pre, lvl, r, c), _around(pre, lvl, rb, cb), halves


@kernel(inline="always")
def _after_key(pre, lvl, flags, complete, domino, action, points, holes):
    """`_key` of place action `action`."""
    around_a, around_b, halves = action_squares(pre, lvl, action)
    return _key(pre, lvl, flags, complete, domino, around_a, around_b, halves, points, holes)


# Placements as evaluation entries: a 5x5 kingdom's are direction << 6 | layout square of half a
# (its frame is its layout: no action to decode), other kingdoms' are place actions.


@kernel(inline="always")
def frame_placements(bits, bbox, p, size, domino, sc, ac, lvl):
    """The legal placements of `domino` as entries into ac[lvl], in action order; their number."""
    if size == word64.SIZE:
        right, down, left, up = word64.moves(bits, p, domino)
        return word64.write_moves(right, down, left, up, ac, lvl)
    if legal_moves(bits, bbox, p, size, domino, sc, lvl) == 0:
        return 0
    return moves_to_actions(sc, lvl, size, ac, lvl)


@kernel(inline="always")
def _entry_key(pre, plvl, size, flags, complete, domino, entry, points, holes):
    """`_key` of a placement entry of the kingdom framed in row plvl of pre."""
    if size == word64.SIZE:
        q = entry & 63
        stride = pre[plvl, FR_STRIDE]
        a = 1 << q
        b = 1 << (q + (1, stride, -1, -stride)[entry >> 6])
        return _key(pre, plvl, flags, complete, domino, neighbours(a, stride), neighbours(b, stride),
                    a | b, points, holes)
    return _after_key(pre, plvl, flags, complete, domino, entry, points, holes)


@kernel(inline="always")
def entry_action(bits, p, size, entry):
    """The place action of a placement entry of kingdom p."""
    if size == word64.SIZE:
        return word64.move_action(bits[p, word64.LAYOUT], entry >> 6, entry & 63)
    return entry


@kernel(inline="always")
def best_spot_pre(bits, bbox, p, size, flags, complete, domino, pre, plvl, points, holes, sc, ac, lvl):
    """best_spot with the kingdom already framed in row plvl of pre (`prepare_frame`: its territory
    points `points`) and its one-square holes `holes`."""
    n = frame_placements(bits, bbox, p, size, domino, sc, ac, lvl)
    if n == 0:
        ok = 1 if is_centered(bbox, p, size) else 0
        return (ok << S2_SHIFT) | (points + bonus_points(bbox, p, size, flags, False)), DISCARD
    best = -1
    best_i = 0
    for i in range(n):
        k = _entry_key(pre, plvl, size, flags, complete, domino, ac[lvl, i], points, holes)
        if k > best:
            best = k
            best_i = i
    return best, entry_action(bits, p, size, ac[lvl, best_i])


@kernel
def best_spot(bits, bbox, p, size, flags, complete, domino, kb, bb, sc, ac, lvl):
    """Best placement of `domino` in kingdom p: returns (ok << 20 | score, action).

    ok is 1 when the best spot leaves no new hole and stays centred; score counts bonuses with
    Harmony while `complete`. A domino without a placement is discarded (Harmony lost). Uses level
    `lvl` of the work buffers. Ties go to the first placement found.
    """
    points = prepare_frame(bits, bbox, p, size, kb, lvl)
    return best_spot_pre(bits, bbox, p, size, flags, complete, domino, kb, lvl, points,
                          count_holes(bits, bbox, p, size), sc, ac, lvl)


@kernel
def free_claims(st, out):
    """The claim actions of the free dominoes of the new row into out; returns their number."""
    n = 0
    for j in range(4):
        if st[ST_NEW_ROW + j] != 0 and st[ST_NEW_OWNER + j] < 0:
            out[n] = CLAIM_BASE + st[ST_NEW_ROW + j]
            n += 1
    return n


# ---------------------------------------------------------------------------------------------
# Full greedy: every combination of a placement and a claim


@kernel
def greedy_combos(bits, bbox, st, places, claims, keys, kb, bb, sc, ac):
    """Every (placement, claim) combination of the player to place, with its key.

    st must be in a place phase. Writes places[i] (a place action or DISCARD), claims[i] (a claim
    action, or -1 when the round has no new row) and keys[i] (see the module docstring); returns
    the number of combinations. Arrays need room for MAX_ACTIONS * 4 entries.
    """
    p = st[ST_PLAYER]
    size = st[ST_SIZE]
    flags = st[ST_FLAGS]
    domino = st[ST_CUR_ROW + st[ST_SLOT]]
    complete = st[ST_DISCARDS + p] == 0
    n_place = frame_placements(bits, bbox, p, size, domino, sc, ac, 0)
    points = prepare_frame(bits, bbox, p, size, kb, 2)
    holes = count_holes(bits, bbox, p, size)
    has_row = st[ST_NEW_ROW] != 0
    n = 0
    for i in range(max(n_place, 1)):
        if n_place == 0:
            a = DISCARD
            done = False
            ok1 = 1 if is_centered(bbox, p, size) else 0
            s1 = points + bonus_points(bbox, p, size, flags, False)
        else:
            a = entry_action(bits, p, size, ac[0, i])
            done = complete
            k1 = _entry_key(kb, 2, size, flags, complete, domino, ac[0, i], points, holes)
            ok1 = k1 >> S2_SHIFT
            s1 = k1 & S_MASK
        if not has_row:
            places[n] = a
            claims[n] = -1
            keys[n] = ((ok1 * 3) << OK_SHIFT) | (s1 << S2_SHIFT) | s1
            n += 1
            continue
        # the claimed domino's best spot in the kingdom after the placement: on a copy
        copy_kingdom(bits, bbox, p, kb, bb, 0)
        if a != DISCARD:
            place(kb, bb, 0, size, domino, a)
        points2 = prepare_frame(kb, bb, 0, size, kb, 1)
        holes2 = count_holes(kb, bb, 0, size)
        for j in range(4):
            if st[ST_NEW_ROW + j] == 0 or st[ST_NEW_OWNER + j] >= 0:
                continue
            k2, _ = best_spot_pre(kb, bb, 0, size, flags, done, st[ST_NEW_ROW + j], kb, 1,
                                   points2, holes2, sc, ac, 1)
            ok2 = k2 >> S2_SHIFT
            s2 = k2 & S_MASK
            places[n] = a
            claims[n] = CLAIM_BASE + st[ST_NEW_ROW + j]
            keys[n] = ((ok1 * 2 + ok2) << OK_SHIFT) | (s2 << S2_SHIFT) | s1
            n += 1
    return n


@kernel
def key_points(key):
    """A greedy key as points: s2 minus 10 for a bad placement and 5 for a bad spot of the claim."""
    ok = key >> OK_SHIFT
    return ((key >> S2_SHIFT) & S_MASK) - 10 * (1 - (ok >> 1)) - 5 * (1 - (ok & 1))


@kernel
def argmax_random(keys, n, rng):
    """Index of the largest of keys[:n], ties broken uniformly at random."""
    best = 0
    ties = 1
    for i in range(1, n):
        if keys[i] > keys[best]:
            best = i
            ties = 1
        elif keys[i] == keys[best]:
            ties += 1
            if rand_below(rng, ties) == 0:
                best = i
    return best


@kernel
def spot_keys(bits, bbox, p, size, flags, complete, dominoes, n, keys, kb, bb, sc, ac):
    """best_spot's key of each of dominoes[:n] in kingdom p into keys[:n] (the kingdom framed once;
    work buffers' level 0)."""
    points = prepare_frame(bits, bbox, p, size, kb, 0)
    holes = count_holes(bits, bbox, p, size)
    for i in range(n):
        keys[i], _ = best_spot_pre(bits, bbox, p, size, flags, complete, dominoes[i], kb, 0, points,
                                    holes, sc, ac, 0)


@kernel
def claim_keys(bits, bbox, st, claims, keys, kb, bb, sc, ac):
    """Claims of the player to claim with the key of each domino's best spot (ok << 20 | score)."""
    p = st[ST_PLAYER]
    size = st[ST_SIZE]
    n = free_claims(st, claims)
    complete = st[ST_DISCARDS + p] == 0
    points = prepare_frame(bits, bbox, p, size, kb, 1)
    holes = count_holes(bits, bbox, p, size)
    for j in range(n):
        keys[j], _ = best_spot_pre(bits, bbox, p, size, st[ST_FLAGS], complete,
                                    claims[j] - CLAIM_BASE, kb, 1, points, holes, sc, ac, 1)
    return n


@kernel
def first_claim(st, rng):
    """The full greedy's first claim: the free domino with the most crowns on one half (random ties)."""
    best_c = -1
    best = -1
    ties = 0
    for j in range(4):
        d = st[ST_NEW_ROW + j]
        if d == 0 or st[ST_NEW_OWNER + j] >= 0:
            continue
        take, best, ties = _running_best(max(TILE_CROWNS[d, 0], TILE_CROWNS[d, 1]), best, ties, rng)
        if take:
            best_c = CLAIM_BASE + d
    return best_c


@kernel(inline="always")
def _running_best(k, best, ties, rng):
    """One step of a running maximum with uniformly random ties (reservoir sampling): whether `k`
    is the choice now, and the new best and number of ties. Draws only on a tie."""
    if k > best:
        return True, k, 1
    if k == best:
        ties += 1
        return rand_below(rng, ties) == 0, best, ties
    return False, best, ties


# ---------------------------------------------------------------------------------------------
# Fast greedy and playouts


@kernel
def fast_greedy_action(bits, bbox, st, rng, kb, bb, sc, ac):
    """The fast greedy's action for the player to act (see the module docstring)."""
    p = st[ST_PLAYER]
    size = st[ST_SIZE]
    flags = st[ST_FLAGS]
    complete = st[ST_DISCARDS + p] == 0
    if st[ST_PHASE] == PHASE_PLACE:
        domino = st[ST_CUR_ROW + st[ST_SLOT]]
        n = frame_placements(bits, bbox, p, size, domino, sc, ac, 0)
        if n == 0:
            return DISCARD
        points = prepare_frame(bits, bbox, p, size, kb, 0)
        holes = count_holes(bits, bbox, p, size)
        best = -1
        best_i = 0
        ties = 0
        for i in range(n):
            take, best, ties = _running_best(
                _entry_key(kb, 0, size, flags, complete, domino, ac[0, i], points, holes), best,
                ties, rng)
            if take:
                best_i = i
        return entry_action(bits, p, size, ac[0, best_i])
    if st[ST_ROUND] == 0:
        return first_claim(st, rng)
    best = -1
    best_c = -1
    ties = 0
    points = prepare_frame(bits, bbox, p, size, kb, 1)
    holes = count_holes(bits, bbox, p, size)
    for j in range(4):
        d = st[ST_NEW_ROW + j]
        if d == 0 or st[ST_NEW_OWNER + j] >= 0:
            continue
        k, _ = best_spot_pre(bits, bbox, p, size, flags, complete, d, kb, 1, points, holes,
                              sc, ac, 1)
        take, best, ties = _running_best(k, best, ties, rng)
        if take:
            best_c = CLAIM_BASE + d
    return best_c


@kernel(nrt=True)
def plan_buffers():
    """(plan, places, claims, keys): the full greedy's buffers in a playout. plan[p] is the claim
    player p chose with its placement, for the claim decision that follows (-1: none; reset it
    before every playout); the others are greedy_combos' arrays."""
    return (np.full(4, -1, dtype=np.int64), np.empty(4 * MAX_ACTIONS, dtype=np.int64),
            np.empty(4 * MAX_ACTIONS, dtype=np.int64), np.empty(4 * MAX_ACTIONS, dtype=np.int64))


@kernel
def full_greedy_action(bits, bbox, st, rng, fb, kb, bb, sc, ac):
    """The full greedy's action (GreedyBot's) for the player to act: at a place decision the whole
    turn, its claim kept in the plan for the claim decision that follows (fb: plan_buffers())."""
    plan, places, claims, keys = fb
    p = st[ST_PLAYER]
    if st[ST_PHASE] == PHASE_PLACE:
        n = greedy_combos(bits, bbox, st, places, claims, keys, kb, bb, sc, ac)
        i = argmax_random(keys, n, rng)
        plan[p] = claims[i]
        return places[i]
    if st[ST_ROUND] == 0:
        return first_claim(st, rng)
    if plan[p] >= 0:
        c = plan[p]
        plan[p] = -1
        return c
    n = claim_keys(bits, bbox, st, claims, keys, kb, bb, sc, ac)
    return claims[argmax_random(keys, n, rng)]


@kernel
def playout_action(bits, bbox, st, rng, policy, me, fb, kb, bb, sc, ac):
    """The playout policy's action for the player to act; `me` is the searching player."""
    if policy == POLICY_FULL_GREEDY or (policy == POLICY_OTHERS_FULL_GREEDY and st[ST_PLAYER] != me):
        return full_greedy_action(bits, bbox, st, rng, fb, kb, bb, sc, ac)
    if policy == POLICY_RANDOM or (policy == POLICY_PLAYER_GREEDY and st[ST_PLAYER] != me):
        return random_action(bits, bbox, st, sc, rng)
    return fast_greedy_action(bits, bbox, st, rng, kb, bb, sc, ac)


@kernel
def playout(bits, bbox, st, rng, policy, me, fb, kb, bb, sc, ac):
    """Play the game to its end with a playout policy; `me` is the searching player."""
    if policy == POLICY_RANDOM:
        playout_random(bits, bbox, st, sc, rng)
        return
    while st[ST_PHASE] != PHASE_OVER:
        apply_action(bits, bbox, st, playout_action(bits, bbox, st, rng, policy, me, fb, kb, bb, sc, ac))


@kernel
def result_value(bits, bbox, st, me, measure, res, ranks):
    """The measure of a finished game for player `me`, a float in [0, 1] (score: points / 100)."""
    players = st[ST_PLAYERS]
    score_totals(bits, bbox, st, res)
    own = res[me, RES_TOTAL]
    if measure == MEASURE_SCORE:
        return own / 100.0
    best = 0
    for q in range(players):
        if q != me and res[q, RES_TOTAL] > best:
            best = res[q, RES_TOTAL]
    if measure == MEASURE_MARGIN:
        return min(1.0, max(0.0, 0.5 + (own - best) / 200.0))
    if measure == MEASURE_RATIO:
        if own + best == 0:
            return 0.5
        return own / (own + best)
    if own < best:
        return 0.0
    if own == best:  # the tie-breaks decide: they need the largest territories and the crowns
        score_game(bits, bbox, st, res)
    rank_players(res, players, (st[ST_FLAGS] & FLAG_TIEBREAK_TERRITORY) != 0, ranks)
    if ranks[me] != 1:
        return 0.0
    first = 0
    for q in range(players):
        if ranks[q] == 1:
            first += 1
    return 1.0 if first == 1 else 0.5


# ---------------------------------------------------------------------------------------------
# Flat Monte Carlo


@kernel(nrt=True)
def mce_run(bits, bbox, st, me, places, claims, n_cand, start, count, policy, measure, rng,
            sums, visits):
    """Playouts start .. start+count-1, playout i for candidate i % n_cand (equal allocation).

    Candidate k is the place action places[k] (-1: none) followed by the claim claims[k] (-1:
    none). Every playout starts from a fresh determinization of st (resample_deck). Adds the
    results to sums[k] (float64) and visits[k] (int64).
    """
    kb, bb, sc, ac = work_buffers()
    fb = plan_buffers()
    b = bits.copy()
    x = bbox.copy()
    s = st.copy()
    res = np.zeros((st[ST_PLAYERS], RES_COLS), dtype=np.int64)
    ranks = np.zeros(st[ST_PLAYERS], dtype=np.int64)
    for i in range(start, start + count):
        k = i % n_cand
        b[:] = bits
        x[:] = bbox
        s[:] = st
        fb[0][:] = -1
        resample_deck(s, rng)
        if places[k] >= 0:
            apply_action(b, x, s, places[k])
        if claims[k] >= 0:
            apply_action(b, x, s, claims[k])
        playout(b, x, s, rng, policy, me, fb, kb, bb, sc, ac)
        sums[k] += result_value(b, x, s, me, measure, res, ranks)
        visits[k] += 1
