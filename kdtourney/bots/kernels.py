"""Numba kernels of the greedy players and the playouts of the search bots.

Built on the engine kernels (`kdtourney.engine.kernels`) and the placement keys of
`bots.evaluation`. Exposes the greedy evaluation of a whole turn (`greedy_combos`, `prior_combos`,
`fast_greedy_action`, `full_greedy_action`, `greedy_step`, `greedy_playout`), the playout
policies (POLICY_*, `playout`, `playout_after` a move), the result measures (MEASURE_*,
`result_value`), the flat Monte Carlo (`mce_run`), `work_buffers()` for their buffers and
`greedy_parts`, `full_greedy_parts`, `evaluation_parts` (what a warm-up may compile apart). Keys,
policies and buffers: docs/internals.md.
"""

import numpy as np

from kdtourney.bots.evaluation import (
    AC_ROWS,
    ENTRY_MASK,
    FR_LAND,
    FR_POINTS,
    FRAME_LEN,
    KEY_SHIFT,
    S2_SHIFT,
    S_MASK,
    best_key,
    entry_action,
    frame_place,
    frame_placements,
    key_bound,
    prepare_frame,
    rows_frame_place,
    scan_keys,
)
from kdtourney.engine import kernels as K
from kdtourney.engine import word64
from kdtourney.engine.kernel_base import kernel
from kdtourney.engine.kernels import (
    apply_action,
    bonus_points,
    copy_game,
    copy_kingdom,
    is_centered,
    land_squares,
    place,
    playout_random,
    rand_below,
    random_action,
    rank_players,
    resample_deck,
    score_game,
    score_totals,
)
from kdtourney.engine.rows import WIDTH as ROWS_WIDTH
from kdtourney.engine.tiles import TILE_CROWNS

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

KINGDOM_WIDTH = max(ROWS_WIDTH, word64.WIDTH, FRAME_LEN)  # a work row: any kingdom or a frame


KEPT = 3  # kb[KEPT + p]: the keys of the domino player p claimed last, kept for its placement
KEPT_DOMINO, KEPT_LAND, KEPT_DISCARDS, KEPT_N, KEPT_LIST = 0, 1, 2, 3, 4
FRAMES = KEPT + 4  # kb[FRAMES + p]: player p's kingdom framed (`evaluation`), kept up to date
KB_ROWS = FRAMES + 4


@kernel(nrt=True)
def work_buffers():
    """(kb, bb, sc, ac): the scratch arrays of the greedy kernels (docs/internals.md)."""
    return (np.zeros((KB_ROWS, KINGDOM_WIDTH), dtype=np.int64), np.zeros((3, 4), dtype=np.int64),
            np.zeros((3, K.SCRATCH), dtype=np.int64),
            np.zeros((AC_ROWS, K.MAX_ACTIONS), dtype=np.int64))


@kernel
def free_claims(st, out):
    """The claim actions of the free dominoes of the new row into out; returns their number."""
    n = 0
    for j in range(4):
        if st[K.ST_NEW_ROW + j] != 0 and st[K.ST_NEW_OWNER + j] < 0:
            out[n] = K.CLAIM_BASE + st[K.ST_NEW_ROW + j]
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
    return _combos(bits, bbox, st, places, claims, keys, kb, bb, sc, ac, False)


@kernel
def prior_combos(bits, bbox, st, places, claims, keys, kb, bb, sc, ac):
    """greedy_combos without the combinations that cannot have their placement's best key_points
    (their claim's key_bound is below it; a placement's first is always listed): the best
    key_points of every placement, what mcts's priors take."""
    return _combos(bits, bbox, st, places, claims, keys, kb, bb, sc, ac, True)


