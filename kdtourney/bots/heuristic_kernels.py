"""Numba kernels of the weighted heuristic (`heuristic`, and `mcts:policy=heuristic`'s playouts).

A whole-turn move is valued as w . f, named weights (WEIGHTS) times features of the move.
`heuristic_combos` lists every (placement, claim) with its features (the `heuristic` bot);
`heuristic_action` chooses the placement, then the claim (the playout policy).
Features and their meaning: docs/internals.md.
"""

import numpy as np

from kdtourney.bots.evaluation import (
    FR_CENTER,
    FR_COUNT,
    FR_STRIDE,
    S2_SHIFT,
    S_MASK,
    action_squares,
    best_key,
    entry_action,
    frame_placements,
    gain,
    prepare_frame,
    territory,
)
from kdtourney.bots.kernels import POLICIES as GREEDY_POLICIES
from kdtourney.bots.kernels import POLICY_GREEDY, playout, playout_action
from kdtourney.engine import kernels as K
from kdtourney.engine import word64
from kdtourney.engine.kernel_base import OCC, flood, kernel, neighbours, popcount
from kdtourney.engine.kernels import (
    apply_action,
    bonus_points,
    copy_kingdom,
    count_holes,
    is_centered,
    place,
    rand_below,
)
from kdtourney.engine.tiles import TILE_CROWNS, TILE_TERRAIN

WEIGHTS = ("place_gain", "place_holes", "middle_lost", "frontier", "crowned_edges", "harmony_lost",
           "claim_gain", "claim_bad_spot", "claim_crowns", "claim_order", "claim_denial")
N_WEIGHTS = len(WEIGHTS)
(F_PLACE_GAIN, F_PLACE_HOLES, F_MIDDLE_LOST, F_FRONTIER, F_CROWNED_EDGES, F_HARMONY_LOST,
 F_CLAIM_GAIN, F_CLAIM_BAD_SPOT, F_CLAIM_CROWNS, F_CLAIM_ORDER, F_CLAIM_DENIAL) = range(N_WEIGHTS)
F_PLACE = F_HARMONY_LOST + 1  # features 0 .. F_PLACE - 1 belong to the placement
                              # (harmony_lost: both)

POLICY_HEURISTIC = max(GREEDY_POLICIES.values()) + 1  # every player the heuristic
POLICY_OWN_HEURISTIC = POLICY_HEURISTIC + 1  # the searching player the heuristic, the others greedy
POLICIES = {**GREEDY_POLICIES, "heuristic": POLICY_HEURISTIC, "own-heuristic": POLICY_OWN_HEURISTIC}
HEURISTIC_POLICIES = (POLICY_HEURISTIC, POLICY_OWN_HEURISTIC)


def heuristic_buffers(weights):
    """hw float64[2, N_WEIGHTS]: the weights (row 0) and one move's features (row 1)."""
    hw = np.zeros((2, N_WEIGHTS), dtype=np.float64)
    hw[0, :] = weights
    return hw


@kernel(inline="always")
def _crowned(pre, lvl):
    """The land squares of the frame in row lvl of pre (`prepare_frame`d) whose territory has crowns
    (of those the frame lists: the others have no free square next to them)."""
    out = 0
    for t in range(1, 7):
        for i in range(pre[lvl, FR_COUNT + t]):
            if (pre[lvl, territory(t, i) + 1] >> 16) & 0xFFFF:
                out |= pre[lvl, territory(t, i)]
    return out


@kernel(inline="always")
def _halves(pre, lvl, size, entry):
    """(around a, around b, square a, square b) of a placement entry (see
    `evaluation.frame_placements`) on the frame in row lvl of pre; a square off the frame is 0."""
    stride = pre[lvl, FR_STRIDE]
    if size == word64.SIZE:
        q = entry & 63
        a = 1 << q
        b = 1 << (q + word64.step(entry >> 6, stride))
        return neighbours(a, stride), neighbours(b, stride), a, b
    around_a, around_b, qa, qb, _ = action_squares(pre, lvl, entry)
    return around_a, around_b, (1 << qa) if qa >= 0 else 0, (1 << qb) if qb >= 0 else 0


