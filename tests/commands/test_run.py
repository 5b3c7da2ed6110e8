"""The runner: worker-count independence, faults, dead and hung workers, resume."""

import re
import sqlite3

import pytest
from arena_support import assert_same_store, write_faulty_bots

from kdtourney.commands.run import run_tournament
from kdtourney.match.settings import PlaySettings
from kdtourney.registry import BotRegistry
from kdtourney.store import load_faults, load_games, load_results
from kdtourney.terminal.replay import replay_text
from kdtourney.tournament.definition import ArenaError, prepare


@pytest.fixture(scope="module")
def registry():
    return BotRegistry(env=False, cwd=False, entry_points=False)


@pytest.fixture(scope="module")
def faulty(tmp_path_factory):
    folder = write_faulty_bots(tmp_path_factory.mktemp("bots"))
    return BotRegistry([folder], env=False, cwd=False, entry_points=False)


@pytest.mark.process
def test_same_store_whatever_the_worker_count(tmp_path, registry):
    t = prepare(registry, bots="random,greedy,random", players="2,4", games=30, seed=21)
    one = run_tournament(t, tmp_path / "one", registry, workers=1)
    two = run_tournament(t, tmp_path / "two", registry, workers=2)
    assert one.complete and two.complete and one.played == two.played == 30
    assert_same_store(tmp_path / "one", tmp_path / "two")
    results = load_results(tmp_path / "one")
    assert set(results["entrant"]) == {"random#1", "random#2", "greedy"}
    assert len(results) == sum(load_games(tmp_path / "one")["n_players"])
    # a re-run plays nothing and changes nothing
    again = run_tournament(t, tmp_path / "one", registry, workers=2)
    assert again.played == 0 and again.stored_before == 30
    assert_same_store(tmp_path / "one", tmp_path / "two")


@pytest.mark.process
def test_dynasty_and_partial_store_resume(tmp_path, registry):
    t = prepare(registry, bots="random,greedy", games=8, seed=4, dynasty=True, harmony=True)
    run_tournament(t, tmp_path / "full", registry, workers=1)
    games = load_games(tmp_path / "full")
    assert games["moves"].str.startswith("[[").all() and len(games) == 8
    text = replay_text(tmp_path / "full", 3)
    assert text.count("\ndeal ") == 3 and text.count(" points (territories ") == 6
    results = load_results(tmp_path / "full")
    first = results[results["game"] == 3]
    assert "result: " + ", ".join(f"seat {r.seat + 1} {r.entrant} rank {r.rank} score {r.score}"
                                  for r in first.itertuples()) in text
    # a store holding only some of the games (as after a kill) gets exactly the missing ones
    partial = prepare(registry, bots="random,greedy", games=8, seed=4, dynasty=True, harmony=True)
    run_tournament(partial, tmp_path / "part", registry, workers=1)
    with sqlite3.connect(tmp_path / "part" / "tournament.sqlite") as conn:
        for table in ("results", "faults", "games"):
            conn.execute(f"DELETE FROM {table} WHERE game IN (1, 4, 5)")
    conn.close()
    out = run_tournament(partial, tmp_path / "part", registry, workers=2)
    assert out.stored_before == 5 and out.played == 3
    assert_same_store(tmp_path / "full", tmp_path / "part")


@pytest.mark.process
def test_another_tournament_on_the_same_folder_is_refused(tmp_path, registry):
    t = prepare(registry, bots="random,greedy", games=4, seed=1)
    run_tournament(t, tmp_path, registry, workers=1)
    before = load_results(tmp_path)
    other = prepare(registry, bots="random,greedy", games=6, seed=1)
    with pytest.raises(ArenaError, match=r"games: 4 \(stored\) vs 6 \(now\)"):
        run_tournament(other, tmp_path, registry, workers=1)
    assert load_results(tmp_path).equals(before)


@pytest.mark.slow
@pytest.mark.process
def test_faulty_bots_forfeit_and_the_tournament_completes(tmp_path, faulty):
    t = prepare(faulty, bots="raiser,illegal,slow,random", players="2,4", games=36, seed=1,
                move_time_limit=0.2)
    out = run_tournament(t, tmp_path, faulty, workers=2)
    assert out.complete and out.played == 36
    faults = load_faults(tmp_path)
    kinds = dict(zip(faults["entrant"], faults["kind"]))
    assert kinds == {"raiser": "exception", "illegal": "illegal", "slow": "timeout"}
    assert faults["message"].str.len().gt(0).all()
    assert "RuntimeError: boom" in faults[faults["kind"] == "exception"]["message"].iloc[0]
    results = load_results(tmp_path)
    assert (results["entrant"] == "random").any()
    assert not results.query("entrant == 'random'")["fault"].any()
    faulted = results[results["fault"]]
    assert len(faulted) == len(faults)
    assert (faulted["rank"] == faulted["n_players"]).all() and (faulted["win_share"] == 0).all()
    games = load_games(tmp_path)
    assert set(games.loc[games["game"].isin(faults["game"]), "status"]) == {"fault"}
    assert (games.loc[~games["game"].isin(faults["game"]), "status"] == "ok").all()


