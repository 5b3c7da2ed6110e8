"""Arena speed: games per second of `kdtourney run --bots greedy,random --players 4` on 1 and 2
workers, and the harness overhead per game against a plain loop over the same games.

    /work/venv/bin/python benchmarks/bench_arena.py [--games 400]

Prints `name: value` lines. The arena figures are end to end (worker start-up, warm-up, SQLite
commits included), as a user sees them; `arena_*_steady_games_per_s` counts from the first stored
game on. plain loop = the same games (same deals, seats and seeds) played with Game and the bots in
one process, no fairness wrappers, no store, no processes; play_match = the arena's game loop in
one process, no store, no processes. In-process figures are the best of `--repeat` runs.

`sleepy_*` lines: a bot that sleeps 2 ms per decision against random (100 games, 2 players), so
the games are not CPU-bound: how the harness itself scales with workers when cores are busy.

On a machine shared with other work, wall-clock figures move a lot; the `*_cpu_ms_per_game`
figures of the loops in this process are the steadier measure of overhead (the arena's workers
are its fork server's children, whose CPU this process does not see).
"""

import argparse
import resource
import tempfile
import time
from pathlib import Path

from kdtourney.commands.run import run_tournament
from kdtourney.engine import Game, warm_up
from kdtourney.match.loop import play_match
from kdtourney.registry import BotRegistry
from kdtourney.tournament.definition import prepare


class Clock:
    """A reporter that notes when the first and last games are stored."""

    def start(self, *args, **kwargs):
        self.first = self.last = None
        self.count = 0

    def game(self, *args):
        now = time.perf_counter()
        self.first = self.first or now
        self.last = now
        self.count += 1

    def note(self, text):
        print(f"# note: {text}")

    def stop(self):
        pass


def plain_loop(tournament, registry):
    games = tournament.plan().games
    started = time.perf_counter()
    for spec in games:
        rules = tournament.rules_for(spec.n_players)
        bots = [registry.create(tournament.specs[e]) for e in spec.seats]
        for seat, bot in enumerate(bots):
            bot.setup(seat, rules, spec.bot_seeds[seat][0])
        game = Game(rules, spec.deal_seeds[0])
        while not game.is_over:
            p = game.current_player
            game.apply(bots[p].act(game.view(p)))
        game.scores()
        game.ranking()
    return time.perf_counter() - started


def in_process_match(tournament, registry):
    games = tournament.plan().games
    started = time.perf_counter()
    for spec in games:
        factories = [lambda s=tournament.specs[e]: registry.create(s) for e in spec.seats]
        play_match(tournament.rules_for(spec.n_players), spec.deal_seeds, spec.bot_seeds, factories)
    return time.perf_counter() - started


def cpu_now():
    """CPU seconds of this process and its finished children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def best(fn, repeat):
    """(best wall seconds, best CPU seconds) of `repeat` calls."""
    walls, cpus = [], []
    for _ in range(repeat):
        c0 = cpu_now()
        walls.append(fn())
        cpus.append(cpu_now() - c0)
    return min(walls), min(cpus)


SLEEPY = """
import time
from kdtourney.bots.base import Bot

class Sleepy(Bot):
    name = "sleepy"

    def act(self, view):
        time.sleep(0.002)
        return view.legal_actions()[0]
"""


def sleepy_scaling():
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "sleepy.py").write_text(SLEEPY)
        registry = BotRegistry([tmp], env=False, cwd=False, entry_points=False)
        tournament = prepare(registry, bots="sleepy,random", games=100, seed=1)
        rates = {}
        for workers in (1, 2, 4):
            clock = Clock()
            run_tournament(tournament, Path(tmp) / f"t{workers}", registry, workers=workers,
                           reporter=clock)
            rates[workers] = (clock.count - 1) / (clock.last - clock.first)
            print(f"sleepy_{workers}_workers_steady_games_per_s: {rates[workers]:.1f}")
        print(f"sleepy_scaling_2_vs_1_workers: {rates[2] / rates[1]:.2f}")
        print(f"sleepy_scaling_4_vs_1_workers: {rates[4] / rates[1]:.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    registry = BotRegistry(env=False, cwd=False, entry_points=False)
    tournament = prepare(registry, bots="greedy,random", players="4", games=args.games, seed=1)
    n = len(tournament.plan())
    warm_up()
    plain_loop(prepare(registry, bots="greedy,random", players="4", games=8, seed=2), registry)
    print(f"games: {n}")
    plain, plain_cpu = best(lambda: plain_loop(tournament, registry), args.repeat)
    print(f"plain_loop_games_per_s: {n / plain:.1f}")
    print(f"plain_loop_cpu_ms_per_game: {1000 * plain_cpu / n:.2f}")
    match, match_cpu = best(lambda: in_process_match(tournament, registry), args.repeat)
    print(f"play_match_games_per_s: {n / match:.1f}")
    print(f"play_match_cpu_ms_per_game: {1000 * match_cpu / n:.2f}")
    arena = {}
    for workers in (1, 2):
        label = f"arena_{workers}_worker{'s' * (workers > 1)}"
        with tempfile.TemporaryDirectory() as tmp:
            clock = Clock()  # (no CPU figure: the workers are the fork server's children)
            started = time.perf_counter()
            out = run_tournament(tournament, Path(tmp) / "t", registry, workers=workers,
                                 reporter=clock)
            wall = time.perf_counter() - started
            assert out.played == n
            arena[workers] = wall
            steady_rate = (clock.count - 1) / (clock.last - clock.first)
            if workers == 1:
                steady1 = steady_rate
            print(f"{label}_games_per_s: {n / wall:.1f}")
            print(f"{label}_steady_games_per_s: "
                  f"{(clock.count - 1) / (clock.last - clock.first):.1f}")
            print(f"{label}_startup_s: {clock.first - started:.2f}")
    print(f"scaling_2_vs_1_workers: {arena[1] / arena[2]:.2f}")
    sleepy_scaling()
    print(f"match_wrapper_overhead_cpu_ms_per_game: {1000 * (match_cpu - plain_cpu) / n:.2f}")
    print(f"harness_overhead_wall_ms_per_game_1_worker: {1000 * (arena[1] - plain) / n:.2f}")
    print(f"harness_overhead_pct_wall_1_worker: {100 * (arena[1] - plain) / plain:.1f}")
    print(f"harness_overhead_steady_ms_per_game_1_worker: {1000 * (1 / steady1 - plain / n):.2f}")


if __name__ == "__main__":
    main()
