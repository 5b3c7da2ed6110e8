"""`kdtourney ratings` on a large pool: 100,000 games from 50 tournament folders.

    python benchmarks/bench_ratings.py [--pool DIR] [--folders 50] [--games 2000]

Builds the pool once (synthetic stores written through the store API by tests/pool_support.py:
Plackett-Luce games from known strengths, `mine` changing its code every 5 folders, 40 folders of
2-player and 10 of 4-player games, three weeks of dates), or reuses `--pool DIR` if it is there.
Then runs the command a user runs, `kdtourney ratings DIR --players 2,4 --out ...`, in a fresh
process, and prints `name: value` lines: the wall time of that command (imports, reading, the fit,
1000 bootstrap resamples, the page), the time of each step in process, and how far the ratings
are from the strengths the games were drawn from.
"""

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from pool_support import START, simulate  # noqa: E402

from kdtourney.report import pool  # noqa: E402
from kdtourney.report.pool_html import write_rating_list  # noqa: E402

OTHERS = {"greedy": 0.0, "random": -450.0, "mce:iterations=200": 150.0,
          "mcts:iterations=200": 220.0, "expectimax": 60.0, "crown-grabber": -120.0}
VERSIONS = 10  # of `mine`, each playing 5 folders


def mine(version: int) -> float:
    return -100.0 + 40.0 * version


def build(root: Path, folders: int, games: int) -> None:
    import datetime as dt

    names = list(OTHERS)
    for f in range(folders):
        version = min(f * VERSIONS // folders, VERSIONS - 1)
        players = 4 if f % 5 == 4 else 2
        others = [names[(f + k) % len(names)] for k in range(3)]
        elo = {"mine": mine(version), **{o: OTHERS[o] for o in others}}
        code = {"mine": f"mine version {version}"}
        blocks = games // players
        simulate(root / f"week{f // 17 + 1}" / f"run{f:02d}", elo, blocks=blocks, players=players,
                 seed=f, code=code, start=START + dt.timedelta(hours=10 * f), minutes=0.25,
                 sprt=f % 7 == 6)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pool", type=Path, help="the pool folder (built if missing)")
    ap.add_argument("--folders", type=int, default=50)
    ap.add_argument("--games", type=int, default=2000, help="games per folder")
    args = ap.parse_args()
    root = args.pool or Path(tempfile.mkdtemp(prefix="kdtourney-pool-"))
    if not root.exists() or not any(root.iterdir()):
        started = time.perf_counter()
        build(root, args.folders, args.games)
        print(f"build_s: {time.perf_counter() - started:.1f}  # writing the pool, not rating it")
    from pool_support import identity

    truth = dict(OTHERS)
    for version in range(VERSIONS):
        truth[f"mine\0{identity(f'mine version {version}')['digest']}"] = mine(version)

    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        done = subprocess.run([str(Path(sys.executable).with_name("kdtourney")), "ratings", str(root),
                               "--players", "2,4", "--out", out], capture_output=True, text=True)
        wall = time.perf_counter() - started
        if done.returncode:
            sys.exit(done.stdout + done.stderr)
        print(done.stdout.strip().splitlines()[-1])
        print(f"ratings_command_s: {wall:.1f}")

        started = time.perf_counter()
        rl = pool.rating_list([root], players=(2, 4))
        rated = time.perf_counter() - started
        started = time.perf_counter()
        write_rating_list(rl, out)
        page = time.perf_counter() - started
    print(f"games: {rl.n_games}")
    print(f"folders: {len(rl.sources)}")
    print(f"entrants: {len(rl.rated)}")
    print(f"read_fit_bootstrap_s: {rated:.1f}  # in process, {rl.n_boot} resamples")
    print(f"page_s: {page:.1f}")
    errors = []
    mean_true = np.mean([truth[e.label if e.label != "mine" else f"mine\0{e.digest}"]
                         for e in rl.rated])
    for e in rl.rated:
        true = truth[e.label if e.label != "mine" else f"mine\0{e.digest}"] - mean_true
        errors.append(e.elo - true)
    print(f"largest_error_elo: {max(abs(x) for x in errors):.1f}  # rating minus true strength, "
          "both mean 0")
    print(f"mean_interval_width_elo: {np.mean([e.hi - e.lo for e in rl.rated]):.1f}")


if __name__ == "__main__":
    main()
