"""Numba kernels of the expectimax search (`kdtourney.bots.expectimax`): a depth-limited search over
the searching player's turns, with chance nodes for the rows it has not seen. Arrays and ints in,
arrays and ints out; built on the greedy evaluation of `kdtourney.bots.kernels`.

    expecti_buffers(max_depth)  the work arrays of a search up to that depth
    expecti_move(...)           a root move's value searched to a depth (or NOT_DONE)
"""

import numpy as np

from kdtourney.bots.evaluation import S2_SHIFT, S_MASK
from kdtourney.bots.kernels import KINGDOM_WIDTH, greedy_combos, key_points, work_buffers
from kdtourney.engine import kernels as K
from kdtourney.engine.kernel_base import kernel
from kdtourney.engine.kernels import copy_kingdom, place, rand_below

# ---------------------------------------------------------------------------------------------
# Expectimax over the searching player's turns
#
# A max node is one of the player's turns: place the domino it holds (`domino`), then claim one of
# the free dominoes of the row on the table. Its moves are the `width` best (placement, claim)
# combinations by the greedy's key (greedy_combos, which is also the move ordering). After a move,
# a chance node draws the next row from the dominoes the player has not seen (`samples` draws):
# the kings whose claimed dominoes are numbered below the player's pick first, and take random
# dominoes of it; the player's next turn places the domino it claimed and claims from what is
# left. The other players' kingdoms are not modelled. At the depth limit a move is valued by its
# greedy key, which greedy_combos has already computed (no copy of the kingdom): the points after
# the placement and after the claimed domino's best spot, less the key's penalties for a new hole
# or an off-centre kingdom (key_points); a kingdom that gets no more dominoes is valued by those
# points alone. It costs nothing more than the move ordering, so the search goes deeper in the same
# time, which pays more than a richer evaluation (bench_bots.py: a static evaluation counting
# potential was as strong from depth 3 on and 2.5x slower). Every move of a node is valued on the
# same chance outcomes: outcome s of a chance node comes from a seed made of the search seed and
# the path of outcome numbers that leads to it.
#
# Buffers per level L (0 = the root), from expecti_buffers(max_depth):
#   gb int64[L, 1, KINGDOM_WIDTH], gx int64[L, 1, 4], gs int64[L, ST_LEN]: the node as a one-player
#     game for greedy_combos (its kingdom, the domino to place, the row with the taken dominoes)
#   mb int64[L, KINGDOM_WIDTH], mx int64[L, 4]: kingdom L is the one after the move being valued
#   places, claims, keys, pick int64[L, 4 * MAX_ACTIONS]: the node's combinations, the searched ones
#   pool int64[L, 48]: the unseen dominoes the next row is drawn from
#   frame int64[L, F_COLS], fval float64[L, 2], fpath uint64[L]: the depth-first walk (an explicit
#     stack: Numba's cache does not keep recursive functions, numba issue 6061)
#   stats int64[2]: max nodes searched, deepest level reached

NOT_DONE = -1e300  # value of a root move whose search was cut off by the node limit

# frame columns: the node's depth left, domino to place, Harmony still possible (0/1), rows left
# to draw after the row on the table, unseen dominoes (bit set); its moves and the one being
# valued; that move's claim, Harmony after it, kings picking before the player next round, chance
# outcomes (rows drawn) and the next one, unseen dominoes to draw from. fval: best value, sum of
# the move's outcome values.
F_DEPTH, F_DOMINO, F_COMPLETE, F_ROWS, F_UNSEEN, F_MOVES, F_MOVE = 0, 1, 2, 3, 4, 5, 6
F_CLAIM, F_COMP, F_AHEAD, F_OUTCOMES, F_NEXT, F_POOL = 7, 8, 9, 10, 11, 12
F_COLS = 13


@kernel(nrt=True)
def expecti_buffers(max_depth):
    """The per-level buffers of expecti_move (see above), for searches up to `max_depth` turns."""
    n = max_depth + 1
    return (np.zeros((n, 1, KINGDOM_WIDTH), dtype=np.int64), np.zeros((n, 1, 4), dtype=np.int64),
            np.zeros((n, K.ST_LEN), dtype=np.int64), np.zeros((n, KINGDOM_WIDTH), dtype=np.int64),
            np.zeros((n, 4), dtype=np.int64), np.zeros((n, 4 * K.MAX_ACTIONS), dtype=np.int64),
            np.zeros((n, 4 * K.MAX_ACTIONS), dtype=np.int64),
            np.zeros((n, 4 * K.MAX_ACTIONS), dtype=np.int64),
            np.zeros((n, 4 * K.MAX_ACTIONS), dtype=np.int64), np.zeros((n, 48), dtype=np.int64),
            np.zeros((n, F_COLS), dtype=np.int64), np.zeros((n, 2), dtype=np.float64),
            np.zeros(n, dtype=np.uint64))


