"""Tests for kdtourney.stats.sprt: the LLR, block scores, and what the test promises, measured on
simulated duplicate blocks (tests/sprt_support.py)."""

import math

import numpy as np
import pytest
from results_support import results_table
from sprt_support import decisions, duplicate_blocks

from kdtourney.stats.outcomes import ELO_PER_NAT, elo_to_score, score_to_elo
from kdtourney.stats.sprt import SPRT, block_score, block_scores, llr_path, run_sprt, sprt_bounds

# ------------------------------------------------------------------------------- the LLR


def test_bounds():
    lo, hi = sprt_bounds(0.05, 0.05)
    assert lo == pytest.approx(-math.log(19)) and hi == pytest.approx(math.log(19))
    lo, hi = sprt_bounds(0.05, 0.10)
    assert lo == pytest.approx(math.log(0.10 / 0.95)) and hi == pytest.approx(math.log(0.90 / 0.05))


@pytest.mark.slow
def test_the_llr_after_a_block_does_not_depend_on_the_blocks_after_it():
    # a resumed or otherwise chunked test evaluates other prefixes of its blocks than one played
    # at once: the LLRs it stores must be the same, to the last bit, also where later blocks bring
    # block scores not seen before (many at 3 and 4 players)
    rng = np.random.default_rng(1)
    for players in (2, 3, 4):
        for x in duplicate_blocks(rng, 0, 40, 60, players):
            whole = llr_path(x, 0, 50)
            for n in (5, 20, 33, 47):
                assert np.array_equal(llr_path(x[:n], 0, 50), whole[:n]), (players, n)


def test_a_test_fed_block_after_block_has_the_path_of_one_fed_at_once():
    # the driver feeds blocks as they complete, computing the LLR of the new ones only
    rng = np.random.default_rng(2)
    for players in (2, 4):
        for x in duplicate_blocks(rng, 0, 5, 60, players):
            t = SPRT(0, 50)
            for begin in range(0, 60, 7):
                t.update(x[begin:begin + 7])
            assert np.array_equal(t.path, llr_path(x, 0, 50)), players


def test_llr_is_the_likelihood_ratio_of_the_best_distributions_with_the_two_means():
    # three values: the distributions on them with a given mean are one-parameter; search them
    scores = np.array([0, 0.5, 0.5, 1, 0.5, 1, 0.5, 0.5, 1, 0.5])
    counts = np.array([np.sum(scores == v) for v in (0, 0.5, 1)])

    def best_loglik(mean):  # p0 + p1 + p2 = 1, p1 / 2 + p2 = mean: p2 = mean - p1 / 2
        p1 = np.linspace(1e-6, 1 - 1e-6, 200001)
        p2 = mean - p1 / 2
        p0 = 1 - p1 - p2
        ok = (p0 > 0) & (p2 > 0)
        return np.max(counts @ np.log(np.vstack([p0[ok], p1[ok], p2[ok]])))

    s0, s1 = elo_to_score(0), elo_to_score(50)
    assert llr_path(scores, 0, 50)[-1] == pytest.approx(best_loglik(s1) - best_loglik(s0), abs=1e-6)


def test_class_latches_the_first_crossing_and_ignores_nan():
    t = SPRT(0, 50, min_blocks=30)
    assert t.update([0.5] * 5 + [float("nan")]) == "continue" and t.n == 5
    with pytest.raises(ValueError):
        t.update(1.5)
    t.update(np.tile([1.0, 0.25, 1.0, 1.0], 10))
    assert t.path[24] > t.bounds[1]  # crossed after 25 blocks, but
    assert t.status == "H1" and t.decided_at == 30  # no decision before min_blocks
    t.update(np.zeros(100))
    assert t.status == "H1" and t.llr < 0  # the verdict stays


def test_identical_players_never_accept_h1_on_ties():
    t = SPRT(0, 10)
    t.update(np.full(200, 0.5))
    assert t.status == "H0" and np.isfinite(t.llr)
    elo, lo, hi = t.elo_estimate()
    assert lo < 0 < hi and lo < elo < hi


# ------------------------------------------------------------------------------- promises


