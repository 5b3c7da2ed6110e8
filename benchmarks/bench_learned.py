"""Strength of the learned evaluation: bots given a value network's weights file, on the measure
of bench_bots.py (4 players or --players, Harmony and Middle Kingdom, one bot against `greedy`
players or against --against SPEC, each deal played with the bot in every seat), every variant on
the same deals, each compared deal by deal with the first.

    python benchmarks/bench_learned.py --bot mcts:iterations=1000 \\
        --bot mcts:iterations=1000:eval=net --weights my_value.npz --games 200 --first-deal 5000
    python benchmarks/bench_learned.py --bot value-greedy --curve 'my_value.pos*.npz' \\
        --bot mcts:iterations=1000:eval=net --plot curve.svg --results curve.jsonl

A variant is a bot spec, with the weights files of --weights (the bot's `weights`, instead of the
shipped networks) when the spec's bot evaluates with a network. --curve GLOB measures every
checkpoint the glob matches (train.py --checkpoints) with every spec that uses a network, and
--plot draws the margin against the positions seen in training. --results FILE keeps finished
deals (JSON lines) and skips them when run again. Deals: from --first-deal (default 1000, as
bench_bots.py; training never plays these deals), 4 games each. --speed prints the CPU of one
network evaluation against one greedy playout to the end:

    python benchmarks/bench_learned.py --speed
"""

import argparse
import json
import multiprocessing as mp
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_bots import Counting, Point, gain_line, load  # noqa: E402

from kdtourney.bots import bench_kernels  # noqa: E402
from kdtourney.bots import kernels as BK  # noqa: E402
from kdtourney.bots.valuenet import SHIPPED, network_for  # noqa: E402
from kdtourney.engine import Game, Rules  # noqa: E402
from kdtourney.engine.game import rng_state  # noqa: E402
from kdtourney.match.loop import play_match  # noqa: E402
from kdtourney.registry import BotRegistry  # noqa: E402


def rules_of(players):
    return Rules(players=players, harmony=True, middle_kingdom=True)


def make(spec, weights):
    bot = BotRegistry(env=False, cwd=False, entry_points=False).create(spec)
    if weights:
        bot.weights = tuple(weights)
    return bot


def uses_net(spec):
    return bool(re.search(r"eval=(net|mix)", spec)) or spec.split(":")[0] == "value-greedy"


def play_deal(task):
    """One deal played once per seat, the variant in that seat against `against` players (their
    seeds the same in every variant)."""
    label, spec, weights, deal, players, against = task
    rules = rules_of(players)
    seats, counted = [], []
    t0 = time.process_time()
    for seat in range(players):
        factories = [lambda: make(against, ())] * players
        factories[seat] = lambda: counted.append(Counting(make(spec, weights))) or counted[-1]
        result = play_match(rules, [deal], [[deal * 10 + p] for p in range(players)], factories)
        if result.faults:
            raise RuntimeError(f"{label} in deal {deal}: {result.faults[0].message}")
        own = result.seats[seat]
        seats.append([seat, own.margin, own.score])
    return {"spec": label, "deal": deal, "seats": seats, "cpu": time.process_time() - t0,
            "decisions": sum(c.decisions for c in counted),
            "iterations": sum(c.iterations for c in counted)}


def speed(rules, weights, seconds=1.0):
    """CPU per network evaluation (features and forward pass) against one greedy playout to the end,
    from positions after 0, 24 and 48 decisions of a game (first legal actions)."""
    net = network_for(weights or SHIPPED, rules)
    if net is None:
        raise SystemExit(f"Error: no network for {rules.players} players to time")

    def per_call(run):
        run(2)
        n = 16
        while True:
            t0 = time.process_time()
            run(n)
            dt = time.process_time() - t0
            if dt > seconds:
                return dt / n
            n *= 4

    for decisions in (0, 24, 48):
        game = Game(rules, 1)
        for _ in range(decisions):
            game.apply(game.legal_actions()[0])
        bits, bbox, st = game.arrays
        t_net = per_call(lambda n: bench_kernels.value_speed(bits, bbox, st, net.arrays, n))
        t_play = per_call(lambda n: bench_kernels.playout_speed(bits, bbox, st, n, BK.POLICY_GREEDY,
                                                                rng_state(1)))
        print(f"cost after {decisions} decisions ({rules.players} players, 1 core): network "
              f"{t_net * 1e6:.1f} us an evaluation, greedy playout {t_play * 1e6:.1f} us: "
              f"a playout costs {t_play / t_net:.1f} evaluations", flush=True)


