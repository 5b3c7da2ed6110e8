"""Strength and speed of the built-in bots; prints `name: value` lines.

Strength, the measure of Gedda, Lagerkvist and Butler (2018): 4-player games with Harmony and
Middle Kingdom, one bot against three `greedy`; victory margin = own score minus the best
opponent's, averaged with a 95% interval (normal, over deals: each deal is played with the bot in
every seat, so seats are equal). Speed: playouts per second from the start of a 4-player game, per
policy, one core.

    python benchmarks/bench_bots.py                      # greedy baseline + mcts at 0.1 s, speeds
    python benchmarks/bench_bots.py --games 400 --time 0.1 --bot mce --bot mcts:c=0.5
    python benchmarks/bench_bots.py --no-strength        # only the speeds
"""

import argparse
import math
import multiprocessing as mp
import time

import numpy as np

from kdtourney.arena.match import play_match
from kdtourney.bots import _kernels as BK
from kdtourney.bots.greedy import GreedyBot
from kdtourney.bots.random_bot import RandomBot
from kdtourney.bots.registry import BotRegistry, parse_entrant
from kdtourney.engine import Game, Rules
from kdtourney.engine.game import rng_state

RULES = Rules(players=4, harmony=True, middle_kingdom=True)


def with_budget(spec, time_per_move):
    """A search bot without iterations= or time= gets time=time_per_move."""
    entrant = parse_entrant(spec)
    if entrant.name != "greedy" and not {"iterations", "time"} & set(entrant.kwargs):
        return f"{spec}:time={time_per_move}"
    return spec


def play_deal(args):
    """One deal played 4 times, the bot in each seat: [(seat, margin, own score)]."""
    spec, deal = args
    registry = BotRegistry(env=False, cwd=False, entry_points=False)
    out = []
    for seat in range(4):
        factories = [GreedyBot] * 4
        factories[seat] = lambda: registry.create(spec)
        result = play_match(RULES, [deal], [[deal * 10 + p] for p in range(4)], factories)
        if result.faults:
            raise RuntimeError(f"{spec} in deal {deal}: {result.faults[0].message}")
        own = result.seats[seat]
        out.append((seat, own.margin, own.score))
    return out


def warm():
    """Compile (or load) every kernel once in the parent before the workers start."""
    registry = BotRegistry(env=False, cwd=False, entry_points=False)
    for spec in ("greedy", "mce:iterations=20", "mcts:iterations=20", "expectimax:iterations=8"):
        play_match(RULES, [0], [[p] for p in range(4)],
                   [lambda: registry.create(spec)] + [RandomBot] * 3)


def strength(spec, games, time_per_move, workers, first_deal):
    deals = max(1, games // 4)
    spec = with_budget(spec, time_per_move)
    jobs = [(spec, first_deal + d) for d in range(deals)]
    t0 = time.perf_counter()
    with mp.get_context("fork").Pool(workers) as pool:
        results = pool.map(play_deal, jobs, chunksize=1)
    per_deal = np.array([np.mean([m for _, m, _ in deal]) for deal in results])
    scores = np.array([s for deal in results for _, _, s in deal])
    mean = per_deal.mean()
    half = 1.96 * per_deal.std(ddof=1) / math.sqrt(len(per_deal)) if len(per_deal) > 1 else float("nan")
    print(f"margin_vs_3_greedy[{spec}]: {mean:+.2f} +- {half:.2f} "
          f"(games={4 * deals}, mean_score={scores.mean():.1f}, wall={time.perf_counter() - t0:.0f}s)",
          flush=True)


def speed(seconds=2.0):
    game = Game(RULES, seed=1)
    bits, bbox, st = game.arrays
    rng = rng_state(7)
    for name, policy in BK.POLICIES.items():
        BK.playout_speed(bits, bbox, st, 2, policy, rng)
        n = 64
        while True:
            t0 = time.perf_counter()
            BK.playout_speed(bits, bbox, st, n, policy, rng)
            dt = time.perf_counter() - t0
            if dt > seconds / 4:
                break
            n *= 2
        reps = max(1, int(n * seconds / dt))
        t0 = time.perf_counter()
        BK.playout_speed(bits, bbox, st, reps, policy, rng)
        print(f"playouts_per_s[{name}, 4 players, from start, 1 core]: "
              f"{reps / (time.perf_counter() - t0):,.0f}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=200, help="games per bot (rounded down to 4 per deal)")
    ap.add_argument("--time", type=float, default=0.1, help="seconds per decision of the search bots")
    ap.add_argument("--bot", action="append", help="bot spec, e.g. mce or mcts:c=0.5 (repeatable)")
    ap.add_argument("--workers", type=int, default=mp.cpu_count())
    ap.add_argument("--first-deal", type=int, default=1000)
    ap.add_argument("--no-strength", action="store_true")
    ap.add_argument("--no-speed", action="store_true")
    args = ap.parse_args()
    warm()
    if not args.no_speed:
        speed()
    if not args.no_strength:
        for spec in args.bot or ["greedy", "mcts"]:
            strength(spec, args.games, args.time, args.workers, args.first_deal)


if __name__ == "__main__":
    main()
