"""Numba kernels of the learned evaluation: a position's features and the value network on them.

`features` gives FEATURES_PER_PLAYER per player (the viewer first) then TABLE_FEATURES, raw
counts and points; `net` (float32 arrays w1, b1, w2, b2, w3, b3, passed as arguments so that
Numba never freezes them into its cache) gives the viewer's final margin and ratio.
Only 5x5 kingdoms. The features one by one: docs/internals.md.
"""

import numpy as np

from kdtourney.bots.evaluation import S2_SHIFT, S_MASK
from kdtourney.bots.kernels import spot_keys, work_buffers
from kdtourney.engine import kernels as K
from kdtourney.engine import word64
from kdtourney.engine.kernel_base import CROWN1, CROWN2, OCC, kernel, neighbours, popcount
from kdtourney.engine.kernels import (
    apply_action,
    copy_game,
    count_holes,
    is_centered,
    legal_actions,
    score_totals,
)
from kdtourney.engine.tiles import TILE_CROWNS, TILE_TERRAIN

# per player
P_SCORE, P_POINTS, P_LAND, P_ROWS, P_COLS, P_HOLES, P_CENTRED, P_COMPLETE, P_FREE = range(9)
P_TERRAIN = 9         # + 5 (t - 1) + (squares, crowns, points, next to crowned, next to other land)
P_REACH = P_TERRAIN + 30  # + 2 (t - 1) + (crowns, squares) of the territory with a free square
#                           next to it that has the most crowns
P_HELD = P_REACH + 12  # + 2 (t - 1) + (squares, crowns) of the dominoes held
P_HELD_CUR = P_HELD + 12
P_HELD_NEW = P_HELD_CUR + 1
P_NEW_SLOTS = P_HELD_NEW + 1
P_GAIN_CUR = P_NEW_SLOTS + 1  # + (gain, spots not ok)
P_GAIN_NEW = P_GAIN_CUR + 2
FEATURES_PER_PLAYER = P_GAIN_NEW + 2
# table
T_ROUND, T_CLAIM, T_TO_ACT, T_UNSEEN = range(4)
T_UNSEEN_TERRAIN = 4  # + 2 (t - 1) + (squares, crowns)
T_FREE_TERRAIN = T_UNSEEN_TERRAIN + 12
T_FREE = T_FREE_TERRAIN + 12
T_FREE_GAIN = T_FREE + 1  # + (best, second best)
T_POTENTIAL = T_FREE_GAIN + 2  # + (mean, best) gain of an unseen crowned domino for the viewer
TABLE_FEATURES = T_POTENTIAL + 2

OUT_MARGIN = 0
OUT_RATIO = 1


@kernel
def n_features(players):
    """Length of the feature vector of a game with `players` players."""
    return players * FEATURES_PER_PLAYER + TABLE_FEATURES


@kernel(inline="always")
def _add_domino(out, at, d):
    """Add domino d's squares and crowns per terrain to out[at + 2 (t - 1) + (0, 1)]."""
    for h in range(2):
        t = TILE_TERRAIN[d, h]
        out[at + 2 * (t - 1)] += 1.0
        out[at + 2 * (t - 1) + 1] += TILE_CROWNS[d, h]


@kernel(inline="always")
def _kingdom(bits, bbox, st, p, out, at, score):
    """The kingdom features of player p into out[at:]; score: its score now."""
    lay = bits[p, word64.LAYOUT]
    w = word64.LAY_W[lay]
    occ = bits[p, OCC]
    free = bits[p, word64.ALLOWED] & ~occ
    crown1 = bits[p, CROWN1]
    crown2 = bits[p, CROWN2]
    crowns_any = crown1 | crown2
    points = 0
    for t in range(1, 7):
        land = bits[p, t]
        crowned = 0  # the territories of t with a crown
        seeds = land & crowns_any
        k = 0
        tp = 0
        reach = 0
        reach_size = 0
        while seeds:
            comp = seeds & -seeds
            while True:
                grown = (comp | neighbours(comp, w)) & land
                if grown == comp:
                    break
                comp = grown
            c = popcount(comp & crown1) + 2 * popcount(comp & crown2)
            k += c
            tp += popcount(comp) * c
            crowned |= comp
            seeds &= ~comp
            if neighbours(comp, w) & free and c > reach:
                reach = c
                reach_size = popcount(comp)
        points += tp
        out[at + P_REACH + 2 * (t - 1)] = reach
        out[at + P_REACH + 2 * (t - 1) + 1] = reach_size
        base = at + P_TERRAIN + 5 * (t - 1)
        out[base] = popcount(land)
        out[base + 1] = k
        out[base + 2] = tp
        out[base + 3] = popcount(neighbours(crowned, w) & free)
        out[base + 4] = popcount(neighbours(land & ~crowned, w) & free)
    size = word64.SIZE
    out[at + P_SCORE] = score
    out[at + P_POINTS] = points
    out[at + P_LAND] = popcount(occ) - 1
    out[at + P_ROWS] = bbox[p, 1] - bbox[p, 0] + 1
    out[at + P_COLS] = bbox[p, 3] - bbox[p, 2] + 1
    out[at + P_HOLES] = count_holes(bits, bbox, p, size)
    out[at + P_CENTRED] = 1.0 if is_centered(bbox, p, size) else 0.0
    out[at + P_COMPLETE] = 1.0 if st[K.ST_DISCARDS + p] == 0 else 0.0
    out[at + P_FREE] = popcount(free)


