"""Numba kernels of the learning environments: observation encoding and batched stepping.

A batch is `bits[N, players, width]`, `bbox[N, players, 4]`, `st[N, ST_LEN]`: game i is the
engine's (bits[i], bbox[i], st[i]). The layout of an observation is documented in
`kdtourney.env.encoding` (and docs/observation.md); the offsets below are its constants.

Three kernels only (`observe`, `reset`, `step`), each compiled for one signature: the Python
layers (BatchEnv, the PettingZoo and OpenSpiel games, the policy adapter) all call these, with
N = 1 where they hold one game.
"""

import numpy as np

from kdtourney.engine import kernels as K
from kdtourney.engine.kernel_base import kernel
from kdtourney.engine.tiles import TILE_CROWNS, TILE_TERRAIN

N_ACTIONS = K.CLAIM_BASE + 49  # Discrete(1049): kdtourney's action numbers, claims 1001..1048
KINGDOM_PLANES = 8             # occupied, terrain WHEAT..MINE, crowns
PLANE_OCCUPIED = 0
PLANE_CROWNS = 7

# The table part, after the kingdoms (seats relative to the viewer: 0 = the viewer).
DOMINO_FEATURES = 16           # present, number/48, terrain a (6), crowns a,
                               # terrain b (6), crowns b
CUR_SLOT = DOMINO_FEATURES + 4 + 2  # + owner (4 relative seats), placed, to place now
NEW_SLOT = DOMINO_FEATURES + 4      # + owner (4 relative seats)
T_PHASE = 0                    # place, claim
T_ROUND = 2                    # round / rounds
T_CUR_ROW = 3                  # 4 slots of CUR_SLOT
T_NEW_ROW = T_CUR_ROW + 4 * CUR_SLOT
T_DISCARDS = T_NEW_ROW + 4 * NEW_SLOT
T_SCORES = T_DISCARDS + 4
T_UNSEEN = T_SCORES + 4        # 48 flags: domino n+1 not drawn yet
TABLE = T_UNSEEN + 48

REWARD_RANK = 0
REWARD_MARGIN = 1
REWARD_SCORE = 2


def _domino_table():
    table = np.zeros((49, DOMINO_FEATURES), dtype=np.float32)
    for d in range(1, 49):
        table[d, 0] = 1.0
        table[d, 1] = d / 48.0
        for h in range(2):
            base = 2 + 7 * h
            table[d, base + TILE_TERRAIN[d, h] - 1] = 1.0
            table[d, base + 6] = TILE_CROWNS[d, h]
    table.flags.writeable = False
    return table


DOMINO = _domino_table()


@kernel(inline="always")
def _window(size):
    """(first grid row and column, side) of the kingdom window: the castle +- (size - 1)."""
    return K.CENTER - (size - 1), 2 * size - 1


@kernel(inline="always")
def _put_domino(obs, at, d, owner, viewer, players):
    """Domino d's features at obs[at], then its owner's seat relative to the viewer's, if any."""
    for f in range(DOMINO_FEATURES):
        obs[at + f] = DOMINO[d, f]
    if owner >= 0:
        obs[at + DOMINO_FEATURES + (owner - viewer) % players] = 1.0