@kernel(inline="always")
def _combos(bits, bbox, st, places, claims, keys, kb, bb, sc, ac, prune):
    """greedy_combos, or prior_combos when `prune`."""
    p = st[K.ST_PLAYER]
    size = st[K.ST_SIZE]
    flags = st[K.ST_FLAGS]
    domino = st[K.ST_CUR_ROW + st[K.ST_SLOT]]
    complete = st[K.ST_DISCARDS + p] == 0
    n_place = frame_placements(bits, bbox, p, size, domino, sc, ac, 0)
    points = prepare_frame(bits, bbox, p, size, kb, 2)
    scan_keys(kb, 2, size, flags, complete, domino, points, ac, 0, n_place)
    has_row = st[K.ST_NEW_ROW] != 0
    n = 0
    for i in range(max(n_place, 1)):
        if n_place == 0:
            a = K.DISCARD
            done = False
            ok1 = 1 if is_centered(bbox, p, size) else 0
            s1 = points + bonus_points(bbox, p, size, flags, False)
        else:
            a = entry_action(bits, p, size, ac[0, i] & ENTRY_MASK)
            done = complete
            k1 = ac[0, i] >> KEY_SHIFT
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
        if a != K.DISCARD:
            place(kb, bb, 0, size, domino, a)
        points2 = prepare_frame(kb, bb, 0, size, kb, 1)
        centred = is_centered(bb, 0, size)
        first = n
        for j in range(4):
            if st[K.ST_NEW_ROW + j] == 0 or st[K.ST_NEW_OWNER + j] >= 0:
                continue
            if prune and n > first:  # the placement's best key_points so far is keys[first]'s
                bound = key_bound(kb, 1, flags, done, centred, st[K.ST_NEW_ROW + j], points2)
                if (bound & S_MASK) - 10 * (1 - ok1) - 5 * (1 - (bound >> S2_SHIFT)) < \
                        key_points(keys[first]):
                    continue
            k2, _ = best_key(kb, bb, 0, size, flags, done, st[K.ST_NEW_ROW + j], kb, 1, points2,
                             sc, ac, 1)
            ok2 = k2 >> S2_SHIFT
            s2 = k2 & S_MASK
            places[n] = a
            claims[n] = K.CLAIM_BASE + st[K.ST_NEW_ROW + j]
            keys[n] = ((ok1 * 2 + ok2) << OK_SHIFT) | (s2 << S2_SHIFT) | s1
            if prune and n > first and key_points(keys[n]) > key_points(keys[first]):
                keys[first], keys[n] = keys[n], keys[first]  # the best first: the bar above
                claims[first], claims[n] = claims[n], claims[first]
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
    for i in range(n):
        keys[i], _ = best_key(bits, bbox, p, size, flags, complete, dominoes[i], kb, 0, points,
                              sc, ac, 0)


@kernel
def claim_keys(bits, bbox, st, claims, keys, kb, bb, sc, ac):
    """Claims of the player to claim with the key of each domino's best spot (ok << 20 | score)."""
    p = st[K.ST_PLAYER]
    size = st[K.ST_SIZE]
    n = free_claims(st, claims)
    complete = st[K.ST_DISCARDS + p] == 0
    points = prepare_frame(bits, bbox, p, size, kb, 1)
    for j in range(n):
        keys[j], _ = best_key(bits, bbox, p, size, st[K.ST_FLAGS], complete,
                              claims[j] - K.CLAIM_BASE, kb, 1, points, sc, ac, 1)
    return n


@kernel
def first_claim(st, rng):
    """The full greedy's first claim: the free domino with the most crowns on one half
    (random ties)."""
    best_c = -1
    best = -1
    ties = 0
    for j in range(4):
        d = st[K.ST_NEW_ROW + j]
        if d == 0 or st[K.ST_NEW_OWNER + j] >= 0:
            continue
        take, best, ties = _running_best(max(TILE_CROWNS[d, 0], TILE_CROWNS[d, 1]), best, ties, rng)
        if take:
            best_c = K.CLAIM_BASE + d
    return best_c


@kernel(inline="always")
def _only_claim(st):
    """The claim action of the new row's one free domino; -1 when none or several are free."""
    n, only = 0, -1
    for j in range(4):
        if st[K.ST_NEW_ROW + j] != 0 and st[K.ST_NEW_OWNER + j] < 0:
            n += 1
            only = K.CLAIM_BASE + st[K.ST_NEW_ROW + j]
    return only if n == 1 else -1


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


