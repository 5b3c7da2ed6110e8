"""Numba kernels of the built-in search bots: arrays and ints in, arrays and ints out.

Built on the engine kernels (`kdtourney.engine._kernels`, state layout documented there).

Evaluation keys. A candidate move is ranked by one int64 key, larger is better:

    key = ok << 40 | s2 << 20 | s1

    ok  2 bits: 2 when the placement of the domino to place leaves no new one-square hole and keeps
        the kingdom inside the size x size square centred on the castle, plus 1 when the claimed
        domino's best spot does the same (3 for a placement without a claim that is fine)
    s2  the kingdom's score (territories + the rules' bonuses) after placing the claimed domino at
        its best spot (s1 again when there is nothing to claim)
    s1  the kingdom's score after the placement

Playout policies: POLICY_RANDOM (uniform legal actions), POLICY_GREEDY (every player uses the
fast greedy below), POLICY_PLAYER_GREEDY (the searching player fast greedy, opponents random).
The fast greedy places the domino where the score after the placement is highest (skipping holes
and off-centre placements when it can) and then claims the free domino whose best spot in the new
kingdom scores highest: the full greedy's two stages taken one after the other instead of over all
combinations: 11,000 greedy 4-player playouts/s from the start on one core (3,100 before the
evaluation without copies below; the full greedy in the same kernel loop then made 290/s).

Result measures: MEASURE_WDL (1 sole win, 0.5 shared win, 0 loss), MEASURE_SCORE (own score / 100),
MEASURE_RATIO (own / (own + best opponent), 0.5 when both are 0).

Evaluating a placement. The key of the kingdom after one placement is computed without copying
or changing the kingdom: `_prepare` labels the kingdom's territories once (id, squares and crowns
on each land square, the sum of their points, its occupancy in the centred window) and
`_after_key` evaluates each placement from the two squares alone: the new bounding box (Middle
Kingdom), the points as the territories before plus the gain of the territories of the domino's
terrains next to its halves merging with it, and the
one-square holes, which matter only while the kingdom stays centred and then are counted in the
fixed size x size window with the two squares added. The same keys as copying the kingdom,
placing and scoring it in full, at about a quarter of the cost. Only a second placement stacked
on a first (the claimed domino's best spot in greedy_combos) works on a copy of the kingdom with
the first placement done (one copy per first placement).

Work buffers of the greedy kernels (allocate with `work_buffers()`):
    kb  int64[3, PLANES, G]  kingdom copies, one per look-ahead level; kb[lvl] also holds the
                             labelled kingdom of a level-`lvl` evaluation (`_prepare`), kb[2] the
                             one of greedy_combos' first level (kb[0] holds its copy)
    bb  int64[3, 4]          their bounding boxes
    sc  int64[3, SCRATCH_ROWS, G]
    ac  int64[3, MAX_ACTIONS] action lists
"""

import numpy as np
from numba import njit

from kdtourney import _jit_cache  # noqa: F401  (before any njit(cache=True): caches outside the package)
from kdtourney.engine._kernels import (CENTER, CLAIM_BASE, DIR_COL, DIR_ROW, DISCARD, FLAG_HARMONY,
                                       FLAG_MIDDLE, FLAG_TIEBREAK_TERRITORY, G,
                                       MAX_ACTIONS, OCC, PHASE_CLAIM, PHASE_OVER, PHASE_PLACE,
                                       PLANES, RES_COLS, RES_TOTAL, SCRATCH_ROWS, ST_CUR_ROW,
                                       ST_DECK, ST_DECK_LEN, ST_DECK_POS, ST_DISCARDS, ST_FLAGS, ST_NEW_OWNER, ST_NEW_ROW,
                                       ST_PHASE, ST_PLAYER, ST_PLAYERS, ST_ROUND, ST_ROW_LEN,
                                       ST_SIZE, ST_SLOT,
                                       CROWN1, CROWN2, _packed, apply_action,
                                       bonus_points, is_centered,
                                       legal_masks, masks_to_actions, place, popcount, rand_below,
                                       random_action, rank_players, resample_deck, score_game,
                                       score_territories, trailing_zeros)
from kdtourney.engine.tiles import TILE_CROWNS, TILE_TERRAIN

POLICY_RANDOM = 0
POLICY_GREEDY = 1
POLICY_PLAYER_GREEDY = 2
POLICIES = {"random": POLICY_RANDOM, "greedy": POLICY_GREEDY, "player-greedy": POLICY_PLAYER_GREEDY}

MEASURE_WDL = 0
MEASURE_SCORE = 1
MEASURE_RATIO = 2
MEASURES = {"wdl": MEASURE_WDL, "score": MEASURE_SCORE, "ratio": MEASURE_RATIO}

OK_SHIFT = 40
S2_SHIFT = 20
S_MASK = (1 << 20) - 1


