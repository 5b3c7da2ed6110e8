"""Bots in their own process (KDTP/1): the protocol's cost per decision, and games per second.

    python benchmarks/bench_kdtp.py [--games 40] [--arena-games 96] [--starts 5] [--no-arena]

1. Overhead per decision: a bot that answers the first legal action plays seat 0 of 4-player games
   against three in-process `random` bots, through the arena's game loop (play_match) in this
   process: in-process (a Python class), as a C program and as a plain Python program over KDTP
   (benchmarks/kdtp/). `*_us_per_decision` is the mean wall time of seat 0's calls of `act`
   (building the state, the pipe both ways, the bot, checking the answer; sandboxed, thawing and
   freezing the bot too); `*_overhead_us` is that minus the in-process figure. On a busy machine
   the wall time is mostly waiting for the scheduler (two process switches a decision), so the
   CPU time is given too: `*_cpu_us_per_decision` = this process's CPU time over the games, minus
   the in-process run's, plus the bot process's, per decision of seat 0.
2. Games per second of `greedy` against `random` at 4-player tables (`--bots greedy,random
   --players 4`, a round robin) with greedy in-process, isolated (`--isolate`), and as the C
   example (examples/c), on 1 and 2 workers. `*_steady_games_per_s` counts from the first stored
   game on (process start-up excluded); `*_wall_s` is the whole run.
3. The sandbox's cost (`--sandbox` against `--isolate`, where bwrap is installed):
   `startup_ms_BOT_MODE` is the median wall time from starting a process to its answer to hello
   (over --starts starts) for the C and plain Python first-legal bots and `greedy` served by
   `kdtourney serve`; `sandboxed_*` repeats figure 1 for bots in a sandbox (the CPU time of the
   sandbox's own processes included). A sandboxed bot is frozen between its decisions:
   `sandboxed_*_thaw_us_per_decision` and `sandboxed_*_freeze_us_per_decision` are the mean wall
   time of the thaw before each `act` and of the freeze after it (until every process of the bot
   is stopped), and `sandboxed_*_clock_us_per_decision` what the bot's clock was charged (from
   writing `act` to reading the answer: neither is on it).

Needs gcc. Prints `name: value` lines. Timings move with other work on the machine: compare
figures taken in one run.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kdtourney.bots import Bot
from kdtourney.commands.run import run_tournament
from kdtourney.engine import Rules, warm_up
from kdtourney.external import BotProcess, ProcessPool, ProcessSettings, Sandbox
from kdtourney.external.sandbox import Confinement
from kdtourney.match.loop import play_match
from kdtourney.match.settings import PlaySettings
from kdtourney.registry import BotRegistry
from kdtourney.tournament.definition import prepare
from kdtourney.tournament.schedule import bot_seed

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "examples"


class FirstLegal(Bot):
    """Answers the first legal action."""

    name = "first-legal"

    def act(self, view):
        return view.legal_actions()[0]


class Clock:
    """A reporter that notes when the first and last games are stored."""

    def start(self, *args, **kwargs):
        self.first = self.last = None
        self.count = 0

    def game(self, *args):
        self.first = self.first or time.perf_counter()
        self.last = time.perf_counter()
        self.count += 1

    def note(self, text):
        print(f"# note: {text}")

    def stop(self):
        pass


# The bots started with sys.executable need its installation in their sandbox when it lies
# outside /usr (pyenv, /opt): allowed as an organiser would, with --sandbox-allow.
PYTHON_HOME = os.path.realpath(sys.base_prefix)
PYTHON_ALLOWED = () if PYTHON_HOME.startswith("/usr/") or PYTHON_HOME == "/usr" else (PYTHON_HOME,)


def build(folder: Path) -> Path:
    """The trivial bots and the C example, built and declared in `folder`."""
    subprocess.run(["gcc", "-O2", "-o", str(folder / "first_legal"),
                    str(HERE / "kdtp" / "first_legal.c")], check=True)
    subprocess.run(["gcc", "-O2", "-o", str(folder / "greedy_bot"),
                    str(EXAMPLES / "c" / "greedy_bot.c")], check=True)
    shutil.copy(EXAMPLES / "c" / "c-greedy.toml", folder)
    (folder / "first-legal-c.toml").write_text(
        'name = "first-legal-c"\ncommand = ["./first_legal"]\n')
    shutil.copy(HERE / "kdtp" / "first_legal.py", folder)  # in its folder: what a sandbox shows
    (folder / "first-legal-py.toml").write_text(
        f'name = "first-legal-py"\ncommand = ["{sys.executable}", "first_legal.py"]\n')
    return folder


def children_cpu() -> float:
    """CPU seconds used so far by the live descendants of this process (a sandboxed bot is a
    grandchild's grandchild): from the scheduler's nanosecond count of every thread
    (/proc/PID/task/TID/schedstat), not the clock ticks of /proc/PID/stat (10 ms each: as much as
    a bot's CPU time over the whole run)."""
    parents = {}
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit():
                parents[int(entry.name)] = int(
                    (entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
    ours, grown = {os.getpid()}, True
    while grown:
        more = {pid for pid, parent in parents.items() if parent in ours} - ours
        ours |= more
        grown = bool(more)
    total = 0
    for pid in ours - {os.getpid()}:
        try:
            total += sum(int((task / "schedstat").read_text().split()[0])
                         for task in Path(f"/proc/{pid}/task").iterdir())
        except (OSError, IndexError, ValueError):
            continue
    return total / 1e9


class Timed:
    """Wall seconds spent in a method of a class, over every call (`total`), while installed."""

    def __init__(self, cls, name):
        self.cls, self.name, self.total = cls, name, 0.0
        self.original = getattr(cls, name)

    def __enter__(self):
        timed = self

        def wrapper(*args, **kwargs):
            started = time.perf_counter()
            try:
                return timed.original(*args, **kwargs)
            finally:
                timed.total += time.perf_counter() - started
        setattr(self.cls, self.name, wrapper)
        return self

    def __exit__(self, *exc):
        setattr(self.cls, self.name, self.original)


def acting(make, spent: list):
    """`make` (a bot factory) whose bots add the wall time of each `act` call to spent[0]."""
    def made():
        bot = make()
        act = bot.act

        def timed_act(view):
            started = time.perf_counter()
            try:
                return act(view)
            finally:
                spent[0] += time.perf_counter() - started
        bot.act = timed_act
        return bot
    return made


def per_decision(registry, games: int, settings=ProcessSettings()) -> dict:
    """{bot: {wall, cpu, clock, thaw, freeze: us per decision of seat 0}}, by how the
    first-legal bot plays (cpu: beyond the in-process run's)."""
    rules = Rules(4)
    random_bot = registry.factory("random")
    out = {}
    with ProcessPool(settings) as pool:
        makers = {"in_process": FirstLegal, "c_kdtp": registry.factory("first-legal-c", pool),
                  "python_kdtp": registry.factory("first-legal-py", pool)}
        for name, make in makers.items():
            play_match(rules, [0], [[0]] * 4, [make] + [random_bot] * 3)  # start the process
            wall, clock, decisions = [0.0], 0.0, 0
            cpu, bot_cpu = time.process_time(), children_cpu()
            with Timed(Confinement, "thaw") as thaw, Timed(Confinement, "freeze") as freeze:
                for g in range(games):
                    result = play_match(rules, [1000 + g], [[bot_seed(1, g, s)] for s in range(4)],
                                        [acting(make, wall)] + [random_bot] * 3)
                    assert not result.faults, result.faults
                    clock += result.seats[0].time_total
                    decisions += result.seats[0].decisions
            cpu = time.process_time() - cpu + children_cpu() - bot_cpu
            out[name] = {k: 1e6 * v / decisions for k, v in (
                ("wall", wall[0]), ("cpu", cpu), ("clock", clock), ("thaw", thaw.total),
                ("freeze", freeze.total))}
    base = out["in_process"]["cpu"]
    for name, figures in out.items():
        if name != "in_process":
            figures["cpu"] -= base
    return out


def games_per_second(registry, games: int) -> None:
    for label, bots, isolate in (("greedy_in_process", "greedy,random", False),
                                 ("greedy_isolated", "greedy,random", True),
                                 ("c_greedy_kdtp", "c-greedy,random", False)):
        t = prepare(registry, bots=bots, players="4", games=games, seed=1)
        for workers in (1, 2):
            clock = Clock()
            with tempfile.TemporaryDirectory() as tmp:
                started = time.perf_counter()
                run_tournament(t, Path(tmp) / "t", registry, workers=workers, reporter=clock,
                               play=PlaySettings(isolate=isolate))
                wall = time.perf_counter() - started
            steady = (clock.count - 1) / (clock.last - clock.first)
            print(f"{label}_{workers}w_steady_games_per_s: {steady:.1f}")
            print(f"{label}_{workers}w_wall_s: {wall:.1f}")


def startups(registry, starts: int) -> None:
    """Median start-up (process start to hello answered) per bot, isolated and sandboxed."""
    modes = {"isolated": ProcessSettings()}
    if shutil.which("bwrap"):
        modes["sandboxed"] = ProcessSettings(sandbox=Sandbox(allowed=PYTHON_ALLOWED))
    else:
        print("# note: no bwrap, no sandboxed figures")
    for mode, settings in modes.items():
        with ProcessPool(settings) as pool:
            for name, spec in (("c", "first-legal-c"), ("python", "first-legal-py"),
                               ("served_greedy", "greedy")):
                program = registry.program(spec, pool, isolate=True)
                times = []
                for _ in range(starts):
                    process = BotProcess(program, settings)
                    started = time.perf_counter()
                    process.start()
                    times.append(time.perf_counter() - started)
                    process.quit()
                    process.stop()
                print(f"startup_ms_{name}_{mode}: {1e3 * statistics.median(times):.0f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=40, help="games per bot for the overhead")
    parser.add_argument("--arena-games", type=int, default=96, help="games per arena run")
    parser.add_argument("--starts", type=int, default=5, help="process starts per start-up figure")
    parser.add_argument("--no-arena", action="store_true", help="skip the games per second")
    args = parser.parse_args()
    if shutil.which("gcc") is None:
        sys.exit("bench_kdtp needs gcc")
    warm_up()
    with tempfile.TemporaryDirectory() as tmp:
        registry = BotRegistry([build(Path(tmp))], env=False, cwd=False, entry_points=False)
        figures = per_decision(registry, args.games)
        for name, figure in figures.items():
            print(f"{name}_us_per_decision: {figure['wall']:.1f}")
        for name in ("c_kdtp", "python_kdtp"):
            overhead = figures[name]["wall"] - figures["in_process"]["wall"]
            print(f"{name}_overhead_us: {overhead:.1f}")
            print(f"{name}_cpu_us_per_decision: {figures[name]['cpu']:.1f}")
        startups(registry, args.starts)
        if shutil.which("bwrap"):
            sandboxed = per_decision(registry, args.games,
                                     ProcessSettings(sandbox=Sandbox(allowed=PYTHON_ALLOWED)))
            for name in ("c_kdtp", "python_kdtp"):
                for figure in ("wall", "cpu", "clock", "thaw", "freeze"):
                    label = "" if figure == "wall" else f"{figure}_"
                    print(f"sandboxed_{name}_{label}us_per_decision: "
                          f"{sandboxed[name][figure]:.1f}")
        if not args.no_arena:
            games_per_second(registry, args.arena_games)


if __name__ == "__main__":
    main()