@kernel(inline="always")
def _best_entry(keys, n, rng):
    """The entry (ENTRY_MASK) of the best of the placement keys keys[:n] (`evaluation.scan_keys`),
    ties drawn at random (`_running_best`)."""
    best = -1
    best_i = 0
    ties = 0
    for i in range(n):
        take, best, ties = _running_best(keys[i] >> KEY_SHIFT, best, ties, rng)
        if take:
            best_i = i
    return keys[best_i] & ENTRY_MASK


# ---------------------------------------------------------------------------------------------
# Fast greedy and playouts


@kernel
def fast_greedy_action(bits, bbox, st, rng, kb, bb, sc, ac):
    """The fast greedy's action for the player to act (see the module docstring)."""
    p = st[K.ST_PLAYER]
    size = st[K.ST_SIZE]
    flags = st[K.ST_FLAGS]
    complete = st[K.ST_DISCARDS + p] == 0
    if st[K.ST_PHASE] == K.PHASE_PLACE:
        domino = st[K.ST_CUR_ROW + st[K.ST_SLOT]]
        n = frame_placements(bits, bbox, p, size, domino, sc, ac, 0)
        if n <= 1:  # nothing to compare (and no tie to draw)
            return K.DISCARD if n == 0 else entry_action(bits, p, size, ac[0, 0])
        points = prepare_frame(bits, bbox, p, size, kb, 0)
        scan_keys(kb, 0, size, flags, complete, domino, points, ac, 0, n)
        return entry_action(bits, p, size, _best_entry(ac[0], n, rng))
    if st[K.ST_ROUND] == 0:
        return first_claim(st, rng)
    only = _only_claim(st)
    if only >= 0:  # nothing to compare (and no tie to draw)
        return only
    best = -1
    best_c = -1
    ties = 0
    points = prepare_frame(bits, bbox, p, size, kb, 1)
    for j in range(4):
        d = st[K.ST_NEW_ROW + j]
        if d == 0 or st[K.ST_NEW_OWNER + j] >= 0:
            continue
        k, _ = best_key(bits, bbox, p, size, flags, complete, d, kb, 1, points, sc, ac, 1)
        take, best, ties = _running_best(k, best, ties, rng)
        if take:
            best_c = K.CLAIM_BASE + d
    return best_c


@kernel(nrt=True)
def plan_buffers():
    """(plan, places, claims, keys): the full greedy's buffers in a playout. plan[p] is the claim
    player p chose with its placement, for the claim decision that follows (-1: none; reset it
    before every playout); the others are greedy_combos' arrays."""
    return (np.full(4, -1, dtype=np.int64), np.empty(4 * K.MAX_ACTIONS, dtype=np.int64),
            np.empty(4 * K.MAX_ACTIONS, dtype=np.int64),
            np.empty(4 * K.MAX_ACTIONS, dtype=np.int64))


@kernel
def full_greedy_action(bits, bbox, st, rng, fb, kb, bb, sc, ac):
    """The full greedy's action (GreedyBot's) for the player to act: at a place decision the whole
    turn, its claim kept in the plan for the claim decision that follows (fb: plan_buffers())."""
    plan, places, claims, keys = fb
    p = st[K.ST_PLAYER]
    if st[K.ST_PHASE] == K.PHASE_PLACE:
        n = greedy_combos(bits, bbox, st, places, claims, keys, kb, bb, sc, ac)
        i = argmax_random(keys, n, rng)
        plan[p] = claims[i]
        return places[i]
    if st[K.ST_ROUND] == 0:
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
    if policy == POLICY_FULL_GREEDY or (policy == POLICY_OTHERS_FULL_GREEDY
                                        and st[K.ST_PLAYER] != me):
        return full_greedy_action(bits, bbox, st, rng, fb, kb, bb, sc, ac)
    if policy == POLICY_RANDOM or (policy == POLICY_PLAYER_GREEDY and st[K.ST_PLAYER] != me):
        return random_action(bits, bbox, st, sc, rng)
    return fast_greedy_action(bits, bbox, st, rng, kb, bb, sc, ac)