def positions_seen(path):
    m = re.search(r"\.pos(\d+)\.npz$", str(path))
    return int(m.group(1)) if m else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bot", action="append", default=[], help="bot spec (repeatable)")
    ap.add_argument("--weights", action="append", default=[],
                    help="weights file(s) for the net bots")
    ap.add_argument("--curve",
                    help="glob of checkpoint files: one variant per checkpoint and net spec")
    ap.add_argument("--players", type=int, default=4, choices=(2, 3, 4))
    ap.add_argument("--against", default="greedy",
                    help="the other seats' bot spec (default greedy)")
    ap.add_argument("--games", type=int, default=200, help="games per variant (players per deal)")
    ap.add_argument("--first-deal", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=mp.cpu_count())
    ap.add_argument("--results", help="JSON-lines file of finished deals (read, then appended)")
    ap.add_argument("--plot", help="with --curve: margin against positions seen, to this .svg/.png")
    ap.add_argument("--speed", action="store_true",
                    help="time a network evaluation against a greedy playout (the first --weights)")
    args = ap.parse_args()
    rules = rules_of(args.players)
    if args.speed:
        speed(rules, args.weights[:1])
    if not args.bot:
        if not args.speed:
            ap.error("give a --bot, or --speed")
        return
    try:
        make(args.against, ())
    except Exception as exc:  # an unknown bot or a bad parameter: one line
        raise SystemExit(f"Error: --against {args.against}: {exc}") from None
    variants = []  # (label, spec, weights)
    checkpoints = sorted(Path().glob(args.curve), key=positions_seen) if args.curve else []
    if args.curve and not checkpoints:
        raise SystemExit(f"Error: --curve {args.curve!r} matches no file")
    for spec in args.bot:
        if not uses_net(spec):
            label = spec if args.against == "greedy" else f"{spec} vs {args.against}"
            variants.append((label, spec, ()))
        elif checkpoints:
            variants += [(f"{spec}[{p.name}]", spec, (str(p),)) for p in checkpoints]
        else:
            files = tuple(args.weights)
            label = f"{spec}[{','.join(Path(w).name for w in files)}]" if files else spec
            variants.append((label, spec, files))
    for label, spec, files in variants:
        if uses_net(spec):
            make(spec, files)  # a bad spec or weights file: an error before play
            if network_for(files or make(spec, ()).weights, rules) is None:
                raise SystemExit(f"Error: {label}: no network for {args.players} players")
    deals = range(args.first_deal, args.first_deal + max(2, args.games // args.players))
    stored = load(args.results)
    points = {label: Point(label, label, None) for label, _, _ in variants}
    jobs = []
    for deal in deals:  # deal by deal, so that every variant meets the same load
        for label, spec, files in variants:
            record = stored.get((label, deal))
            if record is None:
                jobs.append((label, spec, files, deal, args.players, args.against))
            else:
                points[label].records[deal] = record
    t0 = time.perf_counter()
    out = open(args.results, "a") if args.results else None
    try:
        with mp.get_context("fork").Pool(args.workers) as pool:
            for record in pool.imap_unordered(play_deal, jobs, chunksize=1):
                if out:
                    out.write(json.dumps(record) + "\n")
                    out.flush()
                points[record["spec"]].records[record["deal"]] = record
    finally:
        if out:
            out.close()
    print(f"wall: {time.perf_counter() - t0:.0f} s for {len(jobs)} deals played", flush=True)
    first = None
    for label, _, _ in variants:
        point = points[label]
        print(point.line().replace("margin_vs_3_greedy",
                                   f"margin_vs_{args.players - 1}_{args.against}"))
        if first is None:
            first = point
        else:
            print("  " + gain_line(first, point))
    if args.plot and checkpoints:
        plot_curve(variants, points, args.plot, first)


def plot_curve(variants, points, path, first):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6))
    by_spec = {}
    for label, spec, files in variants:
        if files:
            by_spec.setdefault(spec, []).append((positions_seen(files[0]), points[label].summary()))
        else:
            s = points[label].summary()
            ax.axhspan(s["margin"] - s["half"], s["margin"] + s["half"], alpha=0.15, color="grey")
            ax.axhline(s["margin"], color="grey", lw=1, label=label)
    for spec, rows in by_spec.items():
        rows.sort()
        ax.errorbar([r[0] for r in rows], [r[1]["margin"] for r in rows],
                    yerr=[r[1]["half"] for r in rows], marker="o", capsize=3, label=spec)
    ax.set_xscale("log")
    ax.set_xlabel("positions seen in training")
    ax.set_ylabel("victory margin vs greedy")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    ax.set_title(f"{first.summary()['games']} games a point, 95% intervals", fontsize="small")
    fig.tight_layout()
    fig.savefig(path)
    print(f"plot: {path}")


if __name__ == "__main__":
    main()
