"""Engine speed, one core: prints `name: value` lines.

    python benchmarks/bench_engine.py [--seconds 2]
    python benchmarks/bench_engine.py --compare-c ../kdref [--rounds 5] [--core 0]

random_4p_games_per_s: whole 4-player games (deck, first picks, every decision uniformly random
among the legal ones), scored with Harmony and Middle Kingdom as a playout scores them, warm. The
per-position figures run on the positions met in 100 such games (kept small enough to stay in the
cache, as in a game): a random placement decision (count the legal placements and select one, as
a random playout does: direction and first square, as the yardstick's choose_random gives them), the
list of every legal placement, the score of a final kingdom (territories and both bonuses),
and the full public score (also the largest territory and the crowns). Playouts: from the start
of a 4-player game with both bonuses, as the search bots run them. cold/warm start: `kdtourney
run --no-report` of a 2-game tournament (process start to exit) with an empty Numba cache, then
with the cache it filled.

--compare-c DIR builds the C yardstick in DIR (its kdref.c and Makefile) in a temporary folder,
with benchmarks/yardstick_parts.c beside it for the per-position parts, pins this process and
the C programs to one core, and runs both engines back to back, --rounds times, keeping the best
of each. Every figure is CPU time, so that time slices taken by other processes on a shared machine
do not count (wall-clock figures are taken with `--seconds` alone): the C whole game is the
yardstick's process time over 200,000 games, the C parts are timed by yardstick_parts.c on
positions of the yardstick's own random games. Both engines time each part over PARTS_REPS passes
after one untimed pass (a part timed cold, right after the whole games, measured the cache's
state as much as the code). Method and history: docs/benchmarks.md.
"""

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from numba import njit

from kdtourney.engine import Rules, warm_up
from kdtourney.engine import kernels as K
from kdtourney.engine.bench_kernels import random_games
from kdtourney.engine.game import header_of, rng_state

RULES = Rules(players=4, harmony=True, middle_kingdom=True)
PARTS_GAMES = 100
PARTS_REPS = 100  # passes over the positions per timed part (about 2 ms for the decision)


@njit  # not cached: Numba would not see a change of the engine compiled into it
def collect_positions(header, n_games, rng):
    """Kingdoms and dominoes of every place decision of n_games random games, and the final
    kingdoms: (bits, bbox, dominoes, final_bits, final_bbox)."""
    bits, bbox, st = K.new_game_arrays(header)
    players = header[K.ST_PLAYERS]
    width = bits.shape[1]
    cap = n_games * 48
    kb = np.zeros((cap, width), dtype=np.int64)
    kx = np.zeros((cap, 4), dtype=np.int64)
    dominoes = np.zeros(cap, dtype=np.int64)
    fb = np.zeros((n_games * players, width), dtype=np.int64)
    fx = np.zeros((n_games * players, 4), dtype=np.int64)
    sc = K.scratch(1)
    n = 0
    nf = 0
    for _ in range(n_games):
        st[:K.ST_CUR_ROW] = header
        K.init_game(bits, bbox, st, rng)
        while st[K.ST_PHASE] != K.PHASE_OVER:
            if st[K.ST_PHASE] == K.PHASE_PLACE and n < cap:
                K.copy_kingdom(bits, bbox, st[K.ST_PLAYER], kb, kx, n)
                dominoes[n] = K.domino_to_place(st)
                n += 1
            K.apply_action(bits, bbox, st, K.random_action(bits, bbox, st, sc, rng))
        for p in range(players):
            K.copy_kingdom(bits, bbox, p, fb, fx, nf)
            nf += 1
    return kb[:n], kx[:n], dominoes[:n], fb, fx


@njit  # not cached: Numba would not see a change of the engine compiled into it
def place_decisions(bits, bbox, dominoes, reps, rng):
    """reps x every position: a random placement decision (not played) of a 5x5 kingdom, as a
    random playout takes it: (direction, square), as the yardstick's choose_random gives it."""
    total = 0
    s = rng[0]
    for _ in range(reps):
        for i in range(len(dominoes)):
            d, q, s = K.random_move(bits, i, dominoes[i], s)
            total += d * 64 + q
    return total


