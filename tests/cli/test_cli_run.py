"""`kdtourney run`, `replay` and `export` from the command line: resume after kill -9, bad input."""

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from arena_support import (
    MINE,
    assert_same_store,
    comparable,
    dawdler,
    snapshot,
    write_bot,
    write_faulty_bots,
)
from click.testing import CliRunner
from kdtp_support import write_fake_bots

from kdtourney.cli import main
from kdtourney.engine import Game
from kdtourney.engine.tiles import TILES
from kdtourney.report.html import build_context
from kdtourney.store import load_config, load_faults, load_games, load_results
from kdtourney.tournament.definition import Tournament

KDTOURNEY = str(Path(sys.executable).parent / "kdtourney")


def run(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A finished small tournament."""
    folder = tmp_path_factory.mktemp("cli") / "small"
    result = run("run", "--bots", "random,greedy", "--players", "2,4", "--games", "10", "--seed",
                 "8", "--out", folder, "--workers", "1")
    assert result.exit_code == 0, result.output
    return folder, result


@pytest.mark.process
def test_run_output_and_store(small):
    folder, result = small
    lines = result.stdout.splitlines()
    assert "random vs greedy (round-robin, 2/4-player): 12 games in 4 blocks (--games 10 rounded " \
           "up to whole blocks), seed 8" in lines[0]
    assert any("standings" in line for line in lines)
    assert lines[-1] == f"{folder / 'index.html'}: 12 games" and (folder / "index.html").is_file()
    assert len(lines) < 20  # not a terminal: a few lines, no live progress
    cfg = load_config(folder)
    assert cfg["tournament"]["seed"] == 8 and cfg["tournament"]["entrants"] == ["random", "greedy"]
    meta = cfg["meta"]
    assert {"kdtourney", "python", "numba", "platform", "command", "created",
            "updated"} <= set(meta)
    assert len(load_results(folder)) == 2 * (2 * 2) + 2 * (4 * 4)  # blocks of 2 and 4 games
    assert len(load_games(folder)) == 12


@pytest.mark.process
def test_terminal_standings_show_the_report_pages_figures(small):
    folder, result = small
    table = result.stdout.split("standings", 1)[1].splitlines()
    printed = {line.split()[0]: line for line in table
               if line.split() and line.split()[0] in ("random", "greedy")}
    page = build_context(folder)["standings"]
    assert [row["name"] for row in page] == list(printed)  # the same order, strongest first
    for row in page:
        line = printed[row["name"]]
        assert (f"{row['win_share']:.3f} [{row['win_share_lo']:.2f}, "
                f"{row['win_share_hi']:.2f}]") in line
        assert f"{row['elo']:+.0f} [{row['elo_lo']:+.0f}, {row['elo_hi']:+.0f}]" in line


@pytest.mark.process
def test_report_prints_the_standings_as_run_does(small):
    folder, ran = small
    result = run("report", folder)
    assert result.exit_code == 0, result.output
    table = result.stdout.split("standings", 1)[1].strip().splitlines()
    printed = ran.stdout.split("standings", 1)[1].strip().splitlines()[:len(table) - 1]
    assert table[:-1] == printed and table[-1] == str(folder / "index.html")


@pytest.mark.process
def test_same_command_again_plays_nothing(small):
    folder, _ = small
    before = comparable(folder)
    # without --seed, an existing --out keeps its stored seed: the same command resumes
    result = run("run", "--bots", "random,greedy", "--players", "2,4", "--games", "10", "--out",
                 folder, "--quiet", "--no-report")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"{folder}: 12 games (0 played now)"
    after = comparable(folder)
    for table in before:
        pd.testing.assert_frame_equal(before[table], after[table])
    assert load_config(folder)["meta"]["sessions"] == 2


@pytest.mark.process
def test_replay(small):
    folder, _ = small
    result = run("replay", folder, 2)
    assert result.exit_code == 0, result.output
    text = result.stdout
    games = load_games(folder)
    moves = games.loc[games["game"] == 2, "moves"].iloc[0].count(",") + 1
    assert text.count("\nround ") == moves
    assert "claim #" in text and "place #" in text
    n = int(games.loc[games["game"] == 2, "n_players"].iloc[0])
    assert text.count(" points (territories ") == n
    assert text.count(" C") + text.count("C ") >= n  # every kingdom shows its castle
    assert "result: seat 1 " in text and "seat 0" not in text  # seats from 1
    bad = run("replay", folder, 99)
    assert bad.exit_code == 2 and bad.stderr.strip() == \
        f"Error: game 99 is not in {folder} (12 games stored, numbered from 0)"


@pytest.mark.process
def test_replay_steps_through_the_positions_the_engine_reached(small):
    folder, _ = small
    game = 5  # a 4-player game
    row = load_games(folder).set_index("game").loc[game]
    moves = json.loads(row["moves"])
    # Enter, Enter, back, a move's number, something else, then quit
    result = CliRunner().invoke(main, ["replay", str(folder), str(game), "--step"],
                                input="\n\nb\n40\nxx\nq\n")
    assert result.exit_code == 0, result.output
    shown = [int(m) for m in re.findall(r"^move (\d+) of (?:\d+)", result.stdout, re.M)]
    assert shown == [0, 1, 2, 1, 40, 40]
    assert f"move 0 of {len(moves)}: start" in result.stdout
    assert "'xx': give Enter, b, q or a move from 0" in result.stdout
    # the position after move 40 is the engine's: its rows, scores and kingdoms
    game_40 = Game.replay(Tournament.from_dict(load_config(folder)["tournament"]).rules_for(4),
                          json.loads(row["deal_seeds"])[0], moves[:40])
    frame = result.stdout.split(f"move 40 of {len(moves)}")[1].split("Enter: next")[0]
    assert "placing: " + ", ".join(
        f"{TILES[d]} seat {o + 1}" + (" placed" if p else "")
        for (d, o), p in zip(game_40.current_row, game_40.placed)) in frame
    points = re.findall(r"(\d+) points", frame)
    assert [int(p) for p in points] == game_40.scores()
    # to the end: Enter past the last position ends it, as does the end of the input
    result = CliRunner().invoke(main, ["replay", str(folder), str(game), "--step"],
                                input=f"{len(moves)}\n\n")
    assert result.exit_code == 0 and "result: seat 1 " in result.stdout
    assert run("replay", folder, game, "--step").exit_code == 0  # no input at all


@pytest.mark.process
def test_replay_writes_a_page_of_one_game(small, tmp_path):
    folder, _ = small
    result = run("replay", folder, 3, "--html")
    assert result.exit_code == 0, result.output
    path = Path(result.stdout.strip())
    assert path == folder / "game-3.html"
    page = path.read_text()
    data = json.loads(re.search(r'id="replay-data">(.*?)</script>', page, re.S).group(1))
    assert [g[0] for g in data["games"]] == [3] and "Game 3 of small" in page
    result = run("replay", folder, 3, "--html", "--out", tmp_path / "three.html")
    assert result.exit_code == 0 and (tmp_path / "three.html").exists()
    for args, error in [((99, "--html"), f"game 99 is not in {folder} (12 games stored, "
                                         "numbered from 0)"),
                        ((3, "--html", "--step"), "--step shows the game here, --html writes "
                                                  "its page: give one"),
                        ((3, "--out", "x.html"), "--out is the file of --html's page: add --html")]:
        result = run("replay", folder, *args)
        assert result.exit_code == 2 and result.stderr.strip() == f"Error: {error}"


@pytest.mark.process
def test_export(small, tmp_path):
    folder, _ = small
    result = run("export", folder, "--format", "csv", "-o", tmp_path / "r.csv")
    assert result.exit_code == 0 and result.stdout.strip().endswith("rows (results)")
    # both numberings named: the store's seats from 0, the pages' from 1
    assert result.stderr.startswith("note: its column seat counts from 0, as the store does; "
                                    "the report, replays and the play page count seats from 1")
    csv = pd.read_csv(tmp_path / "r.csv")
    stored = load_results(folder)
    assert csv.shape == stored.shape and csv["score"].tolist() == stored["score"].tolist()
    result = run("export", folder, "-o", tmp_path / "g.parquet", "--table", "games")
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith("note: its column error names seats from 1, as the report")
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "g.parquet"), load_games(folder))


@pytest.mark.process
def test_export_never_writes_over_a_store_nor_guesses_a_format(small, tmp_path):
    folder, _ = small
    store = folder / "tournament.sqlite"
    before = store.read_bytes()
    cases = [(["-o", store, "--format", "csv"], "is an SQLite database (a tournament's store?)"),
             (["-o", tmp_path / "r.json"], "cannot tell the format of "),
             (["-o", tmp_path / "results"], "cannot tell the format of ")]
    for args, message in cases:
        result = run("export", folder, *args)
        assert result.exit_code == 2 and result.stderr.startswith("Error: "), result.output
        assert message in result.stderr and result.stderr.count("\n") == 1
    assert store.read_bytes() == before and load_results(folder) is not None


def wait_for_games(path, at_least, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
            try:
                n = conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
            finally:
                conn.close()
            if n >= at_least:
                return n
        except sqlite3.Error:
            pass
        time.sleep(0.02)
    raise AssertionError(f"fewer than {at_least} games after {timeout} s")


@pytest.mark.slow
@pytest.mark.process
def test_kill_9_then_resume_equals_an_uninterrupted_run(tmp_path):
    args = ["run", "--bots", "random,greedy,random", "--players", "2,3", "--games", "400",
            "--seed", "99"]
    killed = tmp_path / "killed"
    proc = subprocess.Popen([KDTOURNEY, *args, "--out", str(killed), "--workers", "2", "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        wait_for_games(killed / "tournament.sqlite", 25)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    stored = len(load_games(killed))
    assert 25 <= stored < 400
    result = run("run", "--resume", killed, "--quiet", "--workers", "2", "--no-report")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"{killed}: 400 games ({400 - stored} played now)"
    whole = run(*args, "--out", tmp_path / "whole", "--workers", "1", "--quiet", "--no-report")
    assert whole.exit_code == 0, whole.output
    assert_same_store(killed, tmp_path / "whole")


@pytest.mark.process
def test_faulty_bots_from_a_folder(tmp_path):
    bots = write_faulty_bots(tmp_path / "bots")
    result = run("run", "--bots", "raiser,random,illegal", "--games", "12", "--seed", "1",
                 "--bots-dir", bots, "--out", tmp_path / "t", "--workers", "2", "--no-report")
    assert result.exit_code == 0, result.output
    assert "faults" in result.stdout
    results = load_results(tmp_path / "t")
    assert results["fault"].any()
    assert (results.loc[results["fault"], "rank"] == 2).all()
    # --resume finds the bots folder again from the store
    again = run("run", "--resume", tmp_path / "t", "--quiet", "--no-report")
    assert again.exit_code == 0, again.output


BAD = [
    (["--bots", "random,nobot"], "unknown bot 'nobot'"),
    (["--bots", "greddy,random"], "unknown bot 'greddy' (did you mean 'greedy'?); available: "),
    (["--bots", "random:depth=3,greedy"], "random has no parameter 'depth'"),
    (["--bots", "mcts:c=1e999,greedy"], "parameter c expects a finite number"),
    (["--bots", "random,greedy", "--variant", "duel", "--players", "4"],
     "impossible rules: the duel variant"),
    (["--bots", "random,greedy", "--players", "5"], "a table has 2, 3 or 4 players"),
    (["--bots", "random,greedy", "--first-picks", "abba", "--players", "3"], "impossible rules"),
    (["--bots", "random,greedy", "--tiebreak", "coin"], "impossible rules: tiebreak must be"),
    (["--bots", "random,greedy", "--bots-dir", "/no/such/folder"], "does not exist"),
    (["--bots", "random,greedy", "--games", "0"], "--games must be positive"),
    (["--bots", "random,greedy", "--games", "-5"], "--games must be positive"),
    (["--bots", "random,greedy", "--games", "many"], "--games expects an integer"),
    (["--bots", "random,greedy", "--workers", "0"], "--workers must be positive"),
    (["--bots", "random,greedy", "--workers", "-2"], "--workers must be positive"),
    (["--bots", "random,greedy", "--move-time-limit", "0"], "--move-time-limit must be positive"),
    (["--bots", "random,greedy", "--move-time-limit", "inf"], "--move-time-limit must be a finite"),
    (["--bots", "random,greedy", "--move-time-margin", "nan"],
     "--move-time-margin must be a finite"),
    (["--bots", "random,greedy", "--games", "99999999999999999999"], "--games must be at most"),
    (["--bots", "mcts:c=-1,greedy"], "mcts:c=-1.0: c must be a number >= 0.0, not -1.0"),
    (["--bots", "mcts:iterations=0,greedy"], "mcts:iterations=0: iterations must be a positive"),
    (["--bots", "random"], "at least two entrants"),
    (["--lineup", "random,greedy", "--bots", "random"], "--lineup fixes the table"),
    (["--lineup", "random,greedy", "--players", "4"], "the lineup has 2 seats"),
    ([], "no entrants"),
    (["--bots", "linear-rl:weights=/no/such.npz,random", "--bots-dir",
      str(Path(__file__).resolve().parents[2] / "examples" / "rl" / "bots")],
     "linear-rl:weights=/no/such.npz: FileNotFoundError: /no/such.npz not found"),
]


@pytest.mark.parametrize("args,message", BAD, ids=[" ".join(a) or "nothing" for a, _ in BAD])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, message):
    result = run("run", *args, "--out", tmp_path / "t")
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("Error: ") and message in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output
    assert not (tmp_path / "t").exists()


@pytest.mark.process
def test_bad_stores_and_other_tournaments_are_refused_and_kept(small, tmp_path):
    folder, _ = small
    before = snapshot(folder)
    other = tmp_path / "other"
    other.mkdir()
    (other / "tournament.sqlite").write_bytes(b"garbage, not SQLite " * 200)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    with sqlite3.connect(foreign / "tournament.sqlite") as conn:
        conn.execute("CREATE TABLE people (name TEXT)")
    conn.close()
    cases = [
        (["--resume", other], "corrupt or not an SQLite database"),
        (["--resume", foreign], "not a kdtourney tournament"),
        (["--resume", tmp_path / "nothing"], "no tournament in"),
        (["--bots", "random,greedy", "--out", other], "corrupt or not an SQLite database"),
        (["--bots", "random,greedy", "--out", foreign, "--seed", "1"],
         "not a kdtourney tournament"),
        (["--bots", "random,greedy", "--players", "2,4", "--games", "20", "--out", folder],
         "holds another tournament: games: 10 (stored) vs 20 (now)"),
        (["--bots", "random,mce", "--players", "2,4", "--games", "10", "--out", folder],
         "holds another tournament: entrants: random,greedy (stored) vs random,mce (now)"),
        (["--resume", folder, "--bots", "random,greedy"],
         "--resume DIR plays the stored tournament"),
    ]
    garbage = (other / "tournament.sqlite").read_bytes()
    for args, message in cases:
        result = run("run", *args, "--quiet")
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.startswith("Error: ") and message in result.stderr, result.stderr
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.output
    assert snapshot(folder) == before
    assert (other / "tournament.sqlite").read_bytes() == garbage
    assert sorted(p.name for p in foreign.iterdir()) == ["tournament.sqlite"]
    for args in (["export", other, "-o", tmp_path / "x.csv"], ["replay", foreign, "0"]):
        result = run(*args)
        assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output


@pytest.mark.process
def test_bots_in_their_own_process_are_checked_before_anything(tmp_path):
    folder = write_fake_bots(tmp_path / "bots", ["exit-at-start", "no-hello"])
    (folder / "broken.toml").write_text('name = "broken"\n')
    cases = [
        (["--bots", "broken,random"], "unknown bot 'broken'; available: "),
        (["--bots", "broken,random"], "broken.toml is not a bot file: no command"),
        (["--bots", "exit-at-start,random"], "exit-at-start.toml: the bot exited with status 3 "
                                             "(while asked for hello) (stderr: cannot start: no "
                                             "configuration)"),
        (["--bots", "no-hello,random", "--startup-timeout", "1"],
         "no-hello.toml: the bot did not answer hello within the start-up timeout of 1 s"),
        (["--bots", "random,greedy", "--startup-timeout", "0"],
         "--startup-timeout must be positive"),
        (["--bots", "random,greedy", "--move-time-margin", "-1"],
         "--move-time-margin must not be negative"),
    ]
    for args, message in cases:
        result = run("run", *args, "--bots-dir", folder, "--out", tmp_path / "t")
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.startswith("Error: ") and message in result.stderr, result.stderr
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.output
        assert not (tmp_path / "t").exists()


@pytest.mark.process
def test_changed_bot_code_refuses_to_resume_and_export_shows_identities(tmp_path):
    bots = write_bot(tmp_path / "bots", "mine", MINE)
    folder = tmp_path / "t"
    args = ["run", "--bots", "mine,random", "--games", "4", "--seed", "2", "--bots-dir", bots,
            "--out", folder, "--workers", "1", "--quiet", "--no-report"]
    assert run(*args).exit_code == 0
    exported = run("export", folder, "--table", "entrants", "-o", tmp_path / "e.csv")
    assert exported.exit_code == 0, exported.output
    entrants = pd.read_csv(tmp_path / "e.csv")
    assert entrants["entrant"].tolist() == ["mine", "random"]
    assert entrants["digest"].str.len().eq(12).all() and entrants["digest"].nunique() == 2
    assert '"origin": "built-in"' in entrants["identity"][1]
    assert load_config(folder)["kdtourney_version"]
    before = snapshot(folder)
    (bots / "mine.py").write_text(MINE + "\n\ndef helper():\n    return 1\n")
    for again in (args, ["run", "--resume", folder, "--quiet", "--no-report"]):
        result = run(*again)
        assert result.exit_code == 2, result.output
        assert result.stderr.count("\n") == 1 and result.stderr.startswith(
            f"Error: mine ({(bots / 'mine.py').resolve()}): its code changed since the games "
            f"stored in {folder} (source_sha256 "), result.stderr
        assert snapshot(folder) == before
    (bots / "mine.py").write_text(MINE)  # the code that played: the run goes on
    assert run(*args).exit_code == 0


@pytest.mark.process
def test_a_store_from_before_identities_resumes_and_records_them(tmp_path):
    folder = tmp_path / "old"
    args = ["run", "--bots", "random,greedy", "--games", "8", "--seed", "3", "--out", folder,
            "--workers", "1", "--no-report"]
    assert run(*args, "--quiet").exit_code == 0
    with sqlite3.connect(folder / "tournament.sqlite") as conn:  # as an older kdtourney left it
        conn.execute("DROP TABLE entrants")
        conn.execute("DELETE FROM config WHERE key = 'kdtourney_version'")
        for table in ("results", "faults", "games"):
            conn.execute(f"DELETE FROM {table} WHERE game >= 4")
    conn.close()
    unknown = run("export", folder, "--table", "entrants", "-o", tmp_path / "e.csv")
    assert unknown.exit_code == 0 and pd.read_csv(tmp_path / "e.csv")["digest"].isna().all()
    result = run(*args)
    assert result.exit_code == 0, result.output
    assert "the code of its 4 stored games is unknown" in result.stdout
    assert load_config(folder)["meta"]["entrants_recorded_after"] == 4
    from kdtourney.store import load_entrants
    assert load_entrants(folder)["digest"].str.len().eq(12).all()


@pytest.mark.slow
@pytest.mark.process
def test_a_folder_in_use_is_refused_and_a_killed_run_leaves_no_lock(tmp_path):
    bots = write_bot(tmp_path / "bots", "dawdler", dawdler(0.005))
    folder = tmp_path / "t"
    args = ["run", "--bots", "dawdler,random", "--games", "40", "--seed", "5", "--bots-dir",
            str(bots), "--workers", "1", "--out", str(folder), "--no-report"]
    proc = subprocess.Popen([KDTOURNEY, *args, "--quiet"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for_games(folder / "tournament.sqlite", 1)
        second = run(*args)
        assert proc.poll() is None, "the first run ended: make its games slower"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert second.exit_code == 2, second.output
    assert second.stderr == (f"Error: {folder} is in use: another kdtourney run (process "
                             f"{proc.pid}) is playing into it; wait for it to end, or choose "
                             "another --out\n")
    assert (folder / "tournament.lock").exists()  # left by the killed run, and not in the way
    stored = len(load_games(folder))
    resumed = run(*args, "--quiet")
    assert resumed.exit_code == 0, resumed.output
    assert resumed.stdout.strip() == f"{folder}: 40 games ({40 - stored} played now)"


@pytest.mark.slow
@pytest.mark.process
def test_failed_games_show_per_entrant_in_the_standings_and_the_report(tmp_path):
    bots = write_faulty_bots(tmp_path / "bots")
    folder = tmp_path / "t"
    # game 2 kills its worker after the game, outside any bot call: after players + 2 = 4 losses
    # it is stored as failed
    result = run("run", "--bots", "vanisher,random", "--games", "8", "--seed", "19", "--bots-dir",
                 bots, "--out", folder, "--workers", "2")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[-1] == f"{folder / 'index.html'}: 8 games, 1 failed"
    assert "note: worker 0 died (exit code 4) in game 2; stored as a failed game" in lines or \
        "note: worker 1 died (exit code 4) in game 2; stored as a failed game" in lines
    table = lines[next(i for i, line in enumerate(lines) if line.lstrip().startswith("entrant")):]
    assert table[0].split()[-1] == "failed"
    for name in ("vanisher", "random"):
        row = next(line for line in table if line.lstrip().startswith(name + " "))
        assert row.split()[-1] == "1", row
    faults = load_faults(folder)  # who sat there; no result, whoever was at fault
    assert faults[["game", "seat", "entrant", "kind"]].values.tolist() == \
        [[2, 0, "vanisher", "failed"], [2, 1, "random", "failed"]]
    games = load_games(folder)
    assert games.loc[games["game"] == 2, "status"].item() == "fault"
    assert 2 not in set(load_results(folder)["game"])
    page = (folder / "index.html").read_text()
    assert "0 forfeits and 1 failed game, in 1 game." in page
    assert page.count('<td class="num" data-sort="1"><span class="bad">1</span></td>') == 2


@pytest.mark.process
def test_a_toml_bot_is_identified_by_what_it_runs(tmp_path):
    folder = write_fake_bots(tmp_path / "bots", ["first-legal"], at=-1)
    out = tmp_path / "t"
    args = ["run", "--bots", "first-legal,random", "--games", "2", "--seed", "1", "--bots-dir",
            folder, "--out", out, "--workers", "1", "--quiet", "--no-report"]
    assert run(*args).exit_code == 0
    from kdtourney.store import load_entrants
    identity = load_entrants(out).set_index("entrant")["identity"]["first-legal"]
    assert (identity["kind"], identity["bot_name"], identity["bot_version"]) == \
        ("kdtp", "fake-first-legal", "0.1")
    script = folder / "_fake_bot.py"
    script.write_text(script.read_text() + "\n# a change\n")
    result = run(*args)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
    assert result.stderr.startswith(f"Error: first-legal ({folder / 'first-legal.toml'}): its code "
                                    f"changed since the games stored in {out} (files_sha256 ")


# --- game clocks and play settings ------------------------------------------------------------

SLOW_START = '''
import time

from kdtourney.bots.random_bot import RandomBot


class SlowStart(RandomBot):
    """Random; 0.4 s on its first decision of a game, 0.05 s on the others."""
    name = "slow-start"

    def setup(self, seat, rules, seed):
        super().setup(seat, rules, seed)
        self.first = True

    def act(self, view):
        time.sleep(0.4 if self.first else 0.05)
        self.first = False
        return super().act(view)
'''


@pytest.mark.slow
@pytest.mark.process
def test_time_control_forfeits_on_an_empty_bank_and_grants_the_first_decision(tmp_path):
    bots = write_bot(tmp_path / "bots", "slow_start", SLOW_START)
    common = ["run", "--bots", "slow-start,random", "--games", "2", "--seed", "4", "--bots-dir",
              bots, "--workers", "1", "--quiet", "--move-time-margin", "0.1"]
    # a 0.3 s bank: the first decision (0.4 s) is over it
    result = run(*common, "--time-control", "0.3+0", "--out", tmp_path / "bank")
    assert result.exit_code == 0, result.output
    faults = load_faults(tmp_path / "bank")
    assert faults["entrant"].eq("slow-start").all() and faults["kind"].eq("time").all()
    assert len(faults) == 2 and faults["call"].eq(2).all()  # its first decision, every game
    tournament = load_config(tmp_path / "bank")["tournament"]
    assert tournament["clock"] == {"bank_s": 0.3, "increment_s": 0.0, "first_move_s": None}
    page = build_context(tmp_path / "bank")
    assert page["time_forfeits"] == {"slow-start": 2}
    assert page["clock_text"] == "clock: 0.3+0 s a game"
    # a first-decision allowance of 1 s, then 0.05 s a decision from a 0.3+0.1 bank: no forfeit
    result = run(*common, "--time-control", "0.3+0.1", "--first-move-time", "1",
                 "--out", tmp_path / "first")
    assert result.exit_code == 0, result.output
    assert load_faults(tmp_path / "first").empty
    # a move limit of 0.2 s with the same allowance: also none; without it, a timeout at once
    assert run(*common, "--move-time-limit", "0.2", "--first-move-time", "1",
               "--out", tmp_path / "move").exit_code == 0
    assert load_faults(tmp_path / "move").empty
    assert run(*common, "--move-time-limit", "0.2", "--out", tmp_path / "bare").exit_code == 0
    assert load_faults(tmp_path / "bare")["kind"].eq("timeout").all()


@pytest.mark.parametrize("args,message", [
    (["--time-control", "10+"], "--time-control expects BANK+INCREMENT in seconds, e.g. 10+0.1, "
                                "not '10+'"),
    (["--time-control", "0+1"], "--time-control 0+1: the bank must be positive and the "
                                "increment not negative"),
    (["--first-move-time", "1"], "--first-move-time needs --move-time-limit or --time-control"),
    (["--first-move-time", "0", "--time-control", "1"],
     "--first-move-time must be positive, not 0")])
def test_bad_time_controls(tmp_path, args, message):
    result = run("run", "--bots", "random,greedy", "--out", tmp_path / "t", *args)
    assert result.exit_code == 2 and result.stderr == f"Error: {message}\n", result.output
    assert not (tmp_path / "t").exists()


@pytest.mark.slow
@pytest.mark.process
def test_resume_takes_the_stored_play_settings_and_refuses_others(tmp_path):
    folder = tmp_path / "t"
    args = ["run", "--bots", "random,greedy", "--games", "8", "--seed", "3", "--out", folder,
            "--workers", "1", "--quiet", "--no-report", "--time-control", "5+0.5"]
    assert run(*args, "--move-time-margin", "0.5").exit_code == 0
    assert load_config(folder)["play"] == {"isolate": False, "margin": 0.5, "sandbox": False,
                                           "bot_memory": 1024, "bot_cpus": 1.0,
                                           "sandbox_allow": [], "clock_rule": 2}
    before = snapshot(folder)
    for again, message in [
            (args + ["--move-time-margin", "0.3"],
             f"{folder} was played with --move-time-margin 0.5, not 0.3: one store holds games "
             "played one way; drop --move-time-margin to go on as stored, or play under a new "
             "--out"),
            (["run", "--resume", folder, "--isolate"],
             f"{folder} was played with --isolate off, not on:"),
            (["run", "--resume", folder, "--sandbox"],
             f"{folder} was played with --sandbox off, not on:"),
            (["run", "--resume", folder, "--time-control", "5+1"],
             "--resume DIR plays the stored tournament: drop --time-control"),
            (args[:-1] + ["6+0.5"], f"{folder} holds another tournament: clock.bank_s: 5.0 "
                                    "(stored) vs 6.0 (now)")]:
        result = run(*again)
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith(f"Error: {message}") and result.stderr.count("\n") == 1, \
            result.stderr
        assert snapshot(folder) == before
    # the same command without the margin, and --resume, go on with the stored one
    assert run(*args).exit_code == 0 and run("run", "--resume", folder, "-q").exit_code == 0
    assert load_config(folder)["play"] == {"isolate": False, "margin": 0.5, "sandbox": False,
                                           "bot_memory": 1024, "bot_cpus": 1.0,
                                           "sandbox_allow": [], "clock_rule": 2}


def as_before_the_clock_rule(folder):
    """The store as a kdtourney that did not record its clock rule (rule 1) wrote it."""
    path = Path(folder) / "tournament.sqlite"
    with sqlite3.connect(path) as conn:
        [(text,)] = conn.execute("SELECT value FROM config WHERE key = 'play'")
        conn.execute("UPDATE config SET value = ? WHERE key = 'play'",
                     (text.replace(', "clock_rule": 2', ""),))
    conn.close()


@pytest.mark.slow
@pytest.mark.process
def test_a_folder_played_under_the_old_clock_rule_is_refused_and_still_reads(tmp_path):
    folder = tmp_path / "t"
    args = ["run", "--bots", "random,greedy", "--games", "4", "--seed", "3", "--out", folder,
            "--workers", "1", "--quiet", "--no-report"]
    assert run(*args, "--time-control", "5+0.5").exit_code == 0
    as_before_the_clock_rule(folder)
    assert "clock_rule" not in load_config(folder)["play"]
    before = snapshot(folder)
    for again in (["run", "--resume", folder], [*args, "--time-control", "5+0.5"]):
        result = run(*again)
        assert result.exit_code == 2 and result.stderr == (
            f"Error: {folder} was played under clock rule 1 (the margin forgiven on every "
            "decision); this kdtourney plays rule 2 (one margin per game) and cannot go on with "
            "its games: play under a new --out (the stored games still read: report, "
            "ratings)\n"), result.output
        assert snapshot(folder) == before
    # what a user reads of it is unchanged
    assert run("report", folder).exit_code == 0
    assert run("replay", folder, "1").exit_code == 0
    assert run("export", folder, "-o", tmp_path / "r.csv").exit_code == 0
    assert run("ratings", folder, "--out", tmp_path / "ratings").exit_code == 0
    # without a clock the rule changed nothing: such a folder goes on
    plain = tmp_path / "plain"
    assert run(*args[:-2], "--out", plain, "--no-report").exit_code == 0
    as_before_the_clock_rule(plain)
    assert run("run", "--resume", plain, "-q").exit_code == 0
    assert load_config(plain)["play"]["clock_rule"] == 2


@pytest.mark.process
def test_a_bots_data_is_its_code_on_resume(tmp_path):
    import shutil

    bots = shutil.copytree(Path(__file__).resolve().parents[2] / "examples" / "bundle",
                           tmp_path / "bots")
    folder = tmp_path / "t"
    args = ["run", "--bots", "terrain-taster,random", "--games", "4", "--seed", "2", "--bots-dir",
            bots, "--out", folder, "--workers", "1", "--quiet", "--no-report"]
    assert run(*args).exit_code == 0
    before = snapshot(folder)
    (bots / "weights.json").write_text('{"W": 9, "F": 1, "L": 1, "G": 1, "S": 1, "M": 1}')
    result = run("run", "--resume", folder, "--quiet", "--no-report")
    assert result.exit_code == 2 and result.stderr.startswith(
        f"Error: terrain-taster ({(bots / 'terrain_taster.py').resolve()}): its code changed since "
        f"the games stored in {folder} (source_sha256 "), result.output
    assert snapshot(folder) == before


@pytest.mark.parametrize("args, message", [
    (["run", "--nosuch"], "No such option '--nosuch'"),
    (["export"], "Missing argument 'DIR'"),
    (["nosuchcmd"], "No such command 'nosuchcmd'"),
    (["run", "--games", "abc"], "--games expects an integer, not 'abc'"),
])
def test_usage_errors_are_one_line(args, message):
    result = run(*args)
    assert result.exit_code == 2 and result.stderr.startswith(f"Error: {message}"), result.stderr
    assert result.stderr.count("\n") == 1 and "Usage:" not in result.output


@pytest.mark.process
def test_a_name_is_not_a_path_and_a_page_that_cannot_be_written_is_one_line(small, tmp_path,
                                                                         monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in (".", "..", "../elsewhere", "a/b"):
        result = run("run", "--bots", "random,greedy", "--games", "2", "--name", name, "-q")
        assert result.exit_code == 2 and "names a folder of reports/, not a path" in result.stderr
    assert not (tmp_path / "reports").exists() and not (tmp_path.parent / "elsewhere").exists()
    folder, _ = small
    page = tmp_path / "copy"
    shutil.copytree(folder, page)
    (page / "index.html").unlink(missing_ok=True)
    (page / "index.html").mkdir()
    result = run("report", page)
    assert result.exit_code == 2 and result.stderr.startswith(f"Error: cannot write the report "
                                                              f"into {page}: ")
    assert result.stderr.count("\n") == 1


@pytest.mark.process
def test_rows_changed_by_hand_are_one_line_in_replay_and_report(small, tmp_path):
    folder, _ = small
    for table, change, command in [("games", "moves = '[1,2,'", ["replay", "{f}", "1"]),
                                   ("games", "moves = '[5,5,5]'", ["replay", "{f}", "1"]),
                                   ("games", "n_players = 9", ["replay", "{f}", "1"]),
                                   ("results", "score = 'abc'", ["report", "{f}"])]:
        damaged = tmp_path / f"damaged-{len(list(tmp_path.iterdir()))}"
        shutil.copytree(folder, damaged)
        conn = sqlite3.connect(damaged / "tournament.sqlite")
        conn.execute(f"UPDATE {table} SET {change} WHERE game = 1")
        conn.commit()
        conn.close()
        result = run(*[a.format(f=damaged) for a in command])
        assert result.exit_code == 2 and result.stderr.startswith("Error: "), result.output
        assert result.stderr.count("\n") == 1, result.stderr
