"""Tests for kdtourney.stats.plackett_luce: the fit against choix's on the same finishing orders,
ties, the 2-player case (Bradley-Terry's), and the bootstrap's intervals."""

import numpy as np
import pytest
from results_support import results_table
from test_ratings import TRUTH, simulate

from kdtourney.stats.outcomes import ELO_PER_NAT
from kdtourney.stats.plackett_luce import bootstrap_pl, fit_pl, order_counts
from kdtourney.stats.ratings import bootstrap_elo, fit_elo

choix = pytest.importorskip("choix", reason="choix (the test extra) checks the fit")


@pytest.mark.parametrize("n_players", [2, 3, 4])
def test_fit_agrees_with_choix(n_players):
    df = simulate(TRUTH, 150, n_players, seed=n_players)
    names = sorted(TRUTH)
    code = {k: i for i, k in enumerate(names)}
    orders = [list(g.sort_values("rank")["entrant"].map(code)) for _, g in df.groupby("game")]
    theirs = choix.ilsr_rankings(len(names), orders, alpha=0.0, tol=1e-12)
    theirs = (theirs - theirs.mean()) * ELO_PER_NAT
    ours = fit_pl(df, prior=1e-9).reindex(names).to_numpy()
    assert np.abs(ours - theirs).max() < 1e-3


def test_two_players_is_bradley_terry():
    df = simulate(TRUTH, 100, 2, seed=3)
    df.loc[df["game"] % 7 == 0, "rank"] = 1  # some shared places: half a win each
    pl, bt = fit_pl(df), fit_elo(df)
    assert np.abs(pl.reindex(bt.index) - bt).max() < 1e-6


def test_a_shared_place_counts_each_order_equally():
    df = results_table([(0, [("x", 1), ("y", 1), ("z", 3)]), (1, [("z", 1), ("x", 2), ("y", 3)])])
    oc = order_counts(df)
    assert oc.totals().sum() == pytest.approx(4.0)  # two stages a game, the tie split in two
    elo = fit_pl(df)
    both = results_table([(0, [("x", 1), ("y", 2), ("z", 3)]), (1, [("y", 1), ("x", 2), ("z", 3)]),
                          (2, [("z", 1), ("x", 2), ("y", 3)]), (3, [("z", 1), ("x", 2), ("y", 3)])])
    doubled = fit_pl(both, prior=2.0)  # the same stages at twice the weight, the prior too
    assert np.abs(elo - doubled.reindex(elo.index)).max() < 1e-6


def test_bootstrap_intervals_hold_the_fit_and_shrink():
    small = bootstrap_pl(simulate(TRUTH, 40, 4, seed=1), n_boot=200)
    large = bootstrap_pl(simulate(TRUTH, 400, 4, seed=1), n_boot=200)
    for table in (small, large):
        assert ((table["lo"] <= table["elo"]) & (table["elo"] <= table["hi"])).all()
    assert ((large["hi"] - large["lo"]) < (small["hi"] - small["lo"]).reindex(large.index)).all()
    assert list(large.index) == ["d", "c", "b", "a"]
    assert set(large.attrs["draws"].columns) == set(TRUTH)


def test_four_players_narrower_than_pairwise_or_equal():
    """On Plackett-Luce games the whole order is the likelihood: its intervals are no wider
    than the pairwise composite fit's (within the bootstrap's noise)."""
    df = simulate(TRUTH, 300, 4, seed=5)
    pl, bt = bootstrap_pl(df, n_boot=300), bootstrap_elo(df, n_boot=300)
    width_pl = (pl["hi"] - pl["lo"]).mean()
    width_bt = (bt["hi"] - bt["lo"]).mean()
    assert width_pl < 1.1 * width_bt


def test_a_perfect_record_is_bounded_on_one_side():
    df = results_table([(b, [("x", 1), ("y", 2 + b % 2), ("z", 3 - b % 2)]) for b in range(6)])
    table = bootstrap_pl(df, n_boot=100)
    assert table.loc["x", "record"] == "won all" and table.loc["x", "hi"] == np.inf
    assert np.isfinite(table.loc["x", "lo"])
