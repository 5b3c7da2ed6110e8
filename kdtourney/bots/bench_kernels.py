"""Kernels that only the benchmarks run (the speed of playouts and of the value network): apart
from the kernels the bots play with, so that no bot carries them (nor changes identity with
them)."""

import numpy as np

from kdtourney.bots.kernels import plan_buffers, playout_after, work_buffers
from kdtourney.bots.net_kernels import OUT_MARGIN, net_buffers, net_value
from kdtourney.engine.kernel_base import kernel
from kdtourney.engine.kernels import (
    RES_COLS,
    RES_TOTAL,
    ST_PLAYERS,
    score_totals,
)


@kernel(nrt=True)
def playout_speed(bits, bbox, st, n, policy, rng):
    """Run n playouts from a position (fresh deck order each); returns the sum of seat 0's
    scores."""
    kb, bb, sc, ac = work_buffers()
    fb = plan_buffers()
    b = bits.copy()
    x = bbox.copy()
    s = st.copy()
    res = np.zeros((st[ST_PLAYERS], RES_COLS), dtype=np.int64)
    total = 0
    for _ in range(n):
        playout_after(bits, bbox, st, -1, -1, b, x, s, rng, policy, 0, fb, kb, bb, sc, ac)
        score_totals(b, x, s, res)
        total += res[0, RES_TOTAL]
    return total


@kernel(nrt=True)
def value_speed(bits, bbox, st, net, n):
    """n evaluations of the position for seat 0 (for benchmarks/bench_learned.py --speed)."""
    buffers = net_buffers(net, st[ST_PLAYERS])
    total = 0.0
    for _ in range(n):
        total += net_value(bits, bbox, st, 0, net, buffers, OUT_MARGIN)
    return total
