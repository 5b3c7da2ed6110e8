"""Tune the weights of the heuristic (`kdtourney.bots.heuristic`) by CMA-ES on common deals.

    pip install 'kdtourney[tune-bots]'          # the cma package
    python benchmarks/tune_heuristic.py --target standalone --generations 40 --seed 1
    python benchmarks/tune_heuristic.py --target playout --iterations 200 --generations 30 \\
        --deals 16 --seed 2 --start standalone --verify 50 --workers 1

The measure is bench_bots.py's: 4 players, Harmony and Middle Kingdom, the bot against three
`greedy`, each deal played with the bot in every seat; a candidate's fitness is its mean victory
margin. Every candidate of a generation plays the same deals (common random numbers), each
generation new ones (from --first-deal, 100,000 by default: the benchmarks' deals start at 1,000).
`--target standalone` tunes the `heuristic` bot; `--target playout` tunes the weights of
`mcts:policy=own-heuristic`'s playouts (or --policy heuristic's; mcts at --iterations a decision:
a fixed budget, so the fitness does not depend on the machine's load). Both start from
greedy's rules as weights, or from the shipped weights of a target (--start). place_gain is the
unit (1) and is not tuned. The optimiser is the cma package's CMA-ES (seeded: the same command
gives the same weights, whatever --workers; the first K generations of a longer run are those of
--generations K); the candidates' games run on --workers processes. It prints one line a
generation and ends with the best mean's weights, measured on --verify deals of their own (from
--first-deal - 10,000) against the start's, paired deal by deal. --log FILE appends each
generation as a JSON line.
"""

import argparse
import json
import multiprocessing as mp
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_bots import interval  # noqa: E402

from kdtourney.bots import heuristic as H  # noqa: E402
from kdtourney.bots.greedy import GreedyBot  # noqa: E402
from kdtourney.bots.heuristic_kernels import WEIGHTS  # noqa: E402
from kdtourney.bots.mcts import MCTSBot  # noqa: E402
from kdtourney.engine import Rules  # noqa: E402
from kdtourney.match.loop import play_match  # noqa: E402

RULES = Rules(players=4, harmony=True, middle_kingdom=True)
TUNED = WEIGHTS[1:]  # place_gain is the unit
# greedy's rules as weights: points now and after the claim, a hole or an off-centre spot -5
GREEDY_LIKE = dict(place_gain=1.0, place_holes=-5.0, middle_lost=-5.0, frontier=0.0,
                   crowned_edges=0.0, harmony_lost=-5.0, claim_gain=1.0, claim_bad_spot=-5.0,
                   claim_crowns=0.0, claim_order=0.0, claim_denial=0.0)


def as_weights(x):
    return {"place_gain": 1.0, **{name: float(v) for name, v in zip(TUNED, x)}}


def make_bot(candidate, weights):
    target, iterations, policy = candidate
    if target == "standalone":
        return H.HeuristicBot(**weights)
    bot = MCTSBot(iterations=iterations, policy=policy)
    bot.heuristic_weights = weights
    return bot


def play_deal(task):
    """The summed victory margin of the bot in every seat of one deal."""
    candidate, x, deal = task
    weights = as_weights(x)
    total = 0.0
    for seat in range(RULES.players):
        factories = [GreedyBot] * RULES.players
        factories[seat] = lambda: make_bot(candidate, weights)
        seeds = [[deal * 10 + p] for p in range(RULES.players)]
        result = play_match(RULES, [deal], seeds, factories)
        if result.faults:
            raise RuntimeError(f"deal {deal}: {result.faults[0].message}")
        total += result.seats[seat].margin
    return total


def margins(pool, candidate, xs, deals):
    """Per candidate (make_bot's, with weights xs), its margin in each deal (a game's mean over
    the seats)."""
    tasks = [(candidate, list(x), d) for x in xs for d in deals]
    out = np.array(pool.map(play_deal, tasks, chunksize=1)) / RULES.players
    return out.reshape(len(xs), len(deals))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", choices=("standalone", "playout"), default="standalone")
    ap.add_argument("--start", choices=("greedy-like", "standalone", "playout"),
                    default="greedy-like",
                    help="start weights: greedy's rules as weights, or a target's shipped ones")
    ap.add_argument("--iterations", type=int, default=200,
                    help="mcts iterations a decision (playout)")
    ap.add_argument("--policy", choices=("own-heuristic", "heuristic"), default="own-heuristic",
                    help="mcts's policy whose playout weights are tuned (playout)")
    ap.add_argument("--generations", type=int, default=40)
    ap.add_argument("--popsize", type=int, default=0,
                    help="candidates a generation (0: cma's default)")
    ap.add_argument("--deals", type=int, default=50, help="deals a generation (4 games each)")
    ap.add_argument("--sigma", type=float, default=2.0, help="CMA-ES's initial step, in points")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--first-deal", type=int, default=100_000)
    ap.add_argument("--verify", type=int, default=100, help="deals of the final check")
    ap.add_argument("--workers", type=int, default=mp.cpu_count())
    ap.add_argument("--log", help="append each generation as a JSON line")
    args = ap.parse_args()
    try:
        import cma
    except ImportError:
        raise SystemExit("Error: the tune needs the cma package: "
                         "pip install 'kdtourney[tune-bots]'") from None
    start_weights = {"greedy-like": GREEDY_LIKE, "standalone": H.STANDALONE,
                     "playout": H.PLAYOUT}[args.start]
    x0 = [start_weights[name] for name in TUNED]
    options = {"seed": args.seed, "verbose": -9}
    if args.popsize:
        options["popsize"] = args.popsize
    es = cma.CMAEvolutionStrategy(x0, args.sigma, options)
    candidate = (args.target, args.iterations, args.policy)
    log = open(args.log, "a") if args.log else None
    t0 = time.perf_counter()
    with mp.get_context("fork").Pool(args.workers) as pool:
        for gen in range(args.generations):
            first = args.first_deal + gen * args.deals
            deals = range(first, first + args.deals)
            xs = es.ask()
            m = margins(pool, candidate, xs, deals).mean(axis=1)
            es.tell(xs, (-m).tolist())
            mean = es.result.xfavorite
            line = {"generation": gen, "best": float(m.max()), "median": float(np.median(m)),
                    "sigma": float(es.sigma), "mean_weights": as_weights(mean),
                    "wall_s": round(time.perf_counter() - t0, 1)}
            print(f"generation {gen}: margin best {m.max():+.2f} median {np.median(m):+.2f} "
                  f"sigma {es.sigma:.2f} ({line['wall_s']:.0f} s)", flush=True)
            if log:
                log.write(json.dumps(line) + "\n")
                log.flush()
        tuned = es.result.xfavorite
        first = args.first_deal - 10_000
        deals = range(first, first + args.verify)
        check = margins(pool, candidate, [x0, tuned], deals)
    if log:
        log.close()
    (s_mean, s_half), (t_mean, t_half) = interval(check[0]), interval(check[1])
    g_mean, g_half = interval(check[1] - check[0])
    print(f"verify ({args.verify * RULES.players} games, deals {first}..): start {s_mean:+.2f} +- "
          f"{s_half:.2f}, tuned {t_mean:+.2f} +- {t_half:.2f}, gain {g_mean:+.2f} +- {g_half:.2f}")
    print("tuned weights: " + json.dumps({k: round(v, 3) for k, v in as_weights(tuned).items()}))
    print(f"wall: {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
