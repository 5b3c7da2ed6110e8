"""The one loop every command plays its games in: a `Feed` says what to play, a `Driver` plays it.

    Driver(setup, reporter).run(feed) -> RunOutcome

Each round the feed may queue blocks (`Driver.queue`: recorded in the store by
`schedule_blocks` before any of their games is handed to the game service); the driver stores
each game the service hands back in its own transaction (`rows_of`; only this process writes the
store), tells the reporter and the feed (`Feed.took`), and ends when the feed is over and nothing
is queued or played, or at Ctrl-C (the outcome says interrupted). A re-run plays exactly what the
store lacks. The setup (kdtourney.commands.setup) holds the folder, the store and the service.
"""

from __future__ import annotations

import collections
import time
from collections.abc import MutableSequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kdtourney import interrupts, store
from kdtourney.commands.setup import Setup, entrant_identities
from kdtourney.match.loop import MatchResult
from kdtourney.service.backend import Finished
from kdtourney.service.forfeit import failed_rows
from kdtourney.tournament.blocks import games_of, seated
from kdtourney.tournament.definition import Tournament

SPEED_GAMES = 256     # the driver's speed: over the last this many games stored
NOTES_KEPT = 100      # notes a run's outcome keeps (the newest); each goes to the reporter


@dataclass
class RunOutcome:
    """What a run did: the folder, games in the plan, stored before, played now, forfeits now,
    games that could not be finished now, worker deaths and hangs, seconds, whether Ctrl-C
    stopped it."""

    folder: Path
    total: int
    stored_before: int
    played: int = 0
    faults: int = 0
    failed: int = 0
    worker_losses: int = 0
    seconds: float = 0.0
    interrupted: bool = False
    notes: MutableSequence = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.stored_before + self.played >= self.total


def rows_of(labels, spec, result: MatchResult) -> tuple[dict, list, list]:
    """The store rows (game, results, faults) of a played game; `labels`: the entrant label of
    each index the spec's seats hold."""
    game = dict(game=spec.game, block=spec.block, arrangement=spec.arrangement,
                n_players=spec.n_players, deal_seeds=list(spec.deal_seeds), status=result.status,
                duration=result.duration, moves=result.moves, error=result.error,
                notes=getattr(result, "notes", []))
    results = []
    for seat in result.seats:
        row = dict(vars(seat))
        row.update(game=spec.game, entrant=labels[spec.seats[seat.seat]])
        results.append(row)
    faults = [dict(seat=f.seat, entrant=labels[spec.seats[f.seat]], kind=f.kind,
                   message=f.message, call=f.call, stderr=f.stderr) for f in result.faults]
    return game, results, faults


def schedule_blocks(st: store.Store, tournament: Tournament, blocks, secret: str | None,
                    planned=None) -> tuple[Tournament, dict]:
    """Record `blocks` (kdtourney.tournament.blocks: the records the store keeps, the ones recorded
    already left as they are) and make their games: (the table the service plays them on: the
    fixed settings of `tournament` with the entrants the blocks seat, {game: GameSpec} with seeds
    keyed by `secret` if given). Every command's feed hands its blocks to the service through
    this, so each block is in the store before any of its games is played. planned: their games
    as the tournament's plan made them (`blocks.games_of`)."""
    base = tuple(zip(tournament.entrants, tournament.specs))
    pairs, games = games_of(blocks, tournament.seed, tournament.dynasty, secret, base, planned)
    st.add_blocks(blocks)
    return seated(tournament, pairs), {g.game: g for g in games}


class Feed:
    """What a command plays, as the one driver loop asks it (`Driver.run`): `run`'s plan, an
    SPRT's blocks until it decides, a tune's batches, a ladder's chosen tables. Every round of the
    loop the feed may queue blocks (`more`, through `Driver.queue`); it is told of every game
    stored (`took`); it says when it has nothing more to queue (`over`). The loop ends when the
    feed is over and nothing is queued or being played, or at Ctrl-C; then `stopped`."""

    over = False

    def more(self, driver: Driver) -> None:
        """Queue what should be played next, if anything."""

    def idle(self, driver: Driver) -> None:
        """Nothing is queued or being played and the feed is not over: a feed that waits for
        something (a ladder for its bots) waits here, a while; any other has a bug."""
        raise RuntimeError(f"{type(self).__name__} queued nothing and is not over")

    def took(self, spec, results: list) -> None:
        """A game stored: its GameSpec (seats index `Driver.labels`) and its result rows (none for
        a failed game)."""

    def stopped(self, driver: Driver) -> None:
        """The loop ended (`driver.outcome.interrupted`: by Ctrl-C)."""


