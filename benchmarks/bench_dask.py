"""Dask speed: games per second of `kdtourney run --bots greedy,random --players 4` through a local
2-worker Dask cluster, against the local process pool (2 workers) on the same machine, and the
overhead per game.

    /work/venv/bin/python benchmarks/bench_dask.py [--games 400] [--workers 2]

Prints `name: value` lines. `*_total_*` figures are end to end as a user sees them (worker or
cluster start-up, warm-up and SQLite commits included); `*_steady_*` count the middle of the run
(between the 10% and the 90% stored). `dask_local` = `--scheduler local:N` (the cluster is
started and stopped by the run); `dask_running` = `--scheduler tcp://...` of a cluster started
beforehand (what a user with a running cluster sees). overhead per game = steady wall time per game
through Dask minus through the local pool (negative: Dask was faster), and the client's CPU time
per game (the process that plans, commits and talks to the scheduler).
"""

import argparse
import logging
import resource
import tempfile
import time
from pathlib import Path

from kdtourney.commands.run import run_tournament
from kdtourney.registry import BotRegistry
from kdtourney.tournament.definition import prepare


class Clock:
    """A reporter that notes when the first and last games are stored."""

    def start(self, *args, **kwargs):
        self.times = []

    def game(self, *args):
        self.times.append(time.perf_counter())

    @property
    def count(self):
        return len(self.times)

    def steady(self):
        """Games per second between the 10% and the 90% stored (Dask's results come per task, in
        bursts: the first and last games say little)."""
        a, b = self.count // 10, self.count * 9 // 10
        return (b - a) / (self.times[b] - self.times[a]) if b > a else float("nan")

    def note(self, text):
        print(f"# note: {text}")

    def stop(self):
        pass


def timed(tournament, registry, folder, **where):
    clock = Clock()
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    out = run_tournament(tournament, folder, registry, reporter=clock, **where)
    total = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF)
    assert out.complete and out.played == clock.count, out
    steady = clock.steady()
    client_cpu = (after.ru_utime - cpu.ru_utime) + (after.ru_stime - cpu.ru_stime)
    return dict(total=clock.count / total, steady=steady, seconds=total,
                steady_seconds_per_game=1.0 / steady,
                client_cpu_ms=1000 * client_cpu / clock.count)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    from distributed import LocalCluster

    registry = BotRegistry(env=False, cwd=False, entry_points=False)
    tournament = prepare(registry, bots="greedy,random", players="4", games=args.games, seed=1)
    n = args.workers
    print(f"games: {len(tournament.plan().games)}")
    print(f"workers: {n}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        run_tournament(tournament, tmp / "warm", registry, workers=1)  # Numba cache warm for all
        figures = {
            "pool": timed(tournament, registry, tmp / "pool", workers=n),
            "dask_local": timed(tournament, registry, tmp / "dask_local", scheduler=f"local:{n}"),
        }
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=logging.ERROR)
        try:
            figures["dask_running"] = timed(tournament, registry, tmp / "dask_running",
                                            scheduler=cluster.scheduler_address)
        finally:
            cluster.close()
    for name, f in figures.items():
        print(f"{name}_total_games_per_s: {f['total']:.1f}")
        print(f"{name}_steady_games_per_s: {f['steady']:.1f}")
        print(f"{name}_seconds: {f['seconds']:.2f}")
        print(f"{name}_client_cpu_ms_per_game: {f['client_cpu_ms']:.2f}")
    pool = figures["pool"]["steady_seconds_per_game"]
    for name in ("dask_local", "dask_running"):
        extra = figures[name]["steady_seconds_per_game"] - pool
        print(f"{name}_overhead_ms_per_game: {1000 * extra:+.2f}")
        print(f"{name}_vs_pool_steady: {figures[name]['steady'] / figures['pool']['steady']:.2f}")


if __name__ == "__main__":
    main()