@pytest.mark.slow
@pytest.mark.parametrize("players, runs", [(2, 4000), (4, 2000)])
def test_error_rates_hold_on_duplicate_blocks_with_seat_luck(players, runs):
    # measured with 20,000 tests each (benchmarks/bench_sprt.py): 2 players alpha 4.7%, beta 5.5%;
    # 4 players alpha 4.5%, beta 4.8%.  Each is up to 0.5 points off 5%, so 1,000 tests each
    # (sampling error +-0.7 points) pass this check for only 3 (2 players) and 8 (4 players) of
    # seeds 0-9.  With these runs it passed for 6 of seeds 0-7 (2 players) and 2 of seeds 0-2
    # (4 players): not yet the margin the issue asks for (see the report on issue 11).
    rng = np.random.default_rng(0)
    blocks = 300 if players == 2 else 200
    at_elo0, _, _ = decisions(duplicate_blocks(rng, 0, runs, blocks, players), 0, 50,
                              estimate=False)
    at_elo1, _, _ = decisions(duplicate_blocks(rng, 50, runs, blocks, players), 0, 50,
                              estimate=False)
    assert np.mean(at_elo0 == "continue") + np.mean(at_elo1 == "continue") <= 0.002
    alpha, beta = np.mean(at_elo0 == "H1"), np.mean(at_elo1 == "H0")
    assert abs(alpha - 0.05) <= 0.01 and abs(beta - 0.05) <= 0.01, (alpha, beta)


@pytest.mark.slow
@pytest.mark.parametrize("players", [2, 4])
def test_the_estimate_with_the_verdict_is_corrected_for_stopping(players):
    # a candidate 25 Elo stronger, tested at elo0=0, elo1=50: the mean score where the test stops
    # overstates it when H1 is accepted (about +45); the estimate given less so (about +37), and
    # its 95% interval covers the truth.  Measured with 20,000 tests (benchmarks/bench_sprt.py):
    # P(estimate > 25) 0.486 (2 players), 0.488 (4); coverage 100.0%.  This check passed for
    # each of seeds 0-9 (2 players) and 0-8 (4 players).
    rng = np.random.default_rng(0)
    scores = duplicate_blocks(rng, 25, 1000, 300 if players == 2 else 200, players)
    status, at, (elo, lo, hi) = decisions(scores, 0, 50)
    mean = (scores * (np.arange(scores.shape[1]) < at[:, None])).sum(axis=1) / at
    naive = score_to_elo(mean)
    passed = status == "H1"
    assert np.median(naive[passed]) > 40  # the uncorrected figure, as printed before
    assert np.median(elo[passed]) < np.median(naive[passed]) - 5
    assert 0.45 <= np.mean(elo > 25) <= 0.55  # median-unbiased over all tests
    # the 95% interval is conservative (wider than it needs to be)
    assert np.mean((lo <= 25) & (25 <= hi)) >= 0.97


# ------------------------------------------------------------------------------- block scores


def test_block_score_hand_made():
    df = results_table(
        [
            # vs base: 0, 0.5 ; vs other: 1
            (7, [("cand", 2), ("base", 1), ("base", 2), ("other", 4)]),
            # vs base: 1, 1 ; vs other: 1
            (7, [("base", 3), ("cand", 1), ("other", 2), ("base", 3)]),
            (3, [("cand", 2), ("base", 1)]),  # block 3 (later game, so listed second)
        ]
    )
    blk7 = df[df["block"] == 7]
    assert block_score(blk7, "cand", "base") == pytest.approx((0 + 0.5 + 1 + 1) / 4)
    assert block_score(blk7, "cand") == pytest.approx((0 + 0.5 + 1 + 1 + 1 + 1) / 6)
    assert block_score(blk7, "cand", ["base", "other"]) == pytest.approx(4.5 / 6)
    assert math.isnan(block_score(blk7, "cand", "nobody"))
    s = block_scores(df, "cand", "base")
    assert list(s.index) == [7, 3]
    assert s.loc[3] == 0.0
    assert list(s.attrs["pairs"]) == [4, 1]


def test_run_sprt_on_results_table():
    rng = np.random.default_rng(12)
    games = []
    for b in range(400):
        for _ in range(2):
            perf = np.array([100.0, 0.0]) / ELO_PER_NAT + rng.gumbel(size=2)
            r = (-perf).argsort().argsort() + 1
            games.append((b, [("cand", int(r[0])), ("base", int(r[1]))]))
    df = results_table(games)
    t = run_sprt(df, "cand", 0, 50, baseline="base")
    manual = SPRT(0, 50)
    manual.update(block_scores(df, "cand", "base").to_numpy())
    assert (t.status, t.n, t.decided_at) == (manual.status, manual.n, manual.decided_at)
    assert t.status == "H1"
    assert t.summary()["blocks"] == 400
