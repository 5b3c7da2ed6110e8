"""Numba kernels of mcts's tree search and of the exact endgame: arrays and ints in, arrays and ints
out (expectimax's: `kdtourney.bots.expectimax_kernels`).

Built on the greedy evaluation and the playouts of `kdtourney.bots.kernels` and on the engine
kernels (state layout documented in `kdtourney.engine.kernels`). `mcts_parts`: what a warm-up may
compile apart.
"""

import math

import numpy as np

from kdtourney.bots.evaluation import S2_SHIFT, S_MASK, best_key, prepare_frame
from kdtourney.bots.heuristic_kernels import policy_action, policy_playout
from kdtourney.bots.kernels import (
    MEASURE_MARGIN,
    examples,
    forget_kept,
    free_claims,
    greedy_parts,
    greedy_playout,
    greedy_step,
    key_points,
    prior_combos,
    result_value,
    work_buffers,
)
from kdtourney.bots.net_kernels import OUT_MARGIN, OUT_RATIO, net_buffers, net_value
from kdtourney.engine import kernels as K
from kdtourney.engine.kernel_base import kernel
from kdtourney.engine.kernels import (
    apply_action,
    bonus_points,
    copy_game,
    copy_kingdom,
    legal_moves,
    moves_to_actions,
    place,
    resample_deck,
    territory_points,
)
from kdtourney.engine.tiles import TILE_CROWNS

# ---------------------------------------------------------------------------------------------
# MCTS: determinized UCT over the searching player's own decisions
#
# The tree holds only the searching player's decisions; the other players' actions between two of
# them are played by the policy `opponents` (the playout policy, or another). A node is an own
# decision reached by a sequence of own actions; its children are the actions of that decision
# (engine actions: a placement, DISCARD, or a claim). Place decisions have the same legal actions
# in every determinization (they depend only on the own kingdom and the own claimed domino), so a
# place node gets all its children at once, best prior first; a claim node gets a child for each
# free domino the first time it is seen free (the row depends on the determinization), and a
# child's availability counts the visits in which it was legal (information-set UCT).
#
# Progressive widening: a place node visited n times chooses among its 1 + widen sqrt(n) children
# of best prior only, so that a new node does not spend its first visits on every placement.
# Common random numbers: the deal of an iteration (the unseen dominoes' order, and every random
# choice of the playout) is the k-th deal of the decision's seed when the root child chosen has k
# visits, so that the root children are compared on the same deals.
#
# Evaluation of a new leaf (`evaluation`): EVAL_PLAYOUT, the result of a playout to the end;
# EVAL_NET, the value network (`net_kernels`) after a playout of `depth` more rounds (0: at the
# leaf; the result itself when the game ends first); EVAL_MIX, (1 - net_share) playout result +
# net_share network at the leaf. The network's value is in the measure's units: its margin as
# MEASURE_MARGIN has it, or its ratio (the bot allows no other measure with a network).
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

EVAL_PLAYOUT = 0
EVAL_NET = 1
EVAL_MIX = 2
EVALS = {"playout": EVAL_PLAYOUT, "net": EVAL_NET, "mix": EVAL_MIX}


@kernel
def _new_node(ti, tf, ncount, parent, action, prior):
    """A new first child of `parent`; returns its index, -1 when the tree is full."""
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


@kernel
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


@kernel(inline="always")
def _copy_node(ti, tf, node, ti2, tf2, to):
    for j in range(TI_COLS):
        ti2[to, j] = ti[node, j]
    for j in range(TF_COLS):
        tf2[to, j] = tf[node, j]


