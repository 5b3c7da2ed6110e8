"""The README's quick start on a fresh machine, end to end: prints `name: value` lines.

    python benchmarks/bench_first_run.py [--runs 3] [--sandbox] [--workers N] [--split]

Runs the tournament of the README's quick start (its `kdtourney run` command, report included)
in a fresh process with an empty Numba cache, as on a fresh machine or in a fresh clone
(`cold_*`), then the same command again on the cache it filled (`warm_*`). `--sandbox` plays it
sandboxed (every bot served in its own bubblewrap sandbox, which takes a copy of the compiled
kernels as it starts).

Wall seconds are what a user waits. CPU seconds (user and system, of the command and every
process it started) are the steadier measure on a machine shared with other work, whose load
(the 1-minute average, before and after each run) is printed too. The phases come from the store
(its times are whole seconds): `to_first_game_s` from the command's start to the first game's
start (imports, worker start-up, loading or compiling the kernels), `games_s` from there to the
last game stored, `after_games_s` the rest (the report). `compile_cpu_s` is the CPU of the cold
run beyond the warm one's, `compile_share_of_cold_cpu` its share of the cold run's CPU.
`same_games` checks that both runs stored the same games.

`--split` instead warms up the quick start's bots on an empty cache in two processes at once, as
the command's two workers do (kdtourney.service.worker.warm_up), and prints each one's CPU
seconds: on a machine with two free cores the warm-up's wall time is about the larger (a loaded
machine's wall time says little about how the compiling is shared out).
"""

import argparse
import ctypes
import os
import re
import resource
import shlex
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
def quick_start() -> list[str]:
    """The arguments of the README's quick start tournament: its first command's `kdtourney run`."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    first = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    return shlex.split(first.split("&& kdtourney ", 1)[1])


QUICK_START = quick_start()


def adopt_descendants() -> None:
    """Make this process a child subreaper: the command's workers are forked by its fork server,
    which the command leaves running at its exit, so their CPU would reach no one who waits for
    it; orphaned, the fork server becomes this process's child, and `children_cpu_s` waits
    for it."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit(f"Error: prctl(PR_SET_CHILD_SUBREAPER): {os.strerror(ctypes.get_errno())}")


def children_cpu_s() -> float:
    """CPU seconds of every ended descendant, once all of them have ended."""
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(folder: Path, env: dict, extra: list, args: list = QUICK_START) -> dict:
    """One `kdtourney` command (`args`, default the quick start, then `extra`) in `folder` (its
    reports/ land there): wall, CPU, load, phases, games."""
    folder.mkdir()
    command = [str(Path(sys.executable).with_name("kdtourney")), *args, *extra]
    load_before = os.getloadavg()[0]
    cpu, started = children_cpu_s(), time.time()
    t = time.perf_counter()
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    cpu = children_cpu_s() - cpu
    if done.returncode != 0:
        sys.exit(f"Error: {' '.join(command)} failed:\n{done.stderr[-2000:]}")
    store = next(folder.glob("reports/*/tournament.sqlite"))
    with sqlite3.connect(store) as db:
        games = db.execute("SELECT duration, finished_at FROM games ORDER BY game").fetchall()
        rows = db.execute("SELECT * FROM results ORDER BY game, seat").fetchall()
    ends = [datetime.fromisoformat(at).timestamp() for _, at in games]
    first_start = min(end - duration for (duration, _), end in zip(games, ends))
    return {"wall_s": wall, "cpu_s": cpu, "load": (load_before, os.getloadavg()[0]),
            "to_first_game_s": first_start - started, "games_s": max(ends) - first_start,
            "after_games_s": started + wall - max(ends), "games": len(games),
            "results": [row[:10] for row in rows]}  # score, rank, ...: not the times