@kernel(inline="always")
def _kept_place(bits, st, p, size, domino, kb, rng):
    """The fast greedy's placement of `domino` (as an entry, `evaluation.frame_placements`) from the
    keys kept when player p claimed it (the same keys, in the same order, and the same draws):
    -1 for a discard, -2 when none are kept for it (p placed or discarded something since)."""
    row = KEPT + p
    if (kb[row, KEPT_DOMINO] != domino or kb[row, KEPT_DISCARDS] != st[K.ST_DISCARDS + p]
            or kb[row, KEPT_LAND] != land_squares(bits, p, size)):
        return -2
    n = kb[row, KEPT_N]
    if n <= 1:
        return -1 if n == 0 else kb[row, KEPT_LIST] & ENTRY_MASK
    return _best_entry(kb[row, KEPT_LIST:KEPT_LIST + n], n, rng)


@kernel(inline="always")
def _keep(bits, st, p, size, domino, kb, ac, n):
    """Keep the keys scan_keys left in ac[1, :n] as those of `domino`, which player p claims."""
    row = KEPT + p
    if KEPT_LIST + n > kb.shape[1]:
        kb[row, KEPT_DOMINO] = 0
        return
    kb[row, KEPT_DOMINO] = domino
    kb[row, KEPT_LAND] = land_squares(bits, p, size)
    kb[row, KEPT_DISCARDS] = st[K.ST_DISCARDS + p]
    kb[row, KEPT_N] = n
    for i in range(n):
        kb[row, KEPT_LIST + i] = ac[1, i]


@kernel(inline="always")
def _framed(bits, bbox, p, size, kb):
    """Player p's kingdom framed in kb[FRAMES + p] (by prepare_frame unless it is there already);
    returns its territory points."""
    row = FRAMES + p
    if kb[row, FR_LAND] != land_squares(bits, p, size):
        prepare_frame(bits, bbox, p, size, kb, row)
    return kb[row, FR_POINTS]


@kernel(inline="always")
def _greedy_place(bits, bbox, st, p, size, rng, kb, sc, ac):
    """fast_greedy_action's placement as an entry (-1: discard), the keys kept at the claim when
    there are, p's frame otherwise; the frame then follows the placement."""
    domino = st[K.ST_CUR_ROW + st[K.ST_SLOT]]
    entry = _kept_place(bits, st, p, size, domino, kb, rng)
    if entry == -2:
        n = frame_placements(bits, bbox, p, size, domino, sc, ac, 0)
        if n <= 1:  # nothing to compare (and no tie to draw)
            entry = -1 if n == 0 else ac[0, 0]
        else:
            points = _framed(bits, bbox, p, size, kb)
            scan_keys(kb, FRAMES + p, size, st[K.ST_FLAGS], st[K.ST_DISCARDS + p] == 0, domino,
                      points, ac, 0, n)
            entry = _best_entry(ac[0], n, rng)
    if entry >= 0:  # the frame follows the placement, or is framed anew when next needed
        row = FRAMES + p
        if kb[row, FR_LAND] != land_squares(bits, p, size):
            kb[row, FR_LAND] = -1
        elif size == word64.SIZE:
            if bits[p, word64.LAYOUT] != word64.START:
                frame_place(kb, row, domino, entry)
            else:
                kb[row, FR_LAND] = -1
        elif not rows_frame_place(bbox, p, size, kb, row, domino, entry):
            kb[row, FR_LAND] = -1
    return entry


