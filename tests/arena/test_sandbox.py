"""--sandbox: a bot written to cheat learns nothing it should not, its limits give verdicts, and
nothing it starts outlives the run."""

import dataclasses
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from kdtp_support import left_behind, new_marker, write_fake_bots

from kdtourney.arena import load_faults, load_games
from kdtourney.arena.schedule import GameSpec, bot_seed, deal_seed, keyed
from kdtourney.arena.store import load_config
from kdtourney.bots.external import (BotExited, BotProcess, Limits, ProcessPool, ProcessSettings,
                                     Sandbox, cgroups, load_toml)
from kdtourney.engine import Rules

KDTOURNEY = str(Path(sys.executable).parent / "kdtourney")
CHEATING_BOT = Path(__file__).resolve().parents[1] / "data" / "cheating_bot.py"
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None,
                                 reason="bubblewrap (bwrap) is not installed: apt-get install "
                                        "bubblewrap")


def cheating_bots(folder: Path, marker: str, targets, files=()) -> Path:
    """A bots folder with the cheating bot and one TOML file per mode (bot name = mode); the
    cheater's TOML lists `files` as files it reads."""
    folder.mkdir(parents=True)
    shutil.copy(CHEATING_BOT, folder / "cheating_bot.py")
    for mode in ("cheat", "hog", "flood"):
        command = [sys.executable, "cheating_bot.py", mode, marker, *map(str, targets)]
        reads = f"files = {json.dumps([str(f) for f in files])}\n" if mode == "cheat" else ""
        (folder / f"{mode}.toml").write_text(f"name = {json.dumps(mode)}\n"
                                             f"command = {json.dumps(command)}\n{reads}")
    return folder


@needs_bwrap
def test_a_cheating_bot_gets_nothing_and_the_tournament_completes(tmp_path):
    marker = new_marker()
    out = tmp_path / "runs" / "t"
    other = tmp_path / "other-bot"
    other.mkdir()
    (other / "weights.txt").write_text("another bot's secret")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    targets = [Path.home(), out, out / "tournament.sqlite", other / "weights.txt",
               f"tcp:127.0.0.1:{listener.getsockname()[1]}"]
    # the cheater declares the folder of the runs as a file it reads: its sandbox shows that
    # folder, but not the run's own
    bots = cheating_bots(tmp_path / "bots", marker, targets, files=[out.parent])
    env = {**os.environ, "KDTOURNEY_TEST_USER_SECRET": "not for bots"}
    try:
        run = subprocess.run([KDTOURNEY, "run", "--sandbox", "--bots-dir", str(bots), "--bots",
                              "cheat,hog,flood,random", "--games", "12", "--workers", "2",
                              "--bot-memory", "400", "--seed", "3", "--out", str(out),
                              "--no-report", "-q"], capture_output=True, text=True, timeout=600,
                             env=env)
    finally:
        listener.close()
    assert run.returncode == 0, run.stderr
    games = load_games(out)
    assert sorted(games["game"]) == list(range(12))

    log = (out / "logs" / "cheat.log").read_text()
    reports = [json.loads(line.split("CHEAT-REPORT ", 1)[1]) for line in log.splitlines()
               if "CHEAT-REPORT " in line]
    assert reports  # it played, and tried
    home = Path.home()
    runtime = [Path(p).relative_to(home).parts[0] for p in (sys.prefix, sys.base_prefix)
               if Path(p).is_relative_to(home)]  # its Python, if installed in the home
    for report in reports:
        assert report["processes_seen"] <= 2  # itself and the sandbox's init: no harness
        assert report["store_found"] == []
        seen = report["read"]
        assert seen.pop(str(home)) in (None, sorted(set(runtime)))
        assert seen.pop(str(out)) == []  # in a folder it may read, but emptied
        assert seen == {str(t): None for t in targets[2:] if not str(t).startswith("tcp:")}
        assert "KDTOURNEY_TEST_USER_SECRET" not in (report["init_environment"] or [])
        assert report["written"] == []
        assert report["network"] == []
        assert report["daemon_started"]  # it could start one, and the next line says it died
        assert report["allocation_status"] != 0  # its 2 GiB child was killed
        assert report["processes_started"] < 64  # its limit counts the processes it had
    assert left_behind(marker) == []
    checks = [json.loads(line.split("DAEMON-CHECK ", 1)[1]) for line in log.splitlines()
              if "DAEMON-CHECK " in line]
    assert checks and all(check["alive"] == 0 for check in checks)  # gone with its game
    # each of its processes saw a deal once: the block's other games (the same deal in other
    # seats) went to other processes
    assert "DEAL-SEEN" not in log and len(reports) + len(checks) == 6  # its 6 games, each seen

    # the seeds come from the store's secret: the public seed (3) tells a bot nothing
    assert len(load_config(out)["seed_secret"]) == 32
    for report in reports:
        assert report["seed"] != bot_seed(3, report["game"], report["seat"])
    assert not set(games["seed"]) & {deal_seed(3, b) for b in range(12)}

    faults = load_faults(out)
    assert set(faults["entrant"]) == {"hog", "flood"}  # the cheater itself played by the rules
    assert set(faults.loc[faults["entrant"] == "hog", "kind"]) == {"memory"}
    assert "memory limit of 400 MiB" in faults.loc[faults["entrant"] == "hog", "message"].iloc[0]
    assert set(faults.loc[faults["entrant"] == "flood", "kind"]) == {"output"}


