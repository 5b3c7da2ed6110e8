"""What a tune costs beyond its games: `play_tune` against `run_tournament` playing as many games of
the same bot, side by side, interleaved.

    python benchmarks/bench_tune.py [--iterations 100] [--runs 2] [--workers 2] [--bot SPEC]

The tune: BOT (default mcts:iterations=50) with c tuned (2 players, one block of 2 games per
iteration, batches of 16). The run: BOT against itself at its start values, as many games. For
each, prints the wall seconds, the games' own seconds (the store's durations summed, divided by
the workers), the overhead (wall / games' seconds - 1) and the start: the seconds from the call to
the start of the first game (the workers' start and warm-up, which a tune and a run both pay
once), and the overhead after it. Then the tune's cost beyond the run's: the tune's wall time less
the run's scaled to the tune's games' seconds, in seconds and as a share of the tune's games; and
the same after the start (the start varies with the load from one call to the next): the cost of
the tune's batches (evaluating each, the new entrants joining, the workers idle while a batch's
last games finish), in all and per batch. Prints the load (os.getloadavg) before and after; a
busy machine moves both alike.
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


class Stamps:
    """A reporter (run) and display (tune) that notes when the first game started."""

    def __init__(self):
        self.first = None  # (when the first game to finish finished, its index)

    def game(self, spec, results, faults):
        if self.first is None:
            self.first = time.perf_counter(), spec.game

    def __getattr__(self, name):  # begin, start, note, update, stop, end: nothing to do
        return lambda *args, **kwargs: None


def game_seconds(folder, workers):
    return float(store.load_games(folder, columns=["duration"])["duration"].sum()) / workers


def started(stamps, t0, folder):
    """Seconds from t0 to the start of the first game to finish."""
    finished, game = stamps.first
    games = store.load_games(folder, columns=["game", "duration"]).set_index("game")
    return finished - float(games.loc[game, "duration"]) - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--bot", default="mcts:iterations=50")
    args = ap.parse_args()
    registry = BotRegistry(env=False, cwd=False, entry_points=False)
    table, tune = tuning.prepare_tune(registry, args.bot, ["c=0.2,0.02,1.0"],
                                      iterations=args.iterations, seed=1)
    games = args.iterations * 2
    start = tune.spec(tune.start)
    plain = prepare(registry, lineup=[start, start], games=games, seed=1)
    print(f"{args.bot}, {args.iterations} iterations ({games} games), {args.workers} workers")
    print(f"load before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.runs):
            stamps = Stamps()
            t0 = time.perf_counter()
            out = tuning.play_tune(table, tune, Path(tmp) / f"tune{r}", registry,
                                   workers=args.workers, display=stamps)
            tune_s = time.perf_counter() - t0
            tune_start = started(stamps, t0, Path(tmp) / f"tune{r}")
            assert out.complete and out.played == games, (out.played, games)
            stamps = Stamps()
            t0 = time.perf_counter()
            ran = run_tournament(plain, Path(tmp) / f"run{r}", registry, workers=args.workers,
                                 reporter=stamps)
            run_s = time.perf_counter() - t0
            run_start = started(stamps, t0, Path(tmp) / f"run{r}")
            assert ran.complete and ran.played == games
            tg = game_seconds(Path(tmp) / f"tune{r}", args.workers)
            rg = game_seconds(Path(tmp) / f"run{r}", args.workers)
            extra = tune_s - run_s * tg / rg
            after = (tune_s - tune_start) - (run_s - run_start) * tg / rg
            print(f"pair {r + 1}: tune {tune_s:.1f} s for {tg:.1f} s of games, started in "
                  f"{tune_start:.1f} s: overhead {100 * (tune_s / tg - 1):.0f}% "
                  f"({100 * ((tune_s - tune_start) / tg - 1):.0f}% after the start); run "
                  f"{run_s:.1f} s for {rg:.1f} s of games, started in {run_start:.1f} s: "
                  f"overhead {100 * (run_s / rg - 1):.0f}% "
                  f"({100 * ((run_s - run_start) / rg - 1):.0f}% after the start); the tune "
                  f"beyond the run: {extra:+.2f} s ({100 * extra / tg:+.0f}% of its games), "
                  f"after the start {after:+.2f} s ({100 * after / tg:+.0f}%, "
                  f"{after / out.batches:+.3f} s a batch of {out.batches})")
    print(f"load after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
