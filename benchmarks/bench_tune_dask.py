"""A tune on a Dask cluster against the same tune locally: `kdtourney tune` with 2 local worker
processes, and with `--scheduler local:N` (a local Dask cluster of N single-thread workers, started
and stopped by the command), each in a new process as a user types it, interleaved.

    python benchmarks/bench_tune_dask.py [--iterations 100] [--runs 2] [--workers 2]
                                         [--bot mcts:iterations=50]

The tune: BOT with c tuned (2 players, one block of 2 games per iteration, batches of 16), the same
seed for both, so both play the same games (the script checks that they end at the same values).
Every iteration's two new entrants join the running workers: on Dask each task carries only the
entrants its worker has not heard of, never the sources, and a worker warms up a bot's kernels
once. For each command, prints the wall seconds (from outside: interpreter, imports, workers or
cluster, games, exit), its start (from its launch to its first game's start), the span of its
games (from the first game's start to the last one's end) and their own seconds (the games'
durations summed, divided by the workers); the store keeps finish times in whole seconds, so start
and span are good to a second. Then the ratio Dask / local of the wall times and of the spans.
Prints the load (os.getloadavg) before and after.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from kdtourney import store

PARAM = "c=0.2,0.02,1.0"
KDTOURNEY = str(Path(sys.executable).with_name("kdtourney"))


def timed(command: list[str], folder: Path) -> dict:
    """Run `command` (writing to `folder`): its wall time, games, span and tuned values."""
    launched = time.time()
    done = subprocess.run(command + ["--out", str(folder)], check=True, capture_output=True,
                          text=True)
    wall = time.time() - launched
    games = store.load_games(folder, columns=["duration", "finished_at"])
    finished = (pd.to_datetime(games["finished_at"], utc=True)
                - pd.Timestamp(0, tz="UTC")).dt.total_seconds()
    first, last = float((finished - games["duration"]).min()), float(finished.max())
    return dict(wall=wall, n=len(games), start=first - launched, span=last - first,
                play=float(games["duration"].sum()), tuned=done.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--bot", default="mcts:iterations=50")
    args = ap.parse_args()
    tune = [KDTOURNEY, "tune", args.bot, "--param", PARAM, "--iterations", str(args.iterations),
            "--seed", "1", "--no-report", "-q"]
    commands = {"local": tune + ["--workers", str(args.workers)],
                "dask": tune + ["--scheduler", f"local:{args.workers}"]}
    print(f"{args.bot}, {args.iterations} iterations ({2 * args.iterations} games)")
    for name, command in commands.items():
        print(f"  {name}: {' '.join(command[1:])}")
    print(f"load before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.runs):
            t = {name: timed(command, Path(tmp) / f"{name}{r}")
                 for name, command in commands.items()}
            assert t["local"]["tuned"] == t["dask"]["tuned"], t
            assert t["local"]["n"] == t["dask"]["n"] == 2 * args.iterations, t
            print(f"run {r + 1}: " + "; ".join(
                f"{name} {x['wall']:.1f} s wall (start {x['start']:.0f} s, games {x['span']:.0f} s"
                f", their own {x['play'] / args.workers:.1f} s per worker)"
                for name, x in t.items())
                + f"; dask / local: wall {t['dask']['wall'] / t['local']['wall']:.2f}, games "
                  f"{t['dask']['span'] / max(t['local']['span'], 1):.2f}")
    print(f"load after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