@njit  # not cached: Numba would not see a change of the engine compiled into it
def enumerations(bits, bbox, dominoes, size, reps):
    """reps x every position: every legal placement listed."""
    sc = K.scratch(1)
    out = np.empty((1, K.MAX_ACTIONS), dtype=np.int64)
    total = 0
    for _ in range(reps):
        for i in range(len(dominoes)):
            K.legal_moves(bits, bbox, i, size, dominoes[i], sc, 0)
            n = K.moves_to_actions(sc, 0, size, out, 0)
            total += n + out[0, max(n - 1, 0)]
    return total


@njit  # not cached: Numba would not see a change of the engine compiled into it
def scorings(bits, bbox, size, flags, reps):
    """reps x every kingdom: territory points and both bonuses, as a game's end scores them."""
    total = 0
    for _ in range(reps):
        for i in range(len(bbox)):
            total += (K.territory_points(bits, bbox, i, size)
                      + K.bonus_points(bbox, i, size, flags, True))
    return total


@njit  # not cached: Numba would not see a change of the engine compiled into it
def full_scorings(bits, bbox, size, reps):
    """reps x every kingdom: the public score (also the largest territory and the crowns)."""
    total = 0
    for _ in range(reps):
        for i in range(len(bbox)):
            points, largest, crowns = K.score_territories(bits, bbox, i, size)
            total += points + largest + crowns
    return total


class Engine:
    """The Numba engine's figures: ns per game and per position part."""

    def __init__(self, clock):
        self.clock = clock  # time.perf_counter (wall) or time.thread_time (CPU)
        self.header = header_of(RULES)
        self.flags = int(self.header[K.ST_FLAGS])
        self.res = np.zeros((RULES.players, K.RES_COLS), dtype=np.int64)
        self.pos = collect_positions(self.header, PARTS_GAMES, rng_state(2))
        self.parts(1)
        self.game_ns(10)

    def game_ns(self, games):
        t = self.clock()
        random_games(self.header, games, rng_state(1), self.res)
        return (self.clock() - t) * 1e9 / games

    def parts(self, reps):
        """{part: ns per position or kingdom}, each part timed over `reps` passes after one
        untimed pass (as yardstick_parts.c times the C parts)."""
        bits, bbox, dominoes, fbits, fbbox = self.pos
        runs = {"place_decision": (len(dominoes), lambda n: place_decisions(
                    bits, bbox, dominoes, n, rng_state(3))),
                "enumeration": (len(dominoes), lambda n: enumerations(bits, bbox, dominoes, 5, n)),
                "scoring": (len(fbbox), lambda n: scorings(fbits, fbbox, 5, self.flags, n)),
                "full_scoring": (len(fbbox), lambda n: full_scorings(fbits, fbbox, 5, n))}
        out = {}
        for name, (units, run) in runs.items():
            run(1)
            t = self.clock()
            run(reps)
            out[name] = (self.clock() - t) * 1e9 / (reps * units)
        return out


def best_of(run, seconds):
    """Smallest value of run() over repeated calls for about `seconds`."""
    best = run()
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        best = min(best, run())
    return best