@kernel(inline="always")
def _outcome_rng(seed, path, s, rng):
    """Seed rng for outcome s of the chance node reached by `path`; returns the outcome's path."""
    child = (path + np.uint64(s + 1)) * np.uint64(0x9E3779B97F4A7C15)
    child ^= child >> np.uint64(29)
    rng[0] = seed ^ child
    return child


@kernel(inline="always")
def _leaf_value(key, final):
    """A move's value at the depth limit from its greedy key: the points after it when the kingdom
    gets no more dominoes, else those points less the key's penalties."""
    if final:
        return float((key >> S2_SHIFT) & S_MASK)
    return float(key_points(key))


@kernel(inline="always")
def _top(keys, n, width, pick):
    """Indices of the `width` largest of keys[:n] into pick (ties: the first); returns how many."""
    k = min(n, width) if width > 0 else n
    for j in range(k):
        best = -1
        for i in range(n):
            taken = False
            for q in range(j):
                if pick[q] == i:
                    taken = True
                    break
            if not taken and (best < 0 or keys[i] > keys[best]):
                best = i
        pick[j] = best
    return k


@kernel(nrt=True)
def expecti_move(bits, bbox, st, me, places, claims, root_keys, k, depth, width, samples, seed,
                 limit, stats, buffers):
    """Value of root move k (place places[k], claim claims[k]; -1: none; greedy key root_keys[k])
    searched `depth` turns deep, or NOT_DONE when stats[0] (max nodes searched, added to) passes
    `limit`.

    st: the real game with player `me` to act; only what `me` may know is used (the undrawn deck
    enters only as the set of unseen dominoes). stats[1] gets the deepest level reached.
    """
    gb, gx, gs, mb, mx, places_, claims_, keys, pick, pool, frame, fval, fpath = buffers
    kb, bb, sc, ac = work_buffers()
    rng = np.zeros(1, dtype=np.uint64)
    size = st[K.ST_SIZE]
    row_len = st[K.ST_ROW_LEN]
    kings = st[K.ST_KINGS]
    useed = np.uint64(seed)
    # the root: the real position, one move
    copy_kingdom(bits, bbox, me, gb[0], gx[0], 0)
    for j in range(K.ST_LEN):  # loops, not slices (kernels.copy_game says why)
        gs[0, j] = st[j]
    places_[0, 0] = places[k]
    claims_[0, 0] = claims[k]
    keys[0, 0] = root_keys[k]
    pick[0, 0] = 0
    unseen = 0
    for d in range(1, 49):
        unseen |= 1 << d
    for j in range(st[K.ST_DECK_POS]):
        unseen &= ~(1 << st[K.ST_DECK + j])
    frame[0, F_DEPTH] = depth
    frame[0, F_DOMINO] = st[K.ST_CUR_ROW + st[K.ST_SLOT]] if st[K.ST_PHASE] == K.PHASE_PLACE else 0
    frame[0, F_COMPLETE] = 1 if st[K.ST_DISCARDS + me] == 0 else 0
    frame[0, F_ROWS] = (st[K.ST_DECK_LEN] - st[K.ST_DECK_POS]) // row_len
    frame[0, F_UNSEEN] = unseen
    fpath[0] = 0
    lvl = 0
    entered = True
    while True:
        if entered:  # a new max node: its moves
            entered = False
            stats[0] += 1
            if stats[0] > limit:
                return NOT_DONE
            stats[1] = max(stats[1], lvl)
            if lvl == 0:
                n = 1
            else:
                n = greedy_combos(gb[lvl], gx[lvl], gs[lvl], places_[lvl], claims_[lvl], keys[lvl],
                                  kb, bb, sc, ac)
                n = _top(keys[lvl], n, width, pick[lvl])
            frame[lvl, F_MOVES] = n
            frame[lvl, F_MOVE] = 0
            frame[lvl, F_OUTCOMES] = 0
            fval[lvl, 0] = -1e300
        f = frame[lvl]
        if f[F_MOVE] == f[F_MOVES]:  # the node is done: back to the chance node above
            v = fval[lvl, 0]
            if lvl == 0:
                return v
            lvl -= 1
            fval[lvl, 1] += v
            continue
        if f[F_OUTCOMES] == 0:  # start valuing the next move
            i = pick[lvl, f[F_MOVE]]
            a = places_[lvl, i]
            c = claims_[lvl, i] - K.CLAIM_BASE if claims_[lvl, i] >= 0 else 0
            if c == 0 or f[F_DEPTH] <= 1:  # c == 0: the last round, nothing more to come
                v = _leaf_value(keys[lvl, i], c == 0 or f[F_ROWS] == 0)
                fval[lvl, 0] = max(fval[lvl, 0], v)
                f[F_MOVE] += 1
                continue
            copy_kingdom(gb[lvl], gx[lvl], 0, mb, mx, lvl)
            comp = f[F_COMPLETE] == 1
            if a == K.DISCARD:
                comp = False
            elif a >= 0:
                place(mb, mx, lvl, size, f[F_DOMINO], a)
            # the next turn places c and claims from the next row, if one is left to draw
            nxt = lvl + 1
            copy_kingdom(mb, mx, lvl, gb[nxt], gx[nxt], 0)
            for j in range(K.ST_LEN):
                gs[nxt, j] = gs[lvl, j]
            gs[nxt, K.ST_PHASE] = K.PHASE_PLACE
            gs[nxt, K.ST_PLAYER] = 0
            gs[nxt, K.ST_SLOT] = 0
            gs[nxt, K.ST_CUR_ROW] = c
            gs[nxt, K.ST_DISCARDS] = 0 if comp else 1
            ahead = 0
            for j in range(4):
                d = gs[lvl, K.ST_NEW_ROW + j]
                if d != 0 and d < c:
                    ahead += 1
            f[F_CLAIM] = c
            f[F_COMP] = 1 if comp else 0
            f[F_AHEAD] = min(ahead, kings - 1)
            f[F_OUTCOMES] = 1 if f[F_ROWS] == 0 else samples
            f[F_NEXT] = 0
            npool = 0
            for d in range(1, 49):
                if (f[F_UNSEEN] >> d) & 1:
                    pool[lvl, npool] = d
                    npool += 1
            f[F_POOL] = npool
            fval[lvl, 1] = 0.0
        if f[F_NEXT] == f[F_OUTCOMES]:  # every outcome valued: the move's value
            v = fval[lvl, 1] / f[F_OUTCOMES]
            fval[lvl, 0] = max(fval[lvl, 0], v)
            f[F_MOVE] += 1
            f[F_OUTCOMES] = 0
            continue
        # the next chance outcome, then down to the next turn
        s = f[F_NEXT]
        f[F_NEXT] += 1
        nxt = lvl + 1
        g = frame[nxt]
        g[F_DEPTH] = f[F_DEPTH] - 1
        g[F_DOMINO] = f[F_CLAIM]
        g[F_COMPLETE] = f[F_COMP]
        if f[F_ROWS] == 0:
            for j in range(4):
                gs[nxt, K.ST_NEW_ROW + j] = 0
                gs[nxt, K.ST_NEW_OWNER + j] = -1
            g[F_ROWS] = 0
            g[F_UNSEEN] = f[F_UNSEEN]
            fpath[nxt] = fpath[lvl]
        else:
            fpath[nxt] = _outcome_rng(useed, fpath[lvl], s, rng)
            # the next row: unseen dominoes (a partial Fisher-Yates on a copy of the pool)
            npool = f[F_POOL]
            pool[nxt, :npool] = pool[lvl, :npool]
            drawn = 0
            for j in range(min(row_len, npool)):
                m = j + rand_below(rng, npool - j)
                t = pool[nxt, m]
                pool[nxt, m] = pool[nxt, j]
                pool[nxt, j] = t
                drawn |= 1 << t
            # ascending; the kings ahead take random ones
            j = 0
            for d in range(1, 49):
                if (drawn >> d) & 1:
                    gs[nxt, K.ST_NEW_ROW + j] = d
                    gs[nxt, K.ST_NEW_OWNER + j] = -1
                    j += 1
            for q in range(j, 4):
                gs[nxt, K.ST_NEW_ROW + q] = 0
                gs[nxt, K.ST_NEW_OWNER + q] = -1
            for q in range(min(f[F_AHEAD], j - 1)):
                t = rand_below(rng, j - q)
                for jj in range(j):  # the t-th domino not yet taken
                    if gs[nxt, K.ST_NEW_OWNER + jj] < 0:
                        if t == 0:
                            gs[nxt, K.ST_NEW_OWNER + jj] = 1
                            break
                        t -= 1
            g[F_ROWS] = f[F_ROWS] - 1
            g[F_UNSEEN] = f[F_UNSEEN] & ~drawn
        lvl = nxt
        entered = True
