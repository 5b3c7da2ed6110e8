"""The tune's driver without playing (kdtourney.commands.tune): the table, a batch's plan, the
verdict's wording. Playing tunes: tests/cli/test_cli_tune.py."""

from dataclasses import replace

import pytest

from kdtourney import store
from kdtourney.commands import tune
from kdtourney.registry import BotRegistry
from kdtourney.stats import spsa
from kdtourney.tournament import blocks
from kdtourney.tournament.definition import ArenaError


def prepared(players=4, against=None):
    return tune.prepare_tune(BotRegistry(), "mcts:iterations=50", ["c=0.2,0.02,1.0",
                             "widen=1,0.25,4"], players=players, iterations=10, batch=4,
                             seed=5, against=against)


def test_the_table_seats_theta_plus_theta_minus_and_the_opponents():
    table, t = prepared(against="greedy")
    assert table.entrants == ("theta+", "theta-", "greedy")
    assert table.lineup == (0, 1, 2, 2)
    assert t.spec(t.start) == "mcts:c=0.2:iterations=50:widen=1.0" == table.specs[0]
    # by default the other seats hold the bot at its start values
    table, _ = prepared(players=3)
    assert table.entrants[2] == "mcts:c=0.2:iterations=50:widen=1.0" and table.lineup == (0, 1, 2)


def test_a_batch_plays_each_iteration_s_theta_in_its_own_block():
    table, t = prepared()
    its = spsa.replay(t.params, t.schedule, table.seed, t.batch, {1: 0.0, 2: 2.0, 3: -2.0, 4: 0.0})
    pending = [it for it in its if it.after is None]
    assert [it.k for it in pending] == [5, 6, 7, 8]
    records = tune.batch_blocks(table, t, pending)
    assert [b["block"] for b in records] == [4, 5, 6, 7]  # the first batch's are stored
    pairs, games = blocks.games_of(records, table.seed, table.dynasty)
    assert [g.game for g in games] == list(range(16, 32))
    for g in games:
        it = pending[g.block - 4]
        seated = [pairs[e] for e in g.seats]
        assert seated.count(("theta+", t.spec(it.plus))) == 1
        assert seated.count(("theta-", t.spec(it.minus))) == 1
    # the same games as the table's lineup plan, but for who sits in theta+'s and theta-'s seats
    planned = replace(table, games=32).plan().games[16:]
    assert [(g.block, g.deal_seeds, g.bot_seeds, [table.entrants[e] for e in g.seats])
            for g in planned] == [(g.block, g.deal_seeds, g.bot_seeds,
                                   [pairs[e][0] for e in g.seats]) for g in games]


def test_the_verdict_says_plainly_when_the_tune_did_not_beat_its_start():
    def verdict(lo, hi):
        return tune.Verdict("a:x=1", "a:x=0", 400, 100, 0.5, (lo + hi) / 2, lo, hi).line()

    assert verdict(5, 30).startswith("the tune beat its start values: tuned a:x=1 against start "
                                     "a:x=0 over 400 games (100 deals): Elo +17.5 [+5.0, +30.0]")
    assert verdict(-5, 30).startswith("the tune did NOT beat its start values (the interval "
                                      "includes 0)")
    assert verdict(-30, -5).startswith("the tune did NOT beat its start values, it is weaker")


def test_shown_values_are_whole_for_ints_and_three_digits_of_the_range_for_floats():
    _, t = prepared()
    assert t.rounded([0.31234, 1.41421]) == [0.312, 1.41]
    _, t = tune.prepare_tune(BotRegistry(), "expectimax", ["width=6,2,12", "depth=13,1,20"],
                             iterations=10)
    assert [p.integer for p in t.params] == [True, True]
    assert t.spec(t.rounded([6.6, 12.2])) == "expectimax:depth=12:width=7"


def test_a_new_tune_records_its_rule_and_an_old_folder_resumes_under_rule_1(tmp_path):
    table, t = prepared()
    assert t.rule == spsa.SPSA_RULE == 3
    opened, notes = tune.open_tune(table, t, tmp_path / "new", {}, {})
    assert opened.rule == 3 and notes == []
    assert store.load_config(tmp_path / "new")["tune"]["rule"] == 3
    assert tune.load_tune(tmp_path / "new")[1].rule == 3
    # a folder made before the rule was recorded: the same command goes on under rule 1
    old = tmp_path / "old"
    tune.open_tune(table, t, old, {}, {})
    with store.open_store(old) as st:
        st.set_config("tune", {k: v for k, v in t.to_dict().items() if k != "rule"})
    assert tune.load_tune(old)[1].rule == 1
    opened, notes = tune.open_tune(table, t, old, {}, {})
    assert opened.rule == 1
    assert notes == [f"{old} was made under SPSA rule 1 (this kdtourney makes rule 3): it "
                     "finishes under rule 1"]
    # and a rule this kdtourney does not know is refused in one line
    with store.open_store(old) as st:
        st.set_config("tune", dict(t.to_dict(), rule=7))
    for attempt in (lambda: tune.load_tune(old), lambda: tune.open_tune(table, t, old, {}, {})):
        with pytest.raises(ArenaError, match=r"made under SPSA rule 7, which this kdtourney does "
                                             r"not know \(it knows 1, 2, 3\)"):
            attempt()