def start_time(cache_dir):
    """Seconds for `kdtourney run` of a 2-game tournament, with NUMBA_CACHE_DIR=cache_dir."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    with tempfile.TemporaryDirectory() as out:
        cmd = [os.path.join(os.path.dirname(sys.executable), "kdtourney"), "run",
               "--bots", "random,random", "--players", "2", "--games", "2", "--workers", "1",
               "--seed", "1", "--quiet", "--no-report", "--out", os.path.join(out, "t")]
        t = time.perf_counter()
        subprocess.run(cmd, env=env, check=True, capture_output=True)
        return time.perf_counter() - t


def standalone(seconds):
    engine = Engine(time.perf_counter)
    games = 20_000
    print(f"random_4p_games_per_s: {1e9 / best_of(lambda: engine.game_ns(games), seconds):,.0f}")
    parts = {}
    end = time.perf_counter() + seconds
    while not parts or time.perf_counter() < end:
        for name, ns in engine.parts(PARTS_REPS).items():
            parts[name] = min(parts.get(name, ns), ns)
    print(f"place_decisions_per_s: {1e9 / parts['place_decision']:,.0f}")
    print(f"legal_placement_enumerations_per_s: {1e9 / parts['enumeration']:,.0f}")
    print(f"scorings_per_s: {1e9 / parts['scoring']:,.0f}")
    print(f"full_scorings_per_s: {1e9 / parts['full_scoring']:,.0f}")

    from kdtourney.bots import kernels as B  # the playout policies live with the bots
    from kdtourney.bots.bench_kernels import playout_speed
    from kdtourney.engine import Game
    bits, bbox, st = Game(RULES, 3).arrays
    for name, policy in (("random", B.POLICY_RANDOM), ("greedy", B.POLICY_GREEDY)):
        playout_speed(bits, bbox, st, 2, policy, rng_state(0))
        reps = 5000 if policy == B.POLICY_RANDOM else 500

        def run():
            t = time.perf_counter()
            playout_speed(bits, bbox, st, reps, policy, rng_state(4))
            return (time.perf_counter() - t) / reps
        print(f"{name}_playouts_4p_per_s: {1 / best_of(run, seconds):,.0f}")

    with tempfile.TemporaryDirectory() as cache:
        print(f"cold_start_s: {start_time(cache):.2f}")
        print(f"warm_start_s: {start_time(cache):.2f}")


def build_yardstick(source, folder):
    """Build kdref (with its Makefile) and yardstick_parts from `source` in `folder`."""
    for name in ("kdref.c", "Makefile"):
        if not (source / name).is_file():
            sys.exit(f"Error: {source} has no {name}: --compare-c wants the C yardstick's folder")
        shutil.copy(source / name, folder / name)
    make = subprocess.run(["make", "-C", str(folder), "kdref"], capture_output=True, text=True)
    if make.returncode != 0:
        sys.exit(f"Error: building the yardstick failed: {make.stderr.strip().splitlines()[-1:]}")
    parts = Path(__file__).resolve().parent / "yardstick_parts.c"
    cc = subprocess.run([os.environ.get("CC", "cc"), "-std=c11", "-O3", "-march=native",
                         "-I", str(folder), "-o", str(folder / "parts"), str(parts), "-lm"],
                        capture_output=True, text=True)
    if cc.returncode != 0:
        sys.exit(f"Error: building {parts.name} failed: {cc.stderr.strip().splitlines()[-1:]}")


def children_cpu_s():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def c_figures(folder, games):
    """(ns per whole game, {part: ns}) of one run of each C program: CPU time (the whole game: of
    the process, its start included, which is well under 1% of it)."""
    t = children_cpu_s()
    subprocess.run([str(folder / "kdref"), "random", str(games), "1"],
                   capture_output=True, text=True, check=True)
    game_ns = (children_cpu_s() - t) * 1e9 / games
    run = subprocess.run([str(folder / "parts"), str(PARTS_GAMES), str(PARTS_REPS), "1"],
                         capture_output=True, text=True, check=True)
    parts = {m.group(1): float(m.group(2)) for m in re.finditer(r"(\w+)_ns=([\d.]+)", run.stdout)}
    return game_ns, parts


def compare(source, rounds, core):
    os.sched_setaffinity(0, {core})  # the C programs inherit it: both engines on the same core
    engine = Engine(time.thread_time)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        build_yardstick(source, folder)
        c_figures(folder, 1000)
        best = {}
        for _ in range(rounds):  # back to back, alternating; the best of each
            game_ns, parts = c_figures(folder, 200_000)
            for name, ns in [("game", game_ns)] + list(parts.items()):
                best[("C", name)] = min(best.get(("C", name), ns), ns)
            game_ns = engine.game_ns(100_000)
            for name, ns in [("game", game_ns)] + list(engine.parts(PARTS_REPS).items()):
                best[("Numba", name)] = min(best.get(("Numba", name), ns), ns)
    print(f"C yardstick vs Numba engine, one core (cpu {core}), best of {rounds} rounds "
          "back to back; ratio = C time / Numba time")
    for name, what in (("game", "whole random 4-player game, both bonuses"),
                       ("place_decision", "random placement decision (count + select)"),
                       ("enumeration", "legal placements listed"),
                       ("scoring", "final kingdom scored, both bonuses")):
        c, numba = best[("C", name)], best[("Numba", name)]
        print(f"{what:44s} C {c:8.1f} ns   Numba {numba:8.1f} ns   ratio {c / numba:.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per figure")
    parser.add_argument("--compare-c", metavar="DIR", type=Path, help="the C yardstick's folder")
    parser.add_argument("--rounds", type=int, default=5,
                        help="rounds of the side-by-side comparison")
    parser.add_argument("--core", type=int, default=0,
                        help="the core of the side-by-side comparison")
    args = parser.parse_args()
    warm_up()
    if args.compare_c is not None:
        compare(args.compare_c, args.rounds, args.core)
    else:
        standalone(args.seconds)


if __name__ == "__main__":
    main()
