"""Kernels that only the training of a value network runs (examples/learned/train.py): its
positions' features and their labels from playouts. Apart from the kernels the bots play with, so
that no bot carries them (nor changes identity with them)."""

import numpy as np

from kdtourney.bots.kernels import (
    MEASURE_RATIO,
    plan_buffers,
    playout_after,
    result_value,
    work_buffers,
)
from kdtourney.bots.net_kernels import feature_buffers, features, final_margin
from kdtourney.engine.kernel_base import kernel
from kdtourney.engine.kernels import RES_COLS, ST_PLAYERS


@kernel(nrt=True)
def playout_labels(bits, bbox, st, me, places, claims, m, n, policy, seed, out):
    """Training targets of the positions after the player to act (`me`) plays (places[i],
    claims[i]) (-1: none), i < m: the mean final margin and mean own / (own + best other) of n
    playouts of `policy` from it, each from a fresh deal of the unseen dominoes, into
    out[i, 0:2]."""
    kb, bb, sc, ac = work_buffers()
    fb = plan_buffers()
    rng = np.zeros(1, dtype=np.uint64)
    rng[0] = np.uint64(seed)
    res = np.zeros((st[ST_PLAYERS], RES_COLS), dtype=np.int64)
    ranks = np.zeros(st[ST_PLAYERS], dtype=np.int64)
    b = bits.copy()
    x = bbox.copy()
    s = st.copy()
    for i in range(m):
        margin = 0.0
        ratio = 0.0
        for _ in range(n):
            playout_after(bits, bbox, st, places[i], claims[i], b, x, s, rng, policy, me, fb, kb,
                          bb, sc, ac)
            margin += final_margin(b, x, s, me, res)
            ratio += result_value(b, x, s, me, MEASURE_RATIO, res, ranks)
        out[i, 0] = margin / n
        out[i, 1] = ratio / n


@kernel(nrt=True)
def observe_all(bits, bbox, st, viewers, out):
    """The features of position i (bits[i], bbox[i], st[i]) for seat viewers[i] into out[i]."""
    _, res, order, dominoes, keys, kb, bb, sc, ac = feature_buffers(bits.shape[1])
    for i in range(bits.shape[0]):
        features(bits[i], bbox[i], st[i], viewers[i], out[i], res, order, dominoes, keys, kb, bb,
                 sc, ac)