@kernel(nrt=True)
def _encode(bits, bbox, st, viewer, obs, res):
    """The observation of seat `viewer` of one game into obs float32[size]; res: int64[players,
    RES_COLS] scratch for the scores."""
    players = st[K.ST_PLAYERS]
    size = st[K.ST_SIZE]
    r0, w = _window(size)
    obs[:] = 0.0
    for k in range(players):
        p = (viewer + k) % players
        base = k * KINGDOM_PLANES * w * w
        for r in range(bbox[p, 0], bbox[p, 1] + 1):
            for c in range(bbox[p, 2], bbox[p, 3] + 1):
                code = K.square(bits, p, size, r, c)
                if code == 0:
                    continue
                cell = (r - r0) * w + (c - r0)
                obs[base + PLANE_OCCUPIED * w * w + cell] = 1.0
                terrain = code >> 2
                if terrain <= 6:
                    obs[base + terrain * w * w + cell] = 1.0
                    obs[base + PLANE_CROWNS * w * w + cell] = code & 3
    t = players * KINGDOM_PLANES * w * w
    phase = st[K.ST_PHASE]
    if phase == K.PHASE_PLACE:
        obs[t + T_PHASE] = 1.0
    elif phase == K.PHASE_CLAIM:
        obs[t + T_PHASE + 1] = 1.0
    rounds = st[K.ST_DECK_LEN] // st[K.ST_ROW_LEN]
    obs[t + T_ROUND] = st[K.ST_ROUND] / rounds
    slot = st[K.ST_SLOT]
    for j in range(4):
        d = st[K.ST_CUR_ROW + j]
        if d == 0:
            continue
        at = t + T_CUR_ROW + j * CUR_SLOT
        owner = st[K.ST_CUR_OWNER + j]
        _put_domino(obs, at, d, owner, viewer, players)
        if owner >= 0 and (phase == K.PHASE_OVER or j < slot
                           or (j == slot and phase == K.PHASE_CLAIM)):
            obs[at + DOMINO_FEATURES + 4] = 1.0
        if phase == K.PHASE_PLACE and j == slot:
            obs[at + DOMINO_FEATURES + 5] = 1.0
    for j in range(4):
        d = st[K.ST_NEW_ROW + j]
        if d == 0:
            continue
        _put_domino(obs, t + T_NEW_ROW + j * NEW_SLOT, d, st[K.ST_NEW_OWNER + j], viewer, players)
    K.score_totals(bits, bbox, st, res)
    for k in range(players):
        p = (viewer + k) % players
        obs[t + T_DISCARDS + k] = st[K.ST_DISCARDS + p]
        obs[t + T_SCORES + k] = res[p, K.RES_TOTAL]
    for n in range(48):
        obs[t + T_UNSEEN + n] = 1.0
    for j in range(st[K.ST_DECK_POS]):
        if st[K.ST_DECK + j] > 0:  # 0: a domino that chance has still to draw (OpenSpiel)
            obs[t + T_UNSEEN + st[K.ST_DECK + j] - 1] = 0.0


@kernel(nrt=True)
def _legal_mask(bits, bbox, st, sc, actions, mask):
    """mask int8[N_ACTIONS]: 1 for the legal actions of the player to act (all 0 when over)."""
    mask[:] = 0
    n = K.legal_actions(bits, bbox, st, sc, actions)
    for k in range(n):
        mask[actions[0, k]] = 1


@kernel(nrt=True)
def _rewards(bits, bbox, st, kind, res, ranks, out):
    """Every seat's reward for a finished game into out float32[players] (see encoding.REWARDS)."""
    players = st[K.ST_PLAYERS]
    K.score_game(bits, bbox, st, res)
    K.rank_players(res, players, (st[K.ST_FLAGS] & K.FLAG_TIEBREAK_TERRITORY) != 0, ranks)
    for p in range(players):
        if kind == REWARD_SCORE:
            out[p] = res[p, K.RES_TOTAL]
        elif kind == REWARD_MARGIN:
            best = -1 << 30
            for q in range(players):
                if q != p:
                    best = max(best, res[q, K.RES_TOTAL])
            out[p] = res[p, K.RES_TOTAL] - best
        else:  # pairwise: +1 per opponent ranked below, -1 per opponent above, averaged
            total = 0.0
            for q in range(players):
                if q != p:
                    if ranks[q] > ranks[p]:
                        total += 1.0
                    elif ranks[q] < ranks[p]:
                        total -= 1.0
            out[p] = total / (players - 1)


