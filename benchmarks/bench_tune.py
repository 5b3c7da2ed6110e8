"""What a tune costs beyond its games: `play_tune` against `run_tournament` playing as many games of
the same bot, side by side, interleaved.

    python benchmarks/bench_tune.py [--iterations 100] [--runs 2] [--workers 2]

The tune: mcts:iterations=50 with c tuned (2 players, one block of 2 games per iteration, batches
of 16). The run: mcts:iterations=50 against itself (the same bot, the start values), as many
games. For each, prints the wall seconds, the games' own seconds (the store's durations summed,
divided by the workers) and the overhead: wall / games' seconds - 1, which counts starting the
workers, warming up, storing, and for the tune its batches (evaluations, the entrants joining the
workers). Then the tune's overhead beyond the run's: tune wall / run wall, each per game second.
Prints the load (os.getloadavg) before and after; a busy machine moves both alike.
"""

import argparse
import os
import tempfile
import time
from pathlib import Path

from kdtourney.arena import prepare, store
from kdtourney.arena import tune as tuning
from kdtourney.arena.runner import run_tournament
from kdtourney.bots.registry import BotRegistry

BOT = "mcts:iterations=50"


def game_seconds(folder, workers):
    return float(store.load_games(folder, columns=["duration"])["duration"].sum()) / workers


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    registry = BotRegistry(env=False, cwd=False, entry_points=False)
    table, tune = tuning.prepare_tune(registry, BOT, ["c=0.2,0.02,1.0"],
                                      iterations=args.iterations, seed=1)
    games = args.iterations * 2
    plain = prepare(registry, lineup=[BOT, BOT], games=games, seed=1)
    print(f"load before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.runs):
            t0 = time.perf_counter()
            out = tuning.play_tune(table, tune, Path(tmp) / f"tune{r}", registry,
                                   workers=args.workers)
            tune_s = time.perf_counter() - t0
            assert out.complete and out.played == games, (out.played, games)
            t0 = time.perf_counter()
            ran = run_tournament(plain, Path(tmp) / f"run{r}", registry, workers=args.workers)
            run_s = time.perf_counter() - t0
            assert ran.complete and ran.played == games
            tg = game_seconds(Path(tmp) / f"tune{r}", args.workers)
            rg = game_seconds(Path(tmp) / f"run{r}", args.workers)
            print(f"pair {r + 1}: tune {tune_s:.1f} s for {tg:.1f} s of games ({out.batches} "
                  f"batches): overhead {100 * (tune_s / tg - 1):.0f}%; run {run_s:.1f} s for "
                  f"{rg:.1f} s of games: overhead {100 * (run_s / rg - 1):.0f}%; tune beyond run: "
                  f"{100 * ((tune_s / tg) / (run_s / rg) - 1):+.0f}%")
    print(f"load after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
