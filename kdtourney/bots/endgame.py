"""The exact endgame: once no domino is left to draw, every domino still to be placed is known, and
the rest of the game is solved.

Kingdoms do not interact: a player's final score depends only on which dominoes it gets, and its
best placements of them are found by trying every placement sequence (`best_final`, bonuses
included). What is left to decide between players is who claims which domino of the last row:
that is solved backwards over the claims still to come, in the engine's turn order. Each other
player claims what gives it the best final score (equal scores: the claim worst for us); we claim
what gives us the best victory margin (own score minus the best other's; equal margins: the
higher own score). A model of the others, not a guarantee: a player that does not maximise its own
score can leave us better or worse off.
"""

from functools import cache

import numpy as np

from kdtourney.bots import search_kernels as SK
from kdtourney.engine import kernels as K


def solvable(st) -> bool:
    """No domino is left to draw (and the game is not over)."""
    return (st[K.ST_PHASE] != K.PHASE_OVER and st[K.ST_ROUND] >= 1
            and st[K.ST_DECK_POS] + st[K.ST_ROW_LEN] > st[K.ST_DECK_LEN])


def solve(bits, bbox, st) -> tuple[int, int, list[int]]:
    """(place action or -1, claim action or -1, every player's final score) of the player to act,
    in a solvable position (see the module docstring); -1 where the decision has none."""
    me = int(st[K.ST_PLAYER])
    players = int(st[K.ST_PLAYERS])
    slot = int(st[K.ST_SLOT])
    placing = st[K.ST_PHASE] == K.PHASE_PLACE
    # dominoes of the current row still to be placed, per player in turn order
    first = slot if placing else slot + 1
    unplaced: dict[int, list] = {p: [] for p in range(players)}
    turns = []  # the kings still to claim, in order
    if not placing:
        turns.append(me)
    for s in range(first, 4):
        owner = int(st[K.ST_CUR_OWNER + s])
        if owner >= 0:
            unplaced[owner].append(int(st[K.ST_CUR_ROW + s]))
            turns.append(owner)
    row = [int(st[K.ST_NEW_ROW + j]) for j in range(4) if st[K.ST_NEW_ROW + j] != 0]
    if not row:
        turns = []
    owners = tuple(int(st[K.ST_NEW_OWNER + j]) for j in range(len(row)))
    size, flags = int(st[K.ST_SIZE]), int(st[K.ST_FLAGS])

    @cache
    def final(p, owned):
        """(best final score, first action) of player p ending with the new-row dominoes `owned`."""
        seq = np.array(unplaced[p] + [row[j] for j in owned], dtype=np.int64)
        return SK.best_final(bits, bbox, p, size, flags, int(st[K.ST_DISCARDS + p]), seq, len(seq))

    def scores(assigned):
        return [final(p, tuple(j for j, o in enumerate(assigned) if o == p))[0]
                for p in range(players)]

    def margin(v):
        return v[me] - max(v[q] for q in range(players) if q != me), v[me]

    @cache
    def outcome(i, assigned):
        """(final scores, claim of turn i) after turns i.. claim from the free dominoes."""
        if i == len(turns) or all(o >= 0 for o in assigned):
            return scores(assigned), -1
        q = turns[i]
        best = None
        for j, o in enumerate(assigned):
            if o >= 0:
                continue
            v, _ = outcome(i + 1, assigned[:j] + (q,) + assigned[j + 1:])
            if q == me:
                key = margin(v)
            else:
                key = (v[q], tuple(-x for x in margin(v)))
            if best is None or key > best[0]:
                best = (key, v, j)
        return best[1], best[2]

    v, j = outcome(0, owners)
    claim = K.CLAIM_BASE + row[j] if turns and j >= 0 else -1
    if not placing:
        return -1, claim, v
    mine = tuple(jj for jj, o in enumerate(owners) if o == me) + ((j,) if j >= 0 else ())
    _, place = final(me, tuple(sorted(mine)))
    return int(place), claim, v