def test_without_bwrap_sandbox_is_one_error_line(tmp_path):
    empty = tmp_path / "no-bwrap"
    empty.mkdir()
    run = subprocess.run([KDTOURNEY, "run", "--sandbox", "--bots", "greedy,random", "--games",
                          "2", "--out", str(tmp_path / "t")], capture_output=True, text=True,
                         env=dict(os.environ, PATH=str(empty)))
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [
        "Error: --sandbox needs bubblewrap (bwrap), which is not installed: install it, e.g. "
        "`apt-get install bubblewrap`"]
    assert not (tmp_path / "t").exists()


def test_bot_memory_needs_sandbox(tmp_path):
    run = subprocess.run([KDTOURNEY, "run", "--bot-memory", "100", "--bots", "greedy,random",
                          "--games", "2", "--out", str(tmp_path / "t")], capture_output=True,
                         text=True)
    assert run.returncode == 2
    assert run.stderr.strip() == "Error: --bot-memory limits sandboxed bots: add --sandbox"


def test_keyed_seeds_are_fixed_by_the_secret_and_keep_the_blocks_deals():
    specs = [GameSpec(game=g, block=g // 2, arrangement=g % 2, n_players=2, seats=(0, 1),
                      deal_seeds=(deal_seed(1, g // 2),),
                      bot_seeds=tuple((bot_seed(1, g, s),) for s in range(2))) for g in range(4)]
    one = [keyed(s, "00" * 16) for s in specs]
    assert one == [keyed(s, "00" * 16) for s in specs]  # a resume gets the same seeds
    assert one[0].deal_seeds == one[1].deal_seeds != one[2].deal_seeds  # a block shares its deal
    assert one[0].deal_seeds != specs[0].deal_seeds
    assert {one[0].bot_seeds[0], one[0].bot_seeds[1], one[1].bot_seeds[0]} & {
        specs[0].bot_seeds[0], specs[0].bot_seeds[1]} == set()
    other = [keyed(s, "01" + "00" * 15) for s in specs]
    assert [s.deal_seeds for s in other] != [s.deal_seeds for s in one]


SNOOPING_MODULE = '''
"""A folder bot whose module-level code leaves a mark wherever it runs with write access."""
import os
from kdtourney.bots import Bot

try:
    with open({mark!r}, "a") as f:
        f.write(f"module ran in pid {{os.getpid()}}\\n")
except OSError:
    pass


class Snoop(Bot):
    """Plays the first legal action."""

    name = "snoop"

    def __init__(self, first: bool = True):
        self.first = first

    def act(self, view):
        legal = view.legal_actions()
        return legal[0] if self.first else legal[-1]
'''


@needs_bwrap
def test_sandboxed_a_bot_module_runs_only_in_its_sandbox(tmp_path):
    mark = tmp_path / "module-ran-here"
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "snoop.py").write_text(SNOOPING_MODULE.format(mark=str(mark)))
    run = subprocess.run([KDTOURNEY, "run", "--sandbox", "--bots-dir", str(tmp_path / "bots"),
                          "--bots", "snoop:first=false,random", "--games", "4", "--workers", "2",
                          "--out", str(tmp_path / "t"), "--no-report", "-q"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert len(load_games(tmp_path / "t")) == 4 and load_faults(tmp_path / "t").empty
    assert not mark.exists()  # neither the harness nor a worker ran it; in its sandbox it could not
    plain = subprocess.run([KDTOURNEY, "bots", "--bots-dir", str(tmp_path / "bots")],
                           capture_output=True, text=True, timeout=120)
    assert "snoop" in plain.stdout and mark.exists()  # without --sandbox, modules are run


@needs_bwrap
def test_sprt_plays_sandboxed_too(tmp_path):
    run = subprocess.run([KDTOURNEY, "sprt", "--sandbox", "--bot-memory", "600", "--bot-cpus",
                          "1.5", "--candidate", "greedy", "--baseline", "random", "--max-games",
                          "8", "--workers", "2", "--out", str(tmp_path / "s"), "--no-report",
                          "-q"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    config = load_config(tmp_path / "s")
    assert config["play"]["sandbox"] and config["play"]["bot_memory"] == 600
    assert config["play"]["bot_cpus"] == 1.5
    assert "seed_secret" in config
    assert len(load_games(tmp_path / "s")) == 8


@needs_bwrap
def test_without_a_cgroup_memory_is_bounded_per_process_by_rlimit_data(tmp_path, monkeypatch):
    monkeypatch.setenv(cgroups.ROOT_VARIABLE, str(tmp_path / "no-cgroups"))
    bots = cheating_bots(tmp_path / "bots", new_marker(), [])
    program = load_toml(bots / "hog.toml").program
    settings = ProcessSettings(sandbox=Sandbox(Limits(memory_mib=300)))
    process = BotProcess(program, settings)
    try:
        assert process.start()["name"] == "hog"
        assert process.confinement.cgroup is None  # none made: prlimit instead
        process.send(b'{"type": "act", "legal": [0]}\n', None, "act")
        with pytest.raises(BotExited) as failed:
            process.receive(None, "act")
        assert "MemoryError" in failed.value.stderr  # the allocation failed inside the bot
    finally:
        process.stop()


@needs_bwrap
def test_a_sandboxed_process_never_gets_a_deal_twice_and_a_trusted_one_is_kept(tmp_path):
    """The games of a block share their deal: another process of the bot plays each, and the
    processes serve the next blocks; a bot of kdtourney's (trusted) keeps one process."""
    folder = write_fake_bots(tmp_path / "bots", ["plain"])
    program = load_toml(folder / "plain.toml").program
    pids = {}
    with ProcessPool(ProcessSettings(sandbox=Sandbox())) as pool:
        for prog in (program, dataclasses.replace(program, trusted=True)):
            pids[prog.trusted] = []
            for game, deal in enumerate([7, 7, 8, 8]):
                pool.new_game(game, (deal,))
                bot = pool.bot(prog, f"plain-{prog.trusted}", {})
                bot.setup(0, Rules(2), 1)
                pids[prog.trusted].append(bot._process.pid)
                bot.close()
    first, again, next_block, its_again = pids[False]
    assert first != again and next_block in (first, again) and its_again in (first, again)
    assert next_block != its_again
    assert len(set(pids[True])) == 1
