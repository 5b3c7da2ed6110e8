"""Strength and speed of the built-in bots; prints `name: value` lines.

Strength, the measure of Gedda, Lagerkvist and Butler (2018): 4-player games with Harmony and
Middle Kingdom, one bot against three `greedy`; victory margin = own score minus the best
opponent's, averaged with a 95% interval (normal, over deals: each deal is played with the bot in
every seat, so seats are equal). Every budget of a bot plays the same deals with the same
opponents' seeds, so the gain from one budget to the next is measured paired, deal by deal, with
its own (narrower) interval. Speed: playouts per CPU second from the start of a 4-player game, per
policy, one core; `--search-speed [SPEC]`: only the search iterations per CPU second of mcts at its
defaults (or SPEC) against greedy in 2 and 4 players and Mighty Duel (`search_speed`).

    python benchmarks/bench_bots.py                      # greedy baseline + mcts at 0.1 s, speeds
    python benchmarks/bench_bots.py --games 400 --time 0.1 --bot mce --bot mcts:c=0.5
    python benchmarks/bench_bots.py --no-speed --bot mcts --time 0.025,0.1,0.5,2 --games 400 \\
        --results mcts.jsonl --plot strength.svg         # a scaling curve, resumable
    python benchmarks/bench_bots.py --no-speed --bot mcts --iterations 250,1000,4000
    python benchmarks/bench_bots.py --search-speed            # mcts iterations per CPU second

--time and --iterations take a comma-separated list of budgets per decision, given to every search
bot whose spec has none. The deals run on --workers processes (default: every core). --results
FILE keeps every finished deal (JSON lines): the same command again skips what is stored, so an
interrupted run resumes. `iterations_per_decision` is the mean search iterations of the bot's
decisions that had a choice (for calibrating time against iteration budgets).
"""

import argparse
import json
import math
import multiprocessing as mp
import time
from pathlib import Path

import numpy as np

from kdtourney.bots import bench_kernels
from kdtourney.bots import kernels as BK
from kdtourney.bots.base import Bot
from kdtourney.bots.greedy import GreedyBot
from kdtourney.bots.random_bot import RandomBot
from kdtourney.engine import Game, Rules
from kdtourney.engine.game import rng_state
from kdtourney.match.loop import play_match
from kdtourney.registry import BotRegistry, parse_entrant

RULES = Rules(players=4, harmony=True, middle_kingdom=True)


def expand(spec, default):
    """[(label, spec, (kind, budget) or None)]: one entry per budget of a list in the spec
    (`mcts:time=0.1,0.5`), the spec's own single budget, or each budget of the default list
    (greedy has none). label: the spec without its budget."""
    name, *parts = spec.split(":")
    for i, part in enumerate(parts):
        key, _, value = (t.strip() for t in part.partition("="))
        if key in ("time", "iterations"):
            label = ":".join([name, *parts[:i], *parts[i + 1:]])
            return [(label, ":".join([name, *parts[:i], f"{key}={text}", *parts[i + 1:]]), budget)
                    for text, budget in budgets(value, key)]
    if parse_entrant(spec).name == "greedy":
        return [(spec, spec, None)]
    return [(spec, f"{spec}:{kind}={text}", (kind, value)) for text, (kind, value) in default]


class Counting(Bot):
    """Wraps a bot: sums the search iterations (`last_iterations`) of decisions with a choice."""

    def __init__(self, bot):
        self.bot, self.decisions, self.iterations = bot, 0, 0

    def setup(self, seat, rules, seed):
        self.bot.setup(seat, rules, seed)

    def finish(self, scores, ranks):
        self.bot.finish(scores, ranks)

    def close(self):
        self.bot.close()

    def act(self, view):
        action = self.bot.act(view)
        if hasattr(self.bot, "last_iterations") and len(view.legal_actions()) > 1:
            self.decisions += 1
            self.iterations += self.bot.last_iterations
        return action


def play_deal(args):
    """One deal played 4 times, the bot in each seat: a JSON-able record."""
    spec, deal = args
    registry = BotRegistry(env=False, cwd=False, entry_points=False)
    seats = []
    counted = []
    t0 = time.process_time()
    for seat in range(4):
        factories = [GreedyBot] * 4
        factories[seat] = lambda: counted.append(Counting(registry.create(spec))) or counted[-1]
        result = play_match(RULES, [deal], [[deal * 10 + p] for p in range(4)], factories)
        if result.faults:
            raise RuntimeError(f"{spec} in deal {deal}: {result.faults[0].message}")
        own = result.seats[seat]
        seats.append([seat, own.margin, own.score])
    decisions = sum(c.decisions for c in counted)
    return {"spec": spec, "deal": deal, "seats": seats, "cpu": time.process_time() - t0,
            "decisions": decisions, "iterations": sum(c.iterations for c in counted)}


def warm():
    """Compile (or load) every kernel once in the parent before the workers start."""
    registry = BotRegistry(env=False, cwd=False, entry_points=False)
    for spec in ("greedy", "mce:iterations=20", "mcts:iterations=20", "expectimax:iterations=8"):
        play_match(RULES, [0], [[p] for p in range(4)],
                   [lambda: registry.create(spec)] + [RandomBot] * 3)


