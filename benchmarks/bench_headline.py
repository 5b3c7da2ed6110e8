"""The command the project exists for, timed: prints `name: value` lines.

    python benchmarks/bench_headline.py [--games 200] [--seed 7] [--workers N]

Runs `kdtourney run --bots greedy,mcts --games N --seed 7` (report included), exactly as a user
types it, in a fresh temporary folder with the Numba cache as it is (run the command once before
on a fresh install, or this measures the compiling too), and prints its wall seconds, games per
second (over the games' own stretch: from the first game's start to the last game stored), CPU
seconds of the command and every process it started, the load (the 1-minute average) before and
after, and the time 10,000 games would take: the start and the report as measured plus 10,000
games at the measured rate, and (`_quiet`) at the CPU per game measured with every core playing,
as on a quiet machine. `--games 10000` measures that run itself.
"""

import argparse
import os
import sys
import tempfile
from pathlib import Path

from bench_first_run import adopt_descendants, run_once

TARGET = 10_000


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7, help="the tournament seed")
    parser.add_argument("--workers", type=int, help="worker processes (default: every core)")
    args = parser.parse_args()
    adopt_descendants()
    command = ["run", "--bots", "greedy,mcts", "--games", str(args.games), "--seed", str(args.seed)]
    command += [] if args.workers is None else ["--workers", str(args.workers)]
    print(f"command: kdtourney {' '.join(command)}", flush=True)
    print(f"cores: {os.cpu_count()}")
    with tempfile.TemporaryDirectory(prefix="kdtourney-headline-") as folder:
        run = run_once(Path(folder) / "run", dict(os.environ), [], command)
    if run["games"] != args.games:
        sys.exit(f"Error: {run['games']} games stored, not {args.games}")
    rate = run["games"] / max(run["games_s"], 1.0)  # the store's times are whole seconds
    print(f"wall_s: {run['wall_s']:.1f}")
    print(f"to_first_game_s: {run['to_first_game_s']:.1f}")
    print(f"games_s: {run['games_s']:.1f}")
    print(f"after_games_s: {run['after_games_s']:.1f}")
    print(f"games_per_s: {rate:.2f}")
    print(f"cpu_s: {run['cpu_s']:.1f}")
    print(f"cpu_s_per_game: {run['cpu_s'] / run['games']:.4f}")
    print(f"load_before_after: {run['load'][0]:.1f}, {run['load'][1]:.1f}")
    rest = run["to_first_game_s"] + run["after_games_s"]
    print(f"extrapolated_{TARGET}_games_s: {rest + TARGET / rate:.0f} "
          f"({(rest + TARGET / rate) / 60:.1f} min)")
    # on a quiet machine every core plays: the games' CPU shared out over the cores
    quiet = rest + TARGET * run["cpu_s"] / run["games"] / (args.workers or os.cpu_count())
    print(f"extrapolated_{TARGET}_games_quiet_s: {quiet:.0f} ({quiet / 60:.1f} min, "
          "from the CPU per game, every core playing)")


if __name__ == "__main__":
    main()
