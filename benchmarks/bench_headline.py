"""The command the project exists for, timed: prints `name: value` lines.

    python benchmarks/bench_headline.py [--games 10000] [--seed N] [--workers N]

Runs `kdtourney run --bots greedy,mcts --games 10000` (report included), as a user types it, in a
fresh folder with the Numba cache already filled (run it once before on a fresh install), and
prints its wall seconds, games per second and CPU seconds (of the command and every process it
started), with the load (the 1-minute average) before and after. --games and --seed change the
command (a smaller run for a quick look); --workers adds `--workers N`.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_first_run import adopt_descendants, children_cpu_s


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--seed", type=int, help="the tournament seed (default: a fresh one)")
    parser.add_argument("--workers", type=int, help="worker processes (default: every core)")
    args = parser.parse_args()
    adopt_descendants()
    command = [str(Path(sys.executable).with_name("kdtourney")), "run", "--bots", "greedy,mcts",
               "--games", str(args.games)]
    command += [] if args.seed is None else ["--seed", str(args.seed)]
    command += [] if args.workers is None else ["--workers", str(args.workers)]
    print(f"command: kdtourney {' '.join(command[1:])}", flush=True)
    print(f"cores: {os.cpu_count()}")
    with tempfile.TemporaryDirectory(prefix="kdtourney-headline-") as folder:
        load_before = os.getloadavg()[0]
        cpu = children_cpu_s()
        t = time.perf_counter()
        done = subprocess.run(command, cwd=folder, capture_output=True, text=True)
        wall = time.perf_counter() - t
        cpu = children_cpu_s() - cpu
        load_after = os.getloadavg()[0]
    if done.returncode != 0:
        sys.exit(f"Error: the command failed:\n{done.stderr[-2000:]}")
    print(f"wall_s: {wall:.1f}")
    print(f"games_per_s: {args.games / wall:.2f}")
    print(f"cpu_s: {cpu:.1f}")
    print(f"cpu_s_per_game: {cpu / args.games:.4f}")
    print(f"load_before_after: {load_before:.1f}, {load_after:.1f}")


if __name__ == "__main__":
    main()
