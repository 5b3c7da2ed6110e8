"""What a tune costs beyond its games: `kdtourney tune` against `kdtourney run` playing as many
games of the same bot, each command in a new process as a user types it, side by side, interleaved.

    python benchmarks/bench_tune.py [--iterations 100] [--runs 2] [--workers 2] [--bot SPEC]

The tune: BOT (default mcts, at its default strength: what one tunes) with c tuned (2 players,
one block of 2 games per iteration, batches of 16), writing its tune.html and index.html;
`--bot mcts:iterations=50` (games of 0.025 s) shows what every command pays whatever its games.
The run: BOT against itself at its start values, as many games, writing its index.html. For each
command, prints the wall seconds (from outside: the interpreter's start, imports, workers, games,
page, exit), the games' own seconds (the store's durations summed, divided by the workers), the
overhead (wall / games' seconds - 1), the start (from the command's launch to its first game's
start, from the store's finish times less durations: the interpreter, the workers' start and
warm-up, which tune and run both pay once) and the end (from the last game's finish to the
command's exit: its pages); the store keeps finish times in whole seconds, so start and end are
good to a second, the rest exact. Then the tune's cost beyond the run's: the tune's wall time less
the run's scaled to the tune's games' seconds, in seconds and as a share of the tune's games.
Prints the load (os.getloadavg) before and after; a busy machine moves both alike.
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
from kdtourney.commands import tune as tuning
from kdtourney.registry import BotRegistry

PARAM = "c=0.2,0.02,1.0"
KDTOURNEY = str(Path(sys.executable).with_name("kdtourney"))


def timed(command: list[str], folder: Path, workers: int) -> dict:
    """Run `command` (writing to `folder`) and read its timings off the store."""
    launched = time.time()
    subprocess.run(command + ["--out", str(folder)], check=True, stdout=subprocess.DEVNULL)
    wall = time.time() - launched
    games = store.load_games(folder, columns=["duration", "finished_at"])
    finished = (pd.to_datetime(games["finished_at"], utc=True)
                - pd.Timestamp(0, tz="UTC")).dt.total_seconds()
    return dict(wall=wall, games=float(games["duration"].sum()) / workers, n=len(games),
                start=float((finished - games["duration"]).min()) - launched,
                end=launched + wall - float(finished.max()))


def line(name: str, t: dict) -> str:
    return (f"{name} {t['wall']:.1f} s for {t['games']:.1f} s of games ({t['n']}): overhead "
            f"{100 * (t['wall'] / t['games'] - 1):.0f}%, start {t['start']:.1f} s, "
            f"end {t['end']:.1f} s")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--bot", default="mcts")
    args = ap.parse_args()
    registry = BotRegistry(env=False, cwd=False, entry_points=False)
    _, tune = tuning.prepare_tune(registry, args.bot, [PARAM], iterations=args.iterations, seed=1)
    start = tune.spec(tune.start)
    games = args.iterations * 2
    common = ["--seed", "1", "--workers", str(args.workers)]
    tune_command = [KDTOURNEY, "tune", args.bot, "--param", PARAM,
                    "--iterations", str(args.iterations)] + common
    run_command = [KDTOURNEY, "run", "--lineup", f"{start},{start}",
                   "--games", str(games)] + common
    print(f"{args.bot}, {args.iterations} iterations ({games} games), {args.workers} workers")
    print(f"  tune: {' '.join(tune_command[1:])}\n  run:  {' '.join(run_command[1:])}")
    print(f"load before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.runs):
            t = timed(tune_command, Path(tmp) / f"tune{r}", args.workers)
            u = timed(run_command, Path(tmp) / f"run{r}", args.workers)
            assert t["n"] == u["n"] == games, (t["n"], u["n"], games)
            extra = t["wall"] - u["wall"] * t["games"] / u["games"]
            print(f"pair {r + 1}: {line('tune', t)}; {line('run', u)}; the tune beyond the run: "
                  f"{extra:+.2f} s ({100 * extra / t['games']:+.0f}% of its games)")
    print(f"load after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
