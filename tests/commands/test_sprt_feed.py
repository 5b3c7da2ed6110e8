"""Tests for kdtourney.commands.sprt: the SPRT driver (chunks of blocks through the runner, the
decision from the store).  The statistics themselves (error rates on simulated outcomes) are tested
in test_sprt.py; here: what the driver adds.

Fixed cases (seed 11, random against random, 2 players): elo0=0, elo1=50 accepts H0 at block 40
(not at the 15-block minimum, so the decision falls inside a chunk).
"""

import shutil
import sqlite3

import pandas as pd
import pytest

from kdtourney import store
from kdtourney.commands import sprt as sq
from kdtourney.registry import BotRegistry
from kdtourney.report.html import planned_games
from kdtourney.stats.sprt import run_sprt
from kdtourney.tournament import schedule
from kdtourney.tournament.definition import ArenaError
from kdtourney.tournament.sprt import cap_blocks, with_cap

DECISION_BLOCK = 40


@pytest.fixture(scope="module")
def registry():
    return BotRegistry([], env=False, cwd=False)


def prepare(registry, **kw):
    args = dict(candidate="random", baseline="random", elo0=0, elo1=50, max_games=400, seed=11)
    args.update(kw)
    return sq.prepare_test(registry, **args)


@pytest.fixture(scope="module")
def reference(registry, tmp_path_factory):
    """The uninterrupted test on one worker with adaptive chunks."""
    folder = tmp_path_factory.mktemp("seq") / "ref"
    tournament, test = prepare(registry)
    outcome = sq.play_sprt(tournament, test, folder, registry, workers=1)
    return folder, outcome


def test_table_is_the_candidate_with_baselines(registry):
    for players in (2, 3, 4):
        t, test = prepare(registry, candidate="greedy", players=players, max_games=10)
        assert t.format == schedule.GAUNTLET and t.entrants == ("greedy", "random")
        assert (test.candidate, test.baseline) == ("greedy", "random")
        plan = t.plan()
        assert plan.games[0].seats == (0,) + (1,) * (players - 1)
        first = [g for g in plan.games if g.block == 0]
        assert len(first) == players and {g.seats.index(0) for g in first} == set(range(players))
    t, test = prepare(registry)  # the same spec twice: an A/A test of two entrants
    assert t.entrants == ("random#1", "random#2") and test.candidate == "random#1"
    assert cap_blocks(t) == 200


@pytest.mark.parametrize("kw, needle", [
    (dict(candidate="nobot"), "nobot"),
    (dict(baseline=None), "--baseline"),
    (dict(elo0=10, elo1=10), "--elo1 must be greater than --elo0"),
    (dict(alpha=0.5), "--alpha"),
    (dict(beta=0.0), "--beta"),
    (dict(players=5), "--players"),
    (dict(players="2,4"), "one table size"),
    (dict(max_games=0), "--max-games"),
])
def test_bad_input(registry, kw, needle):
    with pytest.raises(ArenaError, match=needle.replace("-", r"\-")):
        prepare(registry, **kw)


@pytest.mark.process
def test_decision_and_store(reference):
    folder, outcome = reference
    state = outcome.state
    assert outcome.verdict == "H0" and state.blocks == DECISION_BLOCK
    assert state.games == 2 * DECISION_BLOCK and not outcome.interrupted
    rows = store.load_sprt(folder)
    assert list(rows["block"]) == list(range(1, DECISION_BLOCK + 1))
    assert (rows["llr"].iloc[:-1] > rows["lower"].iloc[:-1]).all()  # first crossing at the end
    assert rows["llr"].iloc[-1] <= rows["lower"].iloc[-1] and state.llr == rows["llr"].iloc[-1]
    # the same decision as the statistics module on the counted blocks
    results = store.load_results(folder)
    direct = run_sprt(results[results["block"] < DECISION_BLOCK], "random#1", 0, 50,
                      baseline="random#2")
    assert (direct.status, direct.decided_at) == ("H0", DECISION_BLOCK)
    assert direct.llr == pytest.approx(state.llr)
    config = store.load_config(folder)
    assert config["sprt"] == dict(candidate="random#1", baseline="random#2", elo0=0.0, elo1=50.0,
                                  alpha=0.05, beta=0.05, min_blocks=15)
    # the tournament is written once, with its cap; the report plans the games to the decision
    assert config["tournament"]["games"] == 400
    assert store.load_sessions(folder)["games"].tolist() == [400]
    assert planned_games(folder, config["tournament"], rows) == state.games
    blocks = store.load_blocks(folder)  # each chunk's blocks, recorded as it was handed out
    assert set(store.load_games(folder, ["block"])["block"]) <= set(blocks["block"])
    assert blocks["seats"][0] == ["random#1", "random#2"]
    assert outcome.verdict_line().startswith("H0 accepted: the candidate is not shown to be at "
                                             "least 50 Elo stronger than the baseline (a candidate "
                                             "that is fails about 5% of the time); LLR ")
    assert state.lo < state.elo < state.hi and rows["elo"].iloc[:-1].isna().all()
    assert (rows["elo"].iloc[-1], rows["lo"].iloc[-1]) == (state.elo, state.lo)