@kernel(nrt=True)
def mcts_subtree(ti, tf, node, ti2, tf2, ncount2):
    """Copy the subtree of `node` into ti2, tf2 (as root 0, children in the same order); returns
    False when it does not fit."""
    if ti2.shape[0] < 1:
        return False
    queue = np.empty(ti2.shape[0], dtype=np.int64)  # old index of new node i
    queue[0] = node
    _copy_node(ti, tf, node, ti2, tf2, 0)
    ti2[0, TI_NEXT] = -1
    n = 1
    head = 0
    while head < n:
        old = queue[head]
        prev = -1
        ch = ti[old, TI_FIRST]
        ti2[head, TI_FIRST] = -1
        while ch >= 0:
            if n >= ti2.shape[0]:
                return False
            queue[n] = ch
            _copy_node(ti, tf, ch, ti2, tf2, n)
            ti2[n, TI_NEXT] = -1
            if prev < 0:
                ti2[head, TI_FIRST] = n
            else:
                ti2[prev, TI_NEXT] = n
            prev = n
            n += 1
            ch = ti[ch, TI_NEXT]
        head += 1
    ncount2[0] = n
    return True


@kernel(nrt=True)
def _expand_place(bits, bbox, st, node, ti, tf, ncount, places, claims, keys, kb, bb, sc, ac):
    """All placements of a place node as children, best prior (greedy combination) first."""
    n = prior_combos(bits, bbox, st, places, claims, keys, kb, bb, sc, ac)
    # one prior per placement (combinations come grouped by placement), kept in keys[:m]
    m = 0
    i = 0
    while i < n:
        a = places[i]
        h = key_points(keys[i])
        j = i + 1
        while j < n and places[j] == a:
            h = max(h, key_points(keys[j]))
            j += 1
        places[m] = a
        keys[m] = h
        m += 1
        i = j
    # inserted worst first, so that the list runs best first (ties: the first found first)
    order = claims  # free now: the placements' order, best first (a stable insertion sort)
    for q in range(m):
        j = q
        while j > 0 and keys[order[j - 1]] < keys[q]:
            order[j] = order[j - 1]
            j -= 1
        order[j] = q
    for q in range(m - 1, -1, -1):
        if _new_node(ti, tf, ncount, node, places[order[q]], float(keys[order[q]])) < 0:
            return


@kernel
def _expand_claims(bits, bbox, s, node, ti, tf, ncount, free, children, kb, bb, sc, ac):
    """A child for every free domino not yet a child (children: `_claimed_children`), prior = its
    best spot's score."""
    nfree = free_claims(s, free)
    p = s[K.ST_PLAYER]
    size = s[K.ST_SIZE]
    points = -1  # the kingdom is framed (in kb[1]) for the first new child
    for j in range(nfree):
        d = free[j] - K.CLAIM_BASE
        if (children >> d) & 1:
            continue
        if s[K.ST_ROUND] == 0:
            h = 5.0 * max(TILE_CROWNS[d, 0], TILE_CROWNS[d, 1])
        else:
            if points < 0:
                points = prepare_frame(bits, bbox, p, size, kb, 1)
            k, _ = best_key(bits, bbox, p, size, s[K.ST_FLAGS], s[K.ST_DISCARDS + p] == 0, d, kb, 1,
                            points, sc, ac, 1)
            h = float((k & S_MASK) - 5 * (1 - (k >> S2_SHIFT)))
        _new_node(ti, tf, ncount, node, free[j], h)


@kernel(inline="always")
def _claimed_children(ti, node):
    """Bit d set for each domino d that claim node `node` has a child for."""
    children = 0
    ch = ti[node, TI_FIRST]
    while ch >= 0:
        children |= 1 << (ti[ch, TI_ACTION] - K.CLAIM_BASE)
        ch = ti[ch, TI_NEXT]
    return children


@kernel(inline="always")
def _free_now(st):
    """Bit d set for each domino d of the new row that is free."""
    free = 0
    for j in range(4):
        if st[K.ST_NEW_ROW + j] != 0 and st[K.ST_NEW_OWNER + j] < 0:
            free |= 1 << st[K.ST_NEW_ROW + j]
    return free


def _log_table(n):
    """LOG_TABLE[a] = ln(a) for 0 < a < n, from the C library's log as Numba's np.log calls it
    (Python's math.log is that function: the same bits)."""
    table = np.array([0.0] + [math.log(a) for a in range(1, n)], dtype=np.float64)
    table.flags.writeable = False
    return table


LOG_TABLE = _log_table(4096)  # 32 KB: availabilities of up to 4,095 iterations


