"""Tests for kdtourney.stats.block_outcomes: the SPRT's block outcomes and the variance ratio."""

import numpy as np
import pandas as pd
import pytest
from results_support import results_table
from test_ratings import simulate

from kdtourney.stats.block_outcomes import block_outcomes


def lucky_deals(blocks=300, luck=2.0, seed=0):
    """Two-player blocks (both seatings of one deal): the deal favours a seat by far more than
    the entrants differ, so the seatings cancel most of it."""
    rng = np.random.default_rng(seed)
    rows, game = [], 0
    for block in range(blocks):
        seat_luck = rng.normal(0.0, luck, 2)
        for seats in (["a", "b"], ["b", "a"]):
            perf = np.array([0.3 * (s == "b") for s in seats]) + seat_luck + rng.gumbel(size=2)
            for seat, (name, rank) in enumerate(zip(seats, (-perf).argsort().argsort() + 1)):
                rows.append((game, block, 2, seat, name, int(rank)))
            game += 1
    return pd.DataFrame(rows, columns=["game", "block", "n_players", "seat", "entrant", "rank"])


def test_the_distribution_is_the_pentanomial_of_two_player_blocks():
    df = results_table([(0, [("c", 1), ("b", 2)]), (0, [("b", 1), ("c", 1)]),
                        (1, [("c", 1), ("b", 2)]), (1, [("b", 2), ("c", 1)]),
                        (2, [("c", 2), ("b", 1)]), (2, [("b", 1), ("c", 2)])])
    out = block_outcomes(df, "c", "b", n_boot=50)
    assert out.values.tolist() == [0.0, 0.75, 1.0] and out.counts.tolist() == [1, 1, 1]
    assert out.blocks == 3 and out.pairs == 2.0


def test_independent_games_leave_the_variance_as_it_is():
    out = block_outcomes(simulate({"a": 0.0, "b": 50.0}, 400, 2, seed=1), "b", "a", n_boot=300)
    assert out.ratio_lo < 1.0 < out.ratio_hi


def test_duplicate_blocks_cancel_the_deals_luck():
    out = block_outcomes(lucky_deals(), "b", "a", n_boot=300)
    assert out.ratio_hi < 0.75  # about half the games needed
    assert out.block_var == pytest.approx(out.ratio * out.independent_var)
    assert out.counts.sum() == 300