@kernel(inline="always")
def _place_features(pre, lvl, flags, complete, domino, around_a, around_b, sq_a, sq_b, points,
                    holes, crowned, score0, centred0, f, row):
    """The placement's features f[row, :F_PLACE] of `domino` on squares sq_a, sq_b of the kingdom
    framed in row lvl of pre, the kingdom unchanged (the points as `kernels._key` counts them).
    points, holes, crowned: the frame's territory points, one-square holes and crowned squares
    before; score0: the kingdom's score before; centred0: whether it was centred."""
    ta = TILE_TERRAIN[domino, 0]
    tb = TILE_TERRAIN[domino, 1]
    ka = TILE_CROWNS[domino, 0]
    kb_ = TILE_CROWNS[domino, 1]
    a_land = around_a & pre[lvl, ta]
    b_land = around_b & pre[lvl, tb]
    score = points + gain(pre, lvl, domino, around_a, around_b)
    if flags & K.FLAG_HARMONY and complete:
        score += 5
    center = pre[lvl, FR_CENTER]
    halves = sq_a | sq_b
    centred = sq_a != 0 and sq_b != 0 and not ((pre[lvl, OCC] | halves) & ~center)
    if centred and flags & K.FLAG_MIDDLE:
        score += 10
    f[row, F_PLACE_GAIN] = score - score0
    f[row, F_MIDDLE_LOST] = 1.0 if centred0 and not centred else 0.0
    f[row, F_HARMONY_LOST] = 0.0
    if not centred:  # the centred square's room no longer counts
        f[row, F_PLACE_HOLES] = 0.0
        f[row, F_FRONTIER] = 0.0
        f[row, F_CROWNED_EDGES] = 0.0
        return
    stride = pre[lvl, FR_STRIDE]
    occ = pre[lvl, OCC] | halves
    empty = center & ~occ
    f[row, F_PLACE_HOLES] = max(0, popcount(empty & ~neighbours(empty, stride)) - holes)
    f[row, F_FRONTIER] = popcount(empty & neighbours(occ, stride))
    # a half is crowned land when it holds crowns or joins a crowned territory (both halves when
    # they are of one terrain), and so are the territories it joins
    ca = ka > 0 or (a_land & crowned) != 0
    cb = kb_ > 0 or (b_land & crowned) != 0
    if ta == tb and (ca or cb):
        ca = cb = True
    grown = crowned
    if ca:
        grown |= sq_a | flood(a_land, pre[lvl, ta], stride)
    if cb:
        grown |= sq_b | flood(b_land, pre[lvl, tb], stride)
    f[row, F_CROWNED_EDGES] = popcount(empty & neighbours(grown, stride))


@kernel(inline="always")
def _discard_features(complete, f, row):
    """The placement's features of a discard (its points: `score0` less Harmony, set by the
    caller)."""
    for i in range(F_PLACE):
        f[row, i] = 0.0
    f[row, F_HARMONY_LOST] = 1.0 if complete else 0.0


@kernel(inline="always")
def _denials(bits, bbox, st, p, kb, sc, ac):
    """ac[2, j] (j < 4): the most points free domino j of the new row adds to a kingdom of another
    player than p at its best spot (0 for a taken slot). Work level 0."""
    size = st[K.ST_SIZE]
    flags = st[K.ST_FLAGS]
    for j in range(4):
        ac[2, j] = 0
    for q in range(st[K.ST_PLAYERS]):
        if q == p:
            continue
        complete = st[K.ST_DISCARDS + q] == 0
        points = prepare_frame(bits, bbox, q, size, kb, 0)
        score = points + bonus_points(bbox, q, size, flags, complete)
        for j in range(4):
            d = st[K.ST_NEW_ROW + j]
            if d == 0 or st[K.ST_NEW_OWNER + j] >= 0:
                continue
            k, _ = best_key(bits, bbox, q, size, flags, complete, d, kb, 0, points, sc, ac, 0)
            ac[2, j] = max(ac[2, j], (k & S_MASK) - score)


@kernel(inline="always")
def _claim_features(bits, bbox, p, size, flags, complete, domino, pre, lvl, points, score1, order,
                    denial, sc, ac, f, row):
    """The claim's features f[row, F_PLACE:] (harmony_lost added to) of claiming `domino` into
    kingdom p (framed in row lvl of pre: its territory points, score score1), whose best spot
    is found with work level lvl; order: its place in the new row (0 to 1); denial: see _denials."""
    k, a = best_key(bits, bbox, p, size, flags, complete, domino, pre, lvl, points, sc, ac, lvl)
    f[row, F_CLAIM_GAIN] = (k & S_MASK) - score1
    f[row, F_CLAIM_BAD_SPOT] = 1.0 - (k >> S2_SHIFT)
    f[row, F_CLAIM_CROWNS] = TILE_CROWNS[domino, 0] + TILE_CROWNS[domino, 1]
    f[row, F_CLAIM_ORDER] = order
    f[row, F_CLAIM_DENIAL] = denial
    if a == K.DISCARD and complete:
        f[row, F_HARMONY_LOST] += 1.0


