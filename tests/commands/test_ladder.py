"""The ladder's decision rules without playing a game: matchmaking on simulated standings and
results (kdtourney.stats.matchmaking), the entrants' versions as the folders change, and the
blocks a chunk hands to the driver (kdtourney.commands.ladder and its modules)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from ladder_support import NoteDisplay

from kdtourney import store
from kdtourney.commands import driver, ladder, ladder_entrants, ladder_feed, ladder_watch
from kdtourney.stats import matchmaking as mm
from kdtourney.stats.outcomes import ELO_PER_NAT, elo_to_score
from kdtourney.tournament import schedule
from kdtourney.tournament.definition import ArenaError


def standing(elo, games_per_pair=20, new=()):
    """A standing of entrants with these true ratings after `games_per_pair` even-split games
    between every two (none for those in `new`)."""
    k = len(elo)
    wins, games = np.zeros((k, k)), np.zeros((k, k))
    for i, j in itertools.permutations(range(k), 2):
        if i in new or j in new:
            continue
        games[i, j] = games_per_pair
        wins[i, j] = games_per_pair * elo_to_score(elo[i] - elo[j])
    blocks = games.sum(axis=1) / 2
    return mm.Standing.from_counts(list(range(k)), wins, games, blocks, np.full(k, 0.0),
                                   games / 2, block=100)


def test_a_new_entrant_is_seated_first_against_opponents_near_its_rating_guess():
    elo = [-300, -100, 0, 100, 300, 0]
    st = standing(elo, new={5})
    assert st.sd[5] == mm.NEW_SD and st.sd[:5].max() < 100
    rng = np.random.default_rng(0)
    seeds = [mm.choose_table(st, 2, rng, rule=1)[0] for _ in range(200)]
    assert set(seeds) == {5}
    # rule 2: every table but the uniform ones (one in ten)
    seeds = pd.Series([mm.choose_table(st, 2, rng)[0] for _ in range(2000)])
    assert 0.88 < (seeds == 5).mean() < 0.95
    # the fit puts the newcomer at 0: its opponents are mostly the entrants near 0
    opponents = pd.Series([mm.choose_table(st, 2, rng)[1] for _ in range(2000)]).value_counts()
    assert opponents[2] > opponents[0] and opponents[1] > opponents[0]
    assert opponents[3] > opponents[4]


def test_close_pairs_are_preferred_but_no_pair_is_starved():
    """Matchmaking on simulated results: every pair meets, near pairs more often, and every
    entrant sits at a comparable number of tables."""
    rng = np.random.default_rng(1)
    truth = np.linspace(-400, 400, 12)
    k = len(truth)
    wins, games, meetings = np.zeros((k, k)), np.zeros((k, k)), np.zeros((k, k))
    blocks, last = np.zeros(k), np.full(k, -1.0)
    for block in range(1200):
        st = mm.Standing.from_counts(list(range(k)), wins, games, blocks, last, meetings, block)
        i, j = mm.choose_table(st, 2, mm.table_rng(7, block))
        p = elo_to_score(truth[i] - truth[j])
        x = (rng.random(2) < p).sum()
        wins[i, j] += x
        wins[j, i] += 2 - x
        games[i, j] += 2
        games[j, i] += 2
        meetings[i, j] += 1
        meetings[j, i] += 1
        blocks[[i, j]] += 1
        last[[i, j]] = block
    pairs = meetings[np.triu_indices(k, 1)]
    assert pairs.min() >= 1  # the whole field met
    near = np.mean([meetings[i, i + 1] for i in range(k - 1)])
    far = np.mean([meetings[i, j] for i in range(k) for j in range(k) if abs(i - j) >= 6])
    assert near > 2 * far
    assert blocks.max() < 2 * blocks.min()  # nobody starved, nobody hogging the tables
    fitted = mm.Standing.from_counts(list(range(k)), wins, games, blocks, last, meetings, 0).elo
    assert np.corrcoef(np.argsort(np.argsort(fitted)), np.arange(k))[0, 1] > 0.9


def test_tables_are_fixed_by_the_seed_and_the_block():
    st = standing([0, 50, 100, 150])
    first = [mm.choose_table(st, 3, mm.table_rng(3, b)) for b in range(20)]
    again = [mm.choose_table(st, 3, mm.table_rng(3, b)) for b in range(20)]
    assert first == again and all(len(set(t)) == 3 for t in first)
    small = standing([0, 50])
    table = mm.choose_table(small, 4, mm.table_rng(1, 0))  # 2 entrants at 4 seats
    assert len(table) == 4 and set(table) == {0, 1}


@pytest.mark.slow
def test_one_table_in_ten_is_drawn_uniformly_at_every_seat():
    # a newcomer takes the first seat of every table the rule chooses; a uniform table seats it
    # at 2 of 6 chances
    st = standing([-100, -50, 0, 50, 100, 0], new={5})
    for rule, expected in ((2, 1 - mm.EXPLORE * (1 - 2 / 6)), (1, 1.0)):
        tables = [mm.choose_table(st, 2, mm.table_rng(4, b), rule=rule) for b in range(20000)]
        share = np.mean([5 in t for t in tables])
        assert abs(share - expected) < 0.01, (rule, share)
    without = pd.Series([tuple(sorted(t)) for t in tables if 5 not in t])
    assert len(without) == 0  # rule 1: never
    tables = [mm.choose_table(st, 2, mm.table_rng(4, b)) for b in range(20000)]
    pairs = pd.Series([tuple(sorted(t)) for t in tables if 5 not in t]).value_counts()
    assert len(pairs) == 10 and pairs.max() < 2 * pairs.min()  # every pair of the others


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_uncertainty_counts_a_game_s_pairwise_outcomes_as_dependent(players):
    """Even entrants, every one at every table, ranks at random: the standard error the
    matchmaker gives an entrant is the spread of its estimate over simulated runs."""
    n = 60
    rng = np.random.default_rng(players)
    per_pair = n * np.ones((players, players)) - n * np.eye(players)
    even = [mm.Standing.from_counts(list(range(players)), per_pair / 2, per_pair, np.zeros(players),
                                    np.zeros(players), per_pair, 0,
                                    per_pair * mm.dependence(players, rule)).sd[0]
            for rule in (2, 1)]
    # entrant 0's estimate from its pairwise score, the others known (its information's view)
    ranks = rng.random((4000, n, players)).argsort(axis=2).argsort(axis=2)
    score = (players - 1 - ranks[:, :, 0]).sum(axis=1)  # the seats it beat, over the games
    info = n * (players - 1) * 0.25
    spread = np.std(ELO_PER_NAT * (score - n * (players - 1) / 2) / info)
    assert even[0] == pytest.approx(spread, rel=0.05)
    if players > 2:  # rule 1 took them for independent: too sure of itself
        assert even[1] < 0.9 * spread


def test_the_ladder_s_standing_weighs_a_4_player_game_s_comparisons():
    rows = []
    for game, order in enumerate([("w", "x", "y", "z"), ("x", "y", "z", "w"),
                                  ("y", "z", "w", "x"), ("z", "w", "x", "y")]):
        for seat, entrant in enumerate(order):
            rows.append(dict(game=game, seat=seat, block=0, entrant=entrant, n_players=4,
                             rank={"w": 1, "x": 2, "y": 3, "z": 4}[entrant]))
    results = pd.DataFrame(rows)
    blocks = pd.DataFrame({"block": [0], "seats": [["w", "x", "y", "z"]]})
    new, old = (ladder_feed.standing(results, blocks, list("wxyz"), 1, rule=r) for r in (2, 1))
    assert new.sd == pytest.approx(old.sd / np.sqrt(0.6))
    assert np.array_equal(new.elo, old.elo)


def found(spec, digest):
    return ladder_entrants.Found(spec, digest, {"digest": digest}, f"/bots/{spec}.py")


def apply(entrants, rows):
    entrants = dict(entrants)
    entrants.update({r["label"]: r for r in rows})
    return entrants


def test_versions_follow_the_folders():
    now = {"mine": found("mine", "a1"), "greedy": found("greedy", "g")}
    rows, events = ladder_entrants.update_entrants({}, now, "t0")
    state = apply({}, rows)
    assert {k: (r["status"], r["version"]) for k, r in state.items()} == {
        "mine": ("active", 1), "greedy": ("active", 1)}
    assert ladder_entrants.update_entrants(state, now, "t1") == ([], [])  # nothing changed
    changed = dict(now, mine=found("mine", "b2"))
    rows, events = ladder_entrants.update_entrants(state, changed, "t2")
    state = apply(state, rows)
    assert state["mine"]["status"] == "superseded" and state["mine@v2"]["status"] == "active"
    assert state["mine@v2"]["digest"] == "b2" and "entered as version 2" in events[-1]
    rows, _ = ladder_entrants.update_entrants(state, {"greedy": now["greedy"]}, "t3")  # removed
    state = apply(state, rows)
    assert state["mine@v2"]["status"] == "retired" and state["mine"]["status"] == "superseded"
    rows, _ = ladder_entrants.update_entrants(state, changed, "t4")  # the same code comes back
    state = apply(state, rows)
    assert state["mine@v2"]["status"] == "active" and len(state) == 3
    rows, _ = ladder_entrants.update_entrants(state, dict(now, mine=found("mine", "c3")), "t5")
    state = apply(state, rows)
    assert state["mine@v3"]["version"] == 3 and state["mine@v2"]["status"] == "superseded"


def test_a_chunk_plays_its_blocks_under_every_rotation_with_the_tournament_seeds(tmp_path):
    config = ladder.LadderConfig(players=(3,), seed=9, rules={})
    specs = {"a": "random", "b": "greedy", "c": "random"}
    todo = [dict(block=b, first_game=f, n_players=3, seats=list(seats),
                 entrants={label: specs[label] for label in seats})
            for b, f, seats in [(4, 10, ("b", "a", "c")), (7, 19, ("c", "c", "a"))]]
    table = ladder.ladder_table(config)
    store.Store.create(tmp_path, table.to_dict(), {}).close()
    with store.open_store(tmp_path) as st:
        chunk, games = driver.schedule_blocks(st, table, todo, None)
    assert sorted(games) == [10, 11, 12, 19, 20, 21]
    assert chunk.entrants == ("b", "a", "c") and chunk.specs == ("greedy", "random", "random")
    g = [games[n] for n in (10, 11, 12)]
    assert [s.seats for s in g] == list(schedule.rotations((0, 1, 2)))
    assert all(s.block == 4 and s.deal_seeds == (schedule.deal_seed(9, 4),) for s in g)
    assert g[2].bot_seeds[1] == (schedule.bot_seed(9, 12, 1),)
    assert games[21].seats == schedule.rotations((2, 2, 1))[2]
    # the store keeps each block as it was scheduled, and the tournament as it was made
    recorded = store.load_blocks(tmp_path)
    assert recorded["seats"].tolist() == [["b", "a", "c"], ["c", "c", "a"]]
    assert recorded["entrants"][1] == {"a": "random", "c": "random"}
    assert recorded["deal_seeds"].tolist() == [[schedule.deal_seed(9, 4)],
                                               [schedule.deal_seed(9, 7)]]
    assert store.load_config(tmp_path)["tournament"] == table.to_dict()


def test_the_matchmaker_counts_only_balanced_blocks():
    """A block with a failed game (here: block 1 lacks its second seating) teaches the matchmaker
    nothing, as it teaches the list nothing; the blocks scheduled still count as tables sat at."""
    rows = []
    for game, (block, a, b) in enumerate([(0, "x", "y"), (0, "y", "x"), (1, "x", "y")]):
        for seat, entrant in enumerate((a, b)):
            rows.append(dict(game=game, seat=seat, block=block, entrant=entrant, n_players=2,
                             rank=1 if entrant == "x" else 2))
    results = pd.DataFrame(rows)
    blocks = pd.DataFrame({"block": [0, 1], "seats": [["x", "y"], ["x", "y"]]})
    st = ladder_feed.standing(results, blocks, ["x", "y"], 2)
    assert st.blocks.tolist() == [2, 2] and st.meetings[0, 1] == 2
    assert st.elo[0] > 0 and st.elo[0] == -st.elo[1]
    one = ladder_feed.standing(results[results["block"] == 0], blocks, ["x", "y"], 2)
    assert one.elo[0] == st.elo[0] and one.sd[0] == st.sd[0]


def looked(bots):
    """What the ladder's look at the folder `bots` sees, with `random` for reference."""
    return ladder_watch.look([bots], ["random"], None, None, None)


