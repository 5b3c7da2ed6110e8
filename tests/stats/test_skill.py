"""Tests for kdtourney.stats.skill: openskill's online skill, game by game."""

import numpy as np
import pandas as pd
from results_support import results_table
from test_ratings import TRUTH, simulate

from kdtourney.stats.skill import online_skill, skill_history


def test_a_newcomers_sigma_shrinks_as_it_plays():
    old = simulate(TRUTH, 100, 3, seed=2)
    new = simulate({**TRUTH, "newcomer": 150.0}, 60, 3, seed=3)
    new = new.assign(game=new["game"] + old["game"].max() + 1,
                     block=new["block"] + old["block"].max() + 1)
    history = skill_history(pd.concat([old, new]), "newcomer")
    assert len(history) > 20
    sigma = history["sigma"].to_numpy()
    assert sigma[0] < 25 / 3  # the first game already tells something
    assert sigma[-1] < 0.6 * sigma[0]
    assert (np.diff(sigma[:20]) < 0).all()  # early on, every game narrows it


def test_ranked_by_mu_minus_three_sigma_with_the_true_order():
    table = online_skill(simulate(TRUTH, 300, 4, seed=1))
    assert list(table.index) == ["d", "c", "b", "a"]
    assert (table["conservative"] == table["mu"] - 3 * table["sigma"]).all()
    assert (table["games"] == 600).all()


def test_a_few_games_leave_a_newcomer_below_a_proven_entrant_of_lower_mu():
    """The conservative order and the order by mu part where one entrant has few games."""
    games = [(b, [("proven", 1), ("weak", 2)]) for b in range(40)]
    games += [(40 + b, [("other", 1 + (b % 4 == 0)), ("weak", 2 - (b % 4 == 0))])
              for b in range(40)]
    games += [(80, [("lucky", 1), ("proven", 2)])]
    table = online_skill(results_table(games))
    assert table.loc["lucky", "mu"] > table.loc["other", "mu"]
    assert table.index.get_loc("lucky") > table.index.get_loc("other")


def test_the_order_of_the_games_is_the_order_played():
    df = results_table([(0, [("x", 1), ("y", 2)]), (1, [("y", 1), ("x", 2)])])
    forward = online_skill(df.assign(finished_at=df["game"].map({0: "b", 1: "a"})))
    backward = online_skill(df.assign(finished_at=df["game"].map({0: "a", 1: "b"})))
    assert forward.loc["x", "mu"] > forward.loc["y", "mu"]  # x won last
    assert backward.loc["y", "mu"] > backward.loc["x", "mu"]
