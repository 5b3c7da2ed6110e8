"""A linear policy on kdtourney's observation: every legal action gets a score, a weighted sum of a
few features computed from the observation alone (numpy, batched), and the best one is played.

Place actions: terrain matches of the domino's halves with their neighbours, the crowns those
matches join, occupied neighbours (compactness), and how much the kingdom's bounding box grows.
Claim actions: the domino's crowns and number, and how much of the own kingdom shares its terrains.
The weights are what training finds (train.py); shared by the trainer and the bot.
"""

import numpy as np

from kdtourney.engine import kernels as K
from kdtourney.env.encoding import N_ACTIONS, split

PLACE_FEATURES = ("matching neighbours", "crowns joined", "occupied neighbours", "box growth")
CLAIM_FEATURES = ("crowns", "number", "own land of its terrains", "crowns x own land")
N_WEIGHTS = len(PLACE_FEATURES) + len(CLAIM_FEATURES)
_DOMINO, _OWNER, _TO_PLACE = 16, 4, 21  # offsets inside a row slot of the table (encoding docs)


def _place_geometry(size):
    """Per place action: the window cells next to half a and to half b (W * W = off the window,
    a cell that is always empty), and the row and column of both halves in the window."""
    w = 2 * size - 1
    off = K.CENTER - (size - 1)
    nbrs = np.full((K.N_PLACE_ACTIONS, 2, 4), w * w)
    rc = np.zeros((K.N_PLACE_ACTIONS, 2, 2))
    for a in range(K.N_PLACE_ACTIONS):
        d, r, c = a // (K.G * K.G), (a // K.G) % K.G, a % K.G
        halves = [(r - off, c - off), (r + K.DIR_ROW[d] - off, c + K.DIR_COL[d] - off)]
        for h, (i, j) in enumerate(halves):
            rc[a, h] = i, j
            for k in range(4):
                ni, nj = i + K.DIR_ROW[k], j + K.DIR_COL[k]
                if 0 <= ni < w and 0 <= nj < w:
                    nbrs[a, h, k] = ni * w + nj
    return nbrs, rc


_GEOMETRY = {size: _place_geometry(size) for size in (5, 7)}


def action_scores(weights, obs, mask, rules):
    """Scores float[N, N_ACTIONS] of observations obs[N, size] (-inf where mask is 0)."""
    n = len(obs)
    kingdoms, table = split(obs, rules)
    own = kingdoms[:, 0].reshape(n, kingdoms.shape[2], -1)
    own = np.concatenate([own, np.zeros((n, own.shape[1], 1), own.dtype)],  # + the empty cell
                         axis=2)
    occupied, terrain, crowns = own[:, 0], own[:, 1:7], own[:, 7]
    nbrs, rc = _GEOMETRY[rules.size]
    scores = np.zeros((n, N_ACTIONS))
    wp, wc = weights[:len(PLACE_FEATURES)], weights[len(PLACE_FEATURES):]

    # the domino to place: the current-row slot flagged "to place now"
    cur = table[:, 3:3 + 4 * 22].reshape(n, 4, 22)
    domino = (cur[:, :, :_DOMINO] * cur[:, :, _TO_PLACE:_TO_PLACE + 1]).sum(axis=1)  # [n, 16]
    halves = [(domino[:, 2:8], domino[:, 8]), (domino[:, 9:15], domino[:, 15])]
    place = np.zeros((n, K.N_PLACE_ACTIONS, len(PLACE_FEATURES)))
    for h, (t, k) in enumerate(halves):
        match = np.einsum("nt,ntc->nc", t, terrain)        # cells of the half's terrain
        around = nbrs[:, h]                                 # [676, 4]
        matches = match[:, around].sum(axis=2)
        place[:, :, 0] += matches
        place[:, :, 1] += k[:, None] * matches + (match * crowns)[:, around].sum(axis=2)
        place[:, :, 2] += occupied[:, around].sum(axis=2)
    w = kingdoms.shape[-1]
    rows, cols = (occupied[:, :-1].reshape(n, w, w).any(axis=2),
                  occupied[:, :-1].reshape(n, w, w).any(axis=1))
    idx = np.arange(w)
    lo_r = np.where(rows, idx, w).min(1)[:, None]
    hi_r = np.where(rows, idx, -1).max(1)[:, None]
    lo_c = np.where(cols, idx, w).min(1)[:, None]
    hi_c = np.where(cols, idx, -1).max(1)[:, None]
    new_h = np.maximum(hi_r, rc[:, :, 0].max(1)) - np.minimum(lo_r, rc[:, :, 0].min(1))
    new_w = np.maximum(hi_c, rc[:, :, 1].max(1)) - np.minimum(lo_c, rc[:, :, 1].min(1))
    place[:, :, 3] = new_h + new_w - (hi_r - lo_r) - (hi_c - lo_c)
    scores[:, :K.N_PLACE_ACTIONS] = place @ wp

    # claims: every domino number, from the domino table of the new row
    new = table[:, 91:91 + 4 * 20].reshape(n, 4, 20)
    land = terrain[:, :, :-1].sum(axis=2)                   # own squares per terrain [n, 6]
    for j in range(4):
        d = new[:, j, :_DOMINO]
        number = np.rint(d[:, 1] * 48).astype(np.int64)
        present = d[:, 0] > 0
        crowns_j = d[:, 8] + d[:, 15]
        own_land = (land * (d[:, 2:8] + d[:, 9:15])).sum(axis=1)
        feats = np.stack([crowns_j, d[:, 1], own_land / 10, crowns_j * own_land / 10], axis=1)
        rows_n = np.flatnonzero(present)
        scores[rows_n, K.CLAIM_BASE + number[rows_n]] = feats[rows_n] @ wc
    return np.where(mask > 0, scores, -np.inf)


def best_actions(weights, obs, mask, rules):
    """The best-scoring legal action of every observation (ties: the lowest action number)."""
    return action_scores(weights, obs, mask, rules).argmax(axis=1)