@kernel(inline="always")
def _greedy_claim(bits, bbox, st, p, size, rng, kb, sc, ac):
    """fast_greedy_action's claim (round > 0) with p's frame, keeping the claimed domino's keys
    for p's next placement (`_kept_place`)."""
    flags = st[K.ST_FLAGS]
    complete = st[K.ST_DISCARDS + p] == 0
    only = _only_claim(st)
    if only >= 0:  # nothing to compare (and no tie to draw)
        return only
    best = -1
    best_c = -1
    ties = 0
    points = _framed(bits, bbox, p, size, kb)
    centred = is_centered(bbox, p, size)
    for j in range(4):
        d = st[K.ST_NEW_ROW + j]
        if d == 0 or st[K.ST_NEW_OWNER + j] >= 0:
            continue
        if (size != word64.SIZE and best >= 0  # (5x5 keys are found too fast to gain by it)
                and key_bound(kb, FRAMES + p, flags, complete, centred, d, points) < best):
            continue  # it cannot be the best nor tie with it: as if its key were found lower
        m = frame_placements(bits, bbox, p, size, d, sc, ac, 1)
        if m == 0:
            k = ((1 if is_centered(bbox, p, size) else 0) << S2_SHIFT) | (
                points + bonus_points(bbox, p, size, flags, False))
        else:
            k, _ = scan_keys(kb, FRAMES + p, size, flags, complete, d, points, ac, 1, m)
        take, best, ties = _running_best(k, best, ties, rng)
        if take:
            best_c = K.CLAIM_BASE + d
            _keep(bits, st, p, size, d, kb, ac, m)
    return best_c


@kernel(inline="always")
def forget_kept(kb):
    """Nothing kept (`greedy_step`): a new game state is to be played out."""
    for p in range(4):
        kb[KEPT + p, KEPT_DOMINO] = 0
        kb[FRAMES + p, FR_LAND] = -1


@kernel(inline="always")
def greedy_step(bits, bbox, st, rng, kb, bb, sc, ac):
    """fast_greedy_action's action (the same action and draws), with what it found kept for later
    decisions: each player's kingdom framed, updated as it places, and the keys found when a
    player claims a domino, reused at that domino's placement when the player's kingdom and
    discards are unchanged since. What is kept must be of this game, as it was played since
    `forget_kept`. Inlined where it is called, a move at a time: a call would pass its eight
    arrays as about seventy words (with the engine's apply_action, a seventh of mcts's time in 2
    players)."""
    p = st[K.ST_PLAYER]
    size = st[K.ST_SIZE]
    if st[K.ST_PHASE] == K.PHASE_PLACE:
        entry = _greedy_place(bits, bbox, st, p, size, rng, kb, sc, ac)
        return K.DISCARD if entry < 0 else entry_action(bits, p, size, entry)
    if st[K.ST_ROUND] == 0:
        return first_claim(st, rng)
    return _greedy_claim(bits, bbox, st, p, size, rng, kb, sc, ac)


@kernel
def greedy_playout(bits, bbox, st, rng, kb, bb, sc, ac):
    """Every player the fast greedy (`greedy_step`) to the end of the game: `playout` with
    POLICY_GREEDY, the keys kept since `forget_kept`."""
    while st[K.ST_PHASE] != K.PHASE_OVER:
        K.play_action(bits, bbox, st, greedy_step(bits, bbox, st, rng, kb, bb, sc, ac))


@kernel
def playout(bits, bbox, st, rng, policy, me, fb, kb, bb, sc, ac):
    """Play the game to its end with a playout policy; `me` is the searching player."""
    if policy == POLICY_RANDOM:
        playout_random(bits, bbox, st, sc, rng)
        return
    if policy == POLICY_GREEDY:
        forget_kept(kb)
        greedy_playout(bits, bbox, st, rng, kb, bb, sc, ac)
        return
    while st[K.ST_PHASE] != K.PHASE_OVER:
        apply_action(bits, bbox, st,
                     playout_action(bits, bbox, st, rng, policy, me, fb, kb, bb, sc, ac))