BOT = ("from kdtourney.bots.base import Bot\n\n\nclass {cls}(Bot):\n    name = {name!r}\n\n"
       "    def act(self, view):\n        return view.legal_actions()[0]\n")


@pytest.mark.parametrize("squat", ["a0-squat", "z-squat"])  # found before the holder, or after
def test_a_newcomer_of_a_taken_name_is_refused_alone_and_the_others_enter(tmp_path, squat):
    """A bot dropped into the folders under an entrant's name: one note (on the terminal, and
    kept for the ladder's page), the entrant keeps its name and its code, and another newcomer
    of the same look enters."""
    from kdtourney.report.ladder import build_context, ladder_board
    from kdtourney.store import Store

    bots = tmp_path / "bots"
    (bots / "one").mkdir(parents=True)
    (bots / "one" / "one.py").write_text(BOT.format(cls="One", name="one"))
    folder = tmp_path / "ladder"
    Store.create(folder, {}, {}, {}).close()
    store.open_store(folder).set_config("ladder", {"players": [2]})
    display = NoteDisplay()
    notes = display.notes

    def look():
        return ladder_watch.look([bots], ["random"], None, None, folder)

    outcome = ladder.LadderOutcome(folder=folder, stored_before=0)
    first = ladder_watch.take_in(folder, look(), display, outcome)
    digest = ladder_entrants.stored_entrants(folder)["one"]["digest"]
    (bots / squat).mkdir()
    (bots / squat / "squat.py").write_text(BOT.format(cls="Squat", name="one"))
    (bots / "three").mkdir()
    (bots / "three" / "three.py").write_text(BOT.format(cls="Three", name="three"))
    again = ladder_watch.take_in(folder, look(), display, outcome, first)
    assert again is not first and again.bots["one"].origin == str(bots / "one" / "one.py")
    refusal = (f"{bots / squat / 'squat.py'}: refused: the bot name 'one' is taken by "
               f"{bots / 'one' / 'one.py'} (give this bot another name)")
    assert notes == [refusal]
    entrants = ladder_entrants.stored_entrants(folder)
    assert {label: (r["status"], r["version"]) for label, r in entrants.items()} == {
        "one": ("active", 1), "random": ("active", 1), "three": ("active", 1)}
    assert entrants["one"]["digest"] == digest
    assert squat not in str(again.source_files())  # no worker meets the two
    assert refusal in build_context(folder, ladder_board(folder, n_boot=10), False)["notes"]