def warm_up_cpu(slot: int, cache: str, queue) -> None:
    """The worker of `slot` warms up the quick start's bots (in a process of its own): its CPU."""
    os.environ["NUMBA_CACHE_DIR"] = cache
    # imported here: after NUMBA_CACHE_DIR is set (Numba reads it as it is imported)
    from kdtourney.registry import BotRegistry
    from kdtourney.service.worker import warm_up
    from kdtourney.tournament.definition import Tournament

    bots = QUICK_START[QUICK_START.index("--bots") + 1].split(",")
    table = Tournament.from_dict({"entrants": bots, "specs": bots, "players": [2], "games": 60,
                                  "seed": 1, "format": "round-robin"})
    start = time.process_time()
    warm_up(table, BotRegistry.from_sources({}), first=slot)
    queue.put((slot, time.process_time() - start))


def split(runs: int) -> None:
    """`--split`: the warm-up's CPU per worker, two workers on an empty cache."""
    import multiprocessing  # only here: the other figures run the command itself

    context = multiprocessing.get_context("spawn")
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="kdtourney-first-run-") as tmp:
            queue = context.Queue()
            load, t = os.getloadavg()[0], time.perf_counter()
            workers = [context.Process(target=warm_up_cpu, args=(slot, tmp, queue))
                       for slot in range(2)]
            for w in workers:
                w.start()
            cpu = dict(queue.get() for _ in workers)
            for w in workers:
                w.join()
            print(f"warm_up_cpu_s_per_worker: {cpu[0]:.1f}, {cpu[1]:.1f} "
                  f"(wall {time.perf_counter() - t:.1f} s, load {load:.1f}, "
                  f"{os.getloadavg()[0]:.1f})")


def figure(values: list, unit: str = "") -> str:
    if len(values) == 1:
        return f"{values[0]:.1f}{unit}"
    listed = ", ".join(f"{v:.1f}" for v in values)
    return f"{statistics.median(values):.1f}{unit} (median of {len(values)}: {listed})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1,
                        help="cold and warm runs, each pair on a fresh cache")
    parser.add_argument("--sandbox", action="store_true", help="play the quick start sandboxed")
    parser.add_argument("--workers", type=int, help="worker processes (default: every core)")
    parser.add_argument("--split", action="store_true",
                        help="only the warm-up's CPU per worker, two workers on an empty cache")
    args = parser.parse_args()
    if args.split:
        return split(args.runs)
    adopt_descendants()
    extra = (["--sandbox"] if args.sandbox else []) + \
        (["--workers", str(args.workers)] if args.workers else [])
    print(f"command: kdtourney {' '.join(QUICK_START + extra)}")
    print(f"cores: {os.cpu_count()}")
    runs = []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="kdtourney-first-run-") as tmp:
            tmp = Path(tmp)
            env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp / "numba"))
            runs.append({"cold": run_once(tmp / "cold", env, extra),
                         "warm": run_once(tmp / "warm", env, extra)})
    for kind in ("cold", "warm"):
        for name in ("wall_s", "cpu_s", "to_first_game_s", "games_s", "after_games_s"):
            print(f"{kind}_{name}: {figure([r[kind][name] for r in runs])}")
        print(f"{kind}_load_before_after: " +
              "; ".join(f"{a:.1f}, {b:.1f}" for a, b in (r[kind]['load'] for r in runs)))
    print(f"compile_cpu_s: {figure([r['cold']['cpu_s'] - r['warm']['cpu_s'] for r in runs])}")
    shares = [100 * (r['cold']['cpu_s'] - r['warm']['cpu_s']) / r['cold']['cpu_s'] for r in runs]
    print(f"compile_share_of_cold_cpu: {figure(shares, ' %')}")
    print(f"games: {runs[0]['cold']['games']}")
    if args.sandbox:  # a sandboxed store keys its seeds with a secret of its own
        print("same_games: n/a (sandboxed: each store deals its own games)")
    else:
        same = all(r["cold"]["results"] == r["warm"]["results"] == runs[0]["cold"]["results"]
                   for r in runs)
        print(f"same_games: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
