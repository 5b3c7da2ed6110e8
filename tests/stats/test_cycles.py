"""Tests for kdtourney.stats.cycles: a population built to cycle (each of three beats one and
loses to one) and a transitive one."""

import numpy as np
import pytest
from results_support import results_table
from test_ratings import TRUTH, simulate

from kdtourney.stats.cycles import cycles, meta_ranking, pair_scores

BEATS = {("rock", "scissors"), ("scissors", "paper"), ("paper", "rock")}


def cyclic(blocks=60):
    """Two-player blocks (both seatings): the winner of each pair wins 3 games in 4."""
    games = []
    for b in range(blocks):
        a, c = sorted(BEATS)[b % 3]
        for seat in range(2):
            upset = (b // 3 + seat) % 4 == 0
            first, second = (c, a) if upset else (a, c)
            games.append((b, [(first, 1), (second, 2)] if seat == 0
                          else [(second, 2), (first, 1)]))
    return results_table(games)


def test_a_cycle_is_named_with_its_intervals():
    scores = pair_scores(cyclic(), n_boot=300)
    found = cycles(scores)
    assert len(found) == 1 and found[0].clear
    named = {(a, b) for a, b, *_ in found[0].edges}
    assert named == BEATS
    for _, _, s, lo, hi in found[0].edges:
        assert s == pytest.approx(0.75) and 0.5 < lo < s < hi
    for a, b in BEATS:
        assert f"{a} beats {b} (75% [" in found[0].text()


def test_a_transitive_population_has_no_cycle():
    scores = pair_scores(simulate(TRUTH, 200, 3, seed=2), n_boot=200)
    assert cycles(scores) == []
    assert np.nanmax(np.abs(scores.score + scores.score.T - 1.0)) < 1e-12
    assert (scores.lo <= scores.score)[~np.isnan(scores.lo)].all()


def test_meta_ranking_spreads_over_a_cycle_and_picks_the_best_otherwise():
    pytest.importorskip("open_spiel.python.egt.alpharank",
                        reason="open_spiel and networkx (the rl extra) rank the meta-game")
    share = meta_ranking(pair_scores(cyclic(), n_boot=50))
    assert share.to_numpy() == pytest.approx([1 / 3] * 3, abs=1e-6)
    best = meta_ranking(pair_scores(simulate(TRUTH, 200, 3, seed=2), n_boot=50))
    assert best.index[0] == "d" and best.iloc[0] > 0.9