@kernel(inline="always")
def _log(a):
    """ln(a) for an integer a >= 1, from LOG_TABLE while it holds it."""
    return LOG_TABLE[a] if a < LOG_TABLE.shape[0] else np.log(a)


@kernel(inline="always")
def _select(ti, tf, node, c, bias, widen, claim_phase, free_now):
    """UCB with progressive bias over the node's children legal now (availability updated; at a
    claim node those of the free dominoes, `_free_now`).

    Place nodes: only the first 1 + widen sqrt(visits) children (best priors) when widen > 0.
    Unvisited legal children come first, the best prior among them; then
    Q + c sqrt(ln(avail) / n) + bias (h - hmax) / 100 / (n + 1).
    """
    best = -1
    best_u = -1e300
    fresh = -1
    fresh_h = -1e300
    hmax = tf[node, TF_HMAX]
    allowed = 1 << 62
    if widen > 0 and not claim_phase:
        allowed = 1 + int(widen * np.sqrt(ti[node, TI_VISITS]))
    ch = ti[node, TI_FIRST]
    while ch >= 0 and allowed > 0:
        allowed -= 1
        legal = not claim_phase or (free_now >> (ti[ch, TI_ACTION] - K.CLAIM_BASE)) & 1 == 1
        if legal:
            ti[ch, TI_AVAIL] += 1
            n = ti[ch, TI_VISITS]
            if n == 0:
                if tf[ch, TF_PRIOR] > fresh_h:
                    fresh_h = tf[ch, TF_PRIOR]
                    fresh = ch
            elif fresh < 0:
                u = (tf[ch, TF_VALUE] / n + c * np.sqrt(_log(ti[ch, TI_AVAIL]) / n)
                     + bias * (tf[ch, TF_PRIOR] - hmax) / 100.0 / (n + 1))
                if u > best_u:
                    best_u = u
                    best = ch
        ch = ti[ch, TI_NEXT]
    return fresh if fresh >= 0 else best


@kernel(inline="always")
def _net_measure(bits, bbox, st, me, measure, net, nb):
    """The network's value of a game not over for `me`, in the units of `measure`
    (within [0, 1])."""
    if measure == MEASURE_MARGIN:
        v = 0.5 + net_value(bits, bbox, st, me, net, nb, OUT_MARGIN) / 200.0
    else:
        v = net_value(bits, bbox, st, me, net, nb, OUT_RATIO)
    return min(1.0, max(0.0, v))


@kernel(nrt=True)
def net_work(net, players):
    """The network's work arrays (net_buffers), None without a network."""
    if net is None:
        return None
    return net_buffers(net, players)


