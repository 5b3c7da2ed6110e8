"""The time left from the rate of whole blocks (steady when the rate is), and the plain progress
line a log reader gets without a terminal (games, win shares, Elo with its interval, LOS)."""

import io
import math
import random
from types import SimpleNamespace

import pytest
from rich.console import Console

from kdtourney.terminal import progress
from kdtourney.terminal.eta import BlockEta, clock_text
from kdtourney.terminal.log_line import PairTally, elo_interval, likelihood_of_superiority
from kdtourney.terminal.progress import Reporter


def played(seed, workers, sizes, blocks=400, spread=0.5):
    """Game ends of a plan played by `workers` in order, each game lasting its table size / 3 s
    times a uniform factor in 1 +- spread: a steady rate with bursts. [(end, block, size)]."""
    rng = random.Random(seed)
    games = [(b, sizes[b % len(sizes)]) for b in range(blocks)
             for _ in range(sizes[b % len(sizes)])]
    free, ends = [0.0] * workers, []
    for block, n in games:
        w = min(range(workers), key=free.__getitem__)
        free[w] += rng.uniform(1 - spread, 1 + spread) * n / 3
        ends.append((free[w], block, n))
    return sorted(ends), {b: n for b, n in games}


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("workers, sizes", [(2, (2, 4)), (8, (2, 4)), (2, (2,)), (3, (3,))])
def test_the_time_left_stays_within_20_percent_at_a_steady_rate(seed, workers, sizes):
    ends, block_sizes = played(seed, workers, sizes)
    eta = BlockEta(block_sizes)
    work = sum(n / 3 for _, _, n in ends)  # the mean seconds of the games left, all workers
    worst = 0.0
    for i, (now, block, n) in enumerate(ends):
        eta.game(block, now)
        work -= n / 3
        left = eta.left(now)
        if i < len(ends) // 10 or i > len(ends) * 9 // 10:  # the window fills; the last blocks
            continue
        truth = work / workers  # the time left at the steady rate
        assert left is not None
        worst = max(worst, abs(left - truth) / truth)
    assert worst < 0.2


def test_the_time_left_waits_for_a_few_blocks_and_counts_down_between_them():
    eta = BlockEta({0: 2, 1: 2, 2: 2, 3: 2, 4: 2}, done={0: 2})  # block 0 stored before
    for t, block in [(1, 1), (2, 1), (3, 2), (4, 2)]:
        eta.game(block, t)
    assert eta.left(4) is None  # two completions: no rate yet
    eta.game(3, 5)
    eta.game(3, 6)
    assert eta.rate() == pytest.approx(2 / 4)  # blocks 1, 2, 3 ended at 2, 4, 6
    assert eta.left(6) == pytest.approx(2.0)  # block 4 left: 2 s at that rate
    assert eta.left(7) == pytest.approx(1.0) and eta.left(60) == 0.0
    assert clock_text(3725.4) == "1:02:05" and clock_text(None) == "-:--:--"


def test_the_pair_tally_gives_cutechess_figures():
    tally = PairTally()
    outcomes = [(1, 2)] * 31 + [(2, 1)] * 7 + [(1, 1)] * 2
    for rank_a, rank_b in outcomes:
        tally.add([{"entrant": "a", "rank": rank_a}, {"entrant": "b", "rank": rank_b}])
    elo, margin = elo_interval(31, 7, 2)
    assert elo == pytest.approx(240.82, abs=0.01)  # 0.800, as cutechess-cli prints it
    assert 0 < margin < math.inf
    assert likelihood_of_superiority(31, 7) == pytest.approx(0.99999, abs=1e-4)
    assert tally.line("a", "b") == f"a vs b: 31-7-2 (0.800), Elo +241 +- {margin:.0f}, LOS 100.0%"
    assert tally.line("b", "a").startswith("b vs a: 7-31-2 (0.200), Elo -241 +- ")
    assert tally.line("a", "c") is None
    tally = PairTally()
    for rank_a, rank_b in [(1, 2)] * 4 + [(2, 1)]:  # 0.8 +- 0.35 reaches a perfect score
        tally.add([{"entrant": "a", "rank": rank_a}, {"entrant": "b", "rank": rank_b}])
    assert tally.line("a", "b") == "a vs b: 4-1-0 (0.800), Elo +241 +- inf, LOS 91.0%"
    tally.add([{"entrant": "a", "rank": 1}, {"entrant": "c", "rank": 2}])
    assert tally.line("a", "c") == "a vs c: 1-0-0 (1.000), Elo +inf, LOS 84.1%"


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_without_a_terminal_a_line_every_n_games_or_minute(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(progress.time, "perf_counter", clock)
    monkeypatch.setattr("kdtourney.engine.compiled", lambda: True)
    specs = [SimpleNamespace(game=g, block=g // 2) for g in range(400)]
    plan = type("Plan", (), {"games": specs, "blocks": 200, "balanced": True,
                             "__len__": lambda self: 400})()
    store = SimpleNamespace(count_games=lambda: 0, count_finished=lambda: 0,
                            entrant_totals=dict, done_games=set)
    tournament = SimpleNamespace(games=400, seed=1, describe=lambda: "a vs b (round-robin)")
    out = io.StringIO()
    reporter = Reporter(console=Console(file=out, force_terminal=False, width=300))
    reporter.start(tournament, plan, store, workers=2)
    for spec in specs:
        clock.now += 0.5 if spec.game < 300 else 30.0  # the last games slow: a line a minute
        first = spec.game % 2 == 0
        reporter.game(spec, [
            {"entrant": "a", "rank": 1 if first else 2, "win_share": float(first)},
            {"entrant": "b", "rank": 2 if first else 1, "win_share": float(not first)}], [])
    lines = out.getvalue().splitlines()[1:]
    counts = [int(line.split("/")[0]) for line in lines]
    assert counts[:15] == [20 * k for k in range(1, 16)]  # every 400 / 20 games
    assert counts[15:] == list(range(302, 400, 2))  # then every 60 s: two games of 30 s
    # 10-10: a score of 0.5 +- 1.96 * sqrt(0.25 / 20), that is 0.281 to 0.719, +-163 Elo
    assert lines[0] == ("20/400 games, 2.0 games/s, 0:03:10 left; win share: b 0.500  a 0.500; "
                        "b vs a: 10-10-0 (0.500), Elo +0 +- 163, LOS 50.0%")
