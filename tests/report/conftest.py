"""Small real tournaments for the report tests, played by the arena (`kdtourney run`'s library path:
`kdtourney.tournament.definition.prepare` + `kdtourney.commands.run.run_tournament`, one worker).

A bots folder adds `evil`, a random bot whose string parameter puts `<script>alert(1)</script>`
into its entrant label (bot names themselves are restricted to letters, digits, `_ . -`) and which
raises an exception with hostile text in some games, so the report must escape names, parameters
and fault messages.
"""

from __future__ import annotations

import sqlite3

import pytest
from evil_support import EVIL_ENTRANT, EVIL_MODULE

from kdtourney.commands import run as runner
from kdtourney.commands.folders import session_meta
from kdtourney.registry import BotRegistry
from kdtourney.store import store_path
from kdtourney.tournament import definition as tour

SPECS = {
    "four": dict(bots=["random", "greedy", EVIL_ENTRANT], players=(4,), games=12),
    "two": dict(bots=["random", "greedy"], players=(2,), games=8),
    "three": dict(bots=["random", "greedy", EVIL_ENTRANT], players=(3,), games=9),
    "duel": dict(bots=["random", "greedy"], players=(2,), games=6, variant="duel"),
    "mixed": dict(bots=["random", "greedy", EVIL_ENTRANT], players=(2, 4), games=12),
    "dynasty": dict(bots=["random", "greedy"], players=(2,), games=4, dynasty=True),
    "single": dict(lineup=["random"] * 4, games=8),
    "partial": dict(bots=["random", "greedy"], players=(2,), games=12, keep=5),
}


def play(folder, bots_dir, *, keep=None, **options):
    """Play a tournament into `folder` with the arena; `keep` leaves only that many games (as an
    interrupted run would)."""
    registry = BotRegistry([bots_dir], env=False, cwd=False)
    t = tour.prepare(registry, seed=7, **options)
    runner.run_tournament(t, folder, registry, workers=1,
                          meta=session_meta(folder.name, [bots_dir]))
    if keep is not None:
        with sqlite3.connect(store_path(folder)) as conn:
            for table in ("results", "faults", "games"):
                conn.execute(f"DELETE FROM {table} WHERE game >= ?", (keep,))
    return folder


@pytest.fixture(scope="session")
def bots_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bots")
    (folder / "evil.py").write_text(EVIL_MODULE)
    return folder


@pytest.fixture(scope="session")
def tournaments(tmp_path_factory, bots_dir):
    """tournaments(name) -> the folder of a tournament of SPECS, played on first use."""
    built = {}

    def get(name):
        if name not in built:
            built[name] = play(tmp_path_factory.mktemp(name), bots_dir, **SPECS[name])
        return built[name]

    return get