@kernel(nrt=True)
def mcts_run(bits, bbox, st, me, ti, tf, ncount, count, c, bias, widen, policy, opponents, hw, fb,
             measure, seed, net, evaluation, net_share, depth, forced):
    """`count` iterations of determinized UCT from st (the searching player `me` to act), the
    tree's root being this position; deals from `seed` (common random numbers, see above); leaves
    evaluated by `evaluation` with the network `net` (see above; None: playouts alone, and the
    network is not compiled in); policy: the playouts' policy, opponents: the policy of the other
    players' moves inside the tree (between two own decisions; policy itself, or another:
    POLICY_FULL_GREEDY models greedy opponents exactly where the moves are few); hw: the
    heuristic policy's weights and work (heuristic_kernels.heuristic_buffers), or None for the
    greedy policies (the heuristic is not compiled in: heuristic_kernels.policy_action); fb: the
    full greedy's plan buffers (kernels.plan_buffers), or None when policy and opponents are both
    POLICY_GREEDY (the other policies are not compiled in: every move is kernels.greedy_step's).
    forced: the root's action of every iteration (-1: chosen by the tree policy, as everywhere
    else)."""
    kb, bb, sc, ac = work_buffers()
    places = np.empty(4 * K.MAX_ACTIONS, dtype=np.int64)  # greedy_combos' arrays
    claims = np.empty(4 * K.MAX_ACTIONS, dtype=np.int64)
    keys = np.empty(4 * K.MAX_ACTIONS, dtype=np.int64)
    nb = net_work(net, st[K.ST_PLAYERS])
    free = np.empty(4, dtype=np.int64)
    rng = np.zeros(1, dtype=np.uint64)
    b = bits.copy()
    x = bbox.copy()
    s = st.copy()
    res = np.zeros((st[K.ST_PLAYERS], K.RES_COLS), dtype=np.int64)
    ranks = np.zeros(st[K.ST_PLAYERS], dtype=np.int64)
    path = np.empty(256, dtype=np.int64)
    useed = np.uint64(seed)
    for _ in range(count):
        copy_game(bits, bbox, st, b, x, s)
        if fb is not None:
            fb[0].fill(-1)
        forget_kept(kb)
        node = 0
        plen = 1
        path[0] = 0
        dealt = False
        while s[K.ST_PHASE] != K.PHASE_OVER:
            if s[K.ST_PLAYER] != me:
                if fb is None:
                    a = greedy_step(b, x, s, rng, kb, bb, sc, ac)
                else:
                    a = policy_action(b, x, s, rng, opponents, me, hw, fb, kb, bb, sc, ac)
                K.play_action(b, x, s, a)
                continue
            if node != 0 and ti[node, TI_VISITS] == 0:
                break  # a new leaf: evaluate it
            claim_phase = s[K.ST_PHASE] == K.PHASE_CLAIM
            free_now = 0
            if claim_phase:
                free_now = _free_now(s)
                children = _claimed_children(ti, node)
                if free_now & ~children:  # a call only for a new child
                    _expand_claims(b, x, s, node, ti, tf, ncount, free, children, kb, bb, sc, ac)
            elif ti[node, TI_FIRST] < 0:
                _expand_place(b, x, s, node, ti, tf, ncount, places, claims, keys, kb, bb, sc, ac)
            if node == 0 and forced >= 0:
                ch = ti[0, TI_FIRST]
                while ch >= 0 and ti[ch, TI_ACTION] != forced:
                    ch = ti[ch, TI_NEXT]
                if ch >= 0:
                    ti[ch, TI_AVAIL] += 1
            else:
                ch = _select(ti, tf, node, c, bias, widen, claim_phase, free_now)
            if ch < 0:
                break  # the tree is full
            if not dealt:  # the root's decision does not depend on the deal: deal k of child k
                dealt = True
                rng[0] = useed ^ (np.uint64(ti[ch, TI_VISITS] + 1) * np.uint64(0x9E3779B97F4A7C15))
                resample_deck(s, rng)
            apply_action(b, x, s, ti[ch, TI_ACTION])
            node = ch
            path[plen] = ch
            plen += 1
        if not dealt:  # the tree is full at the root
            rng[0] = useed
            resample_deck(s, rng)
        if net is None:
            v = _played_out(b, x, s, rng, policy, me, hw, fb, kb, bb, sc, ac, measure, res, ranks)
        elif evaluation == EVAL_PLAYOUT or s[K.ST_PHASE] == K.PHASE_OVER:
            v = _played_out(b, x, s, rng, policy, me, hw, fb, kb, bb, sc, ac, measure, res, ranks)
        elif evaluation == EVAL_NET:
            stop = s[K.ST_ROUND] + depth
            while s[K.ST_PHASE] != K.PHASE_OVER and s[K.ST_ROUND] < stop:
                if fb is None:
                    a = greedy_step(b, x, s, rng, kb, bb, sc, ac)
                else:
                    a = policy_action(b, x, s, rng, policy, me, hw, fb, kb, bb, sc, ac)
                apply_action(b, x, s, a)
            if s[K.ST_PHASE] == K.PHASE_OVER:
                v = result_value(b, x, s, me, measure, res, ranks)
            else:
                v = _net_measure(b, x, s, me, measure, net, nb)
        else:
            vn = _net_measure(b, x, s, me, measure, net, nb)
            v = ((1.0 - net_share) * _played_out(b, x, s, rng, policy, me, hw, fb, kb, bb, sc, ac,
                                                 measure, res, ranks) + net_share * vn)
        for i in range(plen):
            ti[path[i], TI_VISITS] += 1
            tf[path[i], TF_VALUE] += v


