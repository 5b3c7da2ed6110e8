"""--sandbox: a bot thinks on its own time only (frozen between its decisions and while it waits
in the pool, freezing kept off its clock), nothing it starts outlives its game, and a machine that
cannot enforce a limit says so."""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kdtp_support import ALLOW_ARGS, SANDBOX_ALLOW, cpu_ns, new_marker, write_fake_bots

from kdtourney.bots import Bot
from kdtourney.bots.clock import TimeControl
from kdtourney.bots.random_bot import RandomBot
from kdtourney.engine import Rules
from kdtourney.external import ProcessPool, ProcessSettings, Sandbox, bot, cgroups, load_toml
from kdtourney.external.sandbox import Confinement, sandbox_processes
from kdtourney.match import loop as match
from kdtourney.match.loop import play_match
from kdtourney.store import load_games

pytestmark = pytest.mark.process

KDTOURNEY = str(Path(sys.executable).parent / "kdtourney")
BUSY_BOT = Path(__file__).resolve().parents[1] / "data" / "busy_bot.py"
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None,
                                 reason="bubblewrap (bwrap) is not installed: apt-get install "
                                        "bubblewrap")
needs_freezer = pytest.mark.skipif(cgroups.machine().source(cgroups.FREEZE) is None,
                                   reason="no cgroup freezer kdtourney may use on this machine "
                                          "(root, or a delegated cgroup v2)")


def busy_bots(folder: Path, marker: str) -> Path:
    """A bots folder with the busy bot and one TOML file per mode (bot name = mode)."""
    folder.mkdir(parents=True)
    shutil.copy(BUSY_BOT, folder / "busy_bot.py")
    for mode in ("spin", "hop", "daemon"):
        (folder / f"{mode}.toml").write_text(
            f'name = "{mode}"\ncommand = ["{sys.executable}", "busy_bot.py", "{mode}", '
            f'"{marker}"]\n')
    return folder


# A frozen process runs no code of its own; but a task that a thaw woke and a freeze caught again
# before it ran (the next freeze of a short decision) re-enters the freezer when the scheduler
# gets to it, some microseconds of kernel time (seen: about 5 us per task, one task in fifteen).
# A process that ran would take milliseconds.
KERNEL_NS = 1_000_000


def used_cpu(process, seconds=0.01, members=None) -> int:
    """CPU time (ns) the processes of a bot process's cgroup (or `members`) use over
    `seconds`."""
    members = members or process.confinement.cgroup.members()
    before = cpu_ns(members)
    time.sleep(seconds)
    return cpu_ns(members) - before


def game_of(pool, factories, deal=5, **clock):
    pool.new_game(0, (deal,))
    return play_match(Rules(2), [deal], [[1], [2]], factories, **clock)


@pytest.mark.slow
@pytest.mark.sandbox
@needs_bwrap
@needs_freezer
def test_a_sandboxed_bot_gets_no_cpu_between_its_decisions(tmp_path):
    """The bot spins in a thread and in a child of its own session all the time: it gets the CPU
    during its decisions only, not during its opponent's nor while it waits in the pool."""
    program = load_toml(busy_bots(tmp_path / "bots", new_marker()) / "spin.toml").program
    during_opponent = []
    with ProcessPool(ProcessSettings(sandbox=Sandbox(allowed=SANDBOX_ALLOW))) as pool:
        spinner = pool.bot(program, "spin", {})

        class Watcher(Bot):
            """Measures the spinner's CPU time while it decides."""

            def act(self, view):
                during_opponent.append(used_cpu(spinner.process, 0.05))
                return view.legal_actions()[0]

        result = game_of(pool, [lambda: spinner, Watcher],
                         clock=TimeControl(move_s=5.0), margin=0.5)
        assert not result.faults and result.seats[0].decisions > 10
        assert len(during_opponent) == result.seats[1].decisions
        assert max(during_opponent) < KERNEL_NS, during_opponent
        # given back to the pool, its game's processes killed (their exit takes CPU time: not
        # counted), the bot waits there frozen
        process = pool.idle_processes[0]
        kept = sandbox_processes(process.pid, process.confinement.cgroup.members())
        assert len(kept) == 3  # bwrap, the namespace's init, the bot
        assert used_cpu(process, 0.2, kept) < KERNEL_NS
        process.thaw()  # thawed, it spins
        assert used_cpu(process, 0.2, kept) > 10 * KERNEL_NS
        process.freeze()
        assert used_cpu(process, 0.2, kept) < KERNEL_NS


class Stalls:
    """The clocks of the harness (`match.time`) and of a bot's exchange (`bot.time`): the real
    ones, plus the stalls put into them (`stall`, no waiting)."""

    def __init__(self):
        self.stalled = 0.0

    def stall(self, seconds):
        self.stalled += seconds

    def perf_counter(self):
        return time.perf_counter() + self.stalled

    def monotonic(self):
        return time.monotonic() + self.stalled


