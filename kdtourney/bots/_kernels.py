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
combinations, about 40x cheaper (measured by benchmarks/bench_bots.py).

Result measures: MEASURE_WDL (1 sole win, 0.5 shared win, 0 loss), MEASURE_SCORE (own score / 100),
MEASURE_RATIO (own / (own + best opponent), 0.5 when both are 0).

Work buffers of the greedy kernels (allocate with `work_buffers(players)`):
    kb  int64[3, PLANES, G]  kingdom copies, one per look-ahead level
    bb  int64[3, 4]          their bounding boxes
    sc  int64[3, SCRATCH_ROWS, G]
    ac  int64[3, MAX_ACTIONS] action lists
"""

import numpy as np
from numba import njit

from kdtourney.engine._kernels import (CENTER, CLAIM_BASE, DISCARD, FLAG_TIEBREAK_TERRITORY, G,
                                       MAX_ACTIONS, OCC, PHASE_CLAIM, PHASE_OVER, PHASE_PLACE,
                                       PLANES, RES_COLS, RES_TOTAL, SCRATCH_ROWS, ST_CUR_ROW,
                                       ST_DISCARDS, ST_FLAGS, ST_NEW_OWNER, ST_NEW_ROW,
                                       ST_PHASE, ST_PLAYER, ST_PLAYERS, ST_ROUND, ST_SIZE, ST_SLOT,
                                       CROWN1, CROWN2, apply_action, bonus_points, is_centered,
                                       legal_masks, masks_to_actions, place, popcount, rand_below,
                                       random_action, rank_players, resample_deck, score_game,
                                       score_territories)
from kdtourney.engine.tiles import TILE_CROWNS

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


@njit(cache=True)
def best_spot(bits, bbox, size, flags, complete, domino, kb, bb, sc, ac, lvl):
    """Best placement of `domino` in a kingdom: returns (ok << 20 | score, action).

    ok is 1 when the best spot leaves no new hole and stays centred; score counts bonuses with
    Harmony while `complete`. A domino without a placement is discarded (Harmony lost). Uses level
    `lvl` of the work buffers. Ties go to the first placement found.
    """
    n = legal_masks(bits, bbox, size, domino, sc[lvl])
    if n == 0:
        ok = 1 if is_centered(bbox, size) else 0
        return (ok << S2_SHIFT) | kingdom_points(bits, bbox, size, flags, False), DISCARD
    n = masks_to_actions(sc[lvl], ac[lvl])
    holes = count_holes(bits, bbox, size)
    best = -1
    best_a = DISCARD
    for i in range(n):
        a = ac[lvl, i]
        _copy_kingdom(bits, bbox, kb[lvl], bb[lvl])
        place(kb[lvl], bb[lvl], domino, a)
        k = (_spot_ok(kb[lvl], bb[lvl], size, holes) << S2_SHIFT) | kingdom_points(
            kb[lvl], bb[lvl], size, flags, complete)
        if k > best:
            best = k
            best_a = a
    return best, best_a


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
    holes = count_holes(bits[p], bbox[p], size)
    n = 0
    for i in range(n_place):
        a = ac[0, i]
        _copy_kingdom(bits[p], bbox[p], kb[0], bb[0])
        if a == DISCARD:
            done = False
            ok1 = 1 if is_centered(bbox[p], size) else 0
        else:
            done = complete
            place(kb[0], bb[0], domino, a)
            ok1 = _spot_ok(kb[0], bb[0], size, holes)
        s1 = kingdom_points(kb[0], bb[0], size, flags, done)
        if nfree == 0:
            places[n] = a
            claims[n] = -1
            keys[n] = ((ok1 * 3) << OK_SHIFT) | (s1 << S2_SHIFT) | s1
            n += 1
            continue
        for j in range(nfree):
            k2, _ = best_spot(kb[0], bb[0], size, flags, done, free[j] - CLAIM_BASE, kb, bb, sc, ac, 1)
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
    n = free_claims(st, claims)
    complete = st[ST_DISCARDS + p] == 0
    for j in range(n):
        keys[j], _ = best_spot(bits[p], bbox[p], st[ST_SIZE], st[ST_FLAGS], complete,
                               claims[j] - CLAIM_BASE, kb, bb, sc, ac, 1)
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
        holes = count_holes(bits[p], bbox[p], size)
        best = -1
        best_a = DISCARD
        ties = 0
        for i in range(n):
            a = ac[0, i]
            _copy_kingdom(bits[p], bbox[p], kb[0], bb[0])
            place(kb[0], bb[0], domino, a)
            k = (_spot_ok(kb[0], bb[0], size, holes) << S2_SHIFT) | kingdom_points(
                kb[0], bb[0], size, flags, complete)
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
    for j in range(4):
        d = st[ST_NEW_ROW + j]
        if d == 0 or st[ST_NEW_OWNER + j] >= 0:
            continue
        k, _ = best_spot(bits[p], bbox[p], size, flags, complete, d, kb, bb, sc, ac, 1)
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
    kb = np.zeros((3, PLANES, G), dtype=np.int64)
    bb = np.zeros((3, 4), dtype=np.int64)
    sc = np.zeros((3, SCRATCH_ROWS, G), dtype=np.int64)
    ac = np.zeros((3, MAX_ACTIONS), dtype=np.int64)
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
    kb = np.zeros((3, PLANES, G), dtype=np.int64)
    bb = np.zeros((3, 4), dtype=np.int64)
    sc = np.zeros((3, SCRATCH_ROWS, G), dtype=np.int64)
    ac = np.zeros((3, MAX_ACTIONS), dtype=np.int64)
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
    kb = np.zeros((3, PLANES, G), dtype=np.int64)
    bb = np.zeros((3, 4), dtype=np.int64)
    sc = np.zeros((3, SCRATCH_ROWS, G), dtype=np.int64)
    ac = np.zeros((3, MAX_ACTIONS), dtype=np.int64)
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
