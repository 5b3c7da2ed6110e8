"""Kernels that only the benchmarks run (benchmarks/bench_engine.py): apart from the engine's
kernels, so that the bots, built on those, do not carry them (nor change identity with them)."""

import numpy as np

from kdtourney.engine.kernel_base import kernel
from kdtourney.engine.kernels import (
    RES_COLS,
    ST_CUR_ROW,
    ST_PLAYERS,
    init_game,
    new_game_arrays,
    playout_random,
    score_totals,
    scratch,
)


@kernel(nrt=True)
def random_games(header, n_games, rng, res):
    """Play n_games uniformly random games from scratch (deck, picks, moves) and score them as a
    playout does (`score_totals`).

    header: int64[ST_CUR_ROW] state header (players, size, row length, kings, deck length, flags);
    res: int64[players, RES_COLS], the totals summed over the games (so the work cannot be
    optimised away).
    """
    bits, bbox, st = new_game_arrays(header)
    sc = scratch(1)
    one = np.zeros((header[ST_PLAYERS], RES_COLS), dtype=np.int64)
    for _ in range(n_games):
        for j in range(ST_CUR_ROW):
            st[j] = header[j]
        init_game(bits, bbox, st, rng)
        playout_random(bits, bbox, st, sc, rng)
        score_totals(bits, bbox, st, one)
        res += one