@pytest.mark.process
def test_decision_independent_of_workers(registry, reference, tmp_path):
    ref_folder, ref = reference
    tournament, test = prepare(registry)
    outcome = sq.play_sprt(tournament, test, tmp_path / "two", registry, workers=2)
    assert (outcome.verdict, outcome.state.blocks) == ("H0", DECISION_BLOCK)
    assert outcome.past_decision == outcome.state.stored - 2 * DECISION_BLOCK
    with store.open_store(tmp_path / "two") as st:  # what the decision dropped: whole blocks
        assert set(st.games_per_block().values()) == {2}
    pd.testing.assert_frame_equal(store.load_sprt(ref_folder), store.load_sprt(tmp_path / "two"))
    assert outcome.verdict_line() == ref.verdict_line()


@pytest.mark.process
def test_with_fast_bots_few_games_are_played_past_the_decision(registry, tmp_path):
    # greedy against random decides at block 23 (46 games): the games of 2 ms were once queued
    # two seconds ahead, and all 1,000 of the cap were played; now only what the workers held
    # when it decided, and the rest of the one block they were in (the queue is in game order),
    # however fast the machine
    tournament, test = prepare(registry, candidate="greedy", max_games=1000, seed=1)
    outcome = sq.play_sprt(tournament, test, tmp_path / "fast", registry, workers=2)
    assert (outcome.verdict, outcome.state.blocks) == ("H1", 23)
    at = outcome.decision
    assert outcome.state.stored == at.stored + at.held + at.kept, at
    assert at.kept < tournament.players[0], at


@pytest.mark.process
def test_resume_after_an_interruption_inside_a_chunk(registry, reference, tmp_path):
    ref_folder, ref = reference
    tournament, test = prepare(registry)
    folder = tmp_path / "cut"
    # a first session capped at 50 games: 25 blocks, fewer than the test needs to decide
    first = sq.play_sprt(with_cap(tournament, 50), test, folder, registry, workers=1)
    assert first.verdict == "undecided" and first.state.blocks == 25
    assert "undecided after 50 games (25 blocks)" in first.verdict_line()
    assert store.load_config(folder)["tournament"]["games"] == 50
    # as if killed in the middle of a chunk: a hole in block 20 and a half-played block 24
    with sqlite3.connect(store.store_path(folder)) as conn:
        for game in (41, 49):
            conn.execute("DELETE FROM results WHERE game = ?", (game,))
            conn.execute("DELETE FROM games WHERE game = ?", (game,))
    conn.close()
    state = sq.evaluate(folder, tournament, test)
    assert (state.complete, state.blocks, state.status) == (20, 20, "continue")
    again = sq.play_sprt(tournament, test, folder, registry, workers=2)
    assert again.played >= 2 and again.stored_before == 48
    assert (again.verdict, again.state.blocks) == ("H0", DECISION_BLOCK)
    pd.testing.assert_frame_equal(store.load_sprt(ref_folder), store.load_sprt(folder))
    # once decided, a re-run plays nothing and says the same
    third = sq.play_sprt(tournament, test, folder, registry, workers=2)
    assert third.played == 0 and third.evaluations == 0
    assert third.verdict_line() == ref.verdict_line()
    assert store.load_config(folder)["meta"]["sessions"] == 3


@pytest.mark.process
def test_a_smaller_cap_counts_only_the_blocks_within_it(registry, reference, tmp_path):
    ref_folder, _ = reference
    folder = tmp_path / "copy"
    shutil.copytree(ref_folder, folder)
    tournament, test = prepare(registry, max_games=60)
    outcome = sq.play_sprt(tournament, test, folder, registry, workers=1)
    assert outcome.played == 0 and outcome.verdict == "undecided" and outcome.state.blocks == 30
    assert len(store.load_sprt(folder)) == 30


@pytest.mark.process
def test_another_test_on_the_folder_is_refused(registry, reference, tmp_path):
    ref_folder, _ = reference
    before = store.load_config(ref_folder)
    for kw, needle in ((dict(elo1=60), "sprt.elo1: 50.0 (stored) vs 60.0 (now)"),
                       (dict(seed=12), "seed: 11 (stored) vs 12 (now)"),
                       (dict(players=3), "players")):
        tournament, test = prepare(registry, **kw)
        with pytest.raises(ArenaError, match="holds another SPRT") as info:
            sq.play_sprt(tournament, test, ref_folder, registry, workers=1)
        assert needle in str(info.value)
    after = store.load_config(ref_folder)
    assert after["tournament"] == before["tournament"] and after["sprt"] == before["sprt"]
    # a tournament of `kdtourney run` is not an SPRT
    plain = tmp_path / "plain"
    store.Store.create(plain, {"games": 1}, {}).close()
    tournament, test = prepare(registry)
    with pytest.raises(ArenaError, match="not an SPRT"):
        sq.play_sprt(tournament, test, plain, registry, workers=1)
