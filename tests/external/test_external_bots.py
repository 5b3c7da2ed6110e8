"""Tournaments with bots in their own process: misbehaving bots forfeit and the run goes on,
nothing is left running whatever happens, and a deterministic bot gives the same store in
process, isolated, or as a command."""

import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from arena_support import comparable, default_ctrl_c, interrupt_when, wait_stored
from kdtp_support import (
    left_behind,
    new_marker,
    our_zombies,
    processes_with,
    still_running,
    write_fake_bots,
)

from kdtourney.commands.run import run_tournament
from kdtourney.external import LOG_BYTES, Sandbox
from kdtourney.match.settings import PlaySettings
from kdtourney.registry import BotRegistry
from kdtourney.report.html import write_report
from kdtourney.store import load_faults, load_games, load_results
from kdtourney.tournament.definition import prepare

pytestmark = pytest.mark.process

KDTOURNEY = str(Path(sys.executable).parent / "kdtourney")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

MISBEHAVING = {  # behaviour: (fault kind, what the message says)
    "exit-mid-game": ("crash", "exited with status 1 (while asked for act)"),
    "non-json": ("protocol", "answered act with not JSON: 'I place my domino at the top left'"),
    "not-action": ("protocol", 'answered act with {"type": "move", '),
    "illegal": ("illegal", 'answered {"claim":99}, not one of the '),
    "late": ("timeout", "no answer to act within its 1.000 s + 1 s margin"),
    "never": ("timeout", "no answer to act within its 1.000 s + 1 s margin"),
    "huge-line": ("protocol", "answered act with a line longer than 1048576 bytes"),
    "deep-json": ("protocol", "answered act with JSON nested too deeply"),
    "close-stdout": ("crash", "closed its standard output (while asked for act)"),
    "child-holds-pipe": ("crash", "exited with status 0 (while asked for act)"),
}


def registry_of(folder):
    return BotRegistry([folder], env=False, cwd=False, entry_points=False)


@pytest.mark.slow
def test_misbehaving_bots_forfeit_and_the_tournament_completes(tmp_path):
    marker = new_marker()
    behaviours = [*MISBEHAVING, "flood"]
    registry = registry_of(write_fake_bots(tmp_path / "bots", behaviours, marker=marker, late=4.0))
    n = 2 * len(behaviours)  # a block of two games each
    t = prepare(registry, bots=behaviours, gauntlet="random", players="2", games=n, seed=1,
                move_time_limit=1.0)
    out = run_tournament(t, tmp_path / "t", registry, workers=2, play=PlaySettings(margin=1.0))
    assert out.complete and out.played == n and out.worker_losses == 0
    games = load_games(tmp_path / "t")
    assert sorted(games["game"]) == list(range(n)) and (games["status"] != "ok").sum() == n - 2
    faults = load_faults(tmp_path / "t")
    assert set(faults["entrant"]) == set(MISBEHAVING)  # flood: drained, never blocked, no fault
    for fault in faults.itertuples():
        kind, text = MISBEHAVING[fault.entrant]
        assert (fault.kind, fault.call) == (kind, 4), fault  # construction, setup, acts 0, 1, 2
        assert text in fault.message, fault
        assert "misbehaving: " + fault.entrant in fault.stderr, fault
    crashed = faults[faults["entrant"] == "exit-mid-game"].iloc[0]
    assert crashed.stderr.endswith("Traceback: something broke")
    results = load_results(tmp_path / "t")
    assert (results[results["fault"]]["rank"] == 2).all()
    logs = tmp_path / "t" / "logs"
    assert "] log: game " in (logs / "illegal.log").read_text()  # the bot's `log` messages
    assert (logs / "flood.log").stat().st_size < LOG_BYTES + 4096
    assert "a log keeps about 8 MiB" in (logs / "flood.log").read_text()[-300:]
    page = write_report(tmp_path / "t").read_text()
    assert "stderr, last lines" in page and "Traceback: something broke" in page
    assert left_behind(marker) == [] and our_zombies() == []