@kernel(inline="always")
def _order(st, j):
    """The new row's slot j as the order of next round's picks, 0 to 1 (0 when no round follows)."""
    if st[K.ST_DECK_POS] + st[K.ST_ROW_LEN] > st[K.ST_DECK_LEN]:
        return 0.0
    return j / (st[K.ST_ROW_LEN] - 1)


@kernel(inline="always")
def _value(w, f, row, lo, hi):
    v = 0.0
    for i in range(lo, hi):
        v += w[i] * f[row, i]
    return v


@kernel
def heuristic_combos(bits, bbox, st, places, claims, feats, kb, bb, sc, ac):
    """Every whole-turn move of the player to act with its features: at a place decision the
    (placement, claim) combinations (places[i], claims[i]: -1 in the last round),
    at a claim decision
    the claims (places[i] = -1); feats[i]: the move's features (claim features alone at a claim
    decision). Arrays need room for MAX_ACTIONS * 4 rows; returns their number. Work levels 0
    (copy, denials), 1 (claims' spots), frame row 2 (the placements) and ac[2] (the denials)."""
    p = st[K.ST_PLAYER]
    size = st[K.ST_SIZE]
    flags = st[K.ST_FLAGS]
    complete = st[K.ST_DISCARDS + p] == 0
    has_row = st[K.ST_NEW_ROW] != 0
    if has_row:
        _denials(bits, bbox, st, p, kb, sc, ac)
    if st[K.ST_PHASE] != K.PHASE_PLACE:
        points = prepare_frame(bits, bbox, p, size, kb, 1)
        score = points + bonus_points(bbox, p, size, flags, complete)
        n = 0
        for j in range(4):
            d = st[K.ST_NEW_ROW + j]
            if d == 0 or st[K.ST_NEW_OWNER + j] >= 0:
                continue
            for i in range(N_WEIGHTS):
                feats[n, i] = 0.0
            _claim_features(bits, bbox, p, size, flags, complete, d, kb, 1, points, score,
                            _order(st, j), ac[2, j], sc, ac, feats, n)
            places[n] = -1
            claims[n] = K.CLAIM_BASE + d
            n += 1
        return n
    domino = st[K.ST_CUR_ROW + st[K.ST_SLOT]]
    n_place = frame_placements(bits, bbox, p, size, domino, sc, ac, 0)
    points = prepare_frame(bits, bbox, p, size, kb, 2)
    holes = count_holes(bits, bbox, p, size)
    centred0 = is_centered(bbox, p, size)
    score0 = points + bonus_points(bbox, p, size, flags, complete)
    crowned = _crowned(kb, 2)
    n = 0
    for i in range(max(n_place, 1)):
        for q in range(N_WEIGHTS):
            feats[n, q] = 0.0
        if n_place == 0:
            a = K.DISCARD
            done = False
            _discard_features(complete, feats, n)
            feats[n, F_PLACE_GAIN] = points + bonus_points(bbox, p, size, flags, False) - score0
        else:
            a = entry_action(bits, p, size, ac[0, i])
            done = complete
            around_a, around_b, sq_a, sq_b = _halves(kb, 2, size, ac[0, i])
            _place_features(kb, 2, flags, complete, domino, around_a, around_b, sq_a, sq_b, points,
                            holes, crowned, score0, centred0, feats, n)
        if not has_row:  # the last round: the points are the final score
            for q in range(1, N_WEIGHTS):
                feats[n, q] = 0.0
            places[n] = a
            claims[n] = -1
            n += 1
            continue
        score1 = score0 + feats[n, F_PLACE_GAIN]
        copy_kingdom(bits, bbox, p, kb, bb, 0)
        if a != K.DISCARD:
            place(kb, bb, 0, size, domino, a)
        points2 = prepare_frame(kb, bb, 0, size, kb, 1)
        first = n
        for j in range(4):
            d = st[K.ST_NEW_ROW + j]
            if d == 0 or st[K.ST_NEW_OWNER + j] >= 0:
                continue
            if n > first:
                for q in range(N_WEIGHTS):
                    feats[n, q] = feats[first, q]
                feats[n, F_HARMONY_LOST] = 1.0 if a == K.DISCARD and complete else 0.0
            _claim_features(kb, bb, 0, size, flags, done, d, kb, 1, points2, score1,
                            _order(st, j), ac[2, j], sc, ac, feats, n)
            places[n] = a
            claims[n] = K.CLAIM_BASE + d
            n += 1
    return n


