"""Tests for kdtourney.stats.ratings.

Synthetic results come from a Plackett-Luce model: each player's performance is its strength
(Elo / ELO_PER_NAT) plus independent standard Gumbel noise and the game ranks by performance.  The
difference of two independent Gumbel variables is logistic, so for *every* pair inside a game (2,
3 or 4 players) P(i above j) = 1 / (1 + 10 ** (-(Elo_i - Elo_j) / 400)): exactly the Bradley-Terry
pairwise model that fit_elo estimates.  The pairs of one multi-player game are dependent, so the
pairwise likelihood is a composite likelihood (consistent, but its curvature overstates precision).
That is why intervals come from the block bootstrap, and the coverage tests below check both
2-player games (independent pairs) and 4-player games (dependent pairs).
"""

import numpy as np
import pandas as pd
import pytest
from results_support import results_table

from kdtourney.stats.descriptive import percentile_interval
from kdtourney.stats.outcomes import ELO_PER_NAT
from kdtourney.stats.plackett_luce import bootstrap_pl
from kdtourney.stats.ratings import (
    bootstrap_elo,
    bootstrap_interval,
    elo_history,
    fit_elo,
    los_matrix,
    pair_counts,
)

TRUTH = {"a": 0.0, "b": 100.0, "c": 200.0, "d": 400.0}