@pytest.mark.process
def test_a_bot_is_blamed_for_what_its_own_close_and_exceptions_do(tmp_path, faulty):
    """A bot that kills its worker in close(), raises SystemExit or KeyboardInterrupt, or an
    exception without a printable message forfeits itself; its opponent never does."""
    t = prepare(faulty, bots="closer,quitter,garbler,random", games=24, seed=2)
    out = run_tournament(t, tmp_path, faulty, workers=2)
    assert out.complete and out.played == 24 and out.failed == 0
    faults = load_faults(tmp_path)
    assert set(faults["entrant"]) == {"closer", "quitter", "garbler"}
    by = faults.groupby("entrant")
    assert set(by.get_group("closer")["kind"]) == {"crash"}
    assert by.get_group("quitter")["message"].str.startswith("KeyboardInterrupt").all()
    messages = set(by.get_group("garbler")["message"].str.split(" [(]").str[0])
    assert messages == {"ValueError: bad name \\udc80", "Unprintable:"}
    assert load_games(tmp_path)["status"].isin(["ok", "fault"]).all()


def unlucky(t, every):
    """(game, seat) where the faulty entrant 0 gets a setup seed that makes it misbehave."""
    return {(g.game, s) for g in t.plan().games for s, e in enumerate(g.seats)
            if e == 0 and g.bot_seeds[s][0] % every == 1}


@pytest.mark.process
def test_a_worker_that_dies_is_replaced(tmp_path, faulty):
    t = prepare(faulty, bots="crasher,random", games=12, seed=4)
    assert len(unlucky(t, 5)) == 1
    out = run_tournament(t, tmp_path / "two", faulty, workers=2)
    assert out.complete and out.worker_losses == 2
    faults = load_faults(tmp_path / "two")
    assert set(zip(faults["game"], faults["seat"])) == unlucky(t, 5)
    assert set(faults["kind"]) == {"crash"} and faults["call"].tolist() == [7]
    assert set(faults["entrant"]) == {"crasher"}
    # every game that killed a worker twice was played again with the crasher forfeiting
    assert out.worker_losses == 2 * len(faults)
    results = load_results(tmp_path / "two")
    assert (results[results["fault"]]["rank"] == 2).all() and len(results) == 24
    # and the crashes are as deterministic as the games: one worker gives the same store
    run_tournament(t, tmp_path / "one", faulty, workers=1)
    assert_same_store(tmp_path / "one", tmp_path / "two")


@pytest.mark.slow
@pytest.mark.process
def test_a_hung_worker_is_replaced(tmp_path, faulty):
    t = prepare(faulty, bots="hanger,random", games=12, seed=1)
    assert len(unlucky(t, 11)) == 1
    out = run_tournament(t, tmp_path, faulty, workers=2, hang_timeout=1.0)
    assert out.complete
    faults = load_faults(tmp_path)
    assert set(zip(faults["game"], faults["seat"])) == unlucky(t, 11)
    assert set(faults["kind"]) == {"timeout"}
    assert faults["message"].str.contains("hung").all()
    assert out.worker_losses == 2 * len(faults)


@pytest.mark.slow
@pytest.mark.process
def test_a_hung_in_process_bot_under_a_bank_is_caught_at_its_bank_and_margin(tmp_path, faulty):
    # a bank and no move limit: the hang timeout (here 60 s) is no bound of a decision, but
    # past what is left of its bank plus its margin a decision forfeits whatever it returns
    t = prepare(faulty, bots="hanger,random", games=12, seed=1, time_control="0.3+0")
    assert len(unlucky(t, 11)) == 1
    out = run_tournament(t, tmp_path, faulty, workers=2, hang_timeout=60.0,
                         play=PlaySettings(margin=0.2))
    assert out.complete and out.worker_losses == 2
    faults = load_faults(tmp_path)
    assert set(zip(faults["game"], faults["seat"])) == unlucky(t, 11)
    assert list(faults["kind"]) == ["timeout"] and faults["message"].str.contains("hung").all()
    # each time caught after what was left of its 0.3 s bank, its 0.2 s margin and 2 s
    waits = [float(re.search(r"no progress for ([0-9.]+) s", note).group(1))
             for note in out.notes if "hung" in note]
    assert len(waits) == 2 and all(2.2 < w <= 2.5 for w in waits), out.notes



@pytest.mark.process
def test_a_bot_of_several_files_plays_in_every_worker(tmp_path):
    import shutil
    from pathlib import Path

    examples = Path(__file__).resolve().parents[2] / "examples" / "bundle"
    folder = shutil.copytree(examples, tmp_path / "bundle")
    registry = BotRegistry([folder], env=False, cwd=False, entry_points=False)
    shutil.rmtree(folder)  # the workers get the module, its package and its weights as shipped
    t = prepare(registry, bots="terrain-taster,random", players="2", games=8, seed=2)
    out = run_tournament(t, tmp_path / "t", registry, workers=2)
    assert out.complete and load_faults(tmp_path / "t").empty
    assert set(load_results(tmp_path / "t")["entrant"]) == {"terrain-taster", "random"}


def test_a_worker_stops_on_code_other_than_the_store_recorded():
    from pathlib import Path

    from kdtourney.service.worker import check_loaded

    examples = Path(__file__).resolve().parents[2] / "examples" / "bundle"
    registry = BotRegistry([examples], env=False, cwd=False, entry_points=False)
    t = prepare(registry, bots="terrain-taster,random", games=2, seed=1)
    recorded = {label: registry.identity(spec) for label, spec in zip(t.entrants, t.specs)}
    check_loaded(registry, t, recorded, "here")  # the same code: nothing to say
    other = dict(recorded["terrain-taster"], source_sha256="0" * 64, digest="abcdef123456")
    with pytest.raises(ArenaError) as err:
        check_loaded(registry, t, dict(recorded, **{"terrain-taster": other}), "m1 (worker 0)")
    assert str(err.value) == (
        f"terrain-taster on m1 (worker 0): the bot loaded there is not the code the store "
        f"recorded (digest {recorded['terrain-taster']['digest']} there, abcdef123456 recorded; "
        "differs in source_sha256): give every machine the same bot")