def interval(values):
    """(mean, 95% half-width) of per-deal values."""
    values = np.asarray(values, dtype=float)
    if len(values) < 2:
        return values.mean(), float("nan")
    return values.mean(), 1.96 * values.std(ddof=1) / math.sqrt(len(values))


class Point:
    """One bot at one budget: its spec and the records of its deals."""

    def __init__(self, label, spec, budget):
        self.label, self.spec, self.budget = label, spec, budget
        self.records = {}

    def margins(self):
        """{deal: mean margin over its seats}."""
        return {d: np.mean([m for _, m, _ in r["seats"]]) for d, r in self.records.items()}

    def summary(self):
        mean, half = interval(list(self.margins().values()))
        scores = [s for r in self.records.values() for _, _, s in r["seats"]]
        decisions = sum(r.get("decisions", 0) for r in self.records.values())
        its = sum(r.get("iterations", 0) for r in self.records.values())
        return {"spec": self.spec, "label": self.label, "budget": self.budget,
                "games": len(scores), "margin": mean, "half": half,
                "mean_score": float(np.mean(scores)),
                "iterations_per_decision": its / decisions if decisions else None}

    def line(self):
        s = self.summary()
        its = ""
        if s["iterations_per_decision"]:
            its = f", iterations_per_decision={s['iterations_per_decision']:,.0f}"
        return (f"margin_vs_3_greedy[{self.spec}]: {s['margin']:+.2f} +- {s['half']:.2f} "
                f"(games={s['games']}, mean_score={s['mean_score']:.1f}{its})")


def gain_line(low, high):
    """The paired gain from one budget to the next over the deals both played."""
    a, b = low.margins(), high.margins()
    deals = sorted(set(a) & set(b))
    mean, half = interval([b[d] - a[d] for d in deals])
    return (f"gain[{high.spec} vs {low.spec}]: {mean:+.2f} +- {half:.2f} "
            f"(paired over {len(deals)} deals)")


def load(path):
    """{(spec, deal): record} from a results file."""
    stored = {}
    if path and Path(path).exists():
        for line in Path(path).read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                stored[(r["spec"], r["deal"])] = r
    return stored


def strength(points, deals, workers, results):
    stored = load(results)
    jobs = []
    for point in points:
        for deal in deals:
            record = stored.get((point.spec, deal))
            if record is None:
                jobs.append((point.spec, deal))
            else:
                point.records[deal] = record
    by_spec = {}
    for point in points:
        by_spec.setdefault(point.spec, []).append(point)
    left = {point.spec: len(deals) - len(point.records) for point in points}
    t0 = time.perf_counter()
    out = open(results, "a") if results else None
    try:
        for point in points:
            if left[point.spec] == 0:
                print(point.line() + " (stored)", flush=True)
        with mp.get_context("fork").Pool(workers) as pool:
            for record in pool.imap_unordered(play_deal, jobs, chunksize=1):
                if out:
                    out.write(json.dumps(record) + "\n")
                    out.flush()
                for point in by_spec[record["spec"]]:
                    point.records[record["deal"]] = record
                left[record["spec"]] -= 1
                if left[record["spec"]] == 0:
                    for point in by_spec[record["spec"]]:
                        print(f"{point.line()} wall={time.perf_counter() - t0:.0f}s", flush=True)
    finally:
        if out:
            out.close()


