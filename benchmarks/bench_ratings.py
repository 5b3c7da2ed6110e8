"""`kdtourney ratings` on a large pool: 100,000 games from 50 tournament folders.

    python benchmarks/bench_ratings.py [--pool DIR] [--folders 50] [--games 2000]

Builds the pool once (synthetic stores written through the store API by tests/pool_support.py:
Plackett-Luce games from known strengths; `mine` changes its code every 5 folders; 40 folders of
2-player and 10 of 4-player games, every seventh an SPRT's; three weeks of dates), or reuses
`--pool DIR` if it holds one. Then runs the command a user runs, `kdtourney ratings DIR --players
2,4 --out ...`, in a fresh process, and prints `name: value` lines: its wall and CPU time (imports,
reading, the fit, 1000 bootstrap resamples, the page), the steps timed in this process, and how far
the ratings are from the strengths the games were drawn from.

On a machine shared with other work the wall time moves a lot; the CPU time is the steadier figure.
"""

import argparse
import datetime as dt
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from pool_support import START, identity, simulate  # noqa: E402

from kdtourney.report import pool  # noqa: E402
from kdtourney.report.pool_html import write_rating_list  # noqa: E402

OTHERS = {"greedy": 0.0, "random": -450.0, "mce:iterations=200": 150.0,
          "mcts:iterations=200": 220.0, "expectimax": 60.0, "crown-grabber": -120.0}
VERSIONS = 10  # of `mine`


def mine(version: int) -> float:
    return -100.0 + 40.0 * version


def build(root: Path, folders: int, games: int) -> None:
    names = list(OTHERS)
    for f in range(folders):
        version = min(f * VERSIONS // folders, VERSIONS - 1)
        players = 4 if f % 5 == 4 else 2
        others = [names[(f + k) % len(names)] for k in range(3)]
        simulate(root / f"week{f // 17 + 1}" / f"run{f:02d}",
                 {"mine": mine(version), **{o: OTHERS[o] for o in others}},
                 blocks=games // players, players=players, seed=f,
                 code={"mine": f"mine version {version}"},
                 start=START + dt.timedelta(hours=10 * f), minutes=0.25, sprt=f % 7 == 6)


def true_elo(entrant) -> float:
    if entrant.label != "mine":
        return OTHERS[entrant.label]
    return next(mine(v) for v in range(VERSIONS)
                if identity(f"mine version {v}")["digest"] == entrant.digest)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pool", type=Path, help="the pool folder (built if missing or empty)")
    ap.add_argument("--folders", type=int, default=50)
    ap.add_argument("--games", type=int, default=2000, help="games per folder")
    args = ap.parse_args()
    if args.pool is None:
        with tempfile.TemporaryDirectory(prefix="kdtourney-pool-") as root:
            bench(Path(root), args)
    else:
        bench(args.pool, args)


def bench(root: Path, args) -> None:
    if not root.exists() or not any(root.iterdir()):
        started = time.perf_counter()
        build(root, args.folders, args.games)
        print(f"build_s: {time.perf_counter() - started:.1f}  # writing the pool, not rating it")

    kdtourney = str(Path(sys.executable).with_name("kdtourney"))
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        done = subprocess.run([kdtourney, "ratings", str(root), "--players", "2,4", "--out", out],
                              capture_output=True, text=True)
        wall = time.perf_counter() - started
        child = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode:
            sys.exit(done.stdout + done.stderr)
        print(f"# {done.stdout.strip().splitlines()[-1]}")
        print(f"ratings_command_s: {wall:.1f}")
        print(f"ratings_command_cpu_s: {child.ru_utime + child.ru_stime:.1f}")

        started = time.perf_counter()
        found = pool.rating_list([root], players=(2, 4))
        rated = time.perf_counter() - started
        started = time.perf_counter()
        write_rating_list(found, out)
        page = time.perf_counter() - started
    print(f"games: {found.n_games}")
    print(f"folders: {found.n_folders}")
    print(f"entrants: {len(found.rated)}")
    print(f"read_fit_bootstrap_s: {rated:.1f}  # in process, {found.n_boot} resamples")
    print(f"page_s: {page:.1f}")
    mean = np.mean([true_elo(e) for e in found.rated])
    errors = [e.elo - (true_elo(e) - mean) for e in found.rated]
    print(f"largest_error_elo: {max(abs(x) for x in errors):.1f}  # rating minus true strength, "
          "both mean 0")
    covered = sum(e.lo <= true_elo(e) - mean <= e.hi for e in found.rated)
    print(f"true_inside_95_interval: {covered} of {len(found.rated)}")


if __name__ == "__main__":
    main()