@njit(cache=True)
def work_buffers():
    """(kb, bb, sc, ac): the scratch arrays of the greedy kernels (see the module docstring)."""
    return (np.zeros((3, PLANES, G), dtype=np.int64), np.zeros((3, 4), dtype=np.int64),
            np.zeros((3, SCRATCH_ROWS, G), dtype=np.int64), np.zeros((3, MAX_ACTIONS), dtype=np.int64))


# ---------------------------------------------------------------------------------------------
# One kingdom


@njit(cache=True)
def count_holes(bits, bbox, size):
    """One-square holes: empty squares that no domino can ever cover, int.

    The squares that can still be filled are those of the size x size square centred on the castle
    while the kingdom is centred, else those of any size x size square around the kingdom.
    """
    h = size // 2
    if is_centered(bbox, size):
        r0 = CENTER - h
        r1 = CENTER + h
        c0 = CENTER - h
        c1 = CENTER + h
    else:
        r0 = max(bbox[1] - size + 1, 0)
        r1 = min(bbox[0] + size - 1, G - 1)
        c0 = max(bbox[3] - size + 1, 0)
        c1 = min(bbox[2] + size - 1, G - 1)
    window = ((1 << (c1 + 1)) - 1) ^ ((1 << c0) - 1)
    occ = bits[OCC]
    n = 0
    above = 0
    cur = ~occ[r0] & window
    for r in range(r0, r1 + 1):
        below = ~occ[r + 1] & window if r < r1 else 0
        n += popcount(cur & ~(cur << 1) & ~(cur >> 1) & ~above & ~below)
        above = cur
        cur = below
    return n


@njit(cache=True)
def kingdom_points(bits, bbox, size, flags, complete):
    """Territory points plus the bonuses switched on in flags (Harmony only when `complete`)."""
    points, _, _ = score_territories(bits, bbox)
    return points + bonus_points(bbox, size, flags, complete)


@njit(cache=True)
def _copy_kingdom(src_bits, src_bbox, dst_bits, dst_bbox):
    for i in range(PLANES):
        for r in range(G):
            dst_bits[i, r] = src_bits[i, r]
    for i in range(4):
        dst_bbox[i] = src_bbox[i]


@njit(cache=True)
def _spot_ok(bits, bbox, size, holes_before):
    """1 when the kingdom is centred and has no more one-square holes than before, else 0."""
    if not is_centered(bbox, size):
        return 0
    return 1 if count_holes(bits, bbox, size) <= holes_before else 0


# Evaluation without a copy: pre = kb[lvl] (int64[PLANES, G]). pre[r, c] for r < G: the territory
# of the land square (r, c) as id | squares << TER_SIZE | crowns << TER_CROWNS (stale where the
# kingdom has no land); pre[PRE_ROW, 0]: occupancy of the size x size window centred on the
# castle packed 8 bits a row, pre[PRE_ROW, 1]: that window's mask.
PRE_ROW = G
TER_ID = 63
TER_SIZE = 8
TER_CROWNS = 24


@njit(cache=True, inline="always")
def _prepare(bits, bbox, size, pre):
    """Label the kingdom's territories into pre (see above) for `_after_key`; returns its territory
    points (as score_territories)."""
    r0 = bbox[0]
    r1 = bbox[1]
    c0 = bbox[2]
    crown1 = _packed(bits, CROWN1, r0, r1, c0)
    crown2 = _packed(bits, CROWN2, r0, r1, c0)
    points = 0
    tid = 0
    for t in range(1, 7):
        rest = _packed(bits, t, r0, r1, c0)
        while rest:
            comp = rest & -rest
            while True:  # flood fill, as in the engine's _territories
                grown = (comp | (comp << 1) | (comp >> 1) | (comp << 8) | (comp >> 8)) & rest
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
                q = trailing_zeros(comp)
                pre[r0 + (q >> 3), c0 + (q & 7)] = v
                comp &= comp - 1
    h = size // 2
    window = 0
    for i in range(size):
        window |= ((1 << size) - 1) << (8 * i)
    pre[PRE_ROW, 0] = _packed(bits, OCC, CENTER - h, CENTER + h, CENTER - h) & window
    pre[PRE_ROW, 1] = window
    return points


@njit(cache=True, inline="always")
def _touching(bits, pre, t, r, c, seen, squares, crowns, old):
    """Add the territories of terrain t next to the square (r, c) not in `seen` (a bit set of ids)
    to the sums of their squares, crowns and points."""
    for dd in range(4):
        rr = r + DIR_ROW[dd]
        cc = c + DIR_COL[dd]
        if 0 <= rr < G and 0 <= cc < G and (bits[t, rr] >> cc) & 1:
            v = pre[rr, cc]
            i = v & TER_ID
            if not (seen >> i) & 1:
                seen |= 1 << i
                n = (v >> TER_SIZE) & 0xFFFF
                k = v >> TER_CROWNS
                squares += n
                crowns += k
                old += n * k
    return seen, squares, crowns, old


