"""Engine speed, one core: prints `name: value` lines.

    python benchmarks/bench_engine.py [--seconds 2]

random_4p_games_per_s: whole 4-player games (deck, first picks, every decision uniformly random
among the legal ones), scored with Harmony and Middle Kingdom, warm. The enumeration and scoring
figures run on the positions met in such games. cold/warm start: `kdtourney run --no-report` of a
2-game tournament (process start to exit) with an empty Numba cache, then with the cache it filled.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from numba import njit

from kdtourney.engine import Rules, warm_up
from kdtourney.engine import _kernels as K
from kdtourney.engine.game import header_of, rng_state


@njit(cache=True)
def collect_positions(header, n_games, rng, kingdoms, boxes, dominoes):
    """Kingdoms and dominoes of the place decisions of n_games random games; returns their count."""
    players = header[K.ST_PLAYERS]
    bits = np.zeros((players, K.PLANES, K.G), dtype=np.int64)
    bbox = np.zeros((players, 4), dtype=np.int64)
    st = np.zeros(K.ST_LEN, dtype=np.int64)
    scr = np.zeros((K.SCRATCH_ROWS, K.G), dtype=np.int64)
    n = 0
    for _ in range(n_games):
        st[:K.ST_CUR_ROW] = header
        K.init_game(bits, bbox, st, rng)
        while st[K.ST_PHASE] != K.PHASE_OVER:
            if st[K.ST_PHASE] == K.PHASE_PLACE and n < len(dominoes):
                p = st[K.ST_PLAYER]
                kingdoms[n] = bits[p]
                boxes[n] = bbox[p]
                dominoes[n] = K.domino_to_place(st)
                n += 1
            K.apply_action(bits, bbox, st, K.random_action(bits, bbox, st, scr, rng))
    return n


@njit(cache=True)
def enumerate_all(kingdoms, boxes, dominoes, size, reps):
    scr = np.zeros((K.SCRATCH_ROWS, K.G), dtype=np.int64)
    out = np.empty(K.MAX_ACTIONS, dtype=np.int64)
    total = 0
    for _ in range(reps):
        for i in range(len(dominoes)):
            K.legal_masks(kingdoms[i], boxes[i], size, dominoes[i], scr)
            total += K.masks_to_actions(scr, out)
    return total


@njit(cache=True)
def score_all(kingdoms, boxes, reps):
    total = 0
    for _ in range(reps):
        for i in range(len(boxes)):
            total += K.score_territories(kingdoms[i], boxes[i])[0]
    return total


def rate(run, units_per_call, seconds):
    """Best units per second over calls of `run` repeated for about `seconds`."""
    best = 0.0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        t = time.perf_counter()
        run()
        best = max(best, units_per_call / (time.perf_counter() - t))
    return best


def start_time(cache_dir):
    """Seconds for `kdtourney run` of a 2-game tournament, with NUMBA_CACHE_DIR=cache_dir."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    with tempfile.TemporaryDirectory() as out:
        cmd = [os.path.join(os.path.dirname(sys.executable), "kdtourney"), "run", "--bots", "random,random", "--players", "2",
               "--games", "2", "--workers", "1", "--seed", "1", "--quiet", "--no-report", "--out", os.path.join(out, "t")]
        t = time.perf_counter()
        subprocess.run(cmd, env=env, check=True, capture_output=True)
        return time.perf_counter() - t


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per figure")
    args = parser.parse_args()
    warm_up()

    rules = Rules(players=4, harmony=True, middle_kingdom=True)
    header = header_of(rules)
    res = np.zeros((4, K.RES_COLS), dtype=np.int64)
    games = 20_000
    K.random_games(header, 10, rng_state(0), res)
    print(f"random_4p_games_per_s: {rate(lambda: K.random_games(header, games, rng_state(1), res), games, args.seconds):,.0f}")

    cap = 100_000
    kingdoms = np.zeros((cap, K.PLANES, K.G), dtype=np.int64)
    boxes = np.zeros((cap, 4), dtype=np.int64)
    dominoes = np.zeros(cap, dtype=np.int64)
    n = collect_positions(header, cap // 48 + 1, rng_state(2), kingdoms, boxes, dominoes)
    kingdoms, boxes, dominoes = kingdoms[:n], boxes[:n], dominoes[:n]
    enumerate_all(kingdoms[:10], boxes[:10], dominoes[:10], 5, 1)
    score_all(kingdoms[:10], boxes[:10], 1)
    print(f"legal_placement_enumerations_per_s: {rate(lambda: enumerate_all(kingdoms, boxes, dominoes, 5, 1), n, args.seconds):,.0f}")
    print(f"scorings_per_s: {rate(lambda: score_all(kingdoms, boxes, 1), n, args.seconds):,.0f}")

    from kdtourney.bots import _kernels as B  # the playout policies live with the bots
    from kdtourney.engine import Game
    bits, bbox, st = Game(rules, 3).arrays
    for name, policy in (("random", B.POLICY_RANDOM), ("greedy", B.POLICY_GREEDY)):
        B.playout_speed(bits, bbox, st, 2, policy, rng_state(0))
        reps = 5000 if policy == B.POLICY_RANDOM else 300
        figure = rate(lambda: B.playout_speed(bits, bbox, st, reps, policy, rng_state(4)), reps, args.seconds)
        print(f"{name}_playouts_4p_per_s: {figure:,.0f}")

    with tempfile.TemporaryDirectory() as cache:
        print(f"cold_start_s: {start_time(cache):.2f}")
        print(f"warm_start_s: {start_time(cache):.2f}")


if __name__ == "__main__":
    main()
