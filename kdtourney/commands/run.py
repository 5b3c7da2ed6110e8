"""`kdtourney run`: a tournament's plan played into its folder.

    run_tournament(tournament, folder, registry, meta=..., reporter=..., **options) -> RunOutcome

The games of the plan the folder's store lacks are played over the one setup of every command
(kdtourney.commands.setup; options: its `Options`) by the one driver loop
(kdtourney.commands.driver), fed every block at once (`RunFeed`); a re-run or --resume plays
exactly what is missing, and the store is the same whatever the workers or the interruptions.
`open_run` makes or checks a tournament's folder; `load_tournament` reads one for --resume.
Raises ArenaError (one line) for a folder that holds something else or cannot be played.
"""

from __future__ import annotations

from pathlib import Path

from kdtourney import store
from kdtourney.commands.driver import Driver, Feed, RunOutcome
from kdtourney.commands.folders import (
    check_existing,
    create_store,
    open_existing,
    read_config,
    resume_command,
)
from kdtourney.commands.setup import Options, setup
from kdtourney.match.settings import PlaySettings
from kdtourney.tournament.blocks import of_plan
from kdtourney.tournament.definition import ArenaError, Tournament, differences
from kdtourney.tournament.schedule import Plan


def open_run(tournament: Tournament, folder, meta: dict, identities: dict | None = None,
             play: PlaySettings | None = None) -> list[str]:
    """Make the store of `folder` for this tournament (with the entrants' `identities` and the
    `play` settings) if the folder has none, else check it: ArenaError if it holds another
    tournament, another entrant's code (`check_code`), games played under other play settings
    (`record_play`), or is not a valid store; an existing one records a session. Returns notes
    for the user."""
    folder = Path(folder)
    if not store.exists(folder):
        create_store(folder, tournament, meta, identities, play)
        return []
    with open_existing(folder) as st:
        diff = differences(st.tournament, tournament.to_dict())
        notes = check_existing(st, folder, "tournament", diff, "choose a new --out, or finish "
                               f"that one with {resume_command(folder)}", identities, play)
        st.begin_session(meta.get("command"), tournament.games)
    return notes


def load_tournament(folder) -> tuple[Tournament, dict]:
    """The stored tournament and meta of a tournament folder (for --resume); ArenaError if the
    folder holds none, or holds an SPRT, a tune or a ladder (their games are made as they go:
    only their own command continues them)."""
    config = read_config(folder)
    for kind, what in (("sprt", "an SPRT"), ("tune", "a tune"), ("ladder", "a ladder")):
        if kind in config:
            raise ArenaError(f"{folder} holds {what}: continue it with {resume_command(folder)}")
    return Tournament.from_dict(config["tournament"]), config.get("meta", {})


class RunFeed(Feed):
    """The feed of `kdtourney run`: every block of the plan at once."""

    def __init__(self, tournament: Tournament, plan: Plan):
        self.tournament, self.plan = tournament, plan

    def more(self, driver):
        if not self.over:
            self.over = True
            t = self.tournament
            driver.queue(of_plan(t.entrants, t.specs, self.plan.games), self.plan.games)


def run_tournament(tournament: Tournament, folder, registry, *, meta: dict | None = None,
                   reporter=None, **options) -> RunOutcome:
    """Play the games of `tournament` that `folder`'s store lacks; returns a RunOutcome.

    registry: the BotRegistry the entrants were checked against (its sources go to the workers).
    reporter: an object with start/game/note/stop (kdtourney.terminal.progress.Reporter), or None.
    meta: what the store keeps of the command (kdtourney.commands.folders.session_meta).
    options: how and where the games are played (kdtourney.commands.setup.Options: workers,
    scheduler, hang_timeout, play, startup_timeout, require_limits, warm, check_bots); the play
    settings are recorded with a new store and checked against an existing one's. Bots in their
    own process write their stderr to FOLDER/logs/<entrant>.log. Raises ArenaError for a store
    that is not this tournament's and for what cannot be played (kdtourney.commands.setup).
    """
    how = Options(**options)
    plan = tournament.plan()

    def open_folder(identities):
        return open_run(tournament, folder, meta or {}, identities, how.play)

    with setup(tournament, folder, registry, open_folder, how) as s:
        todo = len(plan.games) - len(s.st.done_games())
        driver = Driver(s, reporter, workers=min(s.workers, todo) if todo else 1)
        driver.outcome.total = len(plan.games)
        driver.outcome.notes.extend(s.notes)
        if reporter is not None:
            s.stack.callback(reporter.stop)
            reporter.start(tournament, plan, s.st, workers=driver.workers)
            for note in s.notes:
                reporter.note(note)
        return driver.run(RunFeed(tournament, plan))


__all__ = ["run_tournament", "RunFeed", "open_run", "load_tournament"]
