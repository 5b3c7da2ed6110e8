"""The clock's margin on a loaded machine: how much of it an honest bot uses, and when a bot aimed
at it runs out (kdtourney.bots.clock: one margin per game, which overruns use up and the bank pays
back).

    python benchmarks/bench_clock.py [--games 10] [--control 2+0.05] [--margin 0.2] [--load 2]

Seat 0 plays 2-player games against `random` under the clock (`--control` BANK+INC, or
`--move LIMIT` for a move limit without a bank), in this process (play_match, the arena's game
loop) and in its own process (`kdtourney serve`, as `--isolate` plays it; and in a sandbox where
bwrap is installed), while `--load` processes spin on the CPU besides whatever else the machine
does. The bots:
- `honest`: sleeps 80% of what the clock allows it (`view.time_left`), every decision;
- `mcts`: the built-in `mcts:time=1`, which spends at most 80% of `view.time_left`;
- `aimed`: takes what the clock allows it plus three quarters of the margin, every decision.

Per bot and way of playing: forfeits over the games; `overrun_ms_per_game_mean` and `_max`, what
its decisions of a game took beyond what the clock allowed them in all, `overrun_ms_worst_decision`,
the most one decision took beyond it, and `margin_low_ms`, the least of its margin left after any
decision of any game, before the bank paid it back, negative for a forfeit (a wrapper
times the bot's `act` as the game loop does and keeps its clock as the game loop keeps it); for
the aimed bot, `decisions_mean`, the decisions it made before it forfeited (instead of its margin
left, which it overran). Prints `name: value` lines. Timings move with other work on
the machine: the load is the point.
"""

import argparse
import contextlib
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kdtourney.bots import Bot
from kdtourney.bots.clock import SeatClock, TimeControl
from kdtourney.engine import Rules, warm_up
from kdtourney.external import ProcessPool, ProcessSettings, Sandbox
from kdtourney.match.loop import play_match
from kdtourney.registry import BotRegistry
from kdtourney.tournament.definition import ArenaError, clock_of
from kdtourney.tournament.schedule import bot_seed

BOTS = '''
import time

from kdtourney.bots.base import Bot


class Honest(Bot):
    """Sleeps 80% of what the clock allows it."""
    name = "honest"

    def act(self, view):
        time.sleep(0.8 * view.time_left)
        return view.legal_actions()[0]


class Aimed(Bot):
    """Takes what the clock allows it plus three quarters of the margin."""
    name = "aimed"

    def __init__(self, extra=0.15):
        self.extra = extra

    def act(self, view):
        time.sleep(view.time_left + self.extra)
        return view.legal_actions()[0]
'''


class Measured(Bot):
    """A bot timed as the game loop times it, its clock kept as the game loop keeps it: what its
    game's decisions took beyond what they were allowed, the least margin it had left, and its
    decisions, appended to `record` at the end of the game."""

    def __init__(self, inner, control, margin, record):
        self.inner, self.control, self.margin, self.record = inner, control, margin, record
        self.out_of_process = inner.out_of_process

    def setup(self, seat, rules, seed):
        self.clock = SeatClock(self.control, self.margin)
        self.overrun, self.worst, self.low, self.decisions = 0.0, 0.0, self.margin, 0
        self.inner.setup(seat, rules, seed)

    def act(self, view):
        started = time.perf_counter()
        try:
            return self.inner.act(view)
        finally:
            elapsed = time.perf_counter() - started
            self.decisions += 1
            over = max(0.0, elapsed - self.clock.allowed()[0])
            self.overrun += over
            self.worst = max(self.worst, over)
            self.low = min(self.low, self.clock.margin - over)  # before the bank pays it back
            self.clock.charge(elapsed)

    def finish(self, scores, ranks):
        self.inner.finish(scores, ranks)

    def close(self):
        self.record.append((self.overrun, self.worst, self.low, self.decisions))
        self.inner.close()


@contextlib.contextmanager
def spinning(n):
    """`n` processes burning a core each, for the duration."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def play(make, opponent, control, margin, games):
    """(forfeits, [(overrun, worst overrun of a decision, least margin left, decisions)] per
    game) of seat 0 made by `make`."""
    rules, record, forfeits = Rules(2), [], 0
    for g in range(games):
        result = play_match(rules, [500 + g], [[bot_seed(3, g, s)] for s in range(2)],
                            [lambda: Measured(make(), control, margin, record), opponent],
                            clock=control, margin=margin)
        forfeits += any(f.seat == 0 for f in result.faults)
    return forfeits, record


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10, help="games per bot and way of playing")
    parser.add_argument("--control", default="2+0.05", help="BANK+INC (default 2+0.05)")
    parser.add_argument("--move", type=float, help="a move limit instead of a bank")
    parser.add_argument("--margin", type=float, default=0.2, help="the margin (default 0.2)")
    parser.add_argument("--load", type=int, default=2, help="spinning processes (default 2)")
    args = parser.parse_args()
    try:
        clock = clock_of(args.move, None if args.move else args.control, None) or {}
    except ArenaError as exc:
        sys.exit(f"Error: {exc}")
    control = TimeControl(move_s=args.move, **clock)
    print(f"# clock: {control.describe()}, margin {args.margin:g} s a game, {args.load} spinning "
          f"processes, {args.games} games each")
    warm_up()
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "clocked.py").write_text(BOTS)
        registry = BotRegistry([tmp], env=False, cwd=False, entry_points=False)
        opponent = registry.factory("random")
        ways = {"in_process": None, "isolated": None}
        if shutil.which("bwrap"):
            ways["sandboxed"] = Sandbox()
        bots = ("honest", "mcts:time=1", f"aimed:extra={0.75 * args.margin:g}")
        with spinning(args.load):
            for way, sandbox in ways.items():
                with ProcessPool(ProcessSettings(control, args.margin, sandbox=sandbox)) as pool:
                    for bot in bots:
                        make = registry.factory(bot, pool, isolate=way != "in_process")
                        if bot.startswith("mcts"):  # its kernels loaded outside the clock
                            play(make, opponent, TimeControl(move_s=0.05), 10.0, 1)
                        forfeits, record = play(make, opponent, control, args.margin, args.games)
                        name = f"{way}_{bot.split(':')[0]}"
                        overrun = [1e3 * o for o, _, _, _ in record]
                        print(f"{name}_forfeits: {forfeits}/{args.games}")
                        print(f"{name}_overrun_ms_per_game_mean: "
                              f"{sum(overrun) / len(overrun):.1f}")
                        print(f"{name}_overrun_ms_per_game_max: {max(overrun):.1f}")
                        if not bot.startswith("aimed"):
                            print(f"{name}_overrun_ms_worst_decision: "
                                  f"{1e3 * max(w for _, w, _, _ in record):.1f}")
                            print(f"{name}_margin_low_ms: "
                                  f"{1e3 * min(low for _, _, low, _ in record):.1f}")
                        else:
                            print(f"{name}_decisions_mean: "
                                  f"{sum(d for _, _, _, d in record) / len(record):.1f}")


if __name__ == "__main__":
    main()