def simulate(elos, n_blocks, n_players, games_per_block=2, rng=None, seed=0):
    """Plackett-Luce games in blocks; entrants drawn without replacement for each game."""
    rng = np.random.default_rng(seed) if rng is None else rng
    names = np.array(list(elos))
    theta = np.array([elos[k] for k in names]) / ELO_PER_NAT
    G = n_blocks * games_per_block
    who = np.argsort(rng.random((G, len(names))), axis=1)[:, :n_players]
    perf = theta[who] + rng.gumbel(size=(G, n_players))
    rank = (-perf).argsort(axis=1).argsort(axis=1) + 1
    return pd.DataFrame(
        {
            "game": np.repeat(np.arange(G), n_players),
            "block": np.repeat(np.arange(G) // games_per_block, n_players),
            "n_players": n_players,
            "seat": np.tile(np.arange(n_players), G),
            "entrant": names[who.ravel()],
            "rank": rank.ravel(),
        }
    )


def centred(elos):
    s = pd.Series(elos, dtype=float)
    return s - s.mean()


# ---------------------------------------------------------------------------------- aggregation


def test_pair_counts_ties_and_self_play():
    df = results_table(
        [
            (0, [("x", 1), ("y", 2), ("z", 2), ("w", 4)]),  # competition ranking with a tie
            (0, [("x", 2), ("x", 1)]),  # self-play: dropped
            (1, [("y", 1), ("x", 2)]),
        ]
    )
    pc = pair_counts(df)
    assert pc.entrants == ("w", "x", "y", "z")
    w, n = pc.totals()
    got = {(pc.entrants[i], pc.entrants[j]): (wi, ni)
           for i, j, wi, ni in zip(pc.pair_i, pc.pair_j, w, n)}
    assert got[("x", "y")] == (1.0, 2.0)  # x beat y in game 0, lost in game 2
    assert got[("y", "z")] == (0.5, 1.0)  # tie
    assert got[("x", "z")] == (1.0, 1.0)
    assert got[("w", "x")] == (0.0, 1.0)
    assert ("x", "x") not in got
    assert sum(n) == 6 + 1


def test_two_player_closed_form():
    # a beats b 3 times out of 4: MLE difference is 400*log10(3); a tiny prior leaves it intact.
    df = results_table([(k, [("a", 1 if k < 3 else 2), ("b", 2 if k < 3 else 1)])
                        for k in range(4)])
    elo = fit_elo(df, prior=1e-9)
    assert elo["a"] - elo["b"] == pytest.approx(400 * np.log10(3), abs=1e-5)
    assert elo.mean() == pytest.approx(0.0, abs=1e-9)
    # the default prior (one virtual draw) shrinks slightly toward equality
    d = fit_elo(df)
    assert 0 < d["a"] - d["b"] < 400 * np.log10(3)


# ---------------------------------------------------------------------------------- recovery


@pytest.mark.parametrize("n_players", [2, 3, 4])
def test_recovers_known_strengths(n_players):
    df = simulate(TRUTH, n_blocks=1500, n_players=n_players, seed=10 + n_players)
    table = bootstrap_elo(df, n_boot=300, seed=1)
    assert list(table.index) == ["d", "c", "b", "a"]  # correct order
    truth = centred(TRUTH).reindex(table.index)
    err = (table["elo"] - truth).abs()
    assert err.max() < 25, err
    assert ((table["lo"] <= truth) & (truth <= table["hi"])).all(), table
    assert (table["lo"] < table["elo"]).all() and (table["elo"] < table["hi"]).all()


def test_mixed_player_counts_one_fit():
    rng = np.random.default_rng(5)
    parts = [simulate(TRUTH, 500, k, rng=rng) for k in (2, 3, 4)]
    offset = 0
    for p in parts:  # make game and block ids unique across the parts
        p["game"] += offset
        p["block"] += offset
        offset = p["game"].max() + 1
    df = pd.concat(parts, ignore_index=True)
    elo = fit_elo(df)
    assert list(elo.index) == ["d", "c", "b", "a"]
    assert (elo - centred(TRUTH).reindex(elo.index)).abs().max() < 25


def _coverage(n_players, n_draws, n_blocks, n_boot, seed):
    rng = np.random.default_rng(seed)
    truth = centred(TRUTH)
    hits = []
    for _ in range(n_draws):
        df = simulate(TRUTH, n_blocks, n_players, rng=rng)
        t = bootstrap_elo(df, n_boot=n_boot, seed=int(rng.integers(1 << 31)))
        t = t.reindex(truth.index)
        hits.append(((t["lo"] <= truth) & (truth <= t["hi"])).to_numpy())
    return np.array(hits)


@pytest.mark.slow
def test_interval_coverage_two_player():
    hits = _coverage(n_players=2, n_draws=200, n_blocks=150, n_boot=200, seed=2024)
    rate = hits.mean()
    assert 0.88 <= rate <= 0.99, (rate, hits.mean(axis=0))
    assert (hits.mean(axis=0) >= 0.85).all(), hits.mean(axis=0)


@pytest.mark.slow
def test_interval_coverage_four_player_block_bootstrap():
    # Dependent pairs inside 4-player games: the block bootstrap must still cover ~95%.
    hits = _coverage(n_players=4, n_draws=120, n_blocks=60, n_boot=200, seed=7)
    rate = hits.mean()
    assert 0.88 <= rate <= 0.99, (rate, hits.mean(axis=0))


@pytest.mark.parametrize("blocks, t", [(2, 12.706205), (3, 4.302653), (5, 2.776445),
                                        (25, 2.063899), (251, 1.969498)])
def test_the_interval_over_b_blocks_is_widened_by_student_s_t(blocks, t):
    """The percentile interval at the level whose normal quantile is t_{0.975, B-1} sqrt(B/(B-1))
    (t from a table): on standard normal draws, +-that; one block: the plain interval."""
    draws = np.random.default_rng(0).standard_normal((400_000, 1))
    lo, hi = bootstrap_interval(draws, 0.95, blocks)
    z = t * np.sqrt(blocks / (blocks - 1))  # past the draws (B = 2, 3): their range
    assert -lo[0] == pytest.approx(min(z, -draws.min()), rel=0.01)
    assert hi[0] == pytest.approx(min(z, draws.max()), rel=0.01)
    assert np.ravel(bootstrap_interval(draws, 0.95, 1)) == pytest.approx(
        np.ravel(percentile_interval(draws, 0.95)))


def test_both_ratings_take_their_intervals_from_bootstrap_interval():
    df = simulate(TRUTH, 25, 4, games_per_block=4, seed=11)
    for fit in (bootstrap_elo, bootstrap_pl):
        table = fit(df, n_boot=200)
        draws = table.attrs["draws"]
        lo, hi = bootstrap_interval(draws.to_numpy(), 0.95, 25)
        assert table[["lo", "hi"]].to_numpy() == pytest.approx(
            pd.DataFrame({"lo": lo, "hi": hi}, index=draws.columns).loc[table.index].to_numpy())
        plain_lo, plain_hi = percentile_interval(draws.to_numpy(), 0.95)
        assert (lo < plain_lo).all() and (hi > plain_hi).all()


# ---------------------------------------------------------------------------------- anchor, prior


def test_anchor_pins_entrant_and_keeps_differences():
    df = simulate(TRUTH, 300, 3, seed=3)
    free = fit_elo(df)
    pinned = fit_elo(df, anchor=("a", 0.0))
    assert pinned["a"] == 0.0
    pd.testing.assert_series_equal((pinned - pinned["a"]).sort_index(),
                                   (free - free["a"]).sort_index())
    shifted = fit_elo(df, anchor=("b", 1500.0))
    assert shifted["b"] == pytest.approx(1500.0)
    assert shifted["d"] - shifted["b"] == pytest.approx(free["d"] - free["b"])
    t = bootstrap_elo(df, n_boot=50, anchor=("a", 0.0))
    assert t.loc["a", "lo"] == t.loc["a", "hi"] == t.loc["a", "elo"] == 0.0
    with pytest.raises(KeyError):
        fit_elo(df, anchor=("nobody", 0.0))


def test_undefeated_and_winless_entrants_stay_finite_with_one_sided_intervals():
    games = []
    for k in range(30):
        games.append((k, [("champ", 1), ("a", 2), ("b", 3)]))
        games.append((k, [("a", 1), ("b", 2), ("dud", 3)]))
        games.append((k, [("b", 1), ("a", 2)] if k % 2 else [("a", 1), ("b", 2)]))
    df = results_table(games)
    elo = fit_elo(df)
    assert np.isfinite(elo).all()
    assert elo.index[0] == "champ" and elo.index[-1] == "dud"
    assert 300 < elo["champ"] - elo["a"] < 2000
    table = bootstrap_elo(df, n_boot=100)
    assert np.isfinite(table["elo"]).all()
    # a perfect record gets a one-sided interval, flagged, not a collapsed one
    assert list(table["record"]) == ["won all", "", "", "lost all"]
    assert table.loc["champ", "hi"] == np.inf and table.loc["dud", "lo"] == -np.inf
    assert table.loc["champ", "lo"] < table.loc["champ", "elo"]
    assert table.loc["dud", "hi"] > table.loc["dud", "elo"]
    assert np.isfinite(table.loc[["a", "b"], ["lo", "hi"]].to_numpy()).all()


# ---------------------------------------------------------------------------------- LOS


def test_los_matrix_hand_made_draws():
    draws = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "y": [0.0, 2.0, 5.0, 0.0],
                          "z": [np.nan, 0.0, 0.0, 0.0]})
    los = los_matrix(draws)
    assert los.loc["x", "y"] == pytest.approx((1 + 0.5 + 0 + 1) / 4)
    assert los.loc["y", "x"] == pytest.approx(1 - los.loc["x", "y"])
    assert los.loc["x", "z"] == 1.0  # NaN draw ignored
    assert los.loc["y", "z"] == pytest.approx((1 + 1 + 0.5) / 3)
    assert np.isnan(los.loc["x", "x"])


