"""`kdtourney ladder` end to end: a running ladder watching its folder (a bot added, edited,
removed), a ladder killed and resumed, and its list against `kdtourney ratings`."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from arena_support import stored
from click.testing import CliRunner

from kdtourney import store
from kdtourney.cli import main
from kdtourney.report.ladder import ladder_board
from kdtourney.report.pool import rating_list
from kdtourney.tournament import schedule

KDTOURNEY = str(Path(sys.executable).parent / "kdtourney")
TIMEOUT = 120  # seconds for anything a test waits for (the machine may be busy)

BOT = textwrap.dedent('''
    import os
    import time

    from kdtourney.bots.base import Bot


    class Firstling(Bot):
        """Plays the {which} legal action (after FIRSTLING_DELAY seconds, if set)."""
        name = "firstling"

        def act(self, view):
            time.sleep(float(os.environ.get("FIRSTLING_DELAY", 0)))
            return view.legal_actions()[{index}]
''')


def write_firstling(folder, index=0, which=None):
    (folder / "firstling.py").write_text(BOT.format(
        which=which or ("first" if index == 0 else "last"), index=index))


def write_firstling_submission(bots, index=0):
    """Firstling in a folder of its own, the action it picks in a data file deep inside it."""
    data = bots / "firstling" / "data" / "pick"
    if not data.is_dir():
        data.mkdir(parents=True)
        write_firstling(bots / "firstling", "PICK", which="data/pick/index.txt's")
        module = bots / "firstling" / "firstling.py"
        module.write_text("from pathlib import Path\n\nPICK = int((Path(__file__).parent / "
                          "'data' / 'pick' / 'index.txt').read_text())\n" + module.read_text())
    (data / "index.txt").write_text(str(index))


def start(*args, env=None):
    """A ladder in its own process group, SIGINT at its default (as in a terminal); env: variables
    added to its environment."""
    return subprocess.Popen([KDTOURNEY, "ladder", *[str(a) for a in args]],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True, env=dict(os.environ, **(env or {})),
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


@contextlib.contextmanager
def running(*args):
    """A ladder started by `start`, killed with its process group if it is still running at the
    end of the block."""
    proc = start(*args)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def ctrl_c(proc) -> str:
    """Press Ctrl-C: the ladder's output once it has ended."""
    proc.send_signal(signal.SIGINT)
    return proc.communicate(timeout=TIMEOUT)[0]


def entrants(folder):
    """{label: status} of the ladder in `folder` so far ({} before its store exists)."""
    if not (folder / store.STORE_FILE).exists():
        return {}
    rows = store.load_ladder_entrants(folder)
    return dict(zip(rows["label"], rows["status"]))