class Driver:
    """Plays a feed's games over one `setup` (kdtourney.commands.setup): its folder and open
    store `st`, `table` (the fixed settings of every game, and the entrants known from the start),
    the registry, the entrants' identities, and the game service it opens with the first games
    queued. workers: how many play (default: the setup's); reporter: told of every game and note
    (kdtourney.terminal.progress.Reporter's `game` and `note`), or None.

    `queue` records blocks and hands their games to the service, new entrants joining its
    workers (their identities taken once each); `run` runs a feed until it is over, storing each
    finished game in its own transaction and telling the reporter and the feed."""

    def __init__(self, setup: Setup, reporter=None, workers: int | None = None):
        self.setup, self.folder, self.st = setup, setup.folder, setup.st
        self.table, self.registry = setup.table, setup.registry
        self.workers = setup.workers if workers is None else workers
        self.reporter = reporter
        self.pairs = list(zip(self.table.entrants, self.table.specs))  # by the games' index
        self.labels = [label for label, _ in self.pairs]
        self.identities = dict(setup.identities)  # {label: identity} of the entrants queued
        self.joined = 0  # pairs the service was given
        self.done = self.st.done_games()  # the games stored before this command
        # sandboxed from the start, the seeds are keyed with the store's secret (hidden from bots)
        self.secret = self.st.seed_secret(create=setup.settings.sandbox is not None
                                          and not self.done)
        self.service: Any = None  # a LocalService or DaskService, once opened
        self.outstanding = 0  # games handed to the service and not yet stored
        self.outcome = RunOutcome(folder=self.folder, total=0, stored_before=len(self.done),
                                  notes=collections.deque(maxlen=NOTES_KEPT))
        self.finish_times: collections.deque = collections.deque(maxlen=SPEED_GAMES)

    # what a feed calls

    def queue(self, blocks, planned=None) -> int:
        """Record `blocks` (kdtourney.tournament.blocks; the ones recorded already left as they are:
        `schedule_blocks`) and hand the games of theirs the store lacks to the service; returns
        how many. planned: their games as the tournament's plan made them."""
        table, specs = schedule_blocks(self.st, seated(self.table, self.pairs), blocks,
                                       self.secret, planned)
        new = list(zip(table.entrants, table.specs))[len(self.pairs):]
        if new:
            self.identities.update(entrant_identities(self.registry, seated(self.table, new)))
            self.pairs += new
            self.labels += [label for label, _ in new]
        todo = [specs[g] for g in sorted(specs) if g not in self.done]
        self.submit(todo)
        return len(todo)

    def submit(self, games) -> None:
        """Hand GameSpecs (seats indexing `pairs`) to the service, opening it with the first."""
        games = list(games)
        if not games:
            return
        table = seated(self.table, self.pairs)
        if self.service is None:
            self.service = self.setup.open_service(table, self.registry, self.workers,
                                                   self.identities, on_note=self.note)
        elif self.joined < len(self.pairs):
            self.service.join(table, {label: self.identities[label]
                                      for label, _ in self.pairs[self.joined:]})
        self.joined = len(self.pairs)
        self.service.submit(games)
        self.outstanding += len(games)

    def reload(self, registry) -> None:
        """The bots' sources may have changed (a ladder's folders): play the games queued from now
        on with `registry`. When they did, the service must be idle: its workers are ended, and
        the next games start new ones, which know only the entrants queued from then on (an old
        version's label would not load its code from the new sources)."""
        self.registry = registry
        if self.service is None or not self.service.changed(registry):
            return
        if self.busy:
            raise RuntimeError("the bots' sources changed while games were being played")
        self.pairs = list(zip(self.table.entrants, self.table.specs))
        self.labels = [label for label, _ in self.pairs]
        self.identities = {label: self.identities[label] for label in self.labels}
        self.service.join(seated(self.table, self.pairs), self.identities, registry)
        self.joined = len(self.pairs)

    def cancel(self) -> list:
        """Take back the games no worker has taken yet; returns their GameSpecs."""
        dropped: list = self.service.cancel() if self.service is not None else []
        self.outstanding -= len(dropped)
        return dropped

    @property
    def busy(self) -> bool:
        """Games are queued or being played."""
        return self.service is not None and self.service.busy

    @property
    def queued(self) -> int:
        """Games handed to the service that no worker has taken yet."""
        return self.service.queued if self.service is not None else 0

    def games_per_second(self) -> float | None:
        """The speed of play over the last SPEED_GAMES games stored (None before 3)."""
        t = self.finish_times
        if len(t) < 3 or t[-1] <= t[0]:
            return None
        return (len(t) - 1) / (t[-1] - t[0])

    def note(self, text) -> None:
        self.outcome.notes.append(text)
        if self.reporter is not None:
            self.reporter.note(text)

    # the loop

    def run(self, feed: Feed) -> RunOutcome:
        """Run `feed` until it is over and its games are stored, or Ctrl-C (the outcome says
        interrupted); returns the outcome."""
        started = time.perf_counter()
        try:
            while True:
                interrupts.check()
                feed.more(self)
                if self.busy:
                    for finished in self.service.step():
                        self._take(finished, feed)
                elif feed.over:
                    break
                else:
                    feed.idle(self)
        except KeyboardInterrupt:
            self.outcome.interrupted = True
        finally:
            if self.service is not None:
                self.outcome.worker_losses = self.service.losses
            self.st.update_meta(games_stored=self.outcome.stored_before + self.outcome.played)
        self.outcome.seconds = time.perf_counter() - started
        feed.stopped(self)
        return self.outcome

    def _take(self, finished: Finished, feed: Feed) -> None:
        """Store what the service handed back (a played game, or one it could not finish: its
        failed rows, kdtourney.service.forfeit) and tell the reporter and the feed."""
        spec, outcome = finished.spec, self.outcome
        if finished.result is None:
            assert finished.failed is not None  # Finished: no result, then the message why
            game, results, faults = failed_rows(spec, self.labels, finished.failed)
            outcome.failed += 1
        else:
            game, results, faults = rows_of(self.labels, spec, finished.result)
            outcome.faults += len(faults)
        self.st.add_game(game, results, faults)
        outcome.played += 1
        self.outstanding -= 1
        self.finish_times.append(time.perf_counter())
        if self.reporter is not None:
            self.reporter.game(spec, results, faults)
        feed.took(spec, results)


__all__ = ["Driver", "Feed", "RunOutcome", "rows_of", "schedule_blocks", "SPEED_GAMES",
           "NOTES_KEPT"]