def test_los_strong_and_identical():
    # "twin1" and "twin2" have identical strength; mirror the data so they are exchangeable.
    elos = {"weak": 0.0, "twin1": 150.0, "strong": 600.0}
    df = simulate(elos, 400, 3, seed=11)
    mirror = df.copy()
    mirror["entrant"] = mirror["entrant"].replace({"twin1": "twin2"})
    mirror["game"] += df["game"].max() + 1
    mirror["block"] += df["block"].max() + 1
    both = pd.concat([df, mirror], ignore_index=True)
    table = bootstrap_elo(both, n_boot=1000, seed=3)
    los = los_matrix(table)
    assert los.loc["strong", "twin1"] > 0.999
    assert los.loc["twin1", "weak"] > 0.999
    assert abs(los.loc["twin1", "twin2"] - 0.5) < 0.1
    assert table.loc["twin1", "elo"] == pytest.approx(table.loc["twin2", "elo"], abs=1e-6)
    # draws also available as a second return value, same numbers
    table2, draws = bootstrap_elo(both, n_boot=1000, seed=3, return_draws=True)
    pd.testing.assert_frame_equal(los_matrix(draws)[los.columns].loc[los.index], los)


# ---------------------------------------------------------------------------------- history


def test_elo_history_converges_to_full_fit():
    df = simulate(TRUTH, 400, 4, seed=21)
    hist = elo_history(df, points=8, n_boot=50)
    assert set(hist.columns) >= {"games", "blocks", "entrant", "elo", "lo", "hi"}
    games = hist.drop_duplicates("blocks")["games"].to_numpy()
    assert (np.diff(games) > 0).all() and games[-1] == df["game"].nunique()
    last = hist[hist["blocks"] == hist["blocks"].max()].set_index("entrant")["elo"]
    pd.testing.assert_series_equal(last.sort_index(), fit_elo(df).sort_index(), check_names=False)
    width = (hist["hi"] - hist["lo"]).groupby(hist["blocks"]).mean()
    assert width.iloc[-1] < width.iloc[0]  # intervals shrink with more games
    no_ci = elo_history(df, points=3, n_boot=0)
    assert no_ci["lo"].isna().all() and no_ci["elo"].notna().all()