@pytest.mark.sandbox
@needs_bwrap
@needs_freezer
def test_freezing_and_thawing_are_not_on_the_bots_clock(tmp_path, monkeypatch):
    """The first decision's thaw and the freeze after it take 100 s each (a machine too busy to
    schedule the bot's processes): the bot is charged only what it took to answer."""
    program = load_toml(write_fake_bots(tmp_path / "bots", ["plain"]) / "plain.toml").program
    calls = {"thaw": 0, "freeze": 0}
    slow = {"thaw": 1, "freeze": 2}  # freeze 1 is after hello
    clock = Stalls()
    monkeypatch.setattr(match, "time", clock)
    monkeypatch.setattr(bot, "time", clock)

    def slowed(name, original):
        def wrapper(self):
            calls[name] += 1
            if calls[name] == slow[name]:
                clock.stall(100.0)
            return original(self)
        return wrapper

    monkeypatch.setattr(Confinement, "thaw", slowed("thaw", Confinement.thaw))
    monkeypatch.setattr(Confinement, "freeze", slowed("freeze", Confinement.freeze))
    with ProcessPool(ProcessSettings(sandbox=Sandbox(allowed=SANDBOX_ALLOW))) as pool:
        plain = pool.bot(program, "plain", {})
        result = game_of(pool, [lambda: plain, RandomBot], clock=TimeControl(move_s=50.0))
    assert not result.faults, result.faults
    assert result.seats[0].time_max < 50.0  # charged a stall, it would be over 100 s
    assert calls["thaw"] > 2 and calls["freeze"] > 2  # the slow ones were on the way


@pytest.mark.sandbox
@needs_bwrap
@needs_freezer
def test_nothing_a_bot_starts_outlives_its_game_not_even_a_process_forking_without_end(
        tmp_path):
    """The bot's daemon forks without end, each generation under a new pid (one scan of its
    processes misses it about one time in three): at the end of the game the bot's cgroup holds
    the sandbox and the bot alone, and the bot plays on."""
    program = load_toml(busy_bots(tmp_path / "bots", new_marker()) / "hop.toml").program
    with ProcessPool(ProcessSettings(sandbox=Sandbox(allowed=SANDBOX_ALLOW))) as pool:
        for deal in (5, 6, 7):
            hopper = pool.bot(program, "hop", {})
            result = game_of(pool, [lambda: hopper, RandomBot], deal=deal)
            assert not result.faults
            process = pool.idle_processes[0]
            cgroup = process.confinement.cgroup
            sandbox = 3  # bwrap, the namespace's init, the bot
            deadline = time.monotonic() + 5  # the killed take a moment to go
            while len(cgroup.members()) > sandbox and time.monotonic() < deadline:
                time.sleep(0.01)
            assert len(cgroup.members()) == sandbox
            assert process.alive()


@pytest.mark.sandbox
@needs_bwrap
def test_without_a_cgroup_what_a_bot_starts_is_killed_by_scans(tmp_path, monkeypatch):
    monkeypatch.setenv(cgroups.ROOT_VARIABLE, str(tmp_path / "no-cgroups"))
    marker = new_marker()
    program = load_toml(busy_bots(tmp_path / "bots", marker) / "daemon.toml").program
    with ProcessPool(ProcessSettings(sandbox=Sandbox(allowed=SANDBOX_ALLOW))) as pool:
        daemon = pool.bot(program, "daemon", {})
        assert not game_of(pool, [lambda: daemon, RandomBot]).faults
        process = pool.idle_processes[0]
        assert process.confinement.cgroup is None and process.alive()
        deadline = time.monotonic() + 5
        while daemons(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert daemons(marker) == []


def daemons(marker):
    """The busy bot's sleeping daemons (their command line holds `-c` and the marker)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if marker.encode() in args and b"-c" in args:
            found.append(int(entry.name))
    return found


@pytest.mark.slow
@pytest.mark.sandbox
@needs_bwrap
def test_a_machine_without_cgroups_says_so_once_and_require_limits_refuses_it(tmp_path):
    bots = tmp_path / "bots"
    for name in ("plain", "other"):  # one folder each: a sandboxed bot does not share its folder
        write_fake_bots(bots / name, [name])
    env = {**os.environ, cgroups.ROOT_VARIABLE: str(tmp_path / "no-cgroups")}
    args = [KDTOURNEY, "run", "--sandbox", *ALLOW_ARGS, "--bots-dir", str(bots), "--bots",
            "plain,other", "--games", "4", "--workers", "2", "--no-report"]
    run = subprocess.run([*args, "--out", str(tmp_path / "t")], capture_output=True, text=True,
                         env=env, timeout=600)
    assert run.returncode == 0, run.stderr
    notes = [line for line in run.stdout.splitlines() if "--sandbox on" in line]
    assert len(notes) == 1, run.stdout  # one machine, whatever its workers and bot processes
    assert notes[0].startswith("note: --sandbox on this machine (") and notes[0].endswith(
        "): memory per process only, no process bound, no CPU quota, no CPUs of their own, no "
        "freezing; kdtourney may not make the cgroups for them there (run it as root, or in a "
        "cgroup v2 delegated to its user, e.g. under systemd-run --user --scope -p "
        "Delegate=yes)")
    assert len(load_games(tmp_path / "t")) == 4
    refused = subprocess.run([*args, "--require-limits", "--out", str(tmp_path / "r")],
                             capture_output=True, text=True, env=env, timeout=600)
    assert refused.returncode == 2
    assert refused.stderr.splitlines() == [f"Error: --require-limits: {notes[0][6:]}"]
    assert not (tmp_path / "r").exists()


@pytest.mark.slow
@pytest.mark.parametrize("option", [["--bot-cpus", "2"], ["--require-limits"]])
def test_cpu_and_limit_options_need_sandbox(tmp_path, option):
    run = subprocess.run([KDTOURNEY, "run", *option, "--bots", "greedy,random", "--games", "2",
                          "--out", str(tmp_path / "t")], capture_output=True, text=True)
    assert run.returncode == 2
    what = "limits" if option[0] == "--bot-cpus" else "is about"
    assert run.stderr.strip() == f"Error: {option[0]} {what} sandboxed bots: add --sandbox"
    assert not (tmp_path / "t").exists()