def test_the_watch_sees_a_change_deep_in_a_bots_folder_but_not_its_log(tmp_path):
    from kdtourney.store import Store

    bots = tmp_path / "bots"
    deep = bots / "one" / "lib" / "deep"
    deep.mkdir(parents=True)
    (deep / "table.json").write_text("[0]")
    (bots / "one" / "one.py").write_text(
        "from kdtourney.bots.base import Bot\n\n\nclass One(Bot):\n    name = 'one'\n\n"
        "    def act(self, view):\n        return view.legal_actions()[0]\n")
    folder = tmp_path / "ladder"
    Store.create(folder, {}, {}, {}).close()
    outcome = ladder.LadderOutcome(folder=folder, stored_before=0)
    ladder_watch.take_in(folder, looked(bots), None, outcome)
    seen = ladder_watch.folder_signature([bots])
    (bots / "one" / "one.log").write_text("a bot writing its log changes nothing\n")
    (bots / "one" / "__pycache__").mkdir()
    (bots / "one" / "__pycache__" / "one.cpython-311.pyc").write_bytes(b"\x00")
    assert ladder_watch.folder_signature([bots]) == seen
    # nothing new
    assert ladder_watch.look([bots], ["random"], None, None, folder, seen=seen) is None
    (deep / "table.json").write_text("[1]")
    assert ladder_watch.folder_signature([bots]) != seen
    assert ladder_watch.look([bots], ["random"], None, None, folder, seen=seen) is not None
    ladder_watch.take_in(folder, looked(bots), None, outcome)
    digest = ladder_entrants.stored_entrants(folder)["one@v2"]["digest"]
    assert outcome.events[-2:] == [f"one: superseded (its code changed: {digest[:12]})",
                                   "one@v2: entered as version 2"]


