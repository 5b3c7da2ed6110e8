"""A ladder whose games take no time: the real `play_ladder` (its store, feed, matchmaker, driver
and page hook) over a game service that hands every game back at once with a result drawn from
the entrants' known strengths, so that what is measured or counted is the harness's work outside
games. For tests/commands/test_ladder_feed_cost.py and benchmarks/bench_ladder.py --chunks."""

from __future__ import annotations

import collections
import contextlib

import numpy as np

from kdtourney.commands import ladder, setup
from kdtourney.match.loop import MatchResult, SeatResult
from kdtourney.service.backend import Finished

# entrants of distinct specs (built-in bots need no process): the i-th is 40 i Elo stronger
ENTRANTS = ["random", "greedy"] + [f"mce:iterations={n}" for n in range(1, 19)]


class NoteDisplay:
    """A ladder's display that keeps the notes it is given (`notes`) and drops its events."""

    def __init__(self):
        self.notes = []

    def note(self, text):
        self.notes.append(text)

    def event(self, text):
        pass


class InstantService:
    """`setup.open_service`'s interface; each `step` hands back `workers` games, played in no
    time: seat ranks drawn (Plackett-Luce, seeded by the game) from each entrant's strength, 40
    Elo per place in the order the entrants joined."""

    def __init__(self, table, registry, cluster, workers, settings, play, identities, **_):
        self.workers, self.losses = workers, 0
        self.waiting: collections.deque = collections.deque()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def join(self, table, identities, registry=None):
        pass

    def changed(self, registry) -> bool:
        return False

    def submit(self, specs):
        self.waiting.extend(specs)

    @property
    def queued(self) -> int:
        return len(self.waiting)

    @property
    def busy(self) -> bool:
        return bool(self.waiting)

    def cancel(self) -> list:
        out = list(self.waiting)
        self.waiting.clear()
        return out

    def step(self, timeout: float = 0.5) -> list:
        done = []
        for _ in range(min(self.workers, len(self.waiting))):
            spec = self.waiting.popleft()
            strength = np.array(spec.seats) * 40 * np.log(10) / 400
            perf = strength + np.random.default_rng(spec.game).gumbel(size=len(spec.seats))
            ranks = np.argsort(np.argsort(-perf)) + 1
            seats = [SeatResult(seat=s, score=60 - 10 * int(r), rank=int(r),
                                win_share=float(r == 1), decisions=20)
                     for s, r in enumerate(ranks)]
            done.append(Finished(spec, MatchResult(moves=[], duration=0.0, seats=seats)))
        return done


@contextlib.contextmanager
def instant_games(monkeypatch=None):
    """Within the block, commands play through `InstantService` (with a pytest `monkeypatch`, for
    the test's duration)."""
    if monkeypatch is not None:
        monkeypatch.setattr(setup, "open_service", InstantService)
        yield
        return
    real, setup.open_service = setup.open_service, InstantService
    try:
        yield
    finally:
        setup.open_service = real


def play(folder, games: int, entrants: int = len(ENTRANTS), workers: int = 8, after_chunk=None,
         seed: int = 1):
    """The ladder in `folder` (made, or resumed) until it stores `games` games, among the first
    `entrants` of ENTRANTS, 2-player blocks, chunks of 2 x `workers` blocks (no chunk seconds:
    the games take none), no look at the folders after the first; its LadderOutcome."""
    config = ladder.prepare_ladder(players=(2,), seed=seed)
    return ladder.play_ladder(config, folder, references=ENTRANTS[:entrants], workers=workers,
                              games=games, chunk_seconds=0.0, poll=3600.0,
                              after_chunk=after_chunk)


__all__ = ["InstantService", "instant_games", "play", "ENTRANTS"]