def test_a_bot_process_serves_game_after_game_and_a_failed_restart_forfeits(tmp_path):
    folder = write_fake_bots(tmp_path / "bots", ["crash-then-refuse"], at=3, games=[2])
    registry = registry_of(folder)
    t = prepare(registry, lineup="crash-then-refuse,random", games=6, seed=2)
    out = run_tournament(t, tmp_path / "t", registry, workers=1, warm=False)
    assert out.complete and out.played == 6
    faults = load_faults(tmp_path / "t")
    assert list(faults["game"]) == [2, 3, 4, 5] and list(faults["kind"]) == ["crash"] * 4
    assert "exited with status 1 (while asked for act)" in faults["message"][0]
    # it crashed in game 2 after leaving a file that makes every later start fail: each later
    # game forfeits at its setup (call 1), with the bot's reason
    assert list(faults["call"][1:]) == [1, 1, 1]
    assert all("exited with status 3 (while asked for hello)" in m for m in faults["message"][1:])
    assert all(s == "cannot start: no configuration" for s in faults["stderr"][1:])
    # one process played games 0 to 2 (the log prefixes each line with its pid); every restart
    # was a new one
    log = (tmp_path / "t" / "logs" / "crash-then-refuse.log").read_text().splitlines()
    pid = {int(line.split()[1]) for line in log if "] log: game " in line}
    refused = [int(line.split()[1]) for line in log
               if line.endswith("cannot start: no configuration")]
    assert [line.split()[3] for line in log if "cannot start" in line] == ["3]", "4]", "5]"]
    assert len(pid) == 1 and sum("] log: game " in line for line in log) == 3
    assert len(refused) == 3 and len(set(refused) | pid) == 4


def test_a_worker_killed_by_its_bot_leaves_nothing_running(tmp_path):
    marker = new_marker()
    registry = registry_of(write_fake_bots(tmp_path / "bots", ["kill-worker"], marker=marker,
                                           games=[0]))
    t = prepare(registry, lineup="kill-worker,random", games=2, seed=3)
    out = run_tournament(t, tmp_path / "t", registry, workers=1, warm=False)
    assert out.complete and out.worker_losses == 1  # game 0 killed its worker; played again
    assert load_faults(tmp_path / "t").empty and len(load_games(tmp_path / "t")) == 2
    # the bot's child kept running after its worker's death: the parent killed its group
    assert left_behind(marker) == [] and our_zombies() == []