def test_a_ladder_records_its_rule_and_an_old_one_goes_on_under_rule_1(tmp_path):
    config = ladder.prepare_ladder(players=(2, 4), seed=3)
    assert config.rule == mm.MATCH_RULE == 2
    opened, _ = ladder.open_ladder(config, tmp_path / "new", {})
    assert opened.rule == 2 and ladder.stored_config(tmp_path / "new").rule == 2
    old = tmp_path / "old"
    ladder.open_ladder(config, old, {})
    with store.open_store(old) as st:  # a ladder made before the rule was recorded
        st.set_config("ladder", {k: v for k, v in config.to_dict().items() if k != "rule"})
    assert ladder.stored_config(old).rule == 1
    opened, sessions = ladder.open_ladder(config, old, {})
    assert opened.rule == 1 and sessions == 2
    with store.open_store(old) as st:
        st.set_config("ladder", dict(config.to_dict(), rule=9))
    with pytest.raises(ArenaError, match=r"was made under matchmaking rule 9, which this "
                                         r"kdtourney does not know \(it knows 1, 2\)"):
        ladder.stored_config(old)


def test_a_scheduled_block_whose_entrant_left_is_cancelled_the_others_stay_pending(tmp_path):
    config = ladder.LadderConfig(players=(2,), seed=4, rules={})
    table = ladder.ladder_table(config)
    store.Store.create(tmp_path, table.to_dict(), {}).close()
    specs = {"a": "random", "b": "greedy", "c": "random"}
    todo = [dict(block=b, first_game=2 * b, n_players=2, seats=list(seats),
                 entrants={label: specs[label] for label in seats})
            for b, seats in enumerate([("a", "b"), ("b", "c"), ("a", "c")])]
    with store.open_store(tmp_path) as st:
        driver.schedule_blocks(st, table, todo, None)
    status = {"a": "active", "b": "active", "c": "retired"}
    entrants = {label: dict(label=label, status=s) for label, s in status.items()}
    pending, cancel = ladder_entrants.pending_blocks(store.load_blocks(tmp_path), entrants,
                                                     played={0})
    assert [b["block"] for b in pending] == [0] and cancel == [1, 2]
    assert pending[0]["entrants"] == {"a": "random", "b": "greedy"}
    with store.open_store(tmp_path) as st:
        st.cancel_blocks(cancel)
    assert store.load_blocks(tmp_path)["cancelled"].tolist() == [0, 1, 1]
    # a block is what it was first recorded as: the same number with another table is a bug
    with store.open_store(tmp_path) as st, pytest.raises(store.StoreError, match="block 0 of"):
        st.add_blocks([dict(todo[0], seats=["b", "a"])])
