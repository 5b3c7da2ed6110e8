"""One definition for one thing: the Elo scale, the pairwise outcomes of a ranked table and the
block bootstrap, shared by the ratings, the statistics and the SPRT."""

import math

import numpy as np
import pandas as pd
import pytest
from results_support import results_table

from kdtourney.stats.descriptive import block_bootstrap_means, block_resamples, head_to_head
from kdtourney.stats.outcomes import elo_to_score, pair_outcomes, score_to_elo
from kdtourney.stats.ratings import bootstrap_elo, pair_counts
from kdtourney.stats.sprt import block_scores


def random_tables(seed, games=300):
    """4-player games of three entrants (one often seated twice), shared places included."""
    rng = np.random.default_rng(seed)
    names = np.array(["a", "b", "c"])
    tables = []
    for g in range(games):
        entrants = names[rng.integers(0, 3, size=4)]
        ranks = np.sort(rng.integers(1, 4, size=4))  # ties happen
        tables.append((g // 4, list(zip(entrants, rng.permutation(ranks)))))
    return results_table(tables)


def test_elo_and_score_convert_both_ways():
    assert elo_to_score(0) == 0.5 and elo_to_score(400) == pytest.approx(10 / 11)
    assert elo_to_score(-400) + elo_to_score(400) == pytest.approx(1.0)
    assert score_to_elo(elo_to_score(123.4)) == pytest.approx(123.4)
    assert score_to_elo(1.0) == math.inf and score_to_elo(0.0) == -math.inf
    assert np.allclose(score_to_elo(elo_to_score(np.array([-50.0, 0.0, 75.0]))), [-50, 0, 75])
    assert isinstance(elo_to_score(10), float)


def test_pair_outcomes_of_a_hand_made_table():
    df = results_table([(0, [("x", 2), ("y", 1), ("x", 2), ("z", 4)]), (1, [("y", 1), ("y", 2)])])
    got = pair_outcomes(df)
    assert list(zip(got["entrant_a"], got["entrant_b"], got["score"])) == [
        ("x", "y", 0.0), ("x", "z", 1.0), ("y", "x", 1.0), ("y", "z", 1.0), ("x", "z", 1.0)]
    assert (got["game"] == 0).all()  # the second game is self-play only: no pair


def test_ratings_statistics_and_sprt_read_the_same_outcomes():
    df = random_tables(1)
    pairs = pair_outcomes(df)
    both = pd.concat([pairs.rename(columns={"entrant_a": "e", "entrant_b": "o"}),
                      pairs.rename(columns={"entrant_a": "o", "entrant_b": "e"})
                      .assign(score=1 - pairs["score"])])
    expected = both.groupby(["e", "o"])["score"].agg(["sum", "size"])
    h2h = head_to_head(df)
    for (e, o), row in expected.iterrows():
        assert h2h.loc[(e, o), "wins"] + h2h.loc[(e, o), "ties"] / 2 == row["sum"]
        assert h2h.loc[(e, o), "meetings"] == row["size"]
    pc = pair_counts(df)
    w, n = pc.totals()
    for i, j, wins, meetings in zip(pc.pair_i, pc.pair_j, w, n):
        e, o = pc.entrants[i], pc.entrants[j]
        assert (wins, meetings) == (expected.loc[(e, o), "sum"], expected.loc[(e, o), "size"])
    scores = block_scores(df, "a", "b")
    pooled = (scores * scores.attrs["pairs"]).sum() / scores.attrs["pairs"].sum()
    assert pooled == pytest.approx(h2h.loc[("a", "b"), "score"])


def test_elo_and_mean_intervals_come_from_the_same_block_resamples():
    # two entrants, two seats, no shared places: in every resample the Elo difference is an
    # increasing function of the win share, so the draws must rank alike
    rng = np.random.default_rng(4)
    games = [(g // 2, [("a", r), ("b", 3 - r)]) for g, r in enumerate(rng.choice([1, 2], 400))]
    df = results_table(games).assign(win_share=lambda d: (d["rank"] == 1).astype(float))
    n_boot, seed = 200, 7
    blocks = df.groupby("block")
    a_wins = blocks.apply(lambda b: ((b["entrant"] == "a") & (b["rank"] == 1)).sum()).to_numpy()
    per_block = blocks.apply(lambda b: (b["entrant"] == "a").sum()).to_numpy()
    resamples = block_resamples(np.random.default_rng(seed), n_boot, len(a_wins))
    resampled = np.vstack([c @ np.c_[a_wins, per_block] for c in resamples])
    share = resampled[:, 0] / resampled[:, 1]
    _, draws = bootstrap_elo(df, n_boot=n_boot, seed=seed, return_draws=True)
    elo_gap = (draws["a"] - draws["b"]).to_numpy()
    assert (np.argsort(share, kind="stable") == np.argsort(elo_gap, kind="stable")).all()
    means = block_bootstrap_means(df[["win_share"]], df["entrant"], df["block"], n_boot=n_boot,
                                  seed=seed)["win_share"]
    assert (means.loc["a", "lo"], means.loc["a", "hi"]) == pytest.approx(
        tuple(np.quantile(share, [0.025, 0.975])))


def test_no_results_yet_give_no_outcomes():
    """A tune's verify interrupted before its first game: no scores, not a crash."""
    empty = pd.DataFrame({"game": [], "block": [], "seat": [], "entrant": [], "rank": []})
    assert pair_outcomes(empty).empty
    assert block_scores(empty, "a", "b").empty