def children(pid):
    """The pids of the processes whose parent is `pid`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and \
                    int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
        except OSError:
            pass
    return found


@pytest.mark.slow
@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill-9"])
def test_an_interrupted_run_leaves_nothing_running(tmp_path, how):
    marker = new_marker()
    folder = write_fake_bots(tmp_path / "bots", ["slow-with-child"], marker=marker, at=-1)
    out = tmp_path / "t"
    run = subprocess.Popen([KDTOURNEY, "run", "--bots-dir", str(folder), "--lineup",
                            "slow-with-child,random", "--games", "400", "--seed", "1",
                            "--workers", "1", "--out", str(out), "--no-report", "--quiet"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           preexec_fn=default_ctrl_c)
    try:
        wait_stored(run, out, 2, timeout=120)
        workers = children(run.pid)
        assert workers and processes_with(marker)
        run.send_signal(how)
        output, _ = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
    if how == signal.SIGINT:
        assert run.returncode == 130 and "interrupted: " in output
    # bots, their children and (killed parent: told by the parent-death signal) the workers
    assert left_behind(marker, wait=10) == []
    assert still_running(workers, wait=10) == []


@pytest.mark.slow
def test_ctrl_c_while_the_bots_are_checked_is_one_line_and_exit_130(tmp_path):
    """Before any game (a bot's start being checked): no "Aborted!" and exit 1, but the line and
    status of an interrupted command, and nothing left running."""
    marker = new_marker()
    folder = write_fake_bots(tmp_path / "bots", ["no-hello"], marker=marker)
    status, out, err = interrupt_when(
        [KDTOURNEY, "run", "--bots-dir", folder, "--lineup", "no-hello,random", "--games", 2,
         "--startup-timeout", 60, "--out", tmp_path / "t"],
        lambda: processes_with(marker))  # its start is being checked
    assert (status, err) == (130, "interrupted\n"), (out, err)
    assert left_behind(marker, wait=10) == []


@pytest.mark.slow
def test_the_same_store_in_process_isolated_and_as_a_command(tmp_path):
    registry = BotRegistry(env=False, cwd=False, entry_points=False)
    bots = "greedy,mcts:iterations=30,expectimax:iterations=10"
    t = prepare(registry, bots=bots, players="3", games=3, seed=5)
    run_tournament(t, tmp_path / "in", registry, workers=1)
    isolated = run_tournament(t, tmp_path / "iso", registry, workers=1,  # 3 bot processes, not 6
                              play=PlaySettings(isolate=True))
    assert isolated.complete and load_faults(tmp_path / "iso").empty
    same_store(tmp_path / "in", tmp_path / "iso")

    # mcts as an external command (kdtourney serve), its parameter a TOML option; interrupted
    # and resumed on another number of workers
    (tmp_path / "mcts-cmd.toml").write_text(
        f'name = "mcts-cmd"\ncommand = ["{sys.executable}", "-m", "kdtourney", "serve", "mcts"]\n'
        '[options]\niterations = 1000\n')
    external = BotRegistry([tmp_path], env=False, cwd=False, entry_points=False)
    e = prepare(external, bots="greedy,mcts-cmd:iterations=30,expectimax:iterations=10",
                players="3", games=3, seed=5)
    run_tournament(e, tmp_path / "cmd", external, workers=1)
    with sqlite3.connect(tmp_path / "cmd" / "tournament.sqlite") as conn:  # as after a kill
        for table in ("results", "faults", "games"):
            conn.execute(f"DELETE FROM {table} WHERE game IN (0, 2)")
    conn.close()
    assert run_tournament(e, tmp_path / "cmd", external, workers=2).played == 2
    same_store(tmp_path / "in", tmp_path / "cmd", rename=lambda e: e.replace("mcts", "mcts-cmd"))


def same_store(a, b, rename=lambda entrant: entrant):
    """Stores a and b hold the same games, a's entrants named by `rename`."""
    x, y = comparable(a), comparable(b)
    x["results"]["entrant"] = x["results"]["entrant"].map(rename)
    for table in x:
        pd.testing.assert_frame_equal(x[table], y[table], check_dtype=False, obj=table)


def example_registry(tmp_path, bot):
    """A registry with the example `bot` (the C one built into a temporary folder) and the Python
    example bots; skips when the example's toolchain is missing."""
    tool = {"c-greedy": "gcc", "js-greedy": "node"}[bot]
    if shutil.which(tool) is None:
        pytest.skip(f"the {bot} example needs {tool} on the PATH")
    folder = EXAMPLES / "js"
    if bot == "c-greedy":
        folder = tmp_path / "c"
        folder.mkdir()
        shutil.copy(EXAMPLES / "c" / "c-greedy.toml", folder)
        subprocess.run(["gcc", "-O2", "-o", str(folder / "greedy_bot"),
                        str(EXAMPLES / "c" / "greedy_bot.c")], check=True)
    return BotRegistry([folder, EXAMPLES / "bots"], env=False, cwd=False, entry_points=False)


@pytest.mark.parametrize("bot", ["c-greedy", "js-greedy"])
def test_the_c_and_javascript_examples_play_as_the_python_example(tmp_path, bot):
    registry = example_registry(tmp_path, bot)
    t = prepare(registry, lineup=f"{bot},random,random,random", games=8, seed=9)
    out = run_tournament(t, tmp_path / bot, registry, workers=1)
    assert out.complete and load_faults(tmp_path / bot).empty
    results = load_results(tmp_path / bot)
    mean = results.groupby("entrant")["score"].mean()
    assert mean[bot] > mean["random"] + 10  # best immediate score beats random play
    # one strategy in three languages: crown-grabber (examples/bots) makes the same moves
    python = prepare(registry, lineup="crown-grabber,random,random,random", games=8, seed=9)
    run_tournament(python, tmp_path / "py", registry, workers=1)
    assert list(load_games(tmp_path / bot)["moves"]) == list(load_games(tmp_path / "py")["moves"])


# A KDTP bot taking FIRST seconds on its first decision of each game and EACH on the others; it
# logs the time control it is told and the time it has for each of its first two decisions.
SLOW_START_KDTP = '''
import json, sys, time

first, each = float(sys.argv[1]), float(sys.argv[2])
asked = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "slow-start"}), flush=True)
    elif message["type"] == "game":
        asked = 0
        print("time", json.dumps(message["time"], sort_keys=True), file=sys.stderr, flush=True)
    elif message["type"] == "act":
        if asked < 2:
            print("left", message["time_left_s"], file=sys.stderr, flush=True)
        time.sleep(first if asked == 0 else each)
        asked += 1
        print(json.dumps({"type": "action", "action": message["legal"][0]}), flush=True)
    elif message["type"] == "quit":
        break
'''

SLOW_START_PY = '''
import time

from kdtourney.bots.random_bot import RandomBot


class SlowStartPy(RandomBot):
    """Random; 0.4 s on its first decision of a game, 0.05 s on the others."""
    name = "slow-start-py"

    def setup(self, seat, rules, seed):
        super().setup(seat, rules, seed)
        self.asked = 0

    def act(self, view):
        time.sleep(0.4 if self.asked == 0 else 0.05)
        self.asked += 1
        return super().act(view)
'''


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.parametrize("how", ["external", "isolated", "sandboxed"])
def test_clocks_for_bots_in_their_own_process(tmp_path, how):
    if how == "sandboxed" and shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not installed")
    bots = tmp_path / "bots"
    bots.mkdir()
    (bots / "_slow_start.py").write_text(SLOW_START_KDTP)
    (bots / "slow-start.toml").write_text(
        f'name = "slow-start"\ncommand = ["{sys.executable}", "_slow_start.py", "0.4", "0.05"]\n')
    (bots / "slow_start_py.py").write_text(SLOW_START_PY)
    registry = registry_of(bots)
    bot = "slow-start" if how == "external" else "slow-start-py"
    play = PlaySettings(isolate=how == "isolated", sandbox=how == "sandboxed", margin=0.1)

    def faults(name, **clock):
        t = prepare(registry, bots=[bot, "random"], games=2, seed=1, **clock)
        out = run_tournament(t, tmp_path / name, registry, workers=1, play=play)
        assert out.complete
        return load_faults(tmp_path / name)

    # an empty bank: the first decision (0.4 s) is over a 0.3 s bank, in every game
    empty = faults("bank", time_control="0.3+0")
    assert list(empty["kind"]) == ["time", "time"] and empty["entrant"].eq(bot).all()
    # cut by the harness ('within its 0.300 s + 0.1 s margin') or judged by the clock when it
    # answers ('0.300 s + 0.100 s left of its 0.1 s margin')
    assert empty["call"].eq(2).all() and empty["message"].str.contains(
        "0.300 s + 0.1", regex=False).all()
    # a first-decision allowance of 1 s, then 0.05 s a decision from a 0.3 + 0.1 bank: in time
    assert faults("first", time_control="0.3+0.1", first_move_time=1.0).empty
    # without the allowance, a move limit of 0.2 s cuts the first decision
    assert list(faults("move", move_time_limit=0.2)["kind"]) == ["timeout", "timeout"]
    if how == "external":  # what the bot was told: the time control, then its time per decision
        log = (tmp_path / "first" / "logs" / "slow-start.log").read_text()
        assert ('time {"bank_s": 0.3, "first_move_s": 1.0, "increment_s": 0.1, "move_s": null}'
                in log)
        lefts = [float(line.split("left ")[1]) for line in log.splitlines() if " left " in line]
        assert lefts[0] <= 1.0 and lefts[0] > 0.9 and 0.2 < lefts[1] <= 0.3


AIMED_AND_HONEST = '''
import time

from kdtourney.bots.base import Bot


class Aimed(Bot):
    """Takes what the clock allows it plus three quarters of the 0.5 s margin, every decision."""
    name = "aimed"

    def act(self, view):
        time.sleep(view.time_left + 0.375)
        return view.legal_actions()[0]


class Honest(Bot):
    """Spends 80% of what the clock allows it."""
    name = "honest"

    def act(self, view):
        time.sleep(0.8 * view.time_left)
        return view.legal_actions()[0]
'''


@pytest.mark.slow
def test_in_its_own_process_a_bot_aimed_at_the_margin_runs_out_and_an_honest_one_never(tmp_path):
    bots = tmp_path / "bots"
    bots.mkdir()
    (bots / "clocked.py").write_text(AIMED_AND_HONEST)
    registry = registry_of(bots)
    t = prepare(registry, bots=["aimed", "honest"], games=2, seed=1, time_control="0.3+0.05")
    out = run_tournament(t, tmp_path / "t", registry, workers=1,
                         play=PlaySettings(isolate=True, margin=0.5))
    assert out.complete
    faults = load_faults(tmp_path / "t")
    # in both seats: the aimed bot at its first or second decision (calls 2 and 3), the honest
    # one never, though it played its 24 decisions of each game against the clock
    assert list(faults["entrant"]) == ["aimed", "aimed"] and faults["kind"].eq("time").all()
    assert faults["call"].isin([2, 3]).all()
    results = load_results(tmp_path / "t")
    assert results.loc[results["entrant"] == "honest", "decisions"].eq(24).all()


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.parametrize("how", ["isolated", "sandboxed"])
def test_a_bot_of_several_files_plays_in_its_own_process(tmp_path, how):
    if how == "sandboxed" and shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not installed")
    folder = shutil.copytree(EXAMPLES / "bundle", tmp_path / "bundle")
    registry = BotRegistry([folder], env=False, cwd=False, entry_points=False,
                           sandbox=Sandbox() if how == "sandboxed" else None)
    shutil.rmtree(folder)  # `kdtourney serve` gets the module, its package and its weights shipped
    t = prepare(registry, bots="terrain-taster,greedy", games=2, seed=1)
    play = PlaySettings(isolate=how == "isolated", sandbox=how == "sandboxed")
    out = run_tournament(t, tmp_path / "t", registry, workers=1, play=play)
    assert out.complete and load_faults(tmp_path / "t").empty


def test_in_an_aa_test_each_entrant_has_its_own_log(tmp_path):
    registry = registry_of(write_fake_bots(tmp_path / "bots", ["illegal"], at=99))
    t = prepare(registry, bots=["illegal", "illegal"], games=2, seed=1)
    assert t.entrants == ("illegal#1", "illegal#2")
    assert run_tournament(t, tmp_path / "t", registry, workers=1).complete
    logs = tmp_path / "t" / "logs"
    for label in t.entrants:  # each writes its `log` message of every game to its own file
        lines = (logs / (label.replace("#", "_") + ".log")).read_text().splitlines()
        assert len(lines) == 2 and all("] log: game " in line for line in lines)
