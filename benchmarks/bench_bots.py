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
import importlib
import math
import multiprocessing as mp
import time

import numpy as np

from kdtourney.bots import _kernels as BK
from kdtourney.bots.greedy import GreedyBot
from kdtourney.engine import Game, Rules
from kdtourney.engine.game import rng_state

BOTS = {"greedy": "greedy.GreedyBot", "mce": "mce.MCEBot", "mcts": "mcts.MCTSBot",
        "expectimax": "expectimax.ExpectimaxBot"}


def bot_class(name):
    module, cls = BOTS[name].split(".")
    return getattr(importlib.import_module(f"kdtourney.bots.{module}"), cls)
RULES = Rules(players=4, harmony=True, middle_kingdom=True)


def parse(spec, time_per_move):
    """'name[:key=value]...' -> (class, params); a search bot gets time= unless iterations= is given."""
    name, *pairs = spec.split(":")
    params = {}
    for pair in pairs:
        key, value = pair.split("=", 1)
        for conv in (int, float):
            try:
                value = conv(value)
                break
            except ValueError:
                pass
        params[key] = value
    cls = bot_class(name)
    if name != "greedy" and "iterations" not in params and "time" not in params:
        params["time"] = time_per_move
    return cls, params


def play_deal(args):
    """One deal played 4 times, the bot in each seat: [(seat, margin, own score)]."""
    spec, time_per_move, deal = args
    cls, params = parse(spec, time_per_move)
    out = []
    for seat in range(4):
        bots = [GreedyBot() for _ in range(4)]
        bots[seat] = cls(**params)
        game = Game(RULES, seed=deal)
        for p, bot in enumerate(bots):
            bot.setup(p, RULES, deal * 10 + p)
        while not game.is_over:
            p = game.current_player
            game.apply(bots[p].act(game.view(p)))
        scores = game.scores()
        best_other = max(s for p, s in enumerate(scores) if p != seat)
        out.append((seat, scores[seat] - best_other, scores[seat]))
    return out


def warm():
    """Compile (or load) every kernel once in the parent before the workers start."""
    for name, params in (("greedy", {}), ("mce", {"iterations": 20}), ("mcts", {"iterations": 20}),
                         ("expectimax", {"iterations": 8})):
        try:
            cls = bot_class(name)
        except ImportError:
            continue
        game = Game(RULES, seed=0)
        bot = cls(**params)
        bot.setup(0, RULES, 0)
        for _ in range(12):
            p = game.current_player
            game.apply(bot.act(game.view(p)) if p == 0 else game.legal_actions()[0])


def strength(spec, games, time_per_move, workers, first_deal):
    deals = max(1, games // 4)
    jobs = [(spec, time_per_move, first_deal + d) for d in range(deals)]
    t0 = time.perf_counter()
    with mp.get_context("fork").Pool(workers) as pool:
        results = pool.map(play_deal, jobs, chunksize=1)
    per_deal = np.array([np.mean([m for _, m, _ in deal]) for deal in results])
    scores = np.array([s for deal in results for _, _, s in deal])
    mean = per_deal.mean()
    half = 1.96 * per_deal.std(ddof=1) / math.sqrt(len(per_deal)) if len(per_deal) > 1 else float("nan")
    label = spec if spec == "greedy" else f"{spec}@{time_per_move}s"
    print(f"margin_vs_3_greedy[{label}]: {mean:+.2f} +- {half:.2f} "
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