@kernel(nrt=True)
def observe(bits, bbox, st, viewers, kind, obs, mask, rewards):
    """For every game i: the observation of seat viewers[i] into obs[i], the legal actions of the
    player to act into mask[i] (all 0 unless viewers[i] acts), and, once the game is over,
    every seat's reward into rewards[i] (zeros before)."""
    n, players = bits.shape[0], bits.shape[1]
    sc = K.scratch(1)
    actions = np.empty((1, K.MAX_ACTIONS), dtype=np.int64)
    res = np.zeros((players, K.RES_COLS), dtype=np.int64)
    ranks = np.zeros(players, dtype=np.int64)
    for i in range(n):
        _encode(bits[i], bbox[i], st[i], viewers[i], obs[i], res)
        if st[i, K.ST_PLAYER] == viewers[i]:
            _legal_mask(bits[i], bbox[i], st[i], sc, actions, mask[i])
        else:
            mask[i, :] = 0
        rewards[i, :] = 0.0
        if st[i, K.ST_PHASE] == K.PHASE_OVER:
            _rewards(bits[i], bbox[i], st[i], kind, res, ranks, rewards[i])


@kernel(inline="always", nrt=True)
def _start(bits, bbox, st, header, seed, rng):
    """Start a game in (bits, bbox, st) with `seed`, as Game(rules, seed) does (header: the
    rules' part of st)."""
    st[:K.ST_CUR_ROW] = header
    rng[0] = np.uint64(seed)
    K.init_game(bits, bbox, st, rng)


@kernel(inline="always")
def _observe(bits, bbox, st, obs, mask, res, sc, actions):
    """The observation and action mask of the game for the player to act, who is returned."""
    player = st[K.ST_PLAYER]
    _encode(bits, bbox, st, player, obs, res)
    _legal_mask(bits, bbox, st, sc, actions, mask)
    return player


@kernel(nrt=True)
def reset(bits, bbox, st, header, seeds, obs, mask, player):
    """Start game i with seed seeds[i] (as Game(rules, seed) does) and observe it for its player."""
    n = bits.shape[0]
    rng = np.zeros(1, dtype=np.uint64)
    sc = K.scratch(1)
    actions = np.empty((1, K.MAX_ACTIONS), dtype=np.int64)
    res = np.zeros((bits.shape[1], K.RES_COLS), dtype=np.int64)
    for i in range(n):
        _start(bits[i], bbox[i], st[i], header, seeds[i], rng)
        player[i] = _observe(bits[i], bbox[i], st[i], obs[i], mask[i], res, sc, actions)


@kernel(nrt=True)
def step(bits, bbox, st, header, actions, seeds, seed_stride, kind, obs, mask, rewards, dones,
         player):
    """Play actions[i] in game i (legal when mask[i, actions[i]] is 1, the mask of the last call).
    A game that ends gets its rewards and done flag and starts again at once with seed
    seeds[i] + seed_stride (seeds is updated); obs, mask and player are then the new game's.
    Returns the index of the first game whose action was illegal (nothing of it played), or -1."""
    n, players = bits.shape[0], bits.shape[1]
    rng = np.zeros(1, dtype=np.uint64)
    sc = K.scratch(1)
    legal = np.empty((1, K.MAX_ACTIONS), dtype=np.int64)
    res = np.zeros((players, K.RES_COLS), dtype=np.int64)
    ranks = np.zeros(players, dtype=np.int64)
    for i in range(n):
        a = actions[i]
        if a < 0 or a >= N_ACTIONS or not mask[i, a]:
            return i
    for i in range(n):
        K.apply_action(bits[i], bbox[i], st[i], actions[i])
        rewards[i, :] = 0.0
        dones[i] = st[i, K.ST_PHASE] == K.PHASE_OVER
        if dones[i]:
            _rewards(bits[i], bbox[i], st[i], kind, res, ranks, rewards[i])
            seeds[i] += seed_stride
            _start(bits[i], bbox[i], st[i], header, seeds[i], rng)
        player[i] = _observe(bits[i], bbox[i], st[i], obs[i], mask[i], res, sc, legal)
    return -1