@kernel(inline="always")
def _played_out(b, x, s, rng, policy, me, hw, fb, kb, bb, sc, ac, measure, res, ranks):
    """The measure of the game played out by `policy` (fb None: by greedy_step, with what it kept
    inside the tree)."""
    if fb is None:
        greedy_playout(b, x, s, rng, kb, bb, sc, ac)
    else:
        policy_playout(b, x, s, rng, policy, me, hw, fb, kb, bb, sc, ac)
    return result_value(b, x, s, me, measure, res, ranks)


# ---------------------------------------------------------------------------------------------
# Exact endgame: once no domino is left to draw, a kingdom's best final score


@kernel(nrt=True)
def best_final(bits, bbox, p, size, flags, discards, dominoes, k):
    """(best final score, first action) of kingdom p (with `discards` discards so far) placing
    dominoes[:k] in that order, every placement sequence tried (a domino with no legal placement
    is discarded: Harmony lost); the score counts the bonuses of `flags`. First action: the place
    action (or DISCARD) of dominoes[0] in a best sequence (-1 when k is 0)."""
    kb = np.zeros((k + 1, bits.shape[1]), dtype=np.int64)
    bb = np.zeros((k + 1, 4), dtype=np.int64)
    sc = np.zeros((k + 1, K.SCRATCH), dtype=np.int64)
    ac = np.zeros((k + 1, K.MAX_ACTIONS), dtype=np.int64)
    moves = np.zeros(k + 1, dtype=np.int64)
    at = np.zeros(k + 1, dtype=np.int64)
    disc = np.zeros(k + 1, dtype=np.int64)
    copy_kingdom(bits, bbox, p, kb, bb, 0)
    disc[0] = discards
    if k == 0:
        return territory_points(kb, bb, 0, size) + bonus_points(bb, 0, size, flags,
                                                                discards == 0), -1
    best = -1
    best_first = -1
    lvl = 0
    entered = True
    while lvl >= 0:
        if entered:  # level lvl places dominoes[lvl] into kingdom lvl
            entered = False
            if legal_moves(kb, bb, lvl, size, dominoes[lvl], sc, lvl) == 0:
                ac[lvl, 0] = K.DISCARD
                moves[lvl] = 1
            else:
                moves[lvl] = moves_to_actions(sc, lvl, size, ac, lvl)
            at[lvl] = 0
        if at[lvl] == moves[lvl]:
            lvl -= 1
            continue
        a = ac[lvl, at[lvl]]
        at[lvl] += 1
        copy_kingdom(kb, bb, lvl, kb, bb, lvl + 1)
        disc[lvl + 1] = disc[lvl]
        if a == K.DISCARD:
            disc[lvl + 1] += 1
        else:
            place(kb, bb, lvl + 1, size, dominoes[lvl], a)
        if lvl + 1 < k:
            lvl += 1
            entered = True
            continue
        v = territory_points(kb, bb, k, size) + bonus_points(bb, k, size, flags, disc[k] == 0)
        if v > best:
            best = v
            best_first = ac[0, at[0] - 1]
    return best, best_first


def mcts_parts(work, hw, fb):
    """(kernel, example arguments) of the big kernels `mcts_run` calls, leaves first, as it calls
    them with the greedy playouts (hw and fb None, MCTSBot's defaults: none otherwise); work:
    work_buffers(). A warm-up compiles them apart (Bot.kernel_parts)."""
    if hw is not None or fb is not None:
        return []
    b, x, s, rng, tf, *work = examples(work)
    return [*greedy_parts(work), (greedy_playout, (b, x, s, rng, *work)),
            (_played_out, (b, x, s, rng, 0, 0, None, None, *work, 0, b, s)),
            (_expand_place, (b, x, s, 0, b, tf, s, s, s, s, *work)),
            (_expand_claims, (b, x, s, 0, b, tf, s, s, 0, *work))]
