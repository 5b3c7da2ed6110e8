"""Simulated duplicate blocks for the SPRT's tests and benchmarks/bench_sprt.py (numpy, many
tests at once, seeded)."""

import math

import numpy as np

from kdtourney.stats.outcomes import elo_to_score
from kdtourney.stats.sprt import (
    DEFAULT_MIN_BLOCKS,
    first_crossing,
    llr_path,
    score_counts,
    sprt_bounds,
    stopped_estimate,
)

SWING = 0.4  # a deal favours a seat: its win probability is 0.4 above an equal opponent's


def duplicate_blocks(rng, elo, runs, blocks, players):
    """Block scores (runs, blocks) of duplicate blocks: each block one deal played under every
    rotation of the table (the candidate and players-1 equal baselines), the deal's luck shared by
    the games of the block; the candidate's mean pairwise score is L(elo).

    2 players: the deal's first seat wins with probability 0.4 more than the second, L(elo) +- 0.4
    for the candidate.  3 or 4 players: ranks by Plackett-Luce (Gumbel performances) with seat
    strengths spread so that the luckiest seat beats the unluckiest with probability 0.5 + 0.4 =
    0.9 between equals, the candidate's strength set so that its mean pairwise score is L(elo)."""
    if players == 2:
        win = elo_to_score(elo) + SWING * np.array([1.0, -1.0])  # candidate in seat 1, then 2
        return (rng.random((runs, blocks, 2)) < win).mean(axis=-1)
    seat = math.log((0.5 + SWING) / (0.5 - SWING)) * np.linspace(0.5, -0.5, players)
    diffs = (seat[:, None] - seat[None, :])[~np.eye(players, dtype=bool)]
    lo, hi = -10.0, 10.0  # the candidate's strength: bisection on its mean pairwise score
    for _ in range(100):
        mid = (lo + hi) / 2
        below = np.mean(1 / (1 + np.exp(-(mid + diffs)))) < elo_to_score(elo)
        lo, hi = (mid, hi) if below else (lo, mid)
    # [game, entrant]: the seat of each entrant in each game of the block
    rotation = (np.arange(players)[None, :] + np.arange(players)[:, None]) % players
    strength = np.r_[(lo + hi) / 2, np.zeros(players - 1)]
    perf = strength + seat[rotation] + rng.gumbel(size=(runs, blocks, players, players))
    return (perf[..., :1] > perf[..., 1:]).mean(axis=(-2, -1))


def decisions(scores, elo0, elo1, min_blocks=DEFAULT_MIN_BLOCKS, estimate=True):
    """The tests on each row of scores: status, blocks counted, and (``estimate``) the Elo
    estimate with its interval (elo, lo, hi) given with the verdict, else None."""
    bounds = sprt_bounds()
    status, at, estimates = [], [], []
    for i in range(0, len(scores), 200):
        rows = scores[i:i + 200]
        llr = llr_path(rows, elo0, elo1)
        out = [first_crossing(path, bounds, min_blocks) for path in llr]
        n = np.array([k if k else rows.shape[1] for _, k in out])
        if estimate:
            values, counts = score_counts(rows, elo0, elo1)
            last = np.arange(len(rows)), n - 1
            estimates.append(stopped_estimate(n, llr[last], counts[last], values, elo0, elo1,
                                              bounds))
        status += [s for s, _ in out]
        at.append(n)
    return np.array(status), np.concatenate(at), (np.hstack(estimates) if estimate else None)