def plot(points, path):
    """Victory margin against the budget per decision, one line per bot (log budget axis)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6))
    bots = {}
    for point in points:
        bots.setdefault(point.label, []).append(point)
    kinds = {p.budget[0] for p in points if p.budget}
    for label, group in bots.items():
        s = [p.summary() for p in group]
        if group[0].budget is None:  # no budget (greedy): a horizontal band
            ax.axhspan(s[0]["margin"] - s[0]["half"], s[0]["margin"] + s[0]["half"], alpha=0.2,
                       color="grey")
            ax.axhline(s[0]["margin"], color="grey", lw=1, label=label)
            continue
        x = [p.budget[1] for p in group]
        ax.errorbar(x, [v["margin"] for v in s], yerr=[v["half"] for v in s], marker="o",
                    capsize=3, label=label)
    ax.set_xscale("log")
    ax.set_xlabel("seconds per decision" if kinds == {"time"} else "budget per decision")
    ax.set_ylabel("victory margin vs 3 greedy")
    ax.axhline(0, color="black", lw=0.5)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    ax.set_title("4 players, Harmony + Middle Kingdom, 95% intervals", fontsize="small")
    fig.tight_layout()
    fig.savefig(path)
    print(f"plot: {path}")


def speed(rounds=3):
    """Playouts per CPU second of each policy from the start of a 4-player game, best of
    `rounds` (the same playouts each round)."""
    game = Game(RULES, seed=1)
    bits, bbox, st = game.arrays
    for name, policy in BK.POLICIES.items():
        bench_kernels.playout_speed(bits, bbox, st, 2, policy, rng_state(7))
        n = 64
        while True:
            t0 = time.thread_time()
            bench_kernels.playout_speed(bits, bbox, st, n, policy, rng_state(7))
            dt = time.thread_time() - t0
            if dt > 0.4:
                break
            n *= 2
        best = dt
        for _ in range(rounds - 1):
            t0 = time.thread_time()
            bench_kernels.playout_speed(bits, bbox, st, n, policy, rng_state(7))
            best = min(best, time.thread_time() - t0)
        print(f"playouts_per_cpu_s[{name}, 4 players, from start, 1 core]: {n / best:,.0f}",
              flush=True)


SEARCH_TABLES = {"2 players": Rules(2), "4 players": RULES, "Mighty Duel": Rules(2, variant="duel")}


def search_speed(spec="mcts", games=2, rounds=3):
    """The search iterations per CPU second of a search bot (`spec`, its defaults by default)
    playing seat 0 against greedy in `games` games of each table (SEARCH_TABLES): its decisions'
    CPU time (the bot's Python included), the best of `rounds` rounds of the same games."""
    registry = BotRegistry(env=False, cwd=False, entry_points=False)
    for table, rules in SEARCH_TABLES.items():
        best = None
        for _ in range(rounds):
            iterations, cpu = 0, 0.0
            for deal in range(games):
                bots = [registry.create(spec)] + [GreedyBot() for _ in range(rules.players - 1)]
                for seat, bot in enumerate(bots):
                    bot.setup(seat, rules, deal * 10 + seat)
                game = Game(rules, deal)
                while not game.is_over:
                    seat = game.current_player
                    view = game.view(seat)
                    t0 = time.thread_time()
                    action = bots[seat].act(view)
                    if seat == 0:
                        cpu += time.thread_time() - t0
                        iterations += (bots[0].last_iterations if len(view.legal_actions()) > 1
                                       else 0)
                    game.apply(action)
            best = cpu if best is None else min(best, cpu)
        print(f"iterations_per_cpu_s[{spec}, {table}, against greedy, 1 core]: "
              f"{iterations / best:,.0f} ({iterations:,} iterations in {best:.2f} s)", flush=True)


def budgets(text, kind):
    """[(text, (kind, value))] from a comma-separated list of budgets per decision."""
    cast = int if kind == "iterations" else float
    try:
        out = [(v.strip(), (kind, cast(v))) for v in text.split(",")]
    except ValueError:
        raise SystemExit(f"Error: {kind} takes a comma-separated list of numbers, "
                         f"not {text!r}") from None
    if min(v for _, (_, v) in out) <= 0:
        raise SystemExit(f"Error: {kind} budgets must be positive, not {text!r}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=200, help="games per bot and budget (4 per deal)")
    ap.add_argument("--time", help="seconds per decision of the search bots, e.g. 0.025,0.1,0.5,2")
    ap.add_argument("--iterations", help="iterations per decision instead, e.g. 250,1000,4000")
    ap.add_argument("--bot", action="append",
                    help="bot spec, e.g. mce, mcts:c=0.5 or mcts:time=0.1,0.5 (repeatable)")
    ap.add_argument("--workers", type=int, default=mp.cpu_count())
    ap.add_argument("--first-deal", type=int, default=1000)
    ap.add_argument("--results", help="JSON-lines file of finished deals (read, then appended)")
    ap.add_argument("--plot", help="write the margin against the budget to this .svg or .png")
    ap.add_argument("--markdown", action="store_true", help="print the results as a Markdown table")
    ap.add_argument("--no-strength", action="store_true")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--search-speed", metavar="SPEC", nargs="?", const="mcts",
                    help="only the search speed of SPEC (default mcts at its defaults)")
    args = ap.parse_args()
    if args.time and args.iterations:
        raise SystemExit("Error: give --time or --iterations, not both")
    default = (budgets(args.iterations, "iterations") if args.iterations
               else budgets(args.time or "0.1", "time"))
    points = []
    for spec in args.bot or ["greedy", "mcts"]:
        points += [Point(label, s, budget) for label, s, budget in expand(spec, default)
                   if s not in {p.spec for p in points}]
    warm()
    if args.search_speed:
        search_speed(args.search_speed)
        return
    if not args.no_speed:
        speed()
    if not args.no_strength:
        deals = range(args.first_deal, args.first_deal + max(2, args.games // 4))
        strength(points, deals, args.workers, args.results)
        for low, high in zip(points, points[1:]):
            if low.label == high.label:
                print(gain_line(low, high), flush=True)
        if args.markdown:
            print("\n| bot | budget per decision | victory margin against three `greedy` | "
                  "mean score | games |")
            print("|---|---|---|---|---|")
            for p in points:
                s = p.summary()
                budget = "" if p.budget is None else (
                    f"{p.budget[1]:g} s" if p.budget[0] == "time"
                    else f"{p.budget[1]:,} iterations")
                print(f"| `{p.label}` | {budget} | {s['margin']:+.1f} ± {s['half']:.1f} | "
                      f"{s['mean_score']:.1f} | {s['games']} |")
        if args.plot:
            plot(points, args.plot)


if __name__ == "__main__":
    main()