@kernel
def result_value(bits, bbox, st, me, measure, res, ranks):
    """The measure of a finished game for player `me`, a float in [0, 1] (score: points / 100)."""
    players = st[K.ST_PLAYERS]
    score_totals(bits, bbox, st, res)
    own = res[me, K.RES_TOTAL]
    if measure == MEASURE_SCORE:
        return own / 100.0
    best = 0
    for q in range(players):
        if q != me and res[q, K.RES_TOTAL] > best:
            best = res[q, K.RES_TOTAL]
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
    rank_players(res, players, (st[K.ST_FLAGS] & K.FLAG_TIEBREAK_TERRITORY) != 0, ranks)
    if ranks[me] != 1:
        return 0.0
    first = 0
    for q in range(players):
        if ranks[q] == 1:
            first += 1
    return 1.0 if first == 1 else 0.5


# ---------------------------------------------------------------------------------------------
# Flat Monte Carlo


@kernel(inline="always")
def playout_after(bits, bbox, st, place, claim, b, x, s, rng, policy, me, fb, kb, bb, sc, ac):
    """A playout of `policy` (`playout`) into (b, x, s), from a fresh deal of the unseen dominoes
    (`resample_deck`) of the position (bits, bbox, st) after the place action `place` and the
    claim action `claim` (-1: none); fb: plan_buffers(), reset here."""
    copy_game(bits, bbox, st, b, x, s)
    fb[0].fill(-1)
    resample_deck(s, rng)
    if place >= 0:
        apply_action(b, x, s, place)
    if claim >= 0:
        apply_action(b, x, s, claim)
    playout(b, x, s, rng, policy, me, fb, kb, bb, sc, ac)


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
    res = np.zeros((st[K.ST_PLAYERS], K.RES_COLS), dtype=np.int64)
    ranks = np.zeros(st[K.ST_PLAYERS], dtype=np.int64)
    for i in range(start, start + count):
        k = i % n_cand
        playout_after(bits, bbox, st, places[k], claims[k], b, x, s, rng, policy, me, fb, kb, bb,
                      sc, ac)
        sums[k] += result_value(b, x, s, me, measure, res, ranks)
        visits[k] += 1


# ---------------------------------------------------------------------------------------------
# Warm-up: kernels compiled apart (kdtourney.engine.jit.precompile)


def examples(work):
    """Arguments of the kernels' types (bits, bbox, st, rng, a float64 tree array, kb, bb, sc, ac):
    their sizes do not matter to the compiler."""
    b = np.zeros((1, 1), dtype=np.int64)
    return (b, b, np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.uint64),
            np.zeros((1, 1), dtype=np.float64), *work)


def greedy_parts(work):
    """(kernel, example arguments) of `greedy_step` and what it calls, leaves first, as the search
    kernels call them (a warm-up compiles them apart: Bot.kernel_parts); work: work_buffers()."""
    b, x, s, rng, _, kb, bb, sc, ac = examples(work)
    return [*evaluation_parts(work), (apply_action, (b, x, s, 0)),
            (result_value, (b, x, s, 0, 0, b, s)),
            (_greedy_place, (b, x, s, 0, 0, rng, kb, sc, ac)),
            (_greedy_claim, (b, x, s, 0, 0, rng, kb, sc, ac)),
            (greedy_step, (b, x, s, rng, kb, bb, sc, ac))]


def evaluation_parts(work):
    """(kernel, example arguments) of the placement keys' kernels (`bots.evaluation`) the greedy
    players call, leaves of their call graphs (Bot.kernel_parts); work: work_buffers()."""
    b, x, _, _, _, _, _, sc, ac = examples(work)
    return [(prepare_frame, (b, x, 0, 0, b, 0)),
            (scan_keys, (b, 0, 0, 0, False, 0, 0, b, 0, 0)),
            (best_key, (b, x, 0, 0, 0, False, 0, b, 0, 0, sc, ac, 0))]


def full_greedy_parts(work):
    """(kernel, example arguments) of what `full_greedy_action` calls, leaves first (Bot.
    kernel_parts); work: work_buffers()."""
    b, x, s, _, _, kb, bb, sc, ac = examples(work)
    return [*evaluation_parts(work), (greedy_combos, (b, x, s, s, s, s, kb, bb, sc, ac)),
            (claim_keys, (b, x, s, s, s, kb, bb, sc, ac))]