def wait_until(condition, what, proc, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        if proc.poll() is not None:
            raise AssertionError(f"the ladder ended before {what}: {proc.stdout.read()}")
        time.sleep(0.2)
    raise AssertionError(f"not within {timeout} s: {what}")


def rated(folder, label):
    """Whether `label` has a rating (a balanced block against another entrant)."""
    try:
        found = rating_list([folder], n_boot=10)
    except Exception:  # noqa: BLE001 - nothing to rate yet, or the store mid-write
        return False
    return any(e.label == label and e.unrated is None for e in found.entrants)


@pytest.mark.slow
@pytest.mark.process
def test_a_running_ladder_takes_in_added_changed_and_removed_bots(tmp_path):
    bots, out = tmp_path / "bots", tmp_path / "ladder"
    bots.mkdir()
    with running("--bots-dir", bots, "--bots", "random,greedy", "--out", out, "--workers", 1,
                 "--seed", 3, "--until", "300s") as proc:
        wait_until(lambda: rated(out, "greedy"), "the references are rated", proc)
        write_firstling_submission(bots)
        wait_until(lambda: entrants(out).get("firstling") == "active", "firstling entered", proc)
        wait_until(lambda: rated(out, "firstling"), "firstling is rated", proc)
        write_firstling_submission(bots, index=-1)  # new data deep in its folder: a new version
        wait_until(lambda: entrants(out).get("firstling@v2") == "active", "version 2", proc)
        assert entrants(out)["firstling"] == "superseded"
        wait_until(lambda: rated(out, "firstling@v2"), "version 2 is rated", proc)
        shutil.rmtree(bots / "firstling")
        wait_until(lambda: entrants(out).get("firstling@v2") == "retired", "retired", proc)
        games_then = stored(out)
        output = ctrl_c(proc)
    assert proc.returncode == 130, output
    assert "continue with: kdtourney ladder --resume" in output
    status = entrants(out)
    assert status == {"random": "active", "greedy": "active", "firstling": "superseded",
                      "firstling@v2": "retired"}
    # both versions keep their games
    results = store.load_results(out)
    assert {"firstling", "firstling@v2"} <= set(results["entrant"])
    assert stored(out) >= games_then
    # the list is `kdtourney ratings` on the same games, with each version's status
    board = ladder_board(out)
    found = rating_list([out])
    listed = {r["name"]: r for r in board.rows}
    for e in found.rated:
        assert (listed[e.label]["elo"], listed[e.label]["elo_lo"], listed[e.label]["elo_hi"]) == \
            (e.elo, e.lo, e.hi)
    assert listed["firstling"]["status"] == "superseded" and listed["firstling@v2"]["version"] == 2
    page = (out / "index.html").read_text()
    for section in ("ladder-list", "last-games-table", "versions-table", "pairs-table",
                    "replay-data"):
        assert f'id="{section}"' in page, section
    assert 'http-equiv="refresh"' not in page  # stopped: the page no longer reloads


@pytest.mark.slow
@pytest.mark.process
def test_a_killed_ladder_resumes_with_nothing_lost_or_doubled(tmp_path):
    args = ["--bots", "random,greedy", "--bots-dir", tmp_path / "bots", "--games", 60, "--seed",
            5, "--workers", 1, "--out", tmp_path / "ladder", "--quiet", "--no-report"]
    (tmp_path / "bots").mkdir()
    write_firstling(tmp_path / "bots")
    out = tmp_path / "ladder"
    proc = start(*args, env={"FIRSTLING_DELAY": "0.01"})  # slow enough to be killed mid-way
    try:
        wait_until(lambda: stored(out) >= 9, "9 games stored", proc)  # mid-block, mid-chunk
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    before = store.load_games(out).set_index("game")
    assert 9 <= len(before) < 60
    result = CliRunner().invoke(main, ["ladder", *[str(a) for a in args]])
    assert result.exit_code == 0, result.output
    assert result.output.strip().endswith(f"60 games, 3 active entrants ({60 - len(before)} "
                                          "played now)")
    games = store.load_games(out).set_index("game")
    assert list(games.index) == list(range(60))  # nothing lost, nothing twice
    assert (games.loc[before.index, "moves"] == before["moves"]).all()
    blocks = store.load_blocks(out)
    assert not blocks["cancelled"].any() and len(blocks) == 30
    config = store.load_config(out)["ladder"]
    for block, first, n in zip(blocks["block"], blocks["first_game"], blocks["n_players"]):
        part = games.loc[first:first + n - 1]
        assert (part["block"] == block).all() and len(part) == n  # every block whole
        assert (part["seed"] == schedule.deal_seed(config["seed"], int(block))).all()
    assert len(store.load_results(out)) == 120
    # each block recorded who it seats with their specs; the tournament as the ladder made it
    seated = store.load_results(out, ["game", "seat", "entrant", "block"])
    for block, seats, entrants in zip(blocks["block"], blocks["seats"], blocks["entrants"]):
        assert set(seated.loc[seated["block"] == block, "entrant"]) == set(seats) == set(entrants)
        assert entrants.get("firstling", "firstling") == "firstling"
    assert store.load_config(out)["tournament"]["entrants"] == []
    assert len(store.load_sessions(out)) == 2
    # the other commands read a ladder as a tournament; `report` writes the ladder's page
    report = CliRunner().invoke(main, ["report", str(out)])
    assert report.exit_code == 0 and 'id="ladder-list"' in (out / "index.html").read_text()
    refused = CliRunner().invoke(main, ["run", "--resume", str(out)])
    assert refused.exit_code == 2 and "holds a ladder" in refused.output


@pytest.mark.process
def test_bad_input_is_one_line(tmp_path):
    for args, needle in ((["--bots", "nobot"], "unknown bot 'nobot'"),
                         ([], "no entrants"),
                         (["--bots", "random,greedy", "--until", "soon"], "--until expects"),
                         (["--bots-dir", tmp_path / "missing"], "does not exist"),
                         (["--bots", "random,greedy", "--players", "5"], "2, 3 or 4"),
                         # no folder to watch: it would wait for ever
                         (["--bots", "greedy", "--games", 10], "needs two entrants or more")):
        result = CliRunner().invoke(main, ["ladder", *[str(a) for a in args], "--out",
                                           str(tmp_path / "l")])
        assert result.exit_code == 2, (args, result.output)
        assert result.output.startswith("Error: ") and needle in result.output, result.output
    CliRunner().invoke(main, ["run", "--bots", "random,greedy", "--games", 2, "--out",
                              str(tmp_path / "t"), "-q", "--no-report"])
    result = CliRunner().invoke(main, ["ladder", "--bots", "random,greedy", "--out",
                                       str(tmp_path / "t")])
    assert result.exit_code == 2 and "holds a tournament, not a ladder" in result.output


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.dask
def test_a_ladder_plays_on_a_dask_cluster(tmp_path):
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    out = tmp_path / "ladder"
    result = CliRunner().invoke(main, ["ladder", "--bots", "random,greedy", "--games", 12,
                                       "--scheduler", "local:1", "--seed", 4, "--out", str(out),
                                       "-q", "--no-report"])
    assert result.exit_code == 0, result.output
    games = store.load_games(out)
    assert list(games["game"]) == list(range(12)) and (games["status"] == "ok").all()
    assert {e.label for e in rating_list([out], n_boot=10).rated} == {"random", "greedy"}


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.sandbox
@pytest.mark.skipif(shutil.which("bwrap") is None,
                    reason="bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
def test_a_sandboxed_ladder_plays_its_folder_bots_in_the_sandbox(tmp_path):
    folder, out = tmp_path / "bots", tmp_path / "ladder"
    folder.mkdir()
    write_firstling(folder)
    result = CliRunner().invoke(main, ["ladder", "--sandbox", "--bots-dir", str(folder),
                                       "--bots", "random", "--games", 8, "--seed", 4,
                                       "--out", str(out), "-q", "--no-report"])
    assert result.exit_code == 0, result.output
    games = store.load_games(out)
    assert list(games["game"]) == list(range(8)) and (games["status"] == "ok").all()
    assert store.load_config(out)["play"]["sandbox"] is True
    assert set(store.load_results(out)["entrant"]) == {"firstling", "random"}


def test_the_live_table_shows_the_list_and_the_newest_changes():
    from rich.console import Console

    from kdtourney.commands.ladder import LadderConfig
    from kdtourney.terminal.display import LadderDisplay

    console = Console(width=100, record=True, force_terminal=False)
    display = LadderDisplay(console=console)
    display.begin(LadderConfig(players=(2,), seed=1), Path("ladder"), 0, 2)
    display.event("mine: entered")
    display.board([dict(rank=1, name="mine", elo_text="+12 [-30, +50]", games=40, version=1,
                        status="provisional")])
    for _ in range(5):
        display.game(None, [], [])
    console.print(display)
    text = console.export_text()
    assert "mine: entered" in text and "+12 [-30, +50]" in text and "provisional" in text
    assert "5 games" in text and "games/s" in text


@pytest.mark.process
def test_the_page_is_built_beside_play_at_the_lowest_priority():
    from kdtourney.commands.beside import beside_play

    with beside_play() as pages:
        niceness = pages.submit(os.nice, 0).result()
        policy = pages.submit(os.sched_getscheduler, 0).result()
    assert niceness == 19
    if hasattr(os, "SCHED_IDLE"):
        assert policy == os.SCHED_IDLE


@pytest.mark.process
def test_work_under_way_beside_play_is_ended_at_once(tmp_path):
    """A look at a bot that never answers, or a page that gets no CPU at the lowest priority while
    other work keeps the cores busy (a CI run saw a ladder wait 300 s at its end for such a page):
    neither holds the command up when it ends."""
    import concurrent.futures

    from kdtourney.commands.beside import beside_play

    begun = tmp_path / "begun"
    with beside_play() as beside:
        pid = beside.submit(os.getpid).result()
        # what a look at a bot that never answers hello would be
        endless = beside.submit(exec, f"import pathlib, time\npathlib.Path({str(begun)!r})"
                                      ".touch()\ntime.sleep(3600)")
        deadline = time.monotonic() + TIMEOUT
        while not begun.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert begun.exists()
    with pytest.raises(concurrent.futures.process.BrokenProcessPool):
        endless.result()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


LOOK_TIMEOUT = 300  # seconds for what a look at the folders, at the lowest priority, does

SLOW_HELLO = textwrap.dedent('''
    """A TOML bot (kdtourney serve random) that holds its first start's hello until the test says
    go, noting that start's priority."""
    import os
    import sys
    import time
    from pathlib import Path

    signals = Path(sys.argv[1])
    try:
        fd = os.open(signals / "begun", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        os.write(fd, f"{os.nice(0)} {os.sched_getscheduler(0)}".encode())
        os.close(fd)
    except FileExistsError:  # a later start, in a game
        pass
    while not (signals / "go").exists():
        time.sleep(0.05)
    os.execv(sys.executable, [sys.executable, "-m", "kdtourney", "serve", "random"])
''')


@pytest.mark.slow
@pytest.mark.process
def test_games_go_on_while_a_look_at_the_folders_waits_for_a_bot_s_hello(tmp_path):
    """A look at the folders starts a new TOML bot for its hello beside play, at the lowest
    priority: while that bot has not answered (the test holds it), games are still stored."""
    bots, out, signals = tmp_path / "bots", tmp_path / "ladder", tmp_path / "signals"
    bots.mkdir()
    signals.mkdir()
    with running("--bots-dir", bots, "--bots", "random,greedy", "--out", out, "--workers", 1,
                 "--seed", 2, "--until", "900s", "--startup-timeout", LOOK_TIMEOUT,
                 "--no-report") as proc:
        wait_until(lambda: stored(out) >= 2, "games stored", proc)
        (bots / "slow").mkdir()
        (bots / "slow" / "slow_hello.py").write_text(SLOW_HELLO)
        command = [sys.executable, "slow_hello.py", str(signals)]
        (bots / "slow" / "slow.toml").write_text(
            'name = "slow-hello"\ncommand = [' + ", ".join(f'"{a}"' for a in command) + "]\n")
        # at the lowest priority, the look waits for CPU that the games and any other work on
        # the machine leave it (on a machine kept busy by other work: a minute or more)
        begun = wait_until(lambda: (signals / "begun").exists() and (signals / "begun").read_text(),
                           "the look started the new bot", proc, timeout=LOOK_TIMEOUT)
        then = stored(out)
        wait_until(lambda: stored(out) >= then + 4, "games stored while the bot's hello waits",
                   proc)
        assert "slow-hello" not in entrants(out)  # the look is still waiting for it
        (signals / "go").touch()
        wait_until(lambda: entrants(out).get("slow-hello") == "active", "slow-hello entered", proc,
                   timeout=LOOK_TIMEOUT)
        output = ctrl_c(proc)
    assert proc.returncode == 130, output
    niceness, policy = map(int, begun.split())
    assert niceness == 19
    if hasattr(os, "SCHED_IDLE"):
        assert policy == os.SCHED_IDLE