@kernel(inline="always")
def _gains(bits, bbox, st, p, dominoes, n, keys, score, out, at, kb, bb, sc, ac):
    """Add what each of dominoes[:n] adds to player p's score at its best spot (each alone), and
    how many of those spots are not fine (a new hole, off the centred square), to out[at],
    out[at + 1]."""
    spot_keys(bits, bbox, p, st[K.ST_SIZE], st[K.ST_FLAGS], st[K.ST_DISCARDS + p] == 0, dominoes,
              n, keys, kb, bb, sc, ac)
    for i in range(n):
        out[at] += (keys[i] & S_MASK) - score
        out[at + 1] += 1 - (keys[i] >> S2_SHIFT)


@kernel
def features(bits, bbox, st, viewer, out, res, order, dominoes, keys, kb, bb, sc, ac):
    """The features of the position for seat `viewer` into out float32[n_features(players)] (see
    the module docstring). Scratch: res int64[players, RES_COLS], order int64[players], dominoes
    and keys int64[52], and the greedy evaluation's work buffers (kb, bb, sc, ac:
    bots.kernels.work_buffers())."""
    players = st[K.ST_PLAYERS]
    for i in range(out.shape[0]):
        out[i] = 0.0
    score_totals(bits, bbox, st, res)
    # the others by score, highest first (insertion sort; ties keep the seat order after viewer)
    n = 0
    for k in range(1, players):
        q = (viewer + k) % players
        i = n
        while i > 0 and res[order[i - 1], K.RES_TOTAL] < res[q, K.RES_TOTAL]:
            order[i] = order[i - 1]
            i -= 1
        order[i] = q
        n += 1
    phase = st[K.ST_PHASE]
    slot = st[K.ST_SLOT]
    row_len = st[K.ST_ROW_LEN]
    for k in range(players):
        p = viewer if k == 0 else order[k - 1]
        at = k * FEATURES_PER_PLAYER
        _kingdom(bits, bbox, st, p, out, at, res[p, K.RES_TOTAL])
        n_cur = 0
        n_new = 0
        for j in range(4):
            d = st[K.ST_CUR_ROW + j]
            if d != 0 and st[K.ST_CUR_OWNER + j] == p and phase != K.PHASE_OVER and (
                    j > slot or (j == slot and phase == K.PHASE_PLACE)):
                _add_domino(out, at + P_HELD, d)
                dominoes[n_cur] = d
                n_cur += 1
        _gains(bits, bbox, st, p, dominoes, n_cur, keys, res[p, K.RES_TOTAL], out, at + P_GAIN_CUR,
               kb, bb, sc, ac)
        for j in range(4):
            d = st[K.ST_NEW_ROW + j]
            if d != 0 and st[K.ST_NEW_OWNER + j] == p:
                _add_domino(out, at + P_HELD, d)
                out[at + P_NEW_SLOTS] += j
                dominoes[n_new] = d
                n_new += 1
        _gains(bits, bbox, st, p, dominoes, n_new, keys, res[p, K.RES_TOTAL], out, at + P_GAIN_NEW,
               kb, bb, sc, ac)
        out[at + P_HELD_CUR] = n_cur
        out[at + P_HELD_NEW] = n_new
    t = players * FEATURES_PER_PLAYER
    out[t + T_ROUND] = st[K.ST_ROUND] / (st[K.ST_DECK_LEN] // row_len)
    out[t + T_CLAIM] = 1.0 if phase == K.PHASE_CLAIM else 0.0
    out[t + T_TO_ACT] = 1.0 if st[K.ST_PLAYER] == viewer else 0.0
    drawn = 0
    for j in range(st[K.ST_DECK_POS]):
        drawn |= 1 << st[K.ST_DECK + j]
    for d in range(1, 49):
        if not (drawn >> d) & 1:
            out[t + T_UNSEEN] += 1.0
            _add_domino(out, t + T_UNSEEN_TERRAIN, d)
    # the viewer's gains: the free dominoes of the new row, then the unseen ones with crowns
    n_free = 0
    for j in range(4):
        d = st[K.ST_NEW_ROW + j]
        if d != 0 and st[K.ST_NEW_OWNER + j] < 0:
            out[t + T_FREE] += 1.0
            _add_domino(out, t + T_FREE_TERRAIN, d)
            dominoes[n_free] = d
            n_free += 1
    n = n_free
    for d in range(1, 49):
        if not (drawn >> d) & 1 and TILE_CROWNS[d, 0] + TILE_CROWNS[d, 1] > 0:
            dominoes[n] = d
            n += 1
    spot_keys(bits, bbox, viewer, st[K.ST_SIZE], st[K.ST_FLAGS], st[K.ST_DISCARDS + viewer] == 0,
              dominoes, n, keys, kb, bb, sc, ac)
    score = res[viewer, K.RES_TOTAL]
    best = second = -(1 << 30)
    for i in range(n_free):
        g = (keys[i] & S_MASK) - score
        if g > best:
            best, second = g, best
        elif g > second:
            second = g
    if n_free:
        out[t + T_FREE_GAIN] = best
        out[t + T_FREE_GAIN + 1] = second if n_free > 1 else best
    if n > n_free:
        best = -(1 << 30)
        total = 0
        for i in range(n_free, n):
            g = (keys[i] & S_MASK) - score
            total += g
            best = max(best, g)
        out[t + T_POTENTIAL] = total / (n - n_free)
        out[t + T_POTENTIAL + 1] = best


@kernel(fastmath=True)
def forward(net, x, h1, h2, out):
    """The network on features x into out float32[2]; h1, h2: scratch of the hidden layers'
    sizes."""
    w1, b1, w2, b2, w3, b3 = net
    for i in range(w1.shape[0]):
        acc = b1[i]
        for j in range(w1.shape[1]):
            acc += w1[i, j] * x[j]
        h1[i] = max(acc, np.float32(0.0))
    for i in range(w2.shape[0]):
        acc = b2[i]
        for j in range(w2.shape[1]):
            acc += w2[i, j] * h1[j]
        h2[i] = max(acc, np.float32(0.0))
    for i in range(w3.shape[0]):
        acc = b3[i]
        for j in range(w3.shape[1]):
            acc += w3[i, j] * h2[j]
        out[i] = acc


@kernel(nrt=True)
def feature_buffers(players):
    """(x, res, order, dominoes, keys, kb, bb, sc, ac): `features`' output and scratch for
    `players` players."""
    kb, bb, sc, ac = work_buffers()
    return (np.zeros(n_features(players), dtype=np.float32),
            np.zeros((players, K.RES_COLS), dtype=np.int64), np.zeros(players, dtype=np.int64),
            np.zeros(52, dtype=np.int64), np.zeros(52, dtype=np.int64), kb, bb, sc, ac)


@kernel
def observe(bits, bbox, st, viewer, fb):
    """The features of the position for `viewer` into fb[0] (fb: feature_buffers)."""
    x, res, order, dominoes, keys, kb, bb, sc, ac = fb
    features(bits, bbox, st, viewer, x, res, order, dominoes, keys, kb, bb, sc, ac)


@kernel(nrt=True)
def net_buffers(net, players):
    """(feature buffers, h1, h2, out): the scratch of `net_value` for a game of `players`
    players."""
    w1, b1, w2, b2, w3, b3 = net
    return (feature_buffers(players), np.zeros(w1.shape[0], dtype=np.float32),
            np.zeros(w2.shape[0], dtype=np.float32), np.zeros(w3.shape[0], dtype=np.float32))


@kernel
def net_value(bits, bbox, st, viewer, net, buffers, output):
    """The network's `output` (OUT_MARGIN or OUT_RATIO) for seat `viewer` of a game not over."""
    fb, h1, h2, out = buffers
    observe(bits, bbox, st, viewer, fb)
    forward(net, fb[0], h1, h2, out)
    return out[output]


@kernel
def final_margin(bits, bbox, st, viewer, res):
    """Own score minus the best other score of seat `viewer` in a finished game."""
    score_totals(bits, bbox, st, res)
    best = -(1 << 30)
    for q in range(st[K.ST_PLAYERS]):
        if q != viewer:
            best = max(best, res[q, K.RES_TOTAL])
    return float(res[viewer, K.RES_TOTAL] - best)


@kernel(nrt=True)
def best_successor(bits, bbox, st, net, buffers, sc, actions, values):
    """The legal action of the player to act whose successor position the network values highest
    for that player (its margin; a finished game counts its real margin), the first of equals.
    values float64[MAX_ACTIONS] gets every legal action's value, in legal_actions' order; returns
    (the action, how many legal actions)."""
    me = st[K.ST_PLAYER]
    n = legal_actions(bits, bbox, st, sc, actions)
    b = bits.copy()
    x = bbox.copy()
    s = st.copy()
    res = buffers[0][1]
    best = 0
    for i in range(n):
        copy_game(bits, bbox, st, b, x, s)
        apply_action(b, x, s, actions[0, i])
        if s[K.ST_PHASE] == K.PHASE_OVER:
            values[i] = final_margin(b, x, s, me, res)
        else:
            values[i] = net_value(b, x, s, me, net, buffers, OUT_MARGIN)
        if values[i] > values[best]:
            best = i
    return actions[0, best], n
