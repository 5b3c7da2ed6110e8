"""What the games looked like (kdtourney.report.game_shape), on games played here by random
legal moves and stored as the store keeps them."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from kdtourney.engine import Game, Rules
from kdtourney.report.game_shape import branching_plot, decision_times, game_shape, territory_points

RULES = {"variant": "standard", "three_player": "official", "harmony": True,
         "middle_kingdom": False, "tiebreak": "crowns", "first_picks": "random"}


def played(n_players: int, count: int, seed: int = 0):
    """(games rows, results rows, the finished Games) of `count` random games, two a block."""
    rng = np.random.default_rng(seed)
    games, results, finished = [], [], []
    for g in range(count):
        game = Game(Rules(players=n_players, harmony=True), seed + g)
        while not game.is_over:
            game.apply(int(rng.choice(game.legal_actions())))
        finished.append(game)
        games.append({"game": g, "block": g // 2, "n_players": n_players, "seed": seed + g,
                      "deal_seeds": json.dumps([seed + g]), "moves": json.dumps(game.history)})
        ranks = game.ranking()
        firsts = ranks.count(1)
        for seat in range(n_players):
            results.append({"game": g, "block": g // 2, "n_players": n_players, "seat": seat,
                            "entrant": f"e{seat}", "rank": ranks[seat],
                            "win_share": (ranks[seat] == 1) / firsts,
                            "decisions": sum(1 for _ in game.history) // n_players,
                            "time_total": 0.01 * (seat + 1), "time_max": 0.002 * (seat + 1)})
    return pd.DataFrame(games), pd.DataFrame(results), finished


def test_territory_points_add_up_to_the_engines_score():
    _, _, games = played(4, 6, seed=3)
    for game in games:
        for seat in range(4):
            points = territory_points(game.kingdom(seat).squares())
            assert sum(points) == game.score(seat).territories


@pytest.mark.parametrize("n_players, claims", [(2, 2.5), (3, 2.0), (4, 2.5)])
def test_claims_a_decision_are_those_of_a_row_as_it_empties(n_players, claims):
    """A row of 4 (3 with three players) offers 4, 3, 2, 1 claims: the last one is forced."""
    games, results, _ = played(n_players, 6, seed=n_players)
    (row,) = game_shape(results, games, RULES, n_boot=50)
    assert row["claim"]["mean"] == pytest.approx(claims)
    assert row["claim"]["forced"] == pytest.approx(1 / (4 if n_players != 3 else 3))
    assert row["place"]["max"] >= row["place"]["median"] >= 1
    assert sum(row["sources"].values()) == pytest.approx(1.0)
    assert row["replayed"] == 6 and len(row["seats"]) == n_players
    assert sum(s["mean"] for s in row["seats"]) == pytest.approx(1.0)
    assert sorted(row["by_round"]) == list(range(1, 13 if n_players != 2 else 7))
    plot = branching_plot([row])
    assert plot.svg.startswith("<svg") and f"{n_players} players: from" in plot.alt


def test_without_moves_only_what_the_results_tell():
    _, results, _ = played(2, 4)
    (row,) = game_shape(results, None, RULES, n_boot=20)
    assert row["place"] is None and row["sources"] is None and row["games"] == 4
    assert branching_plot([row]) is None


def test_decision_times_per_entrant():
    _, results, _ = played(2, 4)
    times = {t["name"]: t for t in decision_times(results)}
    assert times["e1"]["max"] == pytest.approx(0.004) and times["e0"]["games"] == 4
    assert times["e1"]["median"] == pytest.approx(0.02 / results["decisions"].iloc[0])
