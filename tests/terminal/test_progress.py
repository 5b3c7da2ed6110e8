"""The terminal's progress of a run: on a first run it says that it compiles, and the games per
second and the time left count from the first finished game, not from the start (which a first
run spends compiling)."""

import io

import pytest
from rich.console import Console

from kdtourney.terminal import progress
from kdtourney.terminal.progress import COMPILING, GameRate, Reporter


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


@pytest.fixture
def clock(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(progress.time, "perf_counter", clock)
    return clock


def test_the_rate_counts_from_the_first_game(clock):
    rate = GameRate()
    clock.now = 40.0  # 40 s compiling before the first game ends
    rate.game()
    assert rate.started and rate.per_second() is None
    for clock.now in (41.0, 42.0, 43.0, 44.0):
        rate.game()
    assert rate.per_second() == pytest.approx(1.0)  # 4 games in the 4 s after the first, not 5/44


class Plan(list):
    blocks, balanced = 2, True


class Tournament:
    games, seed = 4, 1

    @staticmethod
    def describe():
        return "greedy vs random (round-robin, 2-player)"


class Store:
    @staticmethod
    def count_games():
        return 0

    count_finished = count_games

    @staticmethod
    def entrant_totals():
        return {}


@pytest.mark.parametrize("compiled, note", [(False, f"note: {COMPILING}"), (True, None)])
def test_a_first_run_says_it_compiles(monkeypatch, compiled, note):
    monkeypatch.setattr("kdtourney.engine.compiled", lambda: compiled)
    out = io.StringIO()
    reporter = Reporter(console=Console(file=out, force_terminal=False, width=200))
    reporter.start(Tournament, Plan(range(4)), Store, workers=2)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("greedy vs random (round-robin, 2-player): 4 games in 2 blocks")
    assert lines[1:] == ([note] if note else [])


def test_on_a_terminal_the_bar_starts_with_the_first_game(monkeypatch, clock):
    monkeypatch.setattr("kdtourney.engine.compiled", lambda: False)
    out = io.StringIO()
    reporter = Reporter(console=Console(file=out, force_terminal=True, width=100))
    reporter.start(Tournament, Plan(range(4)), Store, workers=2)
    try:
        assert reporter.live is not None and not reporter.progress.tasks  # compiling: no bar yet
        clock.now = 40.0
        reporter.game(None, [{"entrant": "greedy", "win_share": 1.0}], [])
        for clock.now in (41.0, 42.0):
            reporter.game(None, [{"entrant": "greedy", "win_share": 1.0}], [])
        task = reporter.progress.tasks[0]
        assert task.completed == 3 and task.fields["rate"] == "1.0 games/s"
    finally:
        reporter.stop()
