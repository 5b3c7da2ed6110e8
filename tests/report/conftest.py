"""Small real tournaments for the report tests, played through the arena's Python API.

`play_tournament` schedules with `kdtourney.arena.schedule.plan`, plays every game with
`kdtourney.arena.match.play_match` and stores it with `kdtourney.arena.store.Store`: the same
pieces `kdtourney run` puts together, so the report reads a genuine store.
"""

from __future__ import annotations

import dataclasses
import platform
import sys

import pytest

from kdtourney import __version__
from kdtourney.arena.match import play_match
from kdtourney.arena.schedule import plan
from kdtourney.arena.store import Store
from kdtourney.bots.base import Bot
from kdtourney.bots.random_bot import RandomBot
from kdtourney.engine import Rules

EVIL_NAME = "<script>alert(1)</script>"
EVIL_MESSAGE = "<img src=x onerror=alert(2)> went wrong"


class EvilBot(RandomBot):
    """A random bot with a hostile name that raises (with hostile text) in some games."""

    name = EVIL_NAME

    def setup(self, seat, rules, seed):
        super().setup(seat, rules, seed)
        self._fail = seed % 3 == 0

    def act(self, view):
        if self._fail and view.round >= 2:
            raise RuntimeError(EVIL_MESSAGE)
        return super().act(view)


class FirstBot(Bot):
    """Always the first legal action (deterministic, different from random)."""

    name = "first"

    def act(self, view):
        return view.legal_actions()[0]


BOTS = {"random": RandomBot, "first": FirstBot, EVIL_NAME: EvilBot}


def play_tournament(folder, entrants, players=(4,), games=8, seed=1, rules=None, fmt="round-robin",
                    dynasty=False, lineup=None, stop_after=None):
    """Play and store a tournament; `stop_after` leaves it partial (fewer games than planned)."""
    rules = dict(Rules().to_dict(), **(rules or {}))
    players = tuple(players)
    schedule = plan(fmt, len(entrants), players, games, seed, dynasty=dynasty, lineup=lineup)
    tournament = {"entrants": list(entrants), "format": fmt, "players": list(players),
                  "rules": rules, "games": games, "seed": seed, "dynasty": dynasty,
                  "move_time_limit": None}
    meta = {"name": "test", "command_line": "kdtourney run --bots " + ",".join(entrants),
            "kdtourney": __version__, "python": sys.version.split()[0], "numba": "test",
            "platform": platform.platform()}
    store = Store.create(folder, tournament, meta)
    with store:
        for spec in schedule.games[:stop_after]:
            r = Rules(**dict(rules, players=spec.n_players))
            factories = [BOTS[entrants[i]] for i in spec.seats]
            m = play_match(r, spec.deal_seeds, spec.bot_seeds, factories)
            game = {"game": spec.game, "block": spec.block, "arrangement": spec.arrangement,
                    "deal_seeds": spec.deal_seeds, "n_players": spec.n_players, "status": m.status,
                    "duration": m.duration, "moves": m.moves, "error": m.error}
            results = [dict(dataclasses.asdict(s), game=spec.game, entrant=entrants[spec.seats[s.seat]])
                       for s in m.seats]
            faults = [dict(dataclasses.asdict(f), entrant=entrants[spec.seats[f.seat]])
                      for f in m.faults]
            store.add_game(game, results, faults)
    return folder


@pytest.fixture(scope="session")
def tournaments(tmp_path_factory):
    """Lazily built tournaments by name, shared by the report tests."""
    built = {}
    specs = {
        "four": dict(entrants=["random", "first", EVIL_NAME], players=(4,), games=12),
        "two": dict(entrants=["random", "first"], players=(2,), games=8),
        "three": dict(entrants=["random", "first", EVIL_NAME], players=(3,), games=9),
        "duel": dict(entrants=["random", "first"], players=(2,), games=6, rules={"variant": "duel"}),
        "mixed": dict(entrants=["random", "first", EVIL_NAME], players=(2, 4), games=12),
        "dynasty": dict(entrants=["random", "first"], players=(2,), games=4, dynasty=True),
        "single": dict(entrants=["random"], players=(4,), games=8, fmt="lineup", lineup=(0, 0, 0, 0)),
        "partial": dict(entrants=["random", "first"], players=(2,), games=20, stop_after=5),
    }

    def get(name):
        if name not in built:
            folder = tmp_path_factory.mktemp(name)
            built[name] = play_tournament(folder, **specs[name])
        return built[name]

    return get