@njit(cache=True, inline="always")
def _after_key(bits, pre, bbox, size, flags, complete, domino, action, points, holes):
    """(ok << 20 | score) of the kingdom (bits, bbox; labelled in pre by `_prepare`) after placing
    `domino` by `action`, the kingdom itself unchanged: ok as `_spot_ok` against `holes` one-square
    holes before, score as `kingdom_points` (Harmony while `complete`); `points`: the territory
    points before. A half joins the territories of its terrain next to it."""
    d = action // (G * G)
    r = (action // G) % G
    c = action % G
    rb = r + DIR_ROW[d]
    cb = c + DIR_COL[d]
    ta = TILE_TERRAIN[domino, 0]
    tb = TILE_TERRAIN[domino, 1]
    ka = TILE_CROWNS[domino, 0]
    kb_ = TILE_CROWNS[domino, 1]
    seen, n, k, old = _touching(bits, pre, ta, r, c, 0, 0, 0, 0)
    if ta == tb:
        seen, n, k, old = _touching(bits, pre, tb, rb, cb, seen, n, k, old)
        points += (n + 2) * (k + ka + kb_) - old
    else:
        points += (n + 1) * (k + ka) - old
        seen, n, k, old = _touching(bits, pre, tb, rb, cb, 0, 0, 0, 0)
        points += (n + 1) * (k + kb_) - old
    if flags & FLAG_HARMONY and complete:
        points += 5
    h = size // 2
    w0 = CENTER - h
    w1 = CENTER + h
    if not (min(bbox[0], r, rb) >= w0 and max(bbox[1], r, rb) <= w1
            and min(bbox[2], c, cb) >= w0 and max(bbox[3], c, cb) <= w1):
        return points
    if flags & FLAG_MIDDLE:
        points += 10
    # centred: count_holes' window is the fixed size x size square, packed in pre
    occ = pre[PRE_ROW, 0] | (1 << (8 * (r - w0) + c - w0)) | (1 << (8 * (rb - w0) + cb - w0))
    e = pre[PRE_ROW, 1] & ~occ
    if popcount(e & ~(e << 1) & ~(e >> 1) & ~(e << 8) & ~(e >> 8)) <= holes:
        return (1 << S2_SHIFT) | points
    return points


@njit(cache=True, inline="always")
def _best_spot_pre(bits, bbox, size, flags, complete, domino, pre, points, holes, sc, ac, lvl):
    """best_spot with the kingdom already packed in pre (`_prepare`: its territory points
    `points`) and its one-square holes `holes`."""
    n = legal_masks(bits, bbox, size, domino, sc[lvl])
    if n == 0:
        ok = 1 if is_centered(bbox, size) else 0
        return (ok << S2_SHIFT) | (points + bonus_points(bbox, size, flags, False)), DISCARD
    n = masks_to_actions(sc[lvl], ac[lvl])
    best = -1
    best_a = DISCARD
    for i in range(n):
        a = ac[lvl, i]
        k = _after_key(bits, pre, bbox, size, flags, complete, domino, a, points, holes)
        if k > best:
            best = k
            best_a = a
    return best, best_a


@njit(cache=True)
def best_spot(bits, bbox, size, flags, complete, domino, kb, bb, sc, ac, lvl):
    """Best placement of `domino` in a kingdom: returns (ok << 20 | score, action).

    ok is 1 when the best spot leaves no new hole and stays centred; score counts bonuses with
    Harmony while `complete`. A domino without a placement is discarded (Harmony lost). Uses level
    `lvl` of the work buffers. Ties go to the first placement found.
    """
    points = _prepare(bits, bbox, size, kb[lvl])
    return _best_spot_pre(bits, bbox, size, flags, complete, domino, kb[lvl], points,
                          count_holes(bits, bbox, size), sc, ac, lvl)


@njit(cache=True)
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


@njit(cache=True)
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
    free = np.empty(4, dtype=np.int64)
    nfree = free_claims(st, free)
    n_place = legal_masks(bits[p], bbox[p], size, domino, sc[0])
    if n_place == 0:
        ac[0, 0] = DISCARD
        n_place = 1
    else:
        masks_to_actions(sc[0], ac[0])
    pre = kb[2]
    points = _prepare(bits[p], bbox[p], size, pre)
    holes = count_holes(bits[p], bbox[p], size)
    n = 0
    for i in range(n_place):
        a = ac[0, i]
        if a == DISCARD:
            done = False
            ok1 = 1 if is_centered(bbox[p], size) else 0
            s1 = points + bonus_points(bbox[p], size, flags, False)
        else:
            done = complete
            k1 = _after_key(bits[p], pre, bbox[p], size, flags, complete, domino, a, points, holes)
            ok1 = k1 >> S2_SHIFT
            s1 = k1 & S_MASK
        if nfree == 0:
            places[n] = a
            claims[n] = -1
            keys[n] = ((ok1 * 3) << OK_SHIFT) | (s1 << S2_SHIFT) | s1
            n += 1
            continue
        # the claimed domino's best spot in the kingdom after the placement: on a copy
        _copy_kingdom(bits[p], bbox[p], kb[0], bb[0])
        if a != DISCARD:
            place(kb[0], bb[0], domino, a)
        points2 = _prepare(kb[0], bb[0], size, kb[1])
        holes2 = count_holes(kb[0], bb[0], size)
        for j in range(nfree):
            k2, _ = _best_spot_pre(kb[0], bb[0], size, flags, done, free[j] - CLAIM_BASE, kb[1],
                                   points2, holes2, sc, ac, 1)
            ok2 = k2 >> S2_SHIFT
            s2 = k2 & S_MASK
            places[n] = a
            claims[n] = free[j]
            keys[n] = ((ok1 * 2 + ok2) << OK_SHIFT) | (s2 << S2_SHIFT) | s1
            n += 1
    return n


@njit(cache=True)
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


@njit(cache=True)
def claim_keys(bits, bbox, st, claims, keys, kb, bb, sc, ac):
    """Claims of the player to claim with the key of each domino's best spot (ok << 20 | score)."""
    p = st[ST_PLAYER]
    size = st[ST_SIZE]
    n = free_claims(st, claims)
    complete = st[ST_DISCARDS + p] == 0
    points = _prepare(bits[p], bbox[p], size, kb[1])
    holes = count_holes(bits[p], bbox[p], size)
    for j in range(n):
        keys[j], _ = _best_spot_pre(bits[p], bbox[p], size, st[ST_FLAGS], complete,
                                    claims[j] - CLAIM_BASE, kb[1], points, holes, sc, ac, 1)
    return n


@njit(cache=True)
def first_claim(st, rng):
    """The full greedy's first claim: the free domino with the most crowns on one half (random ties)."""
    claims = np.empty(4, dtype=np.int64)
    keys = np.empty(4, dtype=np.int64)
    n = free_claims(st, claims)
    for j in range(n):
        d = claims[j] - CLAIM_BASE
        keys[j] = max(TILE_CROWNS[d, 0], TILE_CROWNS[d, 1])
    return claims[argmax_random(keys, n, rng)]


# ---------------------------------------------------------------------------------------------
# Fast greedy and playouts


@njit(cache=True)
def fast_greedy_action(bits, bbox, st, rng, kb, bb, sc, ac):
    """The fast greedy's action for the player to act (see the module docstring)."""
    p = st[ST_PLAYER]
    size = st[ST_SIZE]
    flags = st[ST_FLAGS]
    complete = st[ST_DISCARDS + p] == 0
    if st[ST_PHASE] == PHASE_PLACE:
        domino = st[ST_CUR_ROW + st[ST_SLOT]]
        n = legal_masks(bits[p], bbox[p], size, domino, sc[0])
        if n == 0:
            return DISCARD
        n = masks_to_actions(sc[0], ac[0])
        points = _prepare(bits[p], bbox[p], size, kb[0])
        holes = count_holes(bits[p], bbox[p], size)
        best = -1
        best_a = DISCARD
        ties = 0
        for i in range(n):
            a = ac[0, i]
            k = _after_key(bits[p], kb[0], bbox[p], size, flags, complete, domino, a, points, holes)
            if k > best:
                best = k
                best_a = a
                ties = 1
            elif k == best:
                ties += 1
                if rand_below(rng, ties) == 0:
                    best_a = a
        return best_a
    if st[ST_ROUND] == 0:
        return first_claim(st, rng)
    best = -1
    best_c = -1
    ties = 0
    points = _prepare(bits[p], bbox[p], size, kb[1])
    holes = count_holes(bits[p], bbox[p], size)
    for j in range(4):
        d = st[ST_NEW_ROW + j]
        if d == 0 or st[ST_NEW_OWNER + j] >= 0:
            continue
        k, _ = _best_spot_pre(bits[p], bbox[p], size, flags, complete, d, kb[1], points, holes,
                              sc, ac, 1)
        if k > best:
            best = k
            best_c = CLAIM_BASE + d
            ties = 1
        elif k == best:
            ties += 1
            if rand_below(rng, ties) == 0:
                best_c = CLAIM_BASE + d
    return best_c


@njit(cache=True)
def playout(bits, bbox, st, rng, policy, me, kb, bb, sc, ac):
    """Play the game to its end with a playout policy; `me` is the searching player."""
    while st[ST_PHASE] != PHASE_OVER:
        if policy == POLICY_RANDOM or (policy == POLICY_PLAYER_GREEDY and st[ST_PLAYER] != me):
            a = random_action(bits, bbox, st, sc[2], rng)
        else:
            a = fast_greedy_action(bits, bbox, st, rng, kb, bb, sc, ac)
        apply_action(bits, bbox, st, a)


@njit(cache=True)
def result_value(bits, bbox, st, me, measure, res, ranks, scr):
    """The measure of a finished game for player `me`, a float in [0, 1] (score: points / 100)."""
    score_game(bits, bbox, st, scr, res)
    players = st[ST_PLAYERS]
    own = res[me, RES_TOTAL]
    if measure == MEASURE_SCORE:
        return own / 100.0
    if measure == MEASURE_RATIO:
        best = 0
        for q in range(players):
            if q != me and res[q, RES_TOTAL] > best:
                best = res[q, RES_TOTAL]
        if own + best == 0:
            return 0.5
        return own / (own + best)
    rank_players(res, players, (st[ST_FLAGS] & FLAG_TIEBREAK_TERRITORY) != 0, ranks)
    if ranks[me] != 1:
        return 0.0
    first = 0
    for q in range(players):
        if ranks[q] == 1:
            first += 1
    return 1.0 if first == 1 else 0.5


@njit(cache=True)
def playout_speed(bits, bbox, st, n, policy, rng):
    """Run n playouts from a position (fresh deck order each); returns the sum of seat 0's scores."""
    kb, bb, sc, ac = work_buffers()
    b = bits.copy()
    x = bbox.copy()
    s = st.copy()
    res = np.zeros((st[ST_PLAYERS], RES_COLS), dtype=np.int64)
    total = 0
    for _ in range(n):
        b[:] = bits
        x[:] = bbox
        s[:] = st
        resample_deck(s, rng)
        playout(b, x, s, rng, policy, 0, kb, bb, sc, ac)
        score_game(b, x, s, sc[2], res)
        total += res[0, RES_TOTAL]
    return total


# ---------------------------------------------------------------------------------------------
# Flat Monte Carlo


@njit(cache=True)
def mce_run(bits, bbox, st, me, places, claims, n_cand, start, count, policy, measure, rng,
            sums, visits):
    """Playouts start .. start+count-1, playout i for candidate i % n_cand (equal allocation).

    Candidate k is the place action places[k] (-1: none) followed by the claim claims[k] (-1:
    none). Every playout starts from a fresh determinization of st (resample_deck). Adds the
    results to sums[k] (float64) and visits[k] (int64).
    """
    kb, bb, sc, ac = work_buffers()
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
        resample_deck(s, rng)
        if places[k] >= 0:
            apply_action(b, x, s, places[k])
        if claims[k] >= 0:
            apply_action(b, x, s, claims[k])
        playout(b, x, s, rng, policy, me, kb, bb, sc, ac)
        sums[k] += result_value(b, x, s, me, measure, res, ranks, sc[2])
        visits[k] += 1


# ---------------------------------------------------------------------------------------------
# MCTS: determinized UCT over the searching player's own decisions
#
# The tree holds only the searching player's decisions; the other players' actions between two of
# them are played by the playout policy. A node is an own decision reached by a sequence of own
# actions; its children are the actions of that decision (engine actions: a placement, DISCARD, or
# a claim). Place decisions have the same legal actions in every determinization (they depend
# only on the own kingdom and the own claimed domino), so a place node gets all its children at
# once; a claim node gets a child for each free domino the first time it is seen free (the row
# depends on the determinization), and a child's availability counts the visits in which it was
# legal (information-set UCT).
#
#   ti int64[cap, TI_COLS]: first child, next sibling, action, visits, availability
#   tf float64[cap, TF_COLS]: value sum, prior h (points), best prior among the node's children
#   ncount int64[1]: nodes in use (node 0 is the root)

TI_FIRST = 0
TI_NEXT = 1
TI_ACTION = 2
TI_VISITS = 3
TI_AVAIL = 4
TI_COLS = 5
TF_VALUE = 0
TF_PRIOR = 1
TF_HMAX = 2
TF_COLS = 3


@njit(cache=True)
def key_points(key):
    """A greedy key as points: s2 minus 10 for a bad placement and 5 for a bad spot of the claim."""
    ok = key >> OK_SHIFT
    return ((key >> S2_SHIFT) & S_MASK) - 10 * (1 - (ok >> 1)) - 5 * (1 - (ok & 1))


@njit(cache=True)
def _new_node(ti, tf, ncount, parent, action, prior):
    i = ncount[0]
    if i >= ti.shape[0]:
        return -1
    ncount[0] = i + 1
    ti[i, TI_FIRST] = -1
    ti[i, TI_NEXT] = ti[parent, TI_FIRST]
    ti[i, TI_ACTION] = action
    ti[i, TI_VISITS] = 0
    ti[i, TI_AVAIL] = 0
    tf[i, TF_VALUE] = 0.0
    tf[i, TF_PRIOR] = prior
    tf[i, TF_HMAX] = -1e9
    ti[parent, TI_FIRST] = i
    if prior > tf[parent, TF_HMAX]:
        tf[parent, TF_HMAX] = prior
    return i


@njit(cache=True)
def mcts_reset(ti, tf, ncount):
    """An empty tree: only the root."""
    ncount[0] = 1
    ti[0, TI_FIRST] = -1
    ti[0, TI_NEXT] = -1
    ti[0, TI_ACTION] = -1
    ti[0, TI_VISITS] = 0
    ti[0, TI_AVAIL] = 0
    tf[0, TF_VALUE] = 0.0
    tf[0, TF_PRIOR] = 0.0
    tf[0, TF_HMAX] = -1e9


@njit(cache=True)
def _expand_place(bits, bbox, st, node, ti, tf, ncount, places, claims, keys, kb, bb, sc, ac):
    """All placements of a place node as children, prior = best greedy combination with it."""
    n = greedy_combos(bits, bbox, st, places, claims, keys, kb, bb, sc, ac)
    i = 0
    while i < n:
        a = places[i]
        h = key_points(keys[i])
        j = i + 1
        while j < n and places[j] == a:
            h = max(h, key_points(keys[j]))
            j += 1
        if _new_node(ti, tf, ncount, node, a, float(h)) < 0:
            return
        i = j


@njit(cache=True)
def _select(ti, tf, node, c, bias, claim_phase, st):
    """UCB with progressive bias over the node's children legal now (availability updated).

    Unvisited legal children come first, the best prior among them; then
    Q + c sqrt(ln(avail) / n) + bias (h - hmax) / 100 / (n + 1).
    """
    best = -1
    best_u = -1e300
    fresh = -1
    fresh_h = -1e300
    hmax = tf[node, TF_HMAX]
    ch = ti[node, TI_FIRST]
    while ch >= 0:
        legal = True
        if claim_phase:
            legal = False
            d = ti[ch, TI_ACTION] - CLAIM_BASE
            for j in range(4):
                if st[ST_NEW_ROW + j] == d and st[ST_NEW_OWNER + j] < 0:
                    legal = True
        if legal:
            ti[ch, TI_AVAIL] += 1
            n = ti[ch, TI_VISITS]
            if n == 0:
                if tf[ch, TF_PRIOR] > fresh_h:
                    fresh_h = tf[ch, TF_PRIOR]
                    fresh = ch
            elif fresh < 0:
                u = (tf[ch, TF_VALUE] / n + c * np.sqrt(np.log(ti[ch, TI_AVAIL]) / n)
                     + bias * (tf[ch, TF_PRIOR] - hmax) / 100.0 / (n + 1))
                if u > best_u:
                    best_u = u
                    best = ch
        ch = ti[ch, TI_NEXT]
    return fresh if fresh >= 0 else best


@njit(cache=True)
def mcts_run(bits, bbox, st, me, ti, tf, ncount, count, c, bias, policy, measure, rng):
    """`count` iterations of determinized UCT from st (the searching player `me` to act)."""
    kb, bb, sc, ac = work_buffers()
    places = np.empty(4 * MAX_ACTIONS, dtype=np.int64)
    claims = np.empty(4 * MAX_ACTIONS, dtype=np.int64)
    keys = np.empty(4 * MAX_ACTIONS, dtype=np.int64)
    free = np.empty(4, dtype=np.int64)
    b = bits.copy()
    x = bbox.copy()
    s = st.copy()
    res = np.zeros((st[ST_PLAYERS], RES_COLS), dtype=np.int64)
    ranks = np.zeros(st[ST_PLAYERS], dtype=np.int64)
    path = np.empty(256, dtype=np.int64)
    for _ in range(count):
        b[:] = bits
        x[:] = bbox
        s[:] = st
        resample_deck(s, rng)
        node = 0
        plen = 1
        path[0] = 0
        while s[ST_PHASE] != PHASE_OVER:
            if s[ST_PLAYER] != me:
                if policy == POLICY_GREEDY:
                    a = fast_greedy_action(b, x, s, rng, kb, bb, sc, ac)
                else:
                    a = random_action(b, x, s, sc[2], rng)
                apply_action(b, x, s, a)
                continue
            if node != 0 and ti[node, TI_VISITS] == 0:
                break  # a new leaf: play out from here
            claim_phase = s[ST_PHASE] == PHASE_CLAIM
            if claim_phase:
                nfree = free_claims(s, free)
                for j in range(nfree):
                    found = False
                    ch = ti[node, TI_FIRST]
                    while ch >= 0:
                        if ti[ch, TI_ACTION] == free[j]:
                            found = True
                            break
                        ch = ti[ch, TI_NEXT]
                    if not found:
                        if s[ST_ROUND] == 0:
                            d = free[j] - CLAIM_BASE
                            h = 5.0 * max(TILE_CROWNS[d, 0], TILE_CROWNS[d, 1])
                        else:
                            p = s[ST_PLAYER]
                            k, _ = best_spot(b[p], x[p], s[ST_SIZE], s[ST_FLAGS], s[ST_DISCARDS + p] == 0,
                                             free[j] - CLAIM_BASE, kb, bb, sc, ac, 1)
                            h = float(((k & S_MASK) - 5 * (1 - (k >> S2_SHIFT))))
                        _new_node(ti, tf, ncount, node, free[j], h)
            elif ti[node, TI_FIRST] < 0:
                _expand_place(b, x, s, node, ti, tf, ncount, places, claims, keys, kb, bb, sc, ac)
            ch = _select(ti, tf, node, c, bias, claim_phase, s)
            if ch < 0:
                break  # the tree is full
            apply_action(b, x, s, ti[ch, TI_ACTION])
            node = ch
            path[plen] = ch
            plen += 1
        playout(b, x, s, rng, policy, me, kb, bb, sc, ac)
        v = result_value(b, x, s, me, measure, res, ranks, sc[2])
        for i in range(plen):
            ti[path[i], TI_VISITS] += 1
            tf[path[i], TF_VALUE] += v


# ---------------------------------------------------------------------------------------------
# Expectimax: a static evaluation with potential, chance nodes over the next row

W_OPEN = 0.3     # per crown of a territory and open square next to it
W_HOLE = 4.0     # per one-square hole (a wasted square, and Harmony out of reach)
TOP_SPOTS = 4    # depth 2: spots of the claimed domino tried against the sampled next row


@njit(cache=True)
def static_eval(bits, bbox, size, flags, complete):
    """Points (territories + bonuses) plus potential: W_OPEN per crown of a territory and empty
    square of the kingdom's square next to it, minus W_HOLE per one-square hole. A float."""
    h = size // 2
    if is_centered(bbox, size):
        r0 = CENTER - h
        c0 = CENTER - h
    else:
        r0 = bbox[0] - (size - (bbox[1] - bbox[0] + 1)) // 2
        c0 = bbox[2] - (size - (bbox[3] - bbox[2] + 1)) // 2
        r0 = min(max(r0, 0), G - size)
        c0 = min(max(c0, 0), G - size)
    row_mask = (1 << size) - 1
    region = 0
    occ = 0
    crown1 = 0
    crown2 = 0
    for i in range(size):
        sh = 8 * i
        region |= row_mask << sh
        occ |= ((bits[OCC, r0 + i] >> c0) & row_mask) << sh
        crown1 |= ((bits[CROWN1, r0 + i] >> c0) & row_mask) << sh
        crown2 |= ((bits[CROWN2, r0 + i] >> c0) & row_mask) << sh
    empty = region & ~occ
    points = 0
    open_crowns = 0
    for t in range(1, 7):
        rest = 0
        for i in range(size):
            rest |= ((bits[t, r0 + i] >> c0) & row_mask) << (8 * i)
        while rest:
            comp = rest & -rest
            while True:
                grown = (comp | (comp << 1) | (comp >> 1) | (comp << 8) | (comp >> 8)) & rest
                if grown == comp:
                    break
                comp = grown
            crowns = popcount(comp & crown1) + 2 * popcount(comp & crown2)
            if crowns:
                points += popcount(comp) * crowns
                around = (comp << 1) | (comp >> 1) | (comp << 8) | (comp >> 8)
                open_crowns += crowns * popcount(around & empty)
            rest &= ~comp
    # squares outside the window (a kingdom off its square) still score
    full, _, _ = score_territories(bits, bbox)
    if full > points:
        points = full
    value = points + bonus_points(bbox, size, flags, complete) + W_OPEN * open_crowns
    return value - W_HOLE * count_holes(bits, bbox, size)


@njit(cache=True)
def _best_static(bits, bbox, size, flags, complete, domino, kb, bb, sc, ac, lvl):
    """Best static_eval after placing `domino` (discarding when it has no placement)."""
    n = legal_masks(bits, bbox, size, domino, sc[lvl])
    if n == 0:
        return static_eval(bits, bbox, size, flags, False)
    n = masks_to_actions(sc[lvl], ac[lvl])
    best = -1e300
    for i in range(n):
        _copy_kingdom(bits, bbox, kb[lvl], bb[lvl])
        place(kb[lvl], bb[lvl], domino, ac[lvl, i])
        v = static_eval(kb[lvl], bb[lvl], size, flags, complete)
        if v > best:
            best = v
    return best


@njit(cache=True)
def expecti_run(bits, bbox, st, me, places, claims, n_cand, start, count, depth, seed, sums,
                visits):
    """Chance samples start .. start+count-1 of depth-limited expectimax, sample i for candidate
    i % n_cand with chance outcome i // n_cand (the same outcomes for every candidate).

    Candidate k: place places[k] (-1: none), claim claims[k] (-1: none). Its value in an outcome:
    depth 1, or no row after the new one: the best static_eval after placing the claimed domino.
    depth 2: a next row is sampled from the unseen dominoes and the kings ahead of the bot (one per
    new-row domino below the claimed one) take random dominoes of it; the value is the best
    static_eval over the claimed domino's TOP_SPOTS best spots and any spot of any domino left.
    Adds to sums[k] (float64) and visits[k].
    """
    kb = np.zeros((4, PLANES, G), dtype=np.int64)
    bb = np.zeros((4, 4), dtype=np.int64)
    sc = np.zeros((4, SCRATCH_ROWS, G), dtype=np.int64)
    ac = np.zeros((4, MAX_ACTIONS), dtype=np.int64)
    size = st[ST_SIZE]
    flags = st[ST_FLAGS]
    seen = np.zeros(49, dtype=np.bool_)
    pos = st[ST_DECK_POS]
    for j in range(pos):
        seen[st[ST_DECK + j]] = True
    pool = np.empty(48, dtype=np.int64)
    npool = 0
    for v in range(1, 49):
        if not seen[v]:
            pool[npool] = v
            npool += 1
    shuffled = pool.copy()
    row_len = st[ST_ROW_LEN]
    next_row = depth >= 2 and pos + row_len <= st[ST_DECK_LEN]
    row = np.empty(4, dtype=np.int64)
    spot_v = np.empty(TOP_SPOTS, dtype=np.float64)
    spot_a = np.empty(TOP_SPOTS, dtype=np.int64)
    orng = np.empty(1, dtype=np.uint64)
    for i in range(start, start + count):
        k = i % n_cand
        o = i // n_cand
        complete = st[ST_DISCARDS + me] == 0
        _copy_kingdom(bits[me], bbox[me], kb[0], bb[0])
        if places[k] == DISCARD:
            complete = False
        elif places[k] >= 0:
            place(kb[0], bb[0], st[ST_CUR_ROW + st[ST_SLOT]], places[k])
        if claims[k] < 0:
            v = static_eval(kb[0], bb[0], size, flags, complete)
        elif not next_row:
            v = _best_static(kb[0], bb[0], size, flags, complete, claims[k] - CLAIM_BASE, kb, bb, sc, ac, 1)
        else:
            c = claims[k] - CLAIM_BASE
            # the chance outcome: a next row from the unseen dominoes, the first `ahead` taken
            orng[0] = np.uint64(seed) ^ (np.uint64(o + 1) * np.uint64(0x9E3779B97F4A7C15))
            shuffled[:] = pool
            for j in range(row_len):
                m = j + rand_below(orng, npool - j)
                t = shuffled[j]
                shuffled[j] = shuffled[m]
                shuffled[m] = t
                row[j] = shuffled[j]
            ahead = 0
            for j in range(4):
                d = st[ST_NEW_ROW + j]
                if d != 0 and d < c:
                    ahead += 1
            ahead = min(ahead, row_len - 1)
            # the claimed domino's best spots by static evaluation
            n = legal_masks(kb[0], bb[0], size, c, sc[1])
            nspots = 0
            if n > 0:
                n = masks_to_actions(sc[1], ac[1])
                for j in range(n):
                    _copy_kingdom(kb[0], bb[0], kb[1], bb[1])
                    place(kb[1], bb[1], c, ac[1, j])
                    sv = static_eval(kb[1], bb[1], size, flags, complete)
                    if nspots < TOP_SPOTS:
                        spot_v[nspots] = sv
                        spot_a[nspots] = ac[1, j]
                        nspots += 1
                    else:
                        worst = 0
                        for q in range(1, TOP_SPOTS):
                            if spot_v[q] < spot_v[worst]:
                                worst = q
                        if sv > spot_v[worst]:
                            spot_v[worst] = sv
                            spot_a[worst] = ac[1, j]
            v = -1e300
            for s in range(max(nspots, 1)):
                _copy_kingdom(kb[0], bb[0], kb[1], bb[1])
                comp = complete
                if nspots > 0:
                    place(kb[1], bb[1], c, spot_a[s])
                else:
                    comp = False
                for j in range(ahead, row_len):
                    w = _best_static(kb[1], bb[1], size, flags, comp, row[j], kb, bb, sc, ac, 2)
                    if w > v:
                        v = w
        sums[k] += v
        visits[k] += 1