@kernel
def heuristic_action(bits, bbox, st, rng, hw, kb, bb, sc, ac):
    """The heuristic's action for the player to act, in two stages (see the module docstring):
    weights hw[0], features in hw[1]; the denials in ac[2, :4]. Work levels 0 and 1."""
    p = st[K.ST_PLAYER]
    size = st[K.ST_SIZE]
    flags = st[K.ST_FLAGS]
    complete = st[K.ST_DISCARDS + p] == 0
    best = -1
    ties = 0
    best_v = 0.0
    if st[K.ST_PHASE] == K.PHASE_PLACE:
        domino = st[K.ST_CUR_ROW + st[K.ST_SLOT]]
        n = frame_placements(bits, bbox, p, size, domino, sc, ac, 0)
        if n == 0:
            return K.DISCARD
        points = prepare_frame(bits, bbox, p, size, kb, 0)
        holes = count_holes(bits, bbox, p, size)
        centred0 = is_centered(bbox, p, size)
        score0 = points + bonus_points(bbox, p, size, flags, complete)
        crowned = _crowned(kb, 0)
        last = st[K.ST_NEW_ROW] == 0
        for i in range(n):
            around_a, around_b, sq_a, sq_b = _halves(kb, 0, size, ac[0, i])
            _place_features(kb, 0, flags, complete, domino, around_a, around_b, sq_a, sq_b, points,
                            holes, crowned, score0, centred0, hw, 1)
            v = hw[1, F_PLACE_GAIN] if last else _value(hw[0], hw, 1, 0, F_PLACE)
            if best < 0 or v > best_v:
                best, best_v, ties = i, v, 1
            elif v == best_v:
                ties += 1
                if rand_below(rng, ties) == 0:
                    best = i
        return entry_action(bits, p, size, ac[0, best])
    if hw[0, F_CLAIM_DENIAL] != 0.0:
        _denials(bits, bbox, st, p, kb, sc, ac)
    else:
        for j in range(4):
            ac[2, j] = 0
    points = prepare_frame(bits, bbox, p, size, kb, 1)
    score = points + bonus_points(bbox, p, size, flags, complete)
    best_c = -1
    for j in range(4):
        d = st[K.ST_NEW_ROW + j]
        if d == 0 or st[K.ST_NEW_OWNER + j] >= 0:
            continue
        hw[1, F_HARMONY_LOST] = 0.0
        _claim_features(bits, bbox, p, size, flags, complete, d, kb, 1, points, score,
                        _order(st, j), ac[2, j], sc, ac, hw, 1)
        v = hw[0, F_HARMONY_LOST] * hw[1, F_HARMONY_LOST] + _value(hw[0], hw, 1, F_PLACE, N_WEIGHTS)
        if best_c < 0 or v > best_v:
            best_c, best_v, ties = K.CLAIM_BASE + d, v, 1
        elif v == best_v:
            ties += 1
            if rand_below(rng, ties) == 0:
                best_c = K.CLAIM_BASE + d
    return best_c


@kernel
def policy_action(bits, bbox, st, rng, policy, me, hw, fb, kb, bb, sc, ac):
    """The playout policy's action for the player to act: `kernels.playout_action`'s policies,
    POLICY_HEURISTIC and POLICY_OWN_HEURISTIC (weights hw[0]; the others of the latter play the
    fast greedy); `me` is the searching player. hw None: `kernels.playout_action`'s policies alone,
    and the heuristic is not compiled in (Numba prunes the branch for that type: a caller passing
    None, mcts at a greedy policy, compiles as before the heuristic existed)."""
    if hw is not None:
        if policy == POLICY_HEURISTIC or (policy == POLICY_OWN_HEURISTIC and st[K.ST_PLAYER] == me):
            return heuristic_action(bits, bbox, st, rng, hw, kb, bb, sc, ac)
        if policy == POLICY_OWN_HEURISTIC:
            return playout_action(bits, bbox, st, rng, POLICY_GREEDY, me, fb, kb, bb, sc, ac)
    return playout_action(bits, bbox, st, rng, policy, me, fb, kb, bb, sc, ac)


@kernel
def policy_playout(bits, bbox, st, rng, policy, me, hw, fb, kb, bb, sc, ac):
    """Play the game to its end with a playout policy (as policy_action; hw None:
    `kernels.playout`)."""
    if hw is None:
        playout(bits, bbox, st, rng, policy, me, fb, kb, bb, sc, ac)
        return
    while st[K.ST_PHASE] != K.PHASE_OVER:
        apply_action(bits, bbox, st, policy_action(bits, bbox, st, rng, policy, me, hw, fb, kb, bb,
                                                   sc, ac))
